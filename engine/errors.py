"""``EngineError``: every refusal of the engine, in a form a page can translate.

``key`` names the message (``errors.<key>`` in ``locales/<lang>/errors.toml``) and ``params``
fill it in.  ``str(error)`` is the English message, read from ``locales/en/errors.toml`` as
data (the engine imports nothing from ``ui/``), so the engine's English lives in that file
only: Python and CLI users read the same sentence a page shows in English.
It is a ``ValueError``, so callers that only know "bad value" can catch it as one.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

MESSAGES_FILE = Path(__file__).resolve().parents[1] / "locales" / "en" / "errors.toml"


def _flatten(table: dict, prefix: str = "") -> dict[str, str]:
    flat: dict[str, str] = {}
    for name, value in table.items():
        key = f"{prefix}{name}"
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{key}."))
        else:
            flat[key] = str(value)
    return flat


@functools.cache
def messages() -> dict[str, str]:
    """Every English refusal message, keyed as ``EngineError.key`` (``"dumps.corrupt"``)."""
    with MESSAGES_FILE.open("rb") as handle:
        return _flatten(tomllib.load(handle))


class Phrase(str):
    """A message parameter that is our own words rather than data (``key``, filled with
    ``params``; the name standing for a keyless file's one array has none): its English text
    from ``errors.toml`` wherever text is compared or printed, and its key and parameters for
    a page to write it in the reader's language (``ui/errors.py``).  A string from a file
    that happens to read the same stays data."""

    key: str
    params: dict

    def __new__(cls, key: str, params: dict | None = None) -> Phrase:
        params = dict(params or {})
        phrase = super().__new__(cls, english(key, params))
        phrase.key, phrase.params = key, params
        return phrase

    def __reduce__(self):  # pickled (a cached report) as its key, read back in any process
        return (Phrase, (self.key, self.params))


class Listing(str):
    """A list in a message (the writers of a format, a few examples): in English joined with
    the ``separator`` (a locale key) of ``locales/en/`` wherever text is compared or printed,
    and its ``items`` for a page to join with the reader's language's separator (Chinese
    writes an enumeration comma, never a half-width comma)."""

    items: tuple[str, ...]
    separator: str

    def __new__(cls, items, separator: str = "app.list_separator") -> Listing:
        items = tuple(items)
        listing = super().__new__(cls, english_word(separator).join(items))
        listing.items, listing.separator = items, separator
        return listing

    def __reduce__(self):
        return (Listing, (self.items, self.separator))


@functools.cache
def english_word(key: str) -> str:
    """An English word of the app's locale files (``"app.list_separator"``), read as data."""
    table, name = key.split(".", 1)
    with (MESSAGES_FILE.parent / f"{table}.toml").open("rb") as handle:
        return _flatten(tomllib.load(handle))[name]


class _Unfilled(dict):
    def __missing__(self, name: str) -> str:
        return "{" + name + "}"  # shown as written: a message never fails to print


class EngineError(ValueError):
    """A value the engine refuses: what was wrong and what is accepted."""

    def __init__(self, key: str, params: dict | None = None):
        self.key = key
        self.params = dict(params or {})
        super().__init__(key, self.params)

    def __str__(self) -> str:
        return english(self.key, self.params)


def english(key: str, params: dict) -> str:
    """The English message ``key`` filled in with ``params`` (for a CLI and ``str()``)."""
    template = messages().get(key)
    if template is None:
        return f"{key}: {params}"
    try:
        return template.format_map(_Unfilled(params))
    except (ValueError, IndexError):  # a format spec ("{limit:g}") on a missing value
        return f"{template} {params}"
