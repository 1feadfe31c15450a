"""Files that would run code, or whose pickle and records disagree: a payload is refused
without running, a text file is not called code, a record shorter than its tensor or
compressed is refused, and the pickle's storages are read without building what they name."""

from __future__ import annotations

import io
import pickle
import struct
import zipfile

import numpy as np
import pytest
import torch

from engine.dumps.sources import Upload
from tests.dumps import dump_files as files
from tests.dumps.test_dumps_bad_input import refusal


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
    error = refusal(path, "unsafe_pickle")
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
        message = str(refusal(source, "unsafe_pickle"))
        assert f"({'it calls ' + called})" in message
        assert "weights_only=False" not in message and "Re-running" not in message


def test_plain_pickle_named_pt_is_refused_and_never_runs(tmp_path):
    marker = tmp_path / "ran.txt"
    path = tmp_path / "evil.pth"
    path.write_bytes(pickle.dumps(_Payload(marker)))
    error = refusal(path, "unsafe_pickle_opcode")
    assert error.params["opcode"] == "STACK_GLOBAL"  # the first that imports or calls
    assert not marker.exists() and "evil.pth" in str(error)


BLOB = b"\0" * (3 << 20)  # past the first 256 KiB that pickle_scan follows


@pytest.mark.parametrize("blob_first", [False, True], ids=["call_first", "blob_first"])
def test_a_plain_pickle_longer_than_a_mib_is_named_as_code(tmp_path, blob_first):
    """The call read from the first bytes, or found behind a 3 MiB argument stepped over."""
    marker = tmp_path / "ran.txt"
    parts = [BLOB, _Payload(marker)] if blob_first else [_Payload(marker), BLOB]
    data = pickle.dumps(parts)
    (tmp_path / "big.pt").write_bytes(data)
    for source in (tmp_path / "big.pt", Upload("big.pt", data)):
        assert refusal(source, "unsafe_pickle_opcode").params["opcode"] == "STACK_GLOBAL"
    assert not marker.exists()


def test_a_long_text_file_or_a_pickle_that_calls_nothing_is_not_called_code(tmp_path):
    (tmp_path / "long.pt").write_bytes(b"just some text " * 200_000)  # 3 MB of letters
    refusal(tmp_path / "long.pt", "not_zip")
    (tmp_path / "data.pt").write_bytes(pickle.dumps([BLOB, {"a": 1.5}]))
    refusal(tmp_path / "data.pt", "not_zip")


@pytest.mark.parametrize("text", [b"just some text", b"hello.", b"cos\nsystem\n"])
def test_text_named_pt_is_not_called_code(tmp_path, text):
    """Letters are pickle opcodes too ("o" is OBJ, "c" is GLOBAL): a text file is damaged
    or not a torch file, not a pickle that would run code."""
    (tmp_path / "notes.pt").write_bytes(text)
    assert "notes.pt is not a zip archive" in str(refusal(tmp_path / "notes.pt", "not_zip"))


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
    error = refusal(tmp_path / "cut.pt", "short_record")
    assert "holds 8 bytes, but its tensors need 192" in str(error)
    refusal(Upload("cut.pt", cut.getvalue()), "short_record")


def test_a_pt_of_one_scalar_names_the_file_as_its_entry(tmp_path):
    path = files.write_pt(tmp_path / "one.pt", torch.tensor(1.0))
    refused = str(refusal(path, "no_usable_entries_one"))  # its one entry, not "none of its 1"
    assert "its one entry cannot be read as a stream" in refused
    assert "(the file itself: a scalar, shape [])" in refused  # one pair of parentheses


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
    assert "“archive/data/0”" in str(refusal(tmp_path / "twice.pt", "duplicate_member"))
    squeezed = _rewritten({"data/0": (full, zipfile.ZIP_DEFLATED)})
    (tmp_path / "deflated.pt").write_bytes(squeezed)
    refusal(tmp_path / "deflated.pt", "compressed_record")
    short = bytearray(_rewritten({"data/0": full[:8]}))
    with zipfile.ZipFile(io.BytesIO(bytes(short))) as archive:
        info = archive.getinfo("archive/data/0")
        central = archive.start_dir + bytes(short[archive.start_dir :]).find(b"archive/data/0") - 46
    struct.pack_into("<II", short, info.header_offset + 18, 192, 192)  # the local header lies
    struct.pack_into("<II", short, central + 20, 192, 192)  # and so does the directory
    (tmp_path / "lying.pt").write_bytes(bytes(short))
    assert "holds 8 bytes" in str(refusal(tmp_path / "lying.pt", "short_record"))


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
    refusal(Upload("up.pt", buffer.getvalue()), "unsafe_pickle")
    assert not marker.exists()


def test_npy_of_objects_is_refused_before_unpickling(tmp_path):
    marker = tmp_path / "ran.txt"
    path = tmp_path / "evil.npy"
    np.save(path, np.array([_Payload(marker)], dtype=object), allow_pickle=True)
    error = refusal(path, "object_array")
    assert not marker.exists() and "evil.npy" in str(error)


def test_npz_with_an_object_member_is_refused(tmp_path):
    marker = tmp_path / "ran.txt"
    path = tmp_path / "evil.npz"
    np.savez(path, h=np.zeros((3, 4)), x=np.array([_Payload(marker)], dtype=object))
    error = refusal(path, "object_array")
    assert not marker.exists() and "“x”" in str(error)


def test_legacy_torch_format_is_refused_with_what_is_accepted(tmp_path):
    path = tmp_path / "old.pt"
    torch.save(torch.zeros(3, 100_000), path, _use_new_zipfile_serialization=False)  # 1.2 MB
    error = refusal(path, "not_zip")
    assert "old.pt is not a zip archive" in str(error) and "PyTorch 1.6" in str(error)
