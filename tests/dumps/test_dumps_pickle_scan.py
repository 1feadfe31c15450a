"""pickle_scan on hostile non-zip files: an argument's length past the end of the file, and
pickles that ``pickletools.dis`` would not accept but the unpickler would run; the same
refusal from disk and as an upload, nothing run."""

from __future__ import annotations

import struct

import pytest

from engine.dumps.formats.pickle_scan import HEAD_BYTES
from engine.dumps.sources import Upload
from tests.dumps.test_dumps_bad_input import refusal

CALL = b"cbuiltins\nlen\n(S'ab'\ntR."  # GLOBAL builtins.len, called on ('ab',): harmless
PAST_HEAD = b"\0" * (HEAD_BYTES + 10)  # the file goes on past what is checked first


def _both(tmp_path, name: str, data: bytes):
    """The file from disk and as an upload of the same bytes."""
    (tmp_path / name).write_bytes(data)
    return tmp_path / name, Upload(name, data)


@pytest.mark.parametrize("length", [2**62, 2**63 - 1, 2**64 - 1], ids=["2^62", "2^63-1", "2^64-1"])
@pytest.mark.parametrize(
    "opcode", [b"\x8e", b"\x8d", b"\x96"], ids=["BINBYTES8", "BINUNICODE8", "BYTEARRAY8"]
)
def test_an_argument_longer_than_the_file_is_not_a_pickle_from_disk_or_upload(
    tmp_path, opcode, length
):
    data = b"\x80\x05" + opcode + struct.pack("<Q", length) + PAST_HEAD
    for source in _both(tmp_path, "huge.pt", data):
        message = str(refusal(source, "not_zip"))
        assert "Error" not in message and "Errno" not in message
