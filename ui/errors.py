"""Engine refusals in the reader's language: ``errors.<key>`` from the locale files."""

from __future__ import annotations

from engine.errors import EngineError
from ui.i18n import t


def error_text(error: EngineError) -> str:
    """The translated message for ``error`` (its parameters filled in)."""
    return t(f"errors.{error.key}", **error.params)
