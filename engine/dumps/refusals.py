"""The refusals of the dumps package and of the capture, by name.

``refuse(name, **params)`` is the ``EngineError`` ``"dumps.<name>"`` (reading a dump) and
``capture_error(name, **params)`` the ``EngineError`` ``"capture.<name>"`` (``python -m
engine.dumps capture``, the live model).  Their messages are the tables ``[dumps]`` and
``[capture]`` of ``locales/<lang>/errors.toml``: each names the file, the entry where there is
one, and what is accepted.  Both names are positional-only, so a parameter may be called
``name``.
"""

from __future__ import annotations

from engine.errors import EngineError


def refuse(name: str, /, **params: object) -> EngineError:
    return EngineError(f"dumps.{name}", params)


def capture_error(name: str, /, **params: object) -> EngineError:
    return EngineError(f"capture.{name}", params)
