"""Every bad input ends in an EngineError that names the file (and entry) and says what is
accepted; nothing huge is allocated.  Pickles and .pt records:
tests/dumps/test_dumps_bad_pickles.py."""

from __future__ import annotations

import io
import json
import os
import resource
import zipfile

import numpy as np
import pytest
import torch

from engine.dumps.dump import open_dump, read_tokens
from engine.dumps.formats import numpy_file
from engine.dumps.report import report
from engine.dumps.sources import Upload
from engine.errors import EngineError
from tests.dumps import dump_files as files


def refusal(source, key: str) -> EngineError:
    """The EngineError reading ``source`` raises; its key must be ``dumps.<key>``."""
    with pytest.raises(EngineError) as caught:
        report(source)
    assert caught.value.key == f"dumps.{key}", str(caught.value)
    return caught.value


def test_npz_with_two_members_of_one_name_is_damaged(tmp_path):
    with pytest.warns(UserWarning, match="Duplicate name"):
        with zipfile.ZipFile(tmp_path / "twice.npz", "w") as archive:
            for rows in (6, 7):
                archive.writestr("hidden_states.0.npy", _npy_with_shape((rows, 8)))
    error = refusal(tmp_path / "twice.npz", "duplicate_member")
    assert "two members named “hidden_states.0.npy”" in str(error)


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_safetensors_header_claiming_a_huge_tensor_is_refused_without_allocating(tmp_path):
    shape = [1 << 30, 4096]  # 8 TiB of float16
    header = {"h": {"dtype": "F16", "shape": shape, "data_offsets": [0, 2 * (1 << 42)]}}
    path = files.raw_safetensors(tmp_path / "huge.safetensors", header, b"\0" * 64)
    before = _peak_rss_mib()
    error = refusal(path, "truncated")
    assert _peak_rss_mib() - before < 100
    assert "huge.safetensors" in str(error) and f"claims {2 * (1 << 42)} bytes" in str(error)


def test_npy_header_claiming_a_huge_array_is_refused(tmp_path):
    path = tmp_path / "huge.npy"
    with open(path, "wb") as handle:
        np.lib.format.write_array_header_1_0(
            handle, {"descr": "<f2", "fortran_order": False, "shape": (1 << 30, 4096)}
        )
        handle.write(b"\0" * 64)
    refusal(path, "truncated")


def _npy_with_shape(shape: tuple) -> bytes:
    """A .npy whose header states ``shape`` (numpy's parser accepts negative lengths)."""
    handle = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        handle, {"descr": "<f4", "fortran_order": False, "shape": shape}
    )
    return handle.getvalue() + b"\0" * 64


@pytest.mark.parametrize("shape", [(-1, 8), (-2, -4), (1, -1, 8), (-3, 2, 8)])
def test_npy_header_with_a_negative_axis_is_refused(tmp_path, shape):
    data = _npy_with_shape(shape)
    (tmp_path / "neg.npy").write_bytes(data)
    for source in (tmp_path / "neg.npy", Upload("neg.npy", data)):
        assert "negative axis length" in str(refusal(source, "negative_axis"))
    with zipfile.ZipFile(tmp_path / "neg.npz", "w") as archive:
        archive.writestr("hidden_states.npy", _npy_with_shape((-1, *shape)))
    assert "negative axis length" in str(refusal(tmp_path / "neg.npz", "negative_axis"))


def test_safetensors_offsets_that_disagree_with_the_shape(tmp_path):
    """Offsets wider than the shape needs: the library's refusal (narrower ones: below)."""
    header = {"h": {"dtype": "F32", "shape": [1, 2], "data_offsets": [0, 16]}}
    path = files.raw_safetensors(tmp_path / "bad.safetensors", header, b"\0" * 16)
    assert "invalid shape, data type, or offset" in str(refusal(path, "corrupt_file"))
    header = {"h": {"dtype": "F32", "shape": [2, 4], "data_offsets": [0, 16]}}
    path = files.raw_safetensors(tmp_path / "bad.safetensors", header, b"\0" * 16)
    assert refusal(path, "shape_beyond_data").params == {
        "file": "bad.safetensors",
        "entry": "h",
        "shape": [2, 4],
        "dtype": "F32",
        "claimed": 32,
        "available": 16,
    }


def test_safetensors_header_length_beyond_the_format_limit(tmp_path):
    path = tmp_path / "big.safetensors"
    path.write_bytes((10**8).to_bytes(8, "little") + b"{}")
    os.truncate(path, 8 + 10**8)  # as long as it claims (sparse): a header past the bound
    refusal(path, "header_too_large")


@pytest.mark.parametrize(
    "suffix, write, key",
    [
        (".safetensors", lambda p, x: files.write_safetensors(p, {"h": x}), "truncated"),
        (".npy", lambda p, x: files.write_npy(p, x.numpy()), "truncated"),
        (".npz", lambda p, x: files.write_npz(p, {"h": x.numpy()}), "corrupt_file"),
        (".pt", lambda p, x: files.write_pt(p, {"h": x}), "not_zip"),
    ],
)
def test_truncated_files_are_refused(tmp_path, suffix, write, key):
    path = write(tmp_path / f"cut{suffix}", files.stream())
    path.write_bytes(path.read_bytes()[: path.stat().st_size * 2 // 3])
    assert "cut" in str(refusal(path, key))


def test_a_cut_off_safetensors_upload_is_refused_with_the_sizes_not_the_parsers_words(tmp_path):
    """A download stopped halfway: the message says how much of the data is missing (in both
    languages), not the library's English (cut mid-word on the page)."""
    tensors = {"a": files.stream(), "b": files.stream()}  # "b" cut: its data starts past the end
    path = files.write_safetensors(tmp_path / "cut.safetensors", tensors)
    data = path.read_bytes()
    start = 8 + int.from_bytes(data[:8], "little")
    kept = start + (len(data) - start) // 3
    path.write_bytes(data[:kept])
    for source in (path, Upload("cut.safetensors", data[:kept])):
        error = refusal(source, "truncated")
        assert error.params["claimed"] == len(data) - start  # all the data the header places
        assert error.params["available"] == kept - start  # what the file holds of it


def test_a_safetensors_shape_larger_than_its_data_is_refused_with_both_sizes(tmp_path):
    """A header that declares a huge tensor over a few bytes of data: the message gives the
    shape's bytes and the data's (in both languages), not the library's English."""
    header = b'{"x":{"dtype":"F32","shape":[100000,100000,4096],"data_offsets":[0,64]}}'
    data = len(header).to_bytes(8, "little") + header + bytes(64)
    path = tmp_path / "huge.safetensors"
    path.write_bytes(data)
    for source in (path, Upload("huge.safetensors", data)):
        error = refusal(source, "shape_beyond_data")
        assert error.params["claimed"] == 4 * 100000 * 100000 * 4096
        assert error.params["available"] == 64 and "[100000, 100000, 4096]" in str(error)


@pytest.mark.parametrize(
    "shape",
    [
        [10**300] * 20,  # 6,000 digits of bytes: past what Python prints
        [2] * 100_000,  # a shape that fills the page
        [2**40, 2**30],  # 2**72 bytes: the parser says the size overflows
        [2.5, 40],  # not whole numbers: the parser's to refuse (not read as [2, 40])
    ],
)
def test_a_safetensors_shape_past_any_tensor_keeps_the_parsers_short_refusal(shape):
    """A hostile header's shape: its refusal can be written out (a product of thousands of
    digits raised ValueError where the message was written) and stays short."""
    header = json.dumps({"x": {"dtype": "F32", "shape": shape, "data_offsets": [0, 64]}})
    data = len(header).to_bytes(8, "little") + header.encode() + bytes(64)
    error = refusal(Upload("hostile.safetensors", data), "corrupt_file")
    assert len(str(error)) < 1_000


def test_a_safetensors_header_nested_past_the_parsers_is_refused_in_the_librarys_words():
    """A header the library refuses that Python's parser cannot read either (nested too
    deep) keeps the library's refusal, not CPython's RecursionError."""
    text = b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    error = refusal(
        Upload("deep.safetensors", len(text).to_bytes(8, "little") + text), "corrupt_file"
    )
    assert "RecursionError" not in str(error) and "invalid JSON in header" in str(error)


def test_wrong_extension_is_refused_by_name(tmp_path):
    path = tmp_path / "acts.txt"
    path.write_text("1 2 3")
    error = refusal(path, "unsupported_suffix")
    assert ".safetensors" in str(error) and "acts.txt" in str(error)


@pytest.mark.parametrize(
    "name, write",
    [
        ("renamed.npy", lambda p: files.write_safetensors(p, {"h": files.stream()})),
        ("renamed.safetensors", lambda p: files.write_npy(p, files.stream().numpy())),
        ("renamed.pt", lambda p: files.write_npy(p, files.stream().numpy())),
        ("renamed.npz", lambda p: files.write_pt(p, files.stream())),
    ],
)
def test_content_that_does_not_match_its_extension(tmp_path, name, write):
    path = write(tmp_path / name)
    with pytest.raises(EngineError) as caught:
        report(path)
    assert name in str(caught.value)


def test_npz_whose_member_is_not_npy_data_is_corrupt(tmp_path):
    path = tmp_path / "odd.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("h.npy", b"not an array")
    assert "“h”" in str(refusal(path, "corrupt"))


@pytest.mark.parametrize(
    "name, write",
    [
        ("empty.pt", lambda p: files.write_pt(p, {})),
        ("empty.safetensors", lambda p: files.write_safetensors(p, {})),
        ("empty.npz", lambda p: files.write_npz(p, {})),
    ],
)
def test_empty_containers(tmp_path, name, write):
    assert name in str(refusal(write(tmp_path / name), "empty"))


@pytest.mark.parametrize("suffix", [".pt", ".safetensors", ".npy", ".npz"])
def test_a_file_of_zero_bytes_is_called_empty_in_every_format(tmp_path, suffix):
    path = tmp_path / f"nothing{suffix}"
    path.write_bytes(b"")
    error = refusal(path, "empty_file")
    assert f"nothing{suffix} is empty (0 bytes)" in str(error)


def test_only_integer_and_vector_entries(tmp_path):
    path = files.write_pt(tmp_path / "ids.pt", {"ids": torch.arange(6), "w": torch.ones(4)})
    error = refusal(path, "no_usable_entries")
    assert "ids" in str(error) and "[T, d]" in str(error)


def test_meta_and_sparse_tensors_are_skipped_not_read(tmp_path):
    """A meta tensor has no values and a sparse one no rows: both are named, never reduced."""
    meta = torch.empty(3, 4, 8, device="meta")
    sparse = torch.eye(8).to_sparse()
    path = files.write_pt(tmp_path / "meta.pt", {"hidden_states": meta, "s": sparse})
    error = refusal(path, "no_usable_entries")
    assert "hidden_states" in str(error) and "meta" in str(error)


def test_pt_holding_a_plain_number(tmp_path):
    assert "int" in str(refusal(files.write_pt(tmp_path / "n.pt", 3), "pt_content"))


def test_zero_length_axis(tmp_path):
    path = files.write_pt(tmp_path / "z.pt", {"h": torch.zeros(5, 0, 16)})
    assert "[5, 0, 16]" in str(refusal(path, "empty_array"))


def test_a_plain_npy_with_an_empty_axis_is_named_as_the_file_not_an_empty_entry(tmp_path):
    path = files.write_npy(tmp_path / "zero_size.npy", np.zeros((0, 16), dtype=np.float32))
    error = refusal(path, "empty_array")
    assert error.params["entry"] == "(file)" and "[0, 16]" in str(error)


def test_npy_of_integers_names_the_dtype(tmp_path):
    error = refusal(
        files.write_npy(tmp_path / "i.npy", np.arange(12).reshape(3, 4)), "unsupported_dtype"
    )
    assert "int64" in str(error) and "float16" in str(error)


def test_fortran_order_npy(tmp_path):
    path = files.write_npy(tmp_path / "f.npy", np.asfortranarray(np.ones((3, 4, 5))))
    assert "np.ascontiguousarray" in str(refusal(path, "fortran_order"))


def test_missing_path_and_empty_directory(tmp_path):
    refusal(tmp_path / "nope.safetensors", "not_found")
    (tmp_path / "notes.txt").write_text("x")
    assert ".safetensors" in str(refusal(tmp_path, "no_files"))


def test_upload_over_the_limit_counts_megabytes_of_a_million_bytes_as_the_browser_does(
    monkeypatch,
):
    monkeypatch.setattr("engine.dumps.sources.UPLOAD_LIMIT_MB", 1)
    error = refusal(Upload("big.npy", b"\0" * (10**6 + 1)), "upload_too_large")
    assert "big.npy is 1.0 MB; uploads are limited to 1 MB" in str(error)
    with pytest.raises(EngineError) as caught:  # exactly the limit: read, then found corrupt
        report(Upload("big.npy", b"\0" * 10**6))
    assert caught.value.key == "dumps.corrupt_file"


def test_compressed_upload_that_expands_too_far(tmp_path, monkeypatch):
    monkeypatch.setattr(numpy_file, "MAX_EXPANDED_UPLOAD_MB", 1)
    path = files.write_npz(tmp_path / "z.npz", {"h": np.zeros((64, 64, 64))}, compressed=True)
    assert path.stat().st_size < 2**20
    refusal(Upload("z.npz", path.read_bytes()), "expands_too_far")


def test_open_dump_reads_no_data(tmp_path, monkeypatch):
    """Opening only parses headers: a reader is never created."""
    path = files.write_safetensors(tmp_path / "d.safetensors", {"h": files.stream()})

    def fail(*args):
        raise AssertionError("data read while opening")

    monkeypatch.setattr("engine.dumps.formats.open_reader", fail)
    assert len(open_dump(path).layout.layers) == 5


@pytest.mark.parametrize(
    "name, x",
    [
        ("all_nan", torch.full((3, 2, 4, 8), float("nan"))),
        ("zeros", torch.zeros(4, 1, 3, 5)),
        ("one_value", torch.ones(1, 1, 1, 1)),
        ("d_is_one", torch.randn(3, 5, 1)),
        ("near_float32_max", torch.full((2, 1, 2, 4), 3e38)),
    ],
)
def test_degenerate_dumps_report_without_warnings(tmp_path, name, x):
    import warnings

    from engine.dumps.tables import report_tables

    path = files.write_safetensors(tmp_path / f"{name}.safetensors", {"h": x})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rep = report(path)
        report_tables(rep)
    assert rep.stats.nonfinite[:, 0].sum() == torch.isnan(x).sum().item()


def test_a_layer_or_token_not_in_the_dump_is_refused_with_the_range(tmp_path):
    dump = open_dump(files.write_safetensors(tmp_path / "d.safetensors", {"h": files.stream()}))
    with pytest.raises(EngineError) as caught:
        read_tokens(dump, [5], [0])
    assert caught.value.key == "dumps.layer_out_of_range" and caught.value.params["last"] == 4
    with pytest.raises(EngineError) as caught:
        read_tokens(dump, [0], [14])  # B = 2, T = 7: rows 0 to 13
    assert caught.value.key == "dumps.row_out_of_range"
    assert caught.value.params == {"batch": 2, "token": 0, "last_batch": 1, "last_token": 6}


def test_a_pt_file_rewritten_between_opening_and_reading_is_refused(tmp_path):
    path = files.write_pt(tmp_path / "hs.pt", files.hf_names(files.stream()))
    dump = open_dump(path)
    files.write_pt(path, files.hf_names(files.stream(tokens=5)))
    with pytest.raises(EngineError) as caught:
        read_tokens(dump, [0], [0])
    assert caught.value.key == "dumps.dump_rewritten" and caught.value.params["file"] == "hs.pt"


def test_a_folder_of_more_shards_than_accepted_is_refused_by_their_names(tmp_path, monkeypatch):
    monkeypatch.setattr("engine.dumps.sources.MAX_FILES", 3)
    for i in range(4):
        (tmp_path / f"part{i}.npy").write_bytes(b"never read")
    error = refusal(tmp_path, "too_many_files")
    assert error.params["count"] == 4 and error.params["limit"] == 3


def test_a_zip_directory_past_its_bound_is_refused_before_it_is_parsed(tmp_path, monkeypatch):
    monkeypatch.setattr("engine.dumps.formats.entries.MAX_ZIP_DIRECTORY_BYTES", 100)
    path = files.write_npz(tmp_path / "d.npz", {f"h.{i}": np.zeros((2, 3)) for i in range(4)})
    error = refusal(path, "directory_too_large")
    assert error.params["count"] == 4 and error.params["size"] > 100


def test_a_pickle_past_its_bound_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr("engine.dumps.formats.torch_file.MAX_PICKLE_BYTES", 100)
    path = files.write_pt(tmp_path / "hs.pt", files.hf_names(files.stream()))
    error = refusal(path, "pickle_too_large")
    assert error.params["size"] > 100


def test_a_file_that_fails_as_a_whole_names_no_entry(tmp_path):
    path = tmp_path / "notes.npz"
    path.write_text("not an archive\n")
    message = str(refusal(path, "corrupt_file"))
    assert message.startswith("notes.npz: the file is damaged or not in npz format")
    assert "entry" not in message and "(file)" not in message


def test_a_file_that_may_not_be_read_is_said_so_not_called_damaged(tmp_path, monkeypatch):
    """Without read permission the report said "damaged or not in NumPy format" and quoted
    Python's PermissionError; the bytes were never seen."""
    import engine.dumps.formats as formats

    path = files.write_npy(tmp_path / "locked.npy", np.zeros((2, 4, 8), np.float32))

    def denied(file):
        raise PermissionError(13, "Permission denied", str(path))

    fmt, _, reader = formats._FORMATS[".npy"]
    monkeypatch.setitem(formats._FORMATS, ".npy", (fmt, denied, reader))
    with pytest.raises(EngineError) as refused:
        open_dump(path)
    assert refused.value.key == "dumps.unreadable"
    said = str(refused.value)
    assert "cannot be read (Permission denied)" in said and "damaged" not in said
