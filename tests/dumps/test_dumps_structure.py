"""A file's structure, not only its size, is bounded before it is read: every crafted file of
the hostile sweep, made here small, is refused by name or read, through the page's own call
(``report`` on an ``Upload`` of its bytes, then ``report_tables``) and as a path, in a child
interpreter whose peak memory is measured (``memory_probe``)."""

from __future__ import annotations

import io
import json
import os
import struct
import zipfile

import numpy as np
import pytest
import torch

from engine.dumps.limits import (
    MAX_ENTRIES,
    MAX_LAYERS,
    MAX_NAME_CHARS,
    MAX_NPY_HEADER_BYTES,
    MAX_PICKLE_OPCODES,
    MAX_SAFETENSORS_HEADER_BYTES,
    MEMORY_BUDGET_BYTES,
)
from tests.dumps import dump_files as files
from tests.dumps.memory_probe import MemoryProbe

REFUSED_PEAK = 96 * 2**20  # a refusal reads next to nothing (measured: a few MiB)


@pytest.fixture(scope="module")
def probe():
    with MemoryProbe() as child:
        yield child


def _both(probe, path) -> list[dict]:
    """The outcome as an upload and as a path; no crash, memory within the budget."""
    results = [probe.read(path, upload=True), probe.read(path, upload=False)]
    for result in results:
        assert result["outcome"] != "crashed", result["message"]
        assert result["peak"] <= MEMORY_BUDGET_BYTES, result
    return results


def _refused(probe, path, key: str) -> str:
    results = _both(probe, path)
    for result in results:
        assert result["outcome"] == "refused" and result["key"] == f"dumps.{key}", result
        assert result["peak"] < REFUSED_PEAK, result
        assert path.name in result["message"] or "Stream" in result["message"]
    return results[0]["message"]


def _read(probe, path) -> None:
    for result in _both(probe, path):
        assert result["outcome"] == "report", result


def _pt(path, obj):
    torch.save(obj, path)
    return path


@pytest.mark.slow  # writes a 100,000-layer file
def test_one_tensor_of_100000_layers_is_refused_by_its_layer_count(probe, tmp_path):
    path = files.write_safetensors(
        tmp_path / "deep.safetensors", {"h": torch.ones(100000, 1, 1, 1)}
    )
    message = _refused(probe, path, "too_many_layers")
    assert f"100000 layers; at most {MAX_LAYERS}" in message


@pytest.mark.slow  # reads the most layers accepted
def test_the_most_layers_accepted_read_in_little_memory(probe, tmp_path):
    """Each layer once kept a 256 KiB histogram: 5,000 layers took 2.5 GB.  At the bound, a
    layer costs its occupied histogram bins and its largest entries."""
    stack = torch.randn(MAX_LAYERS, 1, 1, 1)
    path = files.write_safetensors(tmp_path / "stack.safetensors", {"h": stack})
    for result in _both(probe, path):
        assert result["outcome"] == "report" and result["peak"] < 256 * 2**20, result


def test_a_small_file_whose_report_would_exceed_the_memory_budget_is_refused(probe, tmp_path):
    """500 layers of 8,000 tokens of one channel: 16 MB on disk, 4 million token rows in the
    report and its tables (~700 bytes each): refused before any data is read."""
    path = files.write_safetensors(tmp_path / "tall.safetensors", {"h": torch.ones(500, 8000, 1)})
    message = _refused(probe, path, "too_much_memory")
    assert "(500 layers × 8000 tokens, d = 1); one read may take at most 1.5 GiB" in message


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda t: [t] * 20000, id="one-tensor-20000-times"),
        pytest.param(lambda t: _doubled(t, 16, list), id="2^16-nested-lists"),
        pytest.param(lambda t: _doubled(t, 40, list), id="2^40-nested-lists"),
        pytest.param(lambda t: _doubled(t, 40, dict), id="2^40-nested-dicts"),
        pytest.param(lambda t: _doubled([], 40, list), id="2^40-empty-lists"),
    ],
)
def test_shared_references_are_counted_before_anything_is_walked(probe, tmp_path, make):
    path = _pt(tmp_path / "bomb.pt", make(torch.randn(4, 8)))
    assert path.stat().st_size < 100_000
    message = _refused(probe, path, "too_many_references")
    assert "more than 16384 objects" in message


def _doubled(leaf, times: int, kind):
    x = [leaf]
    for _ in range(times):
        x = [x, x] if kind is list else {"a": x, "b": x}
    return x


def test_a_pt_of_more_tensors_than_accepted_is_refused_by_count(probe, tmp_path):
    path = _pt(tmp_path / "many.pt", [torch.zeros(1, 2) for _ in range(MAX_ENTRIES + 1)])
    message = _refused(probe, path, "too_many_entries")
    assert f"holds {MAX_ENTRIES + 1} arrays" in message


@pytest.mark.slow  # writes a 50,000-tensor file
def test_a_pt_of_50000_tensors_is_refused_from_its_zip_directory(probe, tmp_path):
    path = _pt(tmp_path / "huge.pt", {f"h{i}": torch.zeros(1) for i in range(50000)})
    _refused(probe, path, "too_many_entries")


def test_a_list_that_holds_itself_is_refused(probe, tmp_path):
    loop = [torch.zeros(2, 3)]
    loop.append(loop)
    message = _refused(probe, _pt(tmp_path / "loop.pt", loop), "self_reference")
    assert "holds itself" in message


def test_nesting_deeper_than_a_name_can_be_long_is_refused(probe, tmp_path):
    nested = torch.zeros(2, 3)
    for _ in range(MAX_NAME_CHARS // 2 + 10):
        nested = [nested]
    _refused(probe, _pt(tmp_path / "nested.pt", nested), "name_too_long")


def test_a_pickle_of_more_opcodes_than_accepted_is_refused_before_unpickling(probe, tmp_path):
    path = _pt(tmp_path / "ops.pt", {"h": torch.zeros(2, 3), "n": list(range(MAX_PICKLE_OPCODES))})
    _refused(probe, path, "pickle_too_complex")


def _npz_of(path, members: dict[str, bytes]):
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


@pytest.mark.slow  # writes a 50,000-member file
def test_an_npz_of_50000_members_is_refused_from_its_zip_directory(probe, tmp_path):
    tiny = _npy_bytes(np.zeros(1, np.float32))
    path = _npz_of(tmp_path / "many.npz", {f"m{i}.npy": tiny for i in range(50000)})
    message = _refused(probe, path, "too_many_entries")
    assert "holds 50000 arrays" in message


def _claiming(path, claimed: int):
    """Rewrite each member's uncompressed size in the zip's central directory to ``claimed``:
    what a deflated bomb of zeros states (writing 8 GB of zeros would take minutes)."""
    data = bytearray(path.read_bytes())
    at = data.find(b"PK\x01\x02")
    while at >= 0:
        struct.pack_into("<L", data, at + 24, claimed)
        at = data.find(b"PK\x01\x02", at + 4)
    path.write_bytes(bytes(data))
    return path


def test_npz_members_that_expand_past_the_limit_together_are_refused_as_an_upload(probe, tmp_path):
    members = {f"h.{i}.npy": _npy_bytes(np.ones((4, 8), np.float32)) for i in range(8)}
    path = _claiming(_npz_of(tmp_path / "bomb.npz", members), 1000 * 10**6)  # 8 GB together
    upload = probe.read(path, upload=True)
    assert upload["outcome"] == "refused" and upload["key"] == "dumps.expands_too_far", upload
    assert "expand to 8000 MB when decompressed; at most 1000 MB together" in upload["message"]
    on_disk = probe.read(path, upload=False)  # a path is streamed a window at a time
    assert on_disk["outcome"] in ("report", "refused") and on_disk["peak"] < REFUSED_PEAK


def test_a_safetensors_header_past_the_bound_is_refused_before_it_is_read(probe, tmp_path):
    path = tmp_path / "header.safetensors"
    path.write_bytes((100 * 10**6).to_bytes(8, "little") + b"{}")  # claims a 100 MB header
    os.truncate(path, 8 + 100 * 10**6)  # and is that long (sparse)
    message = _refused(probe, path, "header_too_large")
    assert f"at most {MAX_SAFETENSORS_HEADER_BYTES} are accepted" in message


def test_an_npy_header_past_the_bound_is_refused_before_it_is_read(probe, tmp_path):
    path = tmp_path / "header.npy"  # format 2.0: a 4-byte length, claiming a 100 MB header
    path.write_bytes(b"\x93NUMPY\x02\x00" + struct.pack("<I", 100 * 10**6) + b"{")
    os.truncate(path, 12 + 100 * 10**6)  # and that long (sparse)
    message = _refused(probe, path, "npy_header_too_large")
    assert f"claims {100 * 10**6} bytes; at most {MAX_NPY_HEADER_BYTES} are accepted" in message


def test_a_safetensors_header_of_too_many_entries_is_refused_before_any_data(probe, tmp_path):
    header = {
        f"e{i}": {"dtype": "F32", "shape": [1], "data_offsets": [4 * i, 4 * i + 4]}
        for i in range(MAX_ENTRIES + 1)
    }
    path = files.raw_safetensors(tmp_path / "wide.safetensors", header, bytes(4 * len(header)))
    _refused(probe, path, "too_many_entries")


LONG_NAME = "h." + "7" * 5000  # a 5,000-digit layer number: past int()'s digit limit too


@pytest.mark.parametrize("suffix", [".safetensors", ".npz", ".pt"])
def test_a_5000_digit_name_is_refused_by_its_length(probe, tmp_path, suffix):
    tensors = {LONG_NAME: torch.zeros(3, 4), "h.1": torch.zeros(3, 4)}
    path = tmp_path / f"long{suffix}"
    if suffix == ".safetensors":
        files.write_safetensors(path, tensors)
    elif suffix == ".npz":
        files.write_npz(path, {k: v.numpy() for k, v in tensors.items()})
    else:
        _pt(path, tensors)
    message = _refused(probe, path, "name_too_long")
    assert "5002 characters long (“h.77777" in message and f"at most {MAX_NAME_CHARS}" in message


def test_overlapping_safetensors_offsets_are_refused_as_an_upload_and_as_a_path(probe, tmp_path):
    header = {
        "a": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
        "b": {"dtype": "F32", "shape": [2, 2], "data_offsets": [8, 24]},
    }
    path = files.raw_safetensors(tmp_path / "overlap.safetensors", header, bytes(24))
    message = _refused(probe, path, "corrupt_file")
    assert "invalid offset for tensor `b`" in message


def _layers(x: torch.Tensor) -> dict[str, torch.Tensor]:
    return {f"h.{i}": x[i] for i in range(x.shape[0])}


@pytest.mark.parametrize("wrap", [lambda t: t.requires_grad_(), torch.nn.Parameter])
def test_tensors_that_require_grad_are_read_detached(probe, tmp_path, wrap):
    x = files.stream(layers=4, batch=1, tokens=5, d=8)
    path = _pt(tmp_path / "grad.pt", {k: wrap(v.clone()) for k, v in _layers(x).items()})
    _read(probe, path)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("value", [1.7e308, 1e100])
def test_float64_extremes_are_read(probe, tmp_path, value):
    """Squares past float64 make an infinite RMS, which the page states (tests/ui)."""
    extreme = np.full((4, 5, 8), value)
    extreme[:, :, ::2] *= -1
    _read(probe, files.write_npz(tmp_path / "big.npz", {f"h.{i}": extreme[i] for i in range(4)}))


def test_zero_d_entries_named_as_a_norms_input_and_output_are_skipped(probe, tmp_path):
    x = files.stream(layers=4, batch=1, tokens=5, d=8)[:, 0].numpy()
    arrays = {**{f"h.{i}": x[i] for i in range(4)}, "ln.input": np.float32(1.0)}
    arrays["ln.output"] = np.float32(2.0)
    _read(probe, files.write_npz(tmp_path / "scalars.npz", arrays))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int8, torch.bool])
def test_integer_and_bool_entries_are_skipped_beside_a_float_stream(probe, tmp_path, dtype):
    x = files.stream(layers=4, batch=1, tokens=5, d=8)
    tensors = {**_layers(x), "ids": torch.ones(1, 5, dtype=dtype)}
    _read(probe, files.write_safetensors(tmp_path / "mixed.safetensors", tensors))
    _read(
        probe, files.write_npz(tmp_path / "mixed.npz", {k: v.numpy() for k, v in tensors.items()})
    )
    _read(probe, _pt(tmp_path / "mixed.pt", tensors))


@pytest.mark.parametrize(
    "shape, outcome",
    [
        ((8,), "refused"),
        ((5, 8), "report"),
        ((2, 5, 8), "report"),
        ((3, 2, 5, 8), "report"),
        ((3, 2, 2, 5, 8), "refused"),
    ],
)
def test_entries_of_one_to_five_axes_are_read_or_refused_with_a_message(
    probe, tmp_path, shape, outcome
):
    path = files.write_safetensors(tmp_path / "one.safetensors", {"x": torch.randn(shape)})
    for result in _both(probe, path):
        assert result["outcome"] == outcome, result


@pytest.mark.parametrize("shape", [(0, 8), (5, 0)])
def test_a_norm_pair_of_zero_rows_or_zero_width_is_skipped_not_a_crash(probe, tmp_path, shape):
    x = files.stream(layers=4, batch=1, tokens=5, d=8)
    tensors = {**_layers(x[:, 0]), "ln.input": torch.zeros(shape), "ln.output": torch.zeros(shape)}
    _read(probe, files.write_safetensors(tmp_path / "pair.safetensors", tensors))


def test_a_metadata_json_of_many_entries_stays_under_the_header_bound(tmp_path):
    """The bound leaves room for real dumps: MAX_ENTRIES entries with long names."""
    name = "model.layers.{i}." + "x" * (MAX_NAME_CHARS - 40)
    header = {
        name.format(i=i): {"dtype": "F16", "shape": [4096, 8192], "data_offsets": [0, 0]}
        for i in range(MAX_ENTRIES)
    }
    assert len(json.dumps(header)) < MAX_SAFETENSORS_HEADER_BYTES
