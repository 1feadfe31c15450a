"""Fuzzing the loaders: random bytes, mutated and truncated valid files, hand-made headers.

Whatever the bytes, ``report`` either succeeds or raises ``EngineError`` with a message
naming the file; no other exception escapes and nothing crashes the interpreter.
"""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path

import numpy as np
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.dumps.report import report
from engine.dumps.sources import Upload
from engine.errors import EngineError
from tests.dumps import dump_files as files

SUFFIXES = [".safetensors", ".npy", ".npz", ".pt", ".pth"]
FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


def _valid_bytes(suffix: str) -> bytes:
    x = files.stream(layers=3, batch=1, tokens=4, d=8)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"v{suffix}"
        if suffix == ".safetensors":
            files.write_safetensors(path, files.hf_names(x), metadata={"m": "1"})
        elif suffix == ".npy":
            files.write_npy(path, x.numpy())
        elif suffix == ".npz":
            files.write_npz(path, {f"h{i}": x[i].numpy() for i in range(3)}, compressed=True)
        else:
            files.write_pt(path, {"hidden_states": list(x.unbind(0))})
        return path.read_bytes()


VALID = {suffix: _valid_bytes(suffix) for suffix in SUFFIXES}


def _only_engine_errors(name: str, data: bytes) -> None:
    """Both as a file on disk and as an upload."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        for source in (path, Upload(name, data)):
            try:
                report(source)
            except EngineError as error:
                assert name in str(error) or error.key.startswith("dumps.")
                assert str(error)


@FUZZ
@given(suffix=st.sampled_from(SUFFIXES), data=st.binary(max_size=2048))
def test_random_bytes(suffix, data):
    _only_engine_errors(f"random{suffix}", data)


@FUZZ
@given(
    suffix=st.sampled_from(SUFFIXES),
    flips=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), max_size=6),
    cut=st.one_of(st.none(), st.integers(0, 1 << 20)),
)
def test_mutated_valid_files(suffix, flips, cut):
    data = bytearray(VALID[suffix])
    for position, value in flips:
        data[position % len(data)] = value
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    _only_engine_errors(f"mutated{suffix}", bytes(data))


_DTYPES = st.sampled_from(["F16", "BF16", "F32", "F64", "I64", "U8", "X9", 3, None])
_SHAPES = st.one_of(
    st.lists(st.integers(-2, 1 << 40), max_size=5),
    st.lists(st.integers(0, 6), min_size=1, max_size=4),
    st.just("12"),
)
_OFFSETS = st.one_of(st.lists(st.integers(-5, 1 << 45), max_size=3), st.just({"a": 1}))


@FUZZ
@given(
    entries=st.dictionaries(
        st.text(max_size=12),
        st.fixed_dictionaries({"dtype": _DTYPES, "shape": _SHAPES, "data_offsets": _OFFSETS}),
        max_size=4,
    ),
    data=st.binary(max_size=512),
    metadata=st.one_of(st.none(), st.dictionaries(st.text(max_size=4), st.text(max_size=4))),
)
def test_safetensors_headers(entries, data, metadata):
    header = dict(entries)
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    _only_engine_errors("header.safetensors", len(text).to_bytes(8, "little") + text + data)


@FUZZ
@given(
    descr=st.sampled_from(["<f2", "<f4", ">f8", "|O", "<i4", "V2", "<c8", "bogus"]),
    fortran=st.booleans(),
    shape=st.lists(st.integers(0, 1 << 33), max_size=4),
    data=st.binary(max_size=512),
)
def test_npy_headers(descr, fortran, shape, data):
    buffer = io.BytesIO()
    header = {"descr": descr, "fortran_order": fortran, "shape": tuple(shape)}
    try:
        np.lib.format.write_array_header_1_0(buffer, header)
    except (ValueError, TypeError):
        return  # numpy's own writer refuses it; nothing to read
    _only_engine_errors("header.npy", buffer.getvalue() + data)


@FUZZ
@given(
    obj=st.recursive(
        st.one_of(
            st.integers(),
            st.text(max_size=4),
            st.none(),
            st.builds(lambda n: torch.zeros(n), st.integers(0, 3)),
            st.builds(lambda n: torch.ones(2, n, 3, dtype=torch.float16), st.integers(0, 3)),
        ),
        lambda children: st.one_of(
            st.lists(children, max_size=3),
            st.dictionaries(st.text(max_size=4), children, max_size=3),
        ),
        max_leaves=6,
    )
)
def test_pt_contents(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    _only_engine_errors("contents.pt", buffer.getvalue())
