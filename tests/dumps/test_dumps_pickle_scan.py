"""pickle_scan on hostile non-zip files: an argument's length past the end of the file, and
pickles that ``pickletools.dis`` would not accept but the unpickler would run; the same
refusal from disk and as an upload, nothing run.  What the unpickler does with each is
checked with pickle's own (``_unpickled``), never assumed."""

from __future__ import annotations

import copyreg
import io
import pickle
import struct

import pytest

from engine.dumps.formats.pickle_scan import HEAD_BYTES
from engine.dumps.limits import MAX_PICKLE_BYTES
from engine.dumps.sources import Upload
from tests.dumps.test_dumps_bad_input import refusal

CALL = b"cbuiltins\nlen\n(S'ab'\ntR."  # GLOBAL builtins.len, called on ('ab',): harmless
PAST_HEAD = b"\0" * (HEAD_BYTES + 10)  # the file goes on past what is checked first


UNPICKLERS = (pickle.Unpickler, pickle._Unpickler)  # the C one (torch's), the Python one


def _unpickled(data: bytes, unpickler=pickle.Unpickler) -> list:
    """What pickle's unpickler imports and calls loading ``data``, up to where it fails:
    every global it fetches is replaced by a stand-in that logs its call."""
    log: list = []

    class Logged(unpickler):
        def find_class(self, module, name):
            log.append(f"import {module}.{name}")
            return lambda *args, **kwargs: log.append("called")

    try:
        Logged(io.BytesIO(data)).load()
    except Exception:  # it fails after the call (what comes next is damaged), or before
        pass
    return log


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


LINE = b"V" + b"a" * 65_000 + b"\n0"  # a text argument of 65 000 bytes, popped


@pytest.mark.parametrize(
    "lines, named", [(40, True), (MAX_PICKLE_BYTES // len(LINE) + 1, False)], ids=["within", "past"]
)
def test_the_walk_reads_a_bounded_total_of_text_arguments(tmp_path, lines, named):
    """A call behind 40 text arguments is found; behind more than ``MAX_PICKLE_BYTES`` of
    them (the unpickler would still reach it), the walk stops reading: not called code."""
    data = LINE * lines + CALL
    if named:
        assert _unpickled(data) == ["import builtins.len", "called"]
    for source in _both(tmp_path, "lines.pt", data):
        refusal(source, "unsafe_pickle_opcode" if named else "not_zip")


RUNS_CODE = {  # pickle.loads of each would call builtins.len; pickletools.dis refuses each
    "stack_left_at_stop": b"N" + CALL,  # the unpickler returns the top, drops the rest
    "marks_left_at_stop": b"\x80\x02" + b"(" * (HEAD_BYTES - 200) + CALL + b"\0" * 100,
    "long4_over_4300_digits": b"\x80\x02\x8b"
    + struct.pack("<i", 2000)
    + b"\x01" * 2000
    + b"0"
    + CALL,
    "memo_stored_twice": b"\x80\x02NK\x01q\x00K\x02q\x00000" + CALL,  # the second is kept
    # the unpickler runs each opcode as it reads it: what follows a call never un-runs it
    "call_then_no_opcode": CALL[:-1] + b"\xff.",
    "call_then_pop_of_empty_stack": CALL[:-1] + b"00.",
    "call_then_memo_slot_never_stored": CALL[:-1] + b"h\x07.",
    "call_then_end_without_stop": CALL[:-1],
    # INT and LONG text read base 0 by the unpickler (pickletools: base 10)
    "int_hex": b"I0x10\n0" + CALL,
    "long_hex": b"L0x10L\n0" + CALL,
    "int_octal": b"I0o7\n0" + CALL,
}


@pytest.mark.parametrize("data", RUNS_CODE.values(), ids=RUNS_CODE)
def test_a_pickle_the_unpickler_would_run_is_named_as_code(tmp_path, data):
    for unpickler in UNPICKLERS:
        assert _unpickled(data, unpickler) == ["import builtins.len", "called"]
    for source in _both(tmp_path, "evil.pt", data):
        assert refusal(source, "unsafe_pickle_opcode").params["opcode"] == "GLOBAL"


NOT_RUN = {  # the unpickler stops before the call: no pickle that would run code
    "long_of_5000_digits": b"L" + b"1" * 5000 + b"L\n0" + CALL,  # past the 4300-digit limit
    "memo_never_stored": b"\x80\x02h\x07" + CALL,
    "pops_past_the_stack": b"0" + CALL,
    "mark_never_opened": b"N1" + CALL,
    "text_after_a_global": b"cos\nfoo\nbar",  # BUILD with one item on the stack
    "text_of_commands": b"(cd /tmp\ncp a b\nRun it\n",  # a REDUCE below a MARK
}


@pytest.mark.parametrize("data", NOT_RUN.values(), ids=NOT_RUN)
def test_a_pickle_that_breaks_before_its_call_is_not_called_code(tmp_path, data):
    for unpickler in UNPICKLERS:
        assert "called" not in _unpickled(data, unpickler)
    for source in _both(tmp_path, "broken.pt", data):
        refusal(source, "not_zip")


NO_SUCH_GLOBAL = {  # text read as an INST of a module no finder finds: the import fails
    "text_of_an_outline": b"(i) Introduction\n(ii) Methods\n",
    "text_in_brackets": b"(in progress)\nfoo\nbar\n",
}


@pytest.mark.parametrize("data", NO_SUCH_GLOBAL.values(), ids=NO_SUCH_GLOBAL)
def test_text_that_names_no_importable_global_is_not_called_code(tmp_path, data):
    for unpickler in UNPICKLERS:
        with pytest.raises(ModuleNotFoundError):
            unpickler(io.BytesIO(data)).load()
    for source in _both(tmp_path, "notes.pt", data):
        refusal(source, "not_zip")


@pytest.fixture
def extension():
    """builtins.len registered in copyreg's extension registry as code 240, as a program
    may register it (none is registered in a stock interpreter)."""
    copyreg.add_extension("builtins", "len", 240)
    copyreg.clear_extension_cache()
    yield 240
    copyreg.remove_extension("builtins", "len", 240)
    copyreg.clear_extension_cache()


@pytest.mark.parametrize("opcode, size", [("EXT1", 1), ("EXT2", 2), ("EXT4", 4)])
def test_a_global_fetched_from_the_extension_registry_then_called_is_named_as_code(
    tmp_path, extension, opcode, size
):
    """Called (cut after the call), or only fetched, as a lone GLOBAL is named."""
    ext = b"\x80\x02" + pickle.__dict__[opcode] + extension.to_bytes(size, "little")
    imported = ["import builtins.len"]
    for data, log in [(ext + b"(S'ab'\ntR", imported + ["called"]), (ext + b".", imported)]:
        for unpickler in UNPICKLERS:
            copyreg.clear_extension_cache()  # else the second finds the first's stand-in
            assert _unpickled(data, unpickler) == log
        for source in _both(tmp_path, "ext.pt", data):
            assert refusal(source, "unsafe_pickle_opcode").params["opcode"] == opcode
