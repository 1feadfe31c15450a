"""Every bad input ends in an EngineError that names the file (and entry) and says what is
accepted; a pickle payload is refused without running; nothing huge is allocated."""

from __future__ import annotations

import io
import pickle
import resource
import struct
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


def _refusal(source, key: str) -> EngineError:
    with pytest.raises(EngineError) as caught:
        report(source)
    assert caught.value.key == f"dumps.{key}", str(caught.value)
    return caught.value


class _Payload:
    """Unpickling this writes ``marker``: what a malicious checkpoint would do."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('ran')",))


def test_the_payload_is_real(tmp_path):
    marker = tmp_path / "ran.txt"
    pickle.loads(pickle.dumps(_Payload(marker)))  # an unsafe loader would run it
    assert marker.read_text() == "ran"


def test_pt_with_a_payload_is_refused_and_never_runs(tmp_path):
    marker = tmp_path / "ran.txt"
    path = files.write_pt(tmp_path / "evil.pt", {"h": torch.zeros(3, 4), "x": _Payload(marker)})
    error = _refusal(path, "unsafe_pickle")
    assert not marker.exists()
    assert "evil.pt" in str(error) and "weights_only=True" in str(error)


class _System:
    """Unpickling this would call os.system (torch names it "posix.system" on Linux)."""

    def __reduce__(self):
        import os

        return (os.system, ("true",))


@pytest.mark.parametrize("payload, called", [(_System(), "posix.system"), (None, "exec")])
def test_a_refused_pickle_names_what_it_calls_and_never_suggests_weights_only_false(
    tmp_path, payload, called
):
    payload = payload if payload is not None else _Payload(tmp_path / "ran.txt")
    buffer = io.BytesIO()
    torch.save([torch.zeros(2, 3), payload], buffer)
    for source in (Upload("evil.pt", buffer.getvalue()), tmp_path / "evil.pt"):
        (tmp_path / "evil.pt").write_bytes(buffer.getvalue())
        message = str(_refusal(source, "unsafe_pickle"))
        assert f"({'it calls ' + called})" in message
        assert "weights_only=False" not in message and "Re-running" not in message


def test_plain_pickle_named_pt_is_refused_and_never_runs(tmp_path):
    marker = tmp_path / "ran.txt"
    path = tmp_path / "evil.pth"
    path.write_bytes(pickle.dumps(_Payload(marker)))
    error = _refusal(path, "unsafe_pickle_opcode")
    assert error.params["opcode"] == "STACK_GLOBAL"  # the first that imports or calls
    assert not marker.exists() and "evil.pth" in str(error)


@pytest.mark.parametrize("text", [b"just some text", b"hello.", b"cos\nsystem\n"])
def test_text_named_pt_is_not_called_code(tmp_path, text):
    """Letters are pickle opcodes too ("o" is OBJ, "c" is GLOBAL): a text file is damaged
    or not a torch file, not a pickle that would run code."""
    (tmp_path / "notes.pt").write_bytes(text)
    assert "notes.pt is not a zip archive" in str(_refusal(tmp_path / "notes.pt", "not_zip"))


def test_pt_whose_storage_record_is_shorter_than_its_tensor_is_damaged(tmp_path):
    """Each record cut to 8 bytes: mapped from disk, torch would read the bytes after it
    (the next records) as the tensor's values; read as an upload, torch refuses it."""
    written = io.BytesIO()
    torch.save(
        {"hidden_states.0": torch.randn(6, 8), "hidden_states.1": torch.randn(6, 8)}, written
    )
    cut = io.BytesIO()
    with zipfile.ZipFile(written) as source, zipfile.ZipFile(cut, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            target.writestr(info.filename, data[:8] if "/data/" in info.filename else data)
    (tmp_path / "cut.pt").write_bytes(cut.getvalue())
    error = _refusal(tmp_path / "cut.pt", "short_record")
    assert "holds 8 bytes, but its tensors need 192" in str(error)
    _refusal(Upload("cut.pt", cut.getvalue()), "short_record")


def test_a_pt_of_one_scalar_names_the_file_as_its_entry(tmp_path):
    path = files.write_pt(tmp_path / "one.pt", torch.tensor(1.0))
    assert "((file): a scalar (shape []))" in str(_refusal(path, "no_usable_entries"))


def test_npz_with_two_members_of_one_name_is_damaged(tmp_path):
    with pytest.warns(UserWarning, match="Duplicate name"):
        with zipfile.ZipFile(tmp_path / "twice.npz", "w") as archive:
            for rows in (6, 7):
                archive.writestr("hidden_states.0.npy", _npy_with_shape((rows, 8)))
    error = _refusal(tmp_path / "twice.npz", "duplicate_member")
    assert "two members named “hidden_states.0.npy”" in str(error)


def _rewritten(records: dict) -> bytes:
    """A torch.save zip of two tensors with each data record replaced by ``records[name]``
    (bytes, or a list of bytes: one member each, same name)."""
    written = io.BytesIO()
    torch.save({"a": torch.randn(6, 8), "b": torch.randn(6, 8)}, written)
    out = io.BytesIO()
    with zipfile.ZipFile(written) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            replaced = records.get(info.filename.split("/", 1)[1], data)
            for member in replaced if isinstance(replaced, list) else [replaced]:
                if isinstance(member, tuple):  # (bytes, compression)
                    target.writestr(info.filename, member[0], compress_type=member[1])
                else:
                    target.writestr(info.filename, member)
    return out.getvalue()


def test_pt_records_twice_named_lying_about_their_size_or_compressed_are_refused(tmp_path):
    full = torch.randn(6, 8).numpy().tobytes()  # 192 bytes, as each tensor needs
    with pytest.warns(UserWarning, match="Duplicate name"):
        twice = _rewritten({"data/0": [full, full[:8]]})
    (tmp_path / "twice.pt").write_bytes(twice)
    assert "“archive/data/0”" in str(_refusal(tmp_path / "twice.pt", "duplicate_member"))
    squeezed = _rewritten({"data/0": (full, zipfile.ZIP_DEFLATED)})
    (tmp_path / "deflated.pt").write_bytes(squeezed)
    _refusal(tmp_path / "deflated.pt", "compressed_record")
    short = bytearray(_rewritten({"data/0": full[:8]}))
    with zipfile.ZipFile(io.BytesIO(bytes(short))) as archive:
        info = archive.getinfo("archive/data/0")
        central = archive.start_dir + bytes(short[archive.start_dir :]).find(b"archive/data/0") - 46
    struct.pack_into("<II", short, info.header_offset + 18, 192, 192)  # the local header lies
    struct.pack_into("<II", short, central + 20, 192, 192)  # and so does the directory
    (tmp_path / "lying.pt").write_bytes(bytes(short))
    assert "holds 8 bytes" in str(_refusal(tmp_path / "lying.pt", "short_record"))


def test_the_storage_size_reader_takes_only_what_torch_save_writes():
    """A key the file builds as a list nested 40 times, each level shared (a few hundred
    bytes): printing it would take 2⁴⁰ steps.  Such a storage is not read at all."""
    from engine.dumps.formats.torch_records import storage_sizes

    key = []
    for _ in range(40):
        key = [key, key]

    class Writer(pickle.Pickler):
        def persistent_id(self, obj):
            if isinstance(obj, torch.Tensor):
                return ("storage", torch.FloatStorage, obj.key, "cpu", 48)
            return None

    for stored_key in (key, "0"):
        tensor = torch.zeros(1)
        tensor.key = stored_key
        data = io.BytesIO()
        Writer(data, protocol=2).dump({"a": tensor})
        assert storage_sizes(data.getvalue()) == ({} if stored_key is key else {"0": 192})


def test_upload_with_a_payload_is_refused_and_never_runs(tmp_path):
    marker = tmp_path / "ran.txt"
    buffer = io.BytesIO()
    torch.save([torch.zeros(2, 3), _Payload(marker)], buffer)
    _refusal(Upload("up.pt", buffer.getvalue()), "unsafe_pickle")
    assert not marker.exists()


def test_npy_of_objects_is_refused_before_unpickling(tmp_path):
    marker = tmp_path / "ran.txt"
    path = tmp_path / "evil.npy"
    np.save(path, np.array([_Payload(marker)], dtype=object), allow_pickle=True)
    error = _refusal(path, "object_array")
    assert not marker.exists() and "evil.npy" in str(error)


def test_npz_with_an_object_member_is_refused(tmp_path):
    marker = tmp_path / "ran.txt"
    path = tmp_path / "evil.npz"
    np.savez(path, h=np.zeros((3, 4)), x=np.array([_Payload(marker)], dtype=object))
    error = _refusal(path, "object_array")
    assert not marker.exists() and "“x”" in str(error)


def test_legacy_torch_format_is_refused_with_what_is_accepted(tmp_path):
    path = tmp_path / "old.pt"
    torch.save(torch.zeros(3, 4), path, _use_new_zipfile_serialization=False)
    error = _refusal(path, "not_zip")
    assert "old.pt is not a zip archive" in str(error) and "PyTorch 1.6" in str(error)


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_safetensors_header_claiming_a_huge_tensor_is_refused_without_allocating(tmp_path):
    shape = [1 << 30, 4096]  # 8 TiB of float16
    header = {"h": {"dtype": "F16", "shape": shape, "data_offsets": [0, 2 * (1 << 42)]}}
    path = files.raw_safetensors(tmp_path / "huge.safetensors", header, b"\0" * 64)
    before = _peak_rss_mib()
    error = _refusal(path, "corrupt")
    assert _peak_rss_mib() - before < 100
    assert "huge.safetensors" in str(error) and "not fully covered" in str(error)


def test_npy_header_claiming_a_huge_array_is_refused(tmp_path):
    path = tmp_path / "huge.npy"
    with open(path, "wb") as handle:
        np.lib.format.write_array_header_1_0(
            handle, {"descr": "<f2", "fortran_order": False, "shape": (1 << 30, 4096)}
        )
        handle.write(b"\0" * 64)
    _refusal(path, "truncated")


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
        assert "negative axis length" in str(_refusal(source, "negative_axis"))
    with zipfile.ZipFile(tmp_path / "neg.npz", "w") as archive:
        archive.writestr("hidden_states.npy", _npy_with_shape((-1, *shape)))
    assert "negative axis length" in str(_refusal(tmp_path / "neg.npz", "negative_axis"))


def test_safetensors_offsets_that_disagree_with_the_shape(tmp_path):
    header = {"h": {"dtype": "F32", "shape": [2, 4], "data_offsets": [0, 16]}}
    path = files.raw_safetensors(tmp_path / "bad.safetensors", header, b"\0" * 16)
    assert "invalid shape, data type, or offset" in str(_refusal(path, "corrupt"))


def test_safetensors_header_length_beyond_the_format_limit(tmp_path):
    path = tmp_path / "big.safetensors"
    path.write_bytes((10**12).to_bytes(8, "little") + b"{}")
    _refusal(path, "header_too_large")


@pytest.mark.parametrize(
    "suffix, write, key",
    [
        (".safetensors", lambda p, x: files.write_safetensors(p, {"h": x}), "corrupt"),
        (".npy", lambda p, x: files.write_npy(p, x.numpy()), "truncated"),
        (".npz", lambda p, x: files.write_npz(p, {"h": x.numpy()}), "corrupt"),
        (".pt", lambda p, x: files.write_pt(p, {"h": x}), "not_zip"),
    ],
)
def test_truncated_files_are_refused(tmp_path, suffix, write, key):
    path = write(tmp_path / f"cut{suffix}", files.stream())
    path.write_bytes(path.read_bytes()[: path.stat().st_size * 2 // 3])
    assert "cut" in str(_refusal(path, key))


def test_wrong_extension_is_refused_by_name(tmp_path):
    path = tmp_path / "acts.txt"
    path.write_text("1 2 3")
    error = _refusal(path, "unsupported_suffix")
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
    assert "“h”" in str(_refusal(path, "corrupt"))


@pytest.mark.parametrize(
    "name, write",
    [
        ("empty.pt", lambda p: files.write_pt(p, {})),
        ("empty.safetensors", lambda p: files.write_safetensors(p, {})),
        ("empty.npz", lambda p: files.write_npz(p, {})),
    ],
)
def test_empty_containers(tmp_path, name, write):
    assert name in str(_refusal(write(tmp_path / name), "empty"))


@pytest.mark.parametrize("suffix", [".pt", ".safetensors", ".npy", ".npz"])
def test_a_file_of_zero_bytes_is_called_empty_in_every_format(tmp_path, suffix):
    path = tmp_path / f"nothing{suffix}"
    path.write_bytes(b"")
    error = _refusal(path, "empty_file")
    assert f"nothing{suffix} is empty (0 bytes)" in str(error)


def test_only_integer_and_vector_entries(tmp_path):
    path = files.write_pt(tmp_path / "ids.pt", {"ids": torch.arange(6), "w": torch.ones(4)})
    error = _refusal(path, "no_usable_entries")
    assert "ids" in str(error) and "[T, d]" in str(error)


def test_meta_and_sparse_tensors_are_skipped_not_read(tmp_path):
    """A meta tensor has no values and a sparse one no rows: both are named, never reduced."""
    meta = torch.empty(3, 4, 8, device="meta")
    sparse = torch.eye(8).to_sparse()
    path = files.write_pt(tmp_path / "meta.pt", {"hidden_states": meta, "s": sparse})
    error = _refusal(path, "no_usable_entries")
    assert "hidden_states" in str(error) and "meta" in str(error)


def test_pt_holding_a_plain_number(tmp_path):
    assert "int" in str(_refusal(files.write_pt(tmp_path / "n.pt", 3), "pt_content"))


def test_zero_length_axis(tmp_path):
    path = files.write_pt(tmp_path / "z.pt", {"h": torch.zeros(5, 0, 16)})
    assert "[5, 0, 16]" in str(_refusal(path, "empty_array"))


def test_a_plain_npy_with_an_empty_axis_is_named_as_the_file_not_an_empty_entry(tmp_path):
    path = files.write_npy(tmp_path / "zero_size.npy", np.zeros((0, 16), dtype=np.float32))
    error = _refusal(path, "empty_array")
    assert error.params["entry"] == "(file)" and "[0, 16]" in str(error)


def test_npy_of_integers_names_the_dtype(tmp_path):
    error = _refusal(
        files.write_npy(tmp_path / "i.npy", np.arange(12).reshape(3, 4)), "unsupported_dtype"
    )
    assert "int64" in str(error) and "float16" in str(error)


def test_fortran_order_npy(tmp_path):
    path = files.write_npy(tmp_path / "f.npy", np.asfortranarray(np.ones((3, 4, 5))))
    assert "np.ascontiguousarray" in str(_refusal(path, "fortran_order"))


def test_missing_path_and_empty_directory(tmp_path):
    _refusal(tmp_path / "nope.safetensors", "not_found")
    (tmp_path / "notes.txt").write_text("x")
    assert ".safetensors" in str(_refusal(tmp_path, "no_files"))


def test_upload_over_the_limit_counts_megabytes_of_a_million_bytes_as_the_browser_does(
    monkeypatch,
):
    monkeypatch.setattr("engine.dumps.sources.UPLOAD_LIMIT_MB", 1)
    error = _refusal(Upload("big.npy", b"\0" * (10**6 + 1)), "upload_too_large")
    assert "big.npy is 1.0 MB; uploads are limited to 1 MB" in str(error)
    with pytest.raises(EngineError) as caught:  # exactly the limit: read, then found corrupt
        report(Upload("big.npy", b"\0" * 10**6))
    assert caught.value.key == "dumps.corrupt"


def test_compressed_upload_that_expands_too_far(tmp_path, monkeypatch):
    monkeypatch.setattr(numpy_file, "MAX_EXPANDED_UPLOAD_MB", 1)
    path = files.write_npz(tmp_path / "z.npz", {"h": np.zeros((64, 64, 64))}, compressed=True)
    assert path.stat().st_size < 2**20
    _refusal(Upload("z.npz", path.read_bytes()), "expands_too_far")


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
    assert rep.nonfinite[:, 0].sum() == torch.isnan(x).sum().item()


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
    assert caught.value.key == "dumps.changed" and caught.value.params["file"] == "hs.pt"


def test_a_folder_of_more_shards_than_accepted_is_refused_by_their_names(tmp_path, monkeypatch):
    monkeypatch.setattr("engine.dumps.sources.MAX_FILES", 3)
    for i in range(4):
        (tmp_path / f"part{i}.npy").write_bytes(b"never read")
    error = _refusal(tmp_path, "too_many_files")
    assert error.params["count"] == 4 and error.params["limit"] == 3


def test_a_zip_directory_past_its_bound_is_refused_before_it_is_parsed(tmp_path, monkeypatch):
    monkeypatch.setattr("engine.dumps.formats.entries.MAX_ZIP_DIRECTORY_BYTES", 100)
    path = files.write_npz(tmp_path / "d.npz", {f"h.{i}": np.zeros((2, 3)) for i in range(4)})
    error = _refusal(path, "directory_too_large")
    assert error.params["count"] == 4 and error.params["size"] > 100


def test_a_pickle_past_its_bound_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr("engine.dumps.formats.torch_file.MAX_PICKLE_BYTES", 100)
    path = files.write_pt(tmp_path / "hs.pt", files.hf_names(files.stream()))
    error = _refusal(path, "pickle_too_large")
    assert error.params["size"] > 100
