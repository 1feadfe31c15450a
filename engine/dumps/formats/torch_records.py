""".pt records against the pickle that names them: every storage's record must hold the
bytes its tensors need, stored as they are.

torch checks a record's size when it reads the record, not when it maps the file (``torch.load
(mmap=True)``, how ``torch_file`` loads a file on disk), so a short record was read on into
the records after it: numbers the file's tensors never held.  The bytes each storage needs
come from the pickle, read by ``_StorageSizes``, an unpickler that imports and calls nothing.
"""

from __future__ import annotations

import bisect
import io
import pickle
import pickletools
import struct
import zipfile

import torch

from engine.dumps.formats.entries import corrupt, first_line
from engine.dumps.limits import (
    MAX_ENTRIES,
    MAX_PICKLE_KEYS,
    MAX_PICKLE_OPCODES,
    MAX_PICKLE_PARTS,
)
from engine.dumps.refusals import refuse
from engine.dumps.sources import DumpFile
from engine.errors import EngineError


class _Inert:
    """What the size reader's unpickler makes of any global: a name, called to nothing."""

    def __init__(self, *names):
        self.names = names

    def __call__(self, *args, **kwargs):
        return _Inert()

    def __setstate__(self, state):
        pass


class _StorageSizes(pickle.Unpickler):
    """Reads a torch.save pickle (already bounded by ``_check_pickle``) for the storages it
    names and the bytes each needs; it imports and calls nothing (every global is an
    ``_Inert``), and it takes a storage's key and size only in the types torch.save writes
    (a short str, an int): nothing the file built is printed or converted."""

    def __init__(self, data: bytes):
        super().__init__(io.BytesIO(data))
        self.sizes: dict[str, int] = {}

    def find_class(self, module, name):
        return _Inert(module, name)

    def persistent_load(self, pid):
        # ("storage", storage type, key, location, numel), as torch.save writes it
        if type(pid) is not tuple or len(pid) != 5:
            raise pickle.UnpicklingError("not a storage")
        kind, storage_type, key, _, numel = pid
        if not (
            type(kind) is str
            and kind == "storage"
            and type(storage_type) is _Inert
            and type(key) is str
            and len(key) <= 64
            and type(numel) is int
            and 0 <= numel < 2**62
        ):
            raise pickle.UnpicklingError("not a storage")
        name = storage_type.names[-1]
        if name == "UntypedStorage":
            self.sizes[key] = numel
        elif (dtype := _STORAGE_DTYPES.get(name)) is not None:
            self.sizes[key] = numel * dtype.itemsize
        return _Inert()  # a storage type torch does not name: torch.load refuses it


# torch.save's typed storage names (its pickles name storages so for older readers)
_STORAGE_DTYPES = {
    f"{name}Storage": dtype
    for name, dtype in {
        "Double": torch.float64,
        "Float": torch.float32,
        "Half": torch.float16,
        "BFloat16": torch.bfloat16,
        "Long": torch.int64,
        "Int": torch.int32,
        "Short": torch.int16,
        "Char": torch.int8,
        "Byte": torch.uint8,
        "Bool": torch.bool,
        "ComplexDouble": torch.complex128,
        "ComplexFloat": torch.complex64,
    }.items()
}


_MEMO_PUTS = {"PUT", "BINPUT", "LONG_BINPUT"}  # store the top of the stack at a numbered slot
_MEMO_GETS = {"GET", "BINGET", "LONG_BINGET"}
_MARK = object()  # a MARK on the walked stack
# opcodes that add to the object below what they take (a list, dict, set, or BUILD's object)
_INTO_FIRST = {"APPEND", "APPENDS", "SETITEM", "SETITEMS", "ADDITEMS", "BUILD"}
_PAIRS = {"SETITEM", "SETITEMS", "DICT"}  # take keys and values, in pairs
_KEYED = {"ADDITEMS", "FROZENSET"}  # take a set's items, each hashed


def walk_pickle(file: DumpFile, data: bytes) -> int:
    """The storages a torch.save pickle names, once its opcodes are walked (listed by
    ``pickletools``, never run) and found bounded in what unpickling them would cost:
    - at most ``MAX_PICKLE_OPCODES`` opcodes (``dumps.pickle_too_complex``);
    - a memo slot no higher than the opcodes before it (``dumps.pickle_memo``): the
      unpickler reserves memory for every slot below the one named, 16 bytes each (a slot
      of 2²⁸ took 4.3 GB), and torch.save numbers its slots from 0, one by one;
    - at most ``MAX_PICKLE_KEYS`` keys put into dicts and sets (``dumps.pickle_too_many_keys``):
      keys of one hash (ints 2⁶¹ − 1 apart) make each insertion compare with all before it,
      and 120,000 of them in 1.4 MB kept torch's loader busy for minutes;
    - at most ``MAX_PICKLE_PARTS`` parts built in all (``dumps.pickle_unfolds``), each
      object counted as what it unfolds into, shared references again each time: a tuple
      holding the same tuple twice, 80 times over, is 2⁸⁰ parts for the unpickler to hash as
      a dict's key, which never ends, and one key of 2¹⁹ parts in 52,416 small dicts took
      112 s.  An item of the walked stack is the parts of its object; what an opcode builds
      is one more than what it took; a memo slot keeps the parts of what it holds.
    The stack is walked as the unpicklers keep it (a POP takes a MARK as it takes any item).
    A byte that is no opcode is ``corrupt``; what the walk cannot follow (a memo slot never
    stored, a pop of an empty stack) is left to torch, which refuses it."""
    stack: list = []
    memo: dict[int, int] = {}
    count = storages = built = keys = 0

    def take(items: int) -> list[int]:  # the parts of the top ``items`` items, taken off
        return [stack.pop() for _ in range(items) if stack and stack[-1] is not _MARK]

    try:
        for count, (opcode, arg, _) in enumerate(pickletools.genops(data), start=1):
            if count > MAX_PICKLE_OPCODES:
                raise refuse(
                    "pickle_too_complex",
                    file=file.name,
                    limit=MAX_PICKLE_OPCODES,
                    entries=MAX_ENTRIES,
                )
            name, before = opcode.name, opcode.stack_before
            storages += name in ("PERSID", "BINPERSID")
            if name in _MEMO_PUTS or name == "MEMOIZE":  # the top, kept in a slot
                slot = len(memo) if name == "MEMOIZE" else arg
                if isinstance(slot, int) and slot > count:
                    raise refuse("pickle_memo", file=file.name, slot=slot, count=count)
                if stack and stack[-1] is not _MARK:
                    memo[slot] = stack[-1]
            elif name in _MEMO_GETS:
                stack.append(memo.get(arg, 1))
            elif name == "DUP":
                stack.append(stack[-1] if stack else 1)
            elif name == "MARK":
                stack.append(_MARK)
            elif name == "POP":
                if stack:
                    stack.pop()
            else:  # builds one object (or none: STOP, POP_MARK) from what it takes
                if pickletools.markobject in before:  # to the MARK, then what lies below it
                    items = []
                    while stack and stack[-1] is not _MARK:
                        items.append(stack.pop())
                    if stack:
                        stack.pop()
                    container = take(before.index(pickletools.markobject))
                else:
                    items, container = take(len(before)), []
                    if name in _INTO_FIRST:  # the deepest of them is what is added to
                        items, container = items[:-1], items[-1:]
                keys += len(items) // 2 if name in _PAIRS else len(items) * (name in _KEYED)
                if keys > MAX_PICKLE_KEYS:
                    raise refuse(
                        "pickle_too_many_keys",
                        file=file.name,
                        limit=MAX_PICKLE_KEYS,
                        entries=MAX_ENTRIES,
                    )
                if opcode.stack_after:
                    parts = 1 + sum(items) + sum(container)
                    stack.append(parts)
                    # what an object added to takes in, else the new object: each hashed or
                    # kept once (a list grown 1,000 items at a time is not counted anew)
                    built += sum(items) if name in _INTO_FIRST else parts
                    if built > MAX_PICKLE_PARTS:
                        raise refuse("pickle_unfolds", file=file.name, limit=MAX_PICKLE_PARTS)
    except EngineError:  # a ValueError too: the refusals above, as they are
        raise
    except ValueError as exc:  # not a pickle: an unknown opcode, a truncated argument
        raise corrupt(file, "data.pkl", "torch", first_line(exc)) from None
    return storages


def storage_sizes(data: bytes) -> dict[str, int]:
    """{record key: bytes its storage needs} for the storages the pickle names (so far, if
    it is not a pickle torch would read: torch.load then refuses it)."""
    reader = _StorageSizes(data)
    try:
        reader.load()
    except Exception:
        pass
    return reader.sizes


def check_records(file: DumpFile, archive: zipfile.ZipFile, sizes: dict, prefix: str) -> None:
    """Refuse a storage whose record is compressed (torch.save never compresses) or holds
    fewer bytes than ``sizes`` says its tensors need.  The bytes a record holds are measured
    from where its data starts to where the next member (or the zip's directory) starts, not
    taken from the directory, which may say anything."""
    infos = {info.filename: info for info in archive.infolist()}
    starts = sorted({info.header_offset for info in infos.values()} | {archive.start_dir})
    for key, needed in sizes.items():
        info = infos.get(prefix + key)
        if info is None:
            continue  # torch.load refuses a missing record itself
        archive.fp.seek(info.header_offset + 26)
        name_length, extra_length = struct.unpack("<HH", archive.fp.read(4))
        data_start = info.header_offset + 30 + name_length + extra_length
        after = bisect.bisect_right(starts, info.header_offset)
        following = starts[after] if after < len(starts) else archive.start_dir
        stored = info.compress_type == zipfile.ZIP_STORED
        held = min(info.file_size, info.compress_size, following - data_start)
        if not stored or held < needed:
            raise refuse(
                "short_record" if stored else "compressed_record",
                file=file.name,
                record=key,
                held=max(held, 0),
                needed=needed,
            )
