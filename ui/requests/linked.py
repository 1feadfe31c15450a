"""A linked id of the operator's folders (a model, a dump file) that the server does not
list: the engine's refusal, which names what it lists, for the widget to say where the
setting is drawn."""

from __future__ import annotations

from collections.abc import Callable

from engine.errors import EngineError
from ui.compute import compute


def unlisted(find: Callable, wanted: str, listed: tuple) -> EngineError | None:
    """Why ``wanted`` is refused by ``find`` (``find_model``, ``find_dump`` of
    ``engine.dumps.local_files``), or None where none is linked or it is listed."""
    if not wanted or wanted in {item.id for item in listed}:
        return None
    try:
        compute(find, wanted, listed)
    except EngineError as error:
        return error
    return None
