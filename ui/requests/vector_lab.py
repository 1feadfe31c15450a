"""The Vector Lab's requests: every precision preset's rows (the examples menu quotes and
types them), and the rows the inputs name (a preset's, or drawn at random; typed rows come
parsed from the widget), refused where their storage dtype cannot hold a value."""

from __future__ import annotations

from dataclasses import astuple

from engine.norms.precision_presets import PRESET_NAMES, preset_rows
from engine.norms.random_inputs import random_vectors
from ui.compute import compute
from ui.errors import input_error_text
from ui.vector_input import Rows, VectorInputError, check_representable


def presets() -> dict[str, Rows]:
    """Each preset of engine/norms/precision_presets.py: its rows, by name."""
    return {name: compute(preset_rows, name) for name in PRESET_NAMES}


def vectors(choice) -> tuple[Rows, tuple[str, ...]]:
    """The rows ``choice`` (a ``VectorChoice``, ui/widgets/vector_lab.py) names, or () and the
    translated refusal: of a typed row (the widget's), of a value the storage dtype cannot
    hold."""
    if choice.errors or choice.rows is not None:
        return choice.rows or (), choice.errors
    if choice.preset is not None:
        rows = compute(preset_rows, choice.preset)
    else:
        drawn = compute(random_vectors, *astuple(choice.random)).tolist()
        rows = tuple(tuple(row) for row in drawn)
    try:
        check_representable(rows, choice.dtype, drawn=choice.preset is None)
    except VectorInputError as error:
        return (), (input_error_text(error),)
    return rows, ()
