"""Whether a file that is not a zip archive is a pickle that would run code, found in
bounded time and memory, without unpickling anything.

Most bytes are some pickle opcode ("s" is SETITEM, "o" is OBJ), so a text file's letters
are no evidence of code.  A file counts as a pickle only when ``pickletools.dis`` (which
parses and follows the stack and memo, running nothing) accepts its first ``HEAD_BYTES``:
a whole pickle, or one cut only by the end of those bytes.

Then its opcodes are walked from the start to its first STOP, ``MAX_PICKLE_OPCODES`` at
most: an opcode's argument is stepped over by its length (a large bytes or string
argument is skipped, never read), so a call behind a large blob is found, and a hostile
100 MB file costs a bounded number of small reads.  Only the first pickle counts: a
pre-1.6 torch.save file is several pickles, the first its magic number, and the later
ones name torch's own rebuild functions.
"""

from __future__ import annotations

import io
import pickletools

from engine.dumps.limits import MAX_PICKLE_OPCODES
from engine.dumps.sources import DumpFile

HEAD_BYTES = MAX_PICKLE_OPCODES  # what pickletools.dis checks: at most that many opcodes
CALLS = {"GLOBAL", "STACK_GLOBAL", "REDUCE", "INST", "OBJ", "NEWOBJ", "NEWOBJ_EX"}
_LINE_BYTES = 1 << 16  # a newline-ended argument (a number, a name) longer than this: no pickle
_LENGTH_BYTES = {  # an argument whose length comes first: the bytes of that length
    pickletools.TAKEN_FROM_ARGUMENT1: 1,
    pickletools.TAKEN_FROM_ARGUMENT4: 4,
    pickletools.TAKEN_FROM_ARGUMENT4U: 4,
    pickletools.TAKEN_FROM_ARGUMENT8U: 8,
}


class _PastHead(Exception):
    """An opcode runs past the bytes read: the pickle is longer than the head."""


class _Head(io.BytesIO):
    """A file's first bytes; reading past them raises ``_PastHead`` when the file goes on."""

    def __init__(self, head: bytes, more: bool):
        super().__init__(head)
        self.more = more

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        if self.more and (size is None or size < 0 or len(data) < size):
            raise _PastHead
        return data

    def readline(self, size: int | None = -1) -> bytes:
        line = super().readline(size)
        if self.more and not line.endswith(b"\n"):
            raise _PastHead
        return line


class _Discard:
    """An output that keeps nothing (``pickletools.dis`` checks as it writes)."""

    def write(self, text: str) -> None:
        pass


def is_pickle(file: DumpFile) -> bool:
    """``pickletools.dis`` accepts the file's first ``HEAD_BYTES``, all or up to their end."""
    head = file.read(0, HEAD_BYTES)
    try:
        # indentlevel=0: dis indents each line by the open MARKs, quadratic in a run of them
        pickletools.dis(_Head(head, file.size > len(head)), out=_Discard(), indentlevel=0)
    except _PastHead:
        return True
    except Exception:  # ValueError: an unknown opcode, a bad argument, the stack or memo
        return False
    return True


def first_call(file: DumpFile) -> str | None:
    """The first opcode that imports or calls in the file's first pickle (None: none found,
    or the file is not a pickle)."""
    if not is_pickle(file):
        return None
    stream = io.BytesIO(file.data) if file.data is not None else open(file.path, "rb")  # noqa: SIM115
    with stream:
        return _walk(stream, file.size)


def _walk(stream, size: int) -> str | None:
    """The first call of the pickle in ``stream`` (``size`` bytes), every argument's length
    checked against the bytes left before it is stepped over: a hostile length (up to
    2⁶⁴ − 1) ends the walk (no pickle), never a seek past what a file or a buffer allows."""
    for _ in range(MAX_PICKLE_OPCODES):
        opcode = pickletools.code2op.get(stream.read(1).decode("latin-1"))
        if opcode is None or opcode.name == "STOP":
            return None
        if opcode.name in CALLS:
            return opcode.name
        if opcode.arg is None:
            continue
        n = opcode.arg.n
        if n == pickletools.UP_TO_NEWLINE:
            if not stream.readline(_LINE_BYTES).endswith(b"\n"):
                return None
            continue
        if n < 0:
            width = _LENGTH_BYTES[n]
            signed = n == pickletools.TAKEN_FROM_ARGUMENT4
            n = int.from_bytes(stream.read(width), "little", signed=signed)
        if not 0 <= n <= size - stream.tell():  # the argument runs past the end of the file
            return None
        stream.seek(n, io.SEEK_CUR)  # the argument itself: skipped, never read
    return None
