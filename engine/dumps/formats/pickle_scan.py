"""Whether a file that is not a zip archive is a pickle that would run code, found in
bounded time and memory, without unpickling anything.

Most bytes are some pickle opcode ("s" is SETITEM, "o" is OBJ), so a text file's letters
are no evidence of code.  A file counts as a pickle only when its first ``HEAD_BYTES``
parse as opcodes whose stack and memo stay consistent, followed as ``pickletools.dis``
follows them, running nothing: a whole pickle, or one cut only by the end of those bytes,
or one consistent up to a call made after an import (a REDUCE, OBJ, NEWOBJ, NEWOBJ_EX,
INST or BUILD once a GLOBAL, STACK_GLOBAL, INST or EXT has fetched a global).  The
unpickler runs each opcode as it reads it, so whatever comes after such a call (a byte
that is no opcode, a pop of an empty stack, a memo slot never stored, the end of the file
without STOP) fails only once the call has run.  A text file that happens to start
"c<word>\n<word>\n" (a GLOBAL) is still judged by what follows: a call needs its
arguments on the stack.

Where ``dis`` and the unpickler differ, the unpickler is followed.  Two of ``dis``'s checks
are left out: items left on the stack at STOP (the unpickler returns the top one), and a
memo slot stored twice (it keeps the second).  INT and LONG text is read as the unpickler
reads it, base 0 ("0x10", "0o7": ``int(s, 0)`` in the Python unpickler's ``load_int`` and
``load_long``, ``strtol`` and ``PyLong_FromString`` with base 0 in the C one), as well as
base 10 as ``pickletools`` reads it (not yet as the C unpickler does where a NUL byte ends
the text early).  And no argument is put into words: ``dis`` writes each one, and the repr
of a LONG4 of 2000 bytes passes Python's 4300-digit limit.  Two checks are the unpickler's
own: an opcode that takes no MARK never reaches below one (the unpicklers keep the items
after a MARK apart), and a GLOBAL or INST counts as an import only where its module and
name are dotted identifiers, so text such as "(i) Introduction" is no call.

Where those bytes make no call, the pickle's opcodes are walked from the start to its
first STOP, ``MAX_PICKLE_OPCODES`` at most: an opcode's argument is stepped over by its
length (a large bytes or string argument is skipped, never read), so a call behind a large
blob is found, and a hostile 100 MB file costs a bounded number of small reads.  Only the
first pickle counts: a pre-1.6 torch.save file is several pickles, the first its magic
number, and the later ones name torch's own rebuild functions.
"""

from __future__ import annotations

import io
import pickletools

from engine.dumps.limits import MAX_PICKLE_BYTES, MAX_PICKLE_OPCODES
from engine.dumps.sources import DumpFile

HEAD_BYTES = MAX_PICKLE_OPCODES  # what _scan_head follows: at most that many opcodes
# EXT1/2/4 fetch a global too: the (module, name) copyreg's extension registry holds for
# their code, imported through find_class (nothing is registered in a stock interpreter)
_IMPORTS = {"GLOBAL", "STACK_GLOBAL", "INST", "EXT1", "EXT2", "EXT4"}  # fetch a global
CALLS = _IMPORTS | {"REDUCE", "OBJ", "NEWOBJ", "NEWOBJ_EX"}  # import or call
_CALLED = {"REDUCE", "OBJ", "NEWOBJ", "NEWOBJ_EX", "INST", "BUILD"}  # what calls one
_LINE_BYTES = 1 << 16  # a newline-ended argument (a number, a name) longer than this: no pickle
_LINES_READ = MAX_PICKLE_BYTES  # newline-ended arguments the walk reads, all together
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


def _scan_head(file: DumpFile) -> tuple[bool, str | None]:
    """Whether the file's first ``HEAD_BYTES`` are a consistent pickle (module docstring),
    and the first opcode that imports or calls where a call is made in them."""
    head = file.read(0, HEAD_BYTES)
    try:
        return True, _follow(_Head(head, file.size > len(head)))
    except _PastHead:
        return True, None
    except Exception:  # ValueError: an unknown opcode, a bad argument, the stack or memo
        return False, None


def _number_text(opcode, stream) -> int:
    """INT or LONG's newline-ended text as the unpickler reads it (base 0), or as
    ``pickletools`` does (base 10): ValueError where neither reads it."""
    line = stream.readline()
    if not line.endswith(b"\n"):
        raise ValueError("no newline after a number")
    text = line[:-1]
    if opcode.name == "LONG" and text.endswith(b"L"):
        text = text[:-1]
    try:
        return int(text, 0)
    except ValueError:
        return int(text)


def _opcodes(stream):
    """(opcode, argument) to the first STOP, as ``pickletools.genops`` reads them but for
    INT and LONG (``_number_text``)."""
    while True:
        code = stream.read(1)
        opcode = pickletools.code2op.get(code.decode("latin-1"))
        if opcode is None:
            raise ValueError("no opcode" if code else "the pickle ends before STOP")
        if opcode.name in ("INT", "LONG"):
            yield opcode, _number_text(opcode, stream)
        else:
            yield opcode, None if opcode.arg is None else opcode.arg.reader(stream)
        if opcode.name == "STOP":
            return


_MARK = pickletools.markobject
_PUTS = {"PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE"}
_GETS = {"GET", "BINGET", "LONG_BINGET"}


def _names_a_global(opcode, arg) -> bool:
    """Whether an import could find what it names: GLOBAL's and INST's module and name are
    dotted identifiers ("(i) Introduction" opening a text file is an INST of a module
    ") Introduction", which no unpickler finds); STACK_GLOBAL and EXT name theirs elsewhere."""
    if opcode.name not in ("GLOBAL", "INST"):
        return True
    parts = str(arg).split(" ")
    return len(parts) == 2 and all(
        all(word.isidentifier() for word in part.split(".")) for part in parts
    )


def _follow(stream) -> str | None:
    """Follow the pickle's stack and memo as ``pickletools.dis`` does (module docstring:
    less two checks, no words) to its first STOP (None) or to its first call made after an
    import (the first opcode in ``CALLS``); ValueError where they break before either."""
    stack: list = []  # what each opcode leaves, as pickletools describes it (never a value)
    marks, memo = 0, {}
    first, imported = None, False
    for opcode, arg in _opcodes(stream):
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
            if any(item is _MARK for item in stack[-popped:]):  # the unpicklers refuse this
                raise ValueError("an opcode reaches below a MARK")
            del stack[-popped:]
        marks += _MARK in after
        stack.extend(after)
        if first is None and opcode.name in CALLS:
            first = opcode.name
        imported = imported or (opcode.name in _IMPORTS and _names_a_global(opcode, arg))
        if imported and opcode.name in _CALLED:  # made with its arguments: it has run
            return first
    return None


def first_call(file: DumpFile) -> str | None:
    """The first opcode that imports or calls in the file's first pickle (None: none found,
    or the file is not a pickle)."""
    consistent, call = _scan_head(file)
    if not consistent or call is not None:
        return call
    stream = io.BytesIO(file.data) if file.data is not None else open(file.on_disk(), "rb")  # noqa: SIM115
    with stream:
        return _walk(stream, file.size)


def _walk(stream, size: int) -> str | None:
    """The first call of the pickle in ``stream`` (``size`` bytes), every argument's length
    checked against the bytes left before it is stepped over: a hostile length (up to
    2⁶⁴ − 1) ends the walk (no pickle), never a seek past what a file or a buffer allows.
    Newline-ended arguments are read, ``_LINES_READ`` bytes of them in all (a pickle the
    loaders accept is smaller): past that the walk ends, so the most it reads is that and
    a few bytes per opcode, not ``MAX_PICKLE_OPCODES`` lines of ``_LINE_BYTES``."""
    lines_left = _LINES_READ
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
            line = stream.readline(min(_LINE_BYTES, lines_left))
            lines_left -= len(line)
            if not line.endswith(b"\n"):
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
