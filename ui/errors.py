"""Refusals in the reader's language, with any text a user typed shown literally.

Engine refusals (``EngineError``) and typed-input refusals (``VectorInputError``) carry a
message key and parameters; the message is rendered as Markdown, so every parameter that
can hold text from a person, a file or a URL is shown as a code span (``literal``): a
typed ``https://...`` never becomes a link, ``**`` never becomes bold.
"""

from __future__ import annotations

from engine.errors import EngineError
from ui.formatting import literal
from ui.i18n import t

# Parameters that may hold text from outside: typed tokens, values from a URL, file and
# entry names of uploads.
USER_TEXT = frozenset({"token", "value", "file", "entry", "key", "path", "param", "field"})


def shown(params: dict) -> dict:
    """``params`` with every outside text as a literal; numbers and our own words as they are."""
    return {
        name: literal(value) if name in USER_TEXT and isinstance(value, str) else value
        for name, value in params.items()
    }


def error_text(error: EngineError) -> str:
    """The translated message for an engine refusal."""
    return t(f"errors.{error.key}", **shown(error.params))


def input_error_text(error) -> str:
    """The translated message for a ``ui.vector_input.VectorInputError``."""
    return t(f"input.{error.key}", **shown(error.params))
