"""Turn what a person types into vectors, or say precisely what is wrong with it.

Accepted: one vector per line; numbers separated by commas, spaces, tabs or semicolons;
optional surrounding brackets (``[1, 2, 3, 4]``); Python float syntax (``-1.5e-3``).  What a
Chinese or Japanese keyboard types is read the same way: full-width digits, commas,
semicolons and spaces (``１，２；３``), the ideographic comma (``、``), and the Unicode
minus sign (``−1``, U+2212).
Errors are ``VectorInputError`` with a message key in the ``input`` locale namespace and
the parameters the message needs, so the page can say it in the user's language.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import torch

from engine.config import MAX_ROWS, MAX_VECTOR_WIDTH
from ui.errors import input_key
from ui.formatting import (
    FLOAT64_TINY,
    as_ascii,
    format_reading,
    lost_to_zero,
    number_text,
    read_float,
    true_minus,
)
from ui.i18n import t

Rows = tuple[tuple[float, ...], ...]  # vectors, one a row: [T, d]
MAX_VECTOR_CELLS = 65536
MAX_TEXT_CHARS = 400_000

_SEPARATORS = re.compile(r"[,;\s]+")
_GAP = re.compile(r"[,;]\s*[,;]")  # two commas (or semicolons) with no number between them
_BRACKETS = "[](){}"
_STORAGE = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


@dataclass
class VectorInputError(Exception):
    """Bad input: ``key`` names the message (``input.<key>``), ``params`` fill it in."""

    key: str
    params: dict = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.key}: {self.params}"


_PAIRS = {"[": "]", "(": ")", "{": "}"}
_OPENING = {close: open_ for open_, close in _PAIRS.items()}


def _quoted(typed: str) -> str:
    """``typed`` without the brackets at its ends that it does not close itself (those of
    a row around it: ``[abc`` -> ``abc``; ``\\frac{1}{2}`` stays whole).  One pass each way,
    the counts kept as it cuts (counting again at each cut took 56 s for 400,000 "[")."""
    counts = {bracket: typed.count(bracket) for bracket in _BRACKETS}
    start, end = 0, len(typed)
    while start < end and (o := typed[start]) in _PAIRS and counts[o] > counts[_PAIRS[o]]:
        counts[o] -= 1
        start += 1
    while end > start and (c := typed[end - 1]) in _OPENING and counts[c] > counts[_OPENING[c]]:
        counts[c] -= 1
        end -= 1
    return typed[start:end]


def _parse_number(typed: str, where: dict, prefix: str = "") -> float:
    """``typed`` (a token as typed, brackets and all) as a float64, or the
    error ``prefix + <what is wrong>`` with ``where`` (a vector's row and column, or a
    parameter's name and column) in its parameters.  What is not a number is quoted as
    typed (``_quoted``)."""
    token = typed.strip(_BRACKETS)
    where = {"token": token, **where}
    unsigned = token[1:] if token[:1] in ("+", "-", "\u2212") else token  # one sign at most
    if unsigned == "\u221e":  # ∞ is infinity, refused as "inf" is
        raise VectorInputError(prefix + "non_finite", where)
    try:
        value = read_float(token)
    except ValueError:
        raise VectorInputError(
            prefix + "not_a_number", {**where, "token": _quoted(typed)}
        ) from None
    if math.isnan(value) or (
        math.isinf(value) and token.lower().lstrip("+-") in ("inf", "infinity")
    ):
        raise VectorInputError(prefix + "non_finite", where)
    if math.isinf(value):  # e.g. 1e400: a number, but beyond float64
        raise VectorInputError(prefix + "beyond_float", where)
    if lost_to_zero(token, value):  # e.g. 1e-400: a nonzero number float64 holds as 0
        raise VectorInputError(prefix + "below_float", {**where, "tiny": FLOAT64_TINY})
    return value


def parse_vectors(text: str, dtype: str = "float32") -> Rows:
    """Parse ``text`` into rows of equal length, each value finite in ``dtype``."""
    if len(text) > MAX_TEXT_CHARS:
        raise VectorInputError("too_long", {"chars": len(text), "limit": MAX_TEXT_CHARS})
    typed_lines = [line.strip() for line in as_ascii(text).splitlines()]
    # a line of only brackets and separators ("[]", ",,,") holds no number: a blank line
    typed_lines = [line for line in typed_lines if _SEPARATORS.sub("", line).strip(_BRACKETS)]
    lines = [line.strip(_BRACKETS).strip() for line in typed_lines]
    if not lines:
        raise VectorInputError("empty")
    if len(lines) > MAX_ROWS:
        raise VectorInputError("too_many_rows", {"rows": len(lines), "limit": MAX_ROWS})
    rows = []
    for row_number, (line, typed_line) in enumerate(zip(lines, typed_lines), start=1):
        inner = line.strip(",; \t")  # a leading or trailing separator leaves nothing out
        gap = _GAP.search(inner)  # "1,,2": a number left out, not d = 2
        if gap is not None:
            before = _SEPARATORS.split(inner[: gap.start()])
            column = len([tok for tok in before if tok.strip(_BRACKETS)]) + 1
            raise VectorInputError("missing_number", {"row": row_number, "column": column})
        tokens = [tok for tok in _SEPARATORS.split(typed_line) if tok.strip(_BRACKETS)]
        if len(tokens) > MAX_VECTOR_WIDTH:
            raise VectorInputError(
                "too_wide", {"row": row_number, "d": len(tokens), "limit": MAX_VECTOR_WIDTH}
            )
        rows.append(
            tuple(
                _parse_number(tok, {"row": row_number, "column": col})
                for col, tok in enumerate(tokens, start=1)
            )
        )
    widths = [len(row) for row in rows]
    for row_number, width in enumerate(widths, start=1):
        if width != widths[0]:
            raise VectorInputError(
                "ragged", {"first": widths[0], "row": row_number, "other": width}
            )
    if widths[0] * len(rows) > MAX_VECTOR_CELLS:
        raise VectorInputError(
            "too_many_cells", {"cells": widths[0] * len(rows), "limit": MAX_VECTOR_CELLS}
        )
    check_representable(rows, dtype)
    return tuple(rows)


def _stored(rows, dtype: str) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.float64).to(_STORAGE[dtype])


def _drawn_text(value: float) -> str:
    """A drawn value past a dtype's range, to the unit: "1,000,002" (to four digits both
    1,000,002 and the shift 1,000,000 read "10⁶"); a power of ten from a billion on."""
    return true_minus(f"{value:,.0f}") if abs(value) < 1e9 else format_reading(value)


def check_representable(rows, dtype: str, drawn: bool = False) -> None:
    """Refuse values that overflow to inf when stored in ``dtype`` (say which and where; a
    ``drawn`` value, which was never shown, to a few digits, with what makes draws smaller)."""
    stored = _stored(rows, dtype)
    overflow = torch.isinf(stored).nonzero()
    if len(overflow):
        row, column = (int(i) for i in overflow[0])
        largest = torch.finfo(_STORAGE[dtype]).max
        value = rows[row][column]
        raise VectorInputError(
            "beyond_drawn" if drawn else "beyond_dtype" if dtype == "float32" else "beyond_half",
            {
                "value": _drawn_text(value) if drawn else number_text(value),
                "row": row + 1,
                "column": column + 1,
                "dtype": dtype,
                "limit": f"{largest:g}".replace("e+", "e"),  # 3.40282e38, as 1e39 is echoed
            },
        )


def parse_parameter(text: str, d: int, name: str) -> tuple[float, ...]:
    """gamma/beta as typed: one number (used for every channel) or exactly ``d`` numbers."""
    text = as_ascii(text)
    tokens = [tok for tok in _SEPARATORS.split(text.strip()) if tok.strip(_BRACKETS)]
    if not tokens:
        raise VectorInputError("parameter_empty", {"name": name})
    values = tuple(
        _parse_number(tok, {"name": name, "column": col}, "parameter_")
        for col, tok in enumerate(tokens, start=1)
    )
    if len(values) not in (1, d):
        raise VectorInputError("parameter_length", {"name": name, "count": len(values), "d": d})
    return values


def parse_eps(text: str) -> float:
    """ε as typed: a finite number in [0, 1]."""
    text = as_ascii(text)
    try:
        value = read_float(text.strip())
    except ValueError:
        raise VectorInputError("eps_invalid", {"token": text.strip()}) from None
    if not (0.0 <= value <= 1.0):
        raise VectorInputError("eps_invalid", {"token": text.strip()})
    if lost_to_zero(text, value):  # PyTorch's eps is a float64: 1e-400 would be no ε at all
        raise VectorInputError("eps_below_float", {"token": text.strip(), "tiny": FLOAT64_TINY})
    return value


def underflow_notes(rows, dtype: str, own: str = "", drawn: bool = False) -> tuple[str, ...]:
    """A translated note when typed values (``drawn``: a random draw's) are too small for
    ``dtype`` and are stored as 0 (``own``: a page's namespace whose text replaces the
    shared one, as in ``input_key``)."""
    values = torch.tensor(rows, dtype=torch.float64)
    lost = ((values != 0) & (_stored(rows, dtype) == 0)).nonzero()
    if not len(lost):
        return ()
    row, column = (int(i) for i in lost[0])
    storage = torch.finfo(_STORAGE[dtype])
    note = t(
        "input.underflow_drawn" + ("_one" if len(lost) == 1 else "")
        if drawn
        else input_key("underflow_one" if len(lost) == 1 else "underflow", own),
        count=f"{len(lost):,}",
        dtype=dtype,
        value=number_text(rows[row][column]),
        row=row + 1,
        column=column + 1,
        # the smallest positive number (a subnormal), as a number read: 5.96×10⁻⁸
        tiny=format_reading(storage.tiny * storage.eps, 3),
    )
    return (note,)
