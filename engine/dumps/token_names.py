"""Each position's token text, where a dump carries it: a capture's metadata, a ``tokens``
string entry of the safetensors metadata (JSON), of an ``.npz`` (a string array) or of a
``.pt`` dict (a list of strings).  ``[T]`` is one sequence, ``[B][T]`` a batch.

A file's scan (``engine/dumps/formats``) puts what it found into its metadata under
``TOKENS_KEY`` as JSON, so every format reaches the report the same way; ``dump_token_rows``
reads it back and keeps it only when its shape is the stream's.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping

import numpy as np

from engine.dumps.capture import capture_info, encodable

TOKENS_KEY = "tokens"
MAX_TOKEN_STRINGS = 1 << 16  # strings a tokens entry may hold
MAX_TOKEN_CHARS = 256  # characters of one token's text


def token_rows(value: object) -> tuple[tuple[str, ...], ...] | None:
    """[B][T] strings from [T] or [B][T] strings (lists, tuples or a numpy string array);
    None for anything else, or past the limits."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind != "U" or value.ndim not in (1, 2):
            return None
        order = value.dtype.byteorder if value.dtype.byteorder in "<>" else "="
        codes = np.ascontiguousarray(value).view(f"{order}u4")  # each character's code
        if value.size and codes.max() > sys.maxunicode:
            return None  # no character: numpy would make strings no str operation survives
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or not value:
        return None
    rows = [value] if all(isinstance(v, str) for v in value) else value
    if not all(isinstance(row, (list, tuple)) and row for row in rows):
        return None
    if not all(isinstance(v, str) and len(v) <= MAX_TOKEN_CHARS for row in rows for v in row):
        return None
    if not all(encodable(v) for row in rows for v in row):
        return None  # a lone surrogate (U+D800-DFFF): no UTF-8 holds it, the JSON download raised
    if sum(len(row) for row in rows) > MAX_TOKEN_STRINGS:
        return None
    return tuple(tuple(row) for row in rows)


def tokens_json(rows: tuple[tuple[str, ...], ...]) -> str:
    return json.dumps([list(row) for row in rows], ensure_ascii=False)


def dump_token_rows(
    metadata: Mapping[str, str], batch: int, tokens: int
) -> tuple[tuple[tuple[str, ...], ...], str] | None:
    """([B][T] token texts, where from: "capture" or "file"), when the dump's metadata holds
    them in the stream's shape (``batch`` × ``tokens``); None otherwise."""
    info = capture_info(metadata)
    if info is not None:
        rows, origin = info.tokens, "capture"
    else:
        try:
            rows = token_rows(json.loads(metadata.get(TOKENS_KEY, "")))
        except (TypeError, ValueError, RecursionError):  # RecursionError: nested past its depth
            return None
        origin = "file"
    if rows is None or len(rows) != batch or any(len(row) != tokens for row in rows):
        return None
    return rows, origin
