"""Refusals in the reader's language, with any text a user typed shown literally.

Engine refusals (``EngineError``) and typed-input refusals (``VectorInputError``) carry a
message key and parameters; the message is rendered as Markdown, so every parameter that
can hold text from a person, a file or a URL is shown as a code span (``literal``): a
typed ``https://...`` never becomes a link, ``**`` never becomes bold.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from engine.errors import EngineError, Listing, Phrase
from ui.formatting import count, literal
from ui.i18n import catalog, t

# Parameters that may hold text from outside: typed tokens, values from a URL, file and
# entry names of uploads, and what a dump's parser said about its bytes (``detail``, the
# entry names in ``examples``, ``other`` and ``other_shape``, a stream template).
USER_TEXT = frozenset(
    {
        "token",
        "value",
        "file",
        "entry",
        "key",
        "path",
        "param",
        "field",
        "heads_field",
        "source",
        "stream",
        "other",
        "other_shape",
        "shape",
        "suffix",
        "detail",
        "examples",
        "model_type",
        "error",  # a parser's own words (json, tomllib), in English whatever the page's language
    }
)
SHOWN_IN_MESSAGE = 60  # characters of one outside text a message repeats (then "…")
# Refusals whose ``accepted`` lists names read from a file (elsewhere it is our own words).
USER_ACCEPTED = frozenset({"dumps.unknown_stream"})


def own_words(value, outside: bool = False):
    """A name as the page writes it: the engine's own words (``Phrase``, e.g. a
    keyless file's one array) in the reader's language, a ``Listing`` joined with the reader's
    separator, other text literally when it comes from ``outside``, our own whole numbers
    grouped (a header's claimed size, a limit), anything else as it is."""
    if isinstance(value, Listing):
        return t(value.separator).join(own_words(item, outside) for item in value.items)
    if isinstance(value, Phrase):
        return t(f"errors.{value.key}", **shown(value.params))
    if outside:  # as it came, so that it can be found and typed again
        return literal(value, SHOWN_IN_MESSAGE) if isinstance(value, str) else value
    return count(value) if type(value) is int else value  # a size or a limit: "4,096"


def shown(params: dict, extra: frozenset = frozenset()) -> dict:
    """``params`` with every outside text as a literal; numbers and our own words as they are
    (the engine's ``Phrase`` and ``Listing`` in the reader's language)."""
    outside = USER_TEXT | extra
    return {name: own_words(value, name in outside) for name, value in params.items()}


def error_text(error: EngineError) -> str:
    """The translated message for an engine refusal."""
    extra = frozenset({"accepted"}) if error.key in USER_ACCEPTED else frozenset()
    return t(f"errors.{error.key}", **shown(error.params, extra))


def input_error_text(error, own: str = "") -> str:
    """The translated message for a ``ui.vector_input.VectorInputError``; ``own``: a page's
    namespace whose text replaces the shared one for the keys it holds (the shared advice
    names the Vector Lab's own controls: its dtype, its random generator)."""
    counts = {  # "10,000 numbers"; a typed token stays as typed
        name: count(value) if type(value) is int else value for name, value in error.params.items()
    }
    return t(input_key(error.key, own), **shown(counts))


def input_key(key: str, own: str = "") -> str:
    """``own.key`` where the page's namespace ``own`` holds that text, else ``input.key``."""
    return f"{own}.{key}" if own and f"{own}.{key}" in catalog("en") else f"input.{key}"


@contextmanager
def showing_refusals(target=st) -> Iterator[None]:
    """Runs the block; an engine refusal raised in it (a file, vector, view or setting the
    engine does not take) ends the block and is shown as an error in ``target``."""
    try:
        yield
    except EngineError as error:
        target.error(error_text(error), icon=":material/error:")


def show_errors(messages, target=st) -> None:
    """Each of an input's error messages (what was wrong, what is accepted), in ``target``."""
    for message in messages:
        target.error(message, icon=":material/error:")
