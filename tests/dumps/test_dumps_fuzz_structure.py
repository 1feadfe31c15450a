"""Fuzzing a dump's structure: generated entries (names of every family, numbers long and
short, markup; 0 to 5 axes, empty axes; float, int and bool dtypes), and for .pt nested
lists, tuples and dicts with shared references.  Each file is read as an upload and as a
path in a child interpreter (``memory_probe``): the outcome is a report or an
``EngineError``, and the read's peak memory stays within the budget."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors.torch import save_file

from engine.dumps.limits import MEMORY_BUDGET_BYTES
from tests.dumps.memory_probe import MemoryProbe

FUZZ = settings(
    max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None
)

HEADS = ["h", "hidden_states", "model.layers", "blocks", "transformer.h", "x", "<b>a</b>"]
TAILS = ["", ".input", ".output", ".input_layernorm.input", ".input_layernorm.output"]
TAILS += [".input_layernorm.weight", ".hook_resid_pre", ".ln1.hook_normalized"]
NUMBERS = st.one_of(
    st.integers(0, 40).map(str),
    st.integers(0, 10**30).map(str),  # a step, a hash: no layer number
    st.just(""),
)
NAMES = st.builds(
    lambda head, number, tail: f"{head}.{number}{tail}" if number else f"{head}{tail}",
    st.sampled_from(HEADS),
    NUMBERS,
    st.sampled_from(TAILS),
)
SHAPES = st.lists(st.integers(0, 6), min_size=0, max_size=5).map(tuple) | st.sampled_from(
    [(600, 1, 1), (1, 4), (3, 0, 4), (2, 5, 8)]  # layers past the bound; a row; an empty axis
)
DTYPES = st.sampled_from(["float16", "bfloat16", "float32", "float64", "int32", "bool"])
ENTRIES = st.dictionaries(NAMES, st.tuples(SHAPES, DTYPES), min_size=1, max_size=12)


def _tensor(shape: tuple, dtype: str) -> torch.Tensor:
    values = torch.randn(shape) * 3 if shape else torch.tensor(1.5)
    return values.to(getattr(torch, dtype)) if dtype != "bool" else values > 0


def _nested(draw, leaves: list[torch.Tensor], depth: int = 0):
    """Leaves in lists, tuples and dicts, some shared by reference, sometimes doubled."""
    kind = draw(st.sampled_from(["list", "tuple", "dict", "leaf"] if depth < 3 else ["leaf"]))
    if kind == "leaf" or not leaves:
        return draw(st.sampled_from(leaves)) if leaves else None
    parts = [_nested(draw, leaves, depth + 1) for _ in range(draw(st.integers(1, 4)))]
    if kind == "dict":
        return {f"k{i}": part for i, part in enumerate(parts)}
    node = parts if kind == "list" else tuple(parts)
    for _ in range(draw(st.integers(0, 24)) if depth == 0 else 0):  # x = [x, x]
        node = [node, node]
    return node


@st.composite
def dumps(draw):
    suffix = draw(st.sampled_from([".safetensors", ".npz", ".pt"]))
    entries = draw(ENTRIES)
    tensors = {name: _tensor(shape, dtype) for name, (shape, dtype) in entries.items()}
    nested = (
        _nested(draw, list(tensors.values())) if suffix == ".pt" and draw(st.booleans()) else None
    )
    return suffix, tensors, nested


def _write(folder: Path, suffix: str, tensors: dict, nested) -> Path:
    path = folder / f"fuzz{suffix}"
    if suffix == ".safetensors":
        save_file({k: v.contiguous() for k, v in tensors.items()}, str(path))
    elif suffix == ".npz":
        usable = {k: v for k, v in tensors.items() if v.dtype != torch.bfloat16}
        np.savez(path, **{k: v.numpy() for k, v in usable.items()})
    else:
        torch.save(nested if nested is not None else tensors, path)
    return path


@pytest.fixture(scope="module")
def probe():
    with MemoryProbe() as child:
        yield child


@pytest.mark.slow  # generated files, each read in full
@FUZZ
@given(dumps())
def test_any_structure_ends_in_a_report_or_a_refusal_within_the_memory_budget(probe, dump):
    suffix, tensors, nested = dump
    with tempfile.TemporaryDirectory() as folder:
        path = _write(Path(folder), suffix, tensors, nested)
        for upload in (True, False):
            result = probe.read(path, upload)
            assert result["outcome"] in ("report", "refused"), result.get("message")
            assert result["peak"] <= MEMORY_BUDGET_BYTES, result
