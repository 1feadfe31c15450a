"""Whether a file that is not a zip archive is a pickle that would run code, found in
bounded time and memory, without unpickling anything.

Most bytes are some pickle opcode ("s" is SETITEM, "o" is OBJ), so a text file's letters
are no evidence of code.  A file counts as a pickle only when its first ``HEAD_BYTES``
parse as opcodes (``pickletools.genops``) whose stack and memo stay consistent, followed as
``pickletools.dis`` follows them, running nothing: a whole pickle, or one cut only by the
end of those bytes.  Two of ``dis``'s checks are left out, because the unpickler runs such
a pickle: items left on the stack at STOP (it returns the top one), and a memo slot
stored twice (it keeps the second).  And no argument is put into words: ``dis`` writes
each one, and the repr of a LONG4 of 2000 bytes passes Python's 4300-digit limit.

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

HEAD_BYTES = MAX_PICKLE_OPCODES  # what is_pickle follows: at most that many opcodes
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


def is_pickle(file: DumpFile) -> bool:
    """The file's first ``HEAD_BYTES`` are a consistent pickle, all or up to their end."""
    head = file.read(0, HEAD_BYTES)
    try:
        _follow(_Head(head, file.size > len(head)))
    except _PastHead:
        return True
    except Exception:  # ValueError: an unknown opcode, a bad argument, the stack or memo
        return False
    return True


_MARK = pickletools.markobject
_PUTS = {"PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE"}
_GETS = {"GET", "BINGET", "LONG_BINGET"}


def _follow(stream) -> None:
    """Follow the pickle's stack and memo to its first STOP as ``pickletools.dis`` does
    (module docstring: less two checks, no words); ValueError where they break."""
    stack: list = []  # what each opcode leaves, as pickletools describes it (never a value)
    marks, memo = 0, {}
    for opcode, arg, _ in pickletools.genops(stream):
        before, after = opcode.stack_before, opcode.stack_after
        popped = len(before)
        if _MARK in before or (opcode.name == "POP" and stack and stack[-1] is _MARK):
            if not marks:
                raise ValueError("no MARK on the stack")
            marks -= 1
            while stack.pop() is not _MARK:  # everything from the topmost MARK
                pass
            popped = before.index(_MARK) if _MARK in before else 0
        if opcode.name in _PUTS:
            if not stack or stack[-1] is _MARK:
                raise ValueError("nothing to store in the memo")
            memo[len(memo) if opcode.name == "MEMOIZE" else arg] = stack[-1]
        elif opcode.name in _GETS:
            if arg not in memo:
                raise ValueError("a memo slot never stored")
            after = [memo[arg]]
        if len(stack) < popped:
            raise ValueError("an opcode pops more than the stack holds")
        if popped:
            marks -= sum(item is _MARK for item in stack[-popped:])
            del stack[-popped:]
        marks += _MARK in after
        stack.extend(after)


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
