"""The refusals of the experiments on a real model, by name.

``experiment_error(name, **params)`` is the ``EngineError`` ``"experiments.<name>"``; its
messages are the table ``[experiments]`` of ``locales/<lang>/errors.toml``.  The name is
positional-only, so a parameter may be called ``name``.
"""

from __future__ import annotations

from engine.errors import EngineError


def experiment_error(name: str, /, **params: object) -> EngineError:
    return EngineError(f"experiments.{name}", params)
