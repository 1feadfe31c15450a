""".pt / .pth: only through ``torch.load(weights_only=True)``, which unpickles tensors,
containers and plain values and refuses every other global, so a payload never runs.  (One
other reader goes over the pickle first, for the bytes each storage needs
(``torch_records``): its ``find_class`` returns an inert placeholder for every name, so it
imports and calls nothing.)

Accepted content: a tensor, a list or tuple of tensors (HF ``output_hidden_states``), or a
dict of them, nested (keys joined with "."). Files on disk are loaded with ``mmap=True``:
the tensors view the file instead of being read into memory.  The legacy (pre-1.6, non-zip)
format is refused: its storages are read whole, with sizes taken from the pickle.  Before
refusing it, the stream's opcodes are listed (``pickle_scan``: parsed, never run, in bounded
time and memory), so a plain pickle that would call functions is named as such.

Before anything is unpickled, the structure is bounded: the zip directory's size, the
pickle's size and its opcodes (each makes at most one object), and the tensors it stores.
After unpickling and before anything is walked, the objects reached through the lists and
dicts are counted with each container's count computed once (``_references``): eight lines
of ``x = [x, x]`` make a 2 KB file whose walk would reach 2⁴⁰ tensors; it is refused by
that count in microseconds.
"""

from __future__ import annotations

import io
import pickle
import re
import warnings
import zipfile

import torch

from engine.config.norms import DTYPE_NAMES
from engine.dumps.formats.entries import (
    ANSI,
    WHOLE_FILE,
    EntryInfo,
    FileScan,
    Skipped,
    check_entry_count,
    check_name,
    check_not_encrypted,
    check_unique_members,
    check_zip_directory,
    corrupt,
    entry_name,
    first_line,
)
from engine.dumps.formats.pickle_scan import first_call
from engine.dumps.formats.torch_records import check_records, storage_sizes, walk_pickle
from engine.dumps.limits import (
    MAX_ENTRIES,
    MAX_NAME_CHARS,
    MAX_PICKLE_BYTES,
    MAX_REFERENCES,
    WINDOW_BYTES,
)
from engine.dumps.refusals import refuse
from engine.dumps.sources import DumpFile
from engine.dumps.token_names import TOKENS_KEY, token_rows, tokens_json

# What torch's refusal names as the global the pickle would call, in its wordings so far
# ("Unsupported global: GLOBAL exec was not ...", "Trying to load unsupported
# GLOBAL posix.system whose module posix is blocked").  Nothing else of that text is shown:
# it explains how to load the file unsafely, no advice for someone who uploaded it.
_UNSUPPORTED = re.compile(r"unsupported (?:global: )?GLOBAL ([^\s]+)", re.IGNORECASE)
# Records a torch.save zip may list: one per storage, and data.pkl, version, byteorder, ...
# Loose: the pickle's own count of storages (``_check_pickle``) is the exact bound.
_MOST_RECORDS = 2 * MAX_ENTRIES


# torch's weights-only unpickler names an opcode it has no rule for so; FRAME (149), which
# every pickle of protocol 4 or 5 holds, marks a file it cannot read, not one that calls
_UNREAD_OPCODE = re.compile(r"Unsupported operand (\d+)")


def _unsafe(file: DumpFile, exc: BaseException):
    """The refusal naming what the pickle would have called (e.g. ``builtins.exec``), where
    torch's refusal says it."""
    said = ANSI.sub("", str(exc))
    found = _UNSUPPORTED.search(said)
    if found is None:
        opcode = _UNREAD_OPCODE.search(said)
        if opcode is not None and int(opcode.group(1)) == pickle.FRAME[0]:
            return refuse("pickle_frames_unread", file=file.name)
        return refuse("unsafe_pickle_unnamed", file=file.name)
    return refuse("unsafe_pickle", file=file.name, call=found.group(1))


def _refuse_legacy(file: DumpFile):
    """The refusal for a non-zip file: unsafe if it is a pickle that would call anything
    (``pickle_scan``: a consistent pickle, whole or up to a call it makes, read in bounded
    time and memory)."""
    call = first_call(file)
    if call is not None:
        return refuse("unsafe_pickle_opcode", file=file.name, opcode=call)
    return refuse("not_zip", file=file.name)


def _check_pickle(file: DumpFile, source) -> None:
    """Bound the pickle before torch unpickles it: its size, its opcodes (listed, never run)
    and the storages it refers to; then check each storage's record (``torch_records``)."""
    with zipfile.ZipFile(source) as archive:
        infos = archive.infolist()
        check_unique_members(file, infos, "torch")  # torch and zipfile may read another
        pickles = [info for info in infos if info.filename.endswith("data.pkl")]
        if not pickles:  # torch.load's refusal would be a C++ check's words
            npz = any(info.filename.endswith(".npy") for info in infos)
            raise refuse("npz_as_pt" if npz else "zip_not_torch", file=file.name)
        for info in infos:  # zipfile and torch would refuse in their own words
            check_not_encrypted(file, info, "torch")
        prefix = pickles[0].filename.removesuffix("data.pkl")
        names = {info.filename for info in infos}
        if not names & {prefix + "version", prefix + ".data/version"}:  # what torch checks
            raise refuse("torch_no_version", file=file.name, entry=pickles[0].filename)
        if pickles[0].file_size > MAX_PICKLE_BYTES:
            raise refuse(
                "pickle_too_large",
                file=file.name,
                size=pickles[0].file_size,
                limit=MAX_PICKLE_BYTES,
                entries=MAX_ENTRIES,
            )
        data = archive.read(pickles[0])
        storages = walk_pickle(file, data)
        check_entry_count(file, storages)
        check_records(file, archive, storage_sizes(data), prefix + "data/")


def _load(file: DumpFile) -> object:
    path = None if file.data is not None else file.on_disk()

    def source():  # a fresh stream over an upload's bytes (not a copy), or the path
        return io.BytesIO(file.data) if path is None else path

    try:
        is_zip = zipfile.is_zipfile(source())
    except Exception as exc:
        raise corrupt(file, "", "torch", first_line(exc)) from None
    if not is_zip:
        raise _refuse_legacy(file)
    check_zip_directory(file, _MOST_RECORDS)
    try:
        _check_pickle(file, source())
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise corrupt(file, "", "torch", first_line(exc)) from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. "unusual pickle protocol": we refuse or read
            # A payload makes the restricted unpickler raise before anything is called.
            return torch.load(
                source(), map_location="cpu", weights_only=True, mmap=file.data is None
            )
    except pickle.UnpicklingError as exc:
        raise _unsafe(file, exc) from None
    except Exception as exc:  # RuntimeError from the zip reader, EOFError, ...
        raise corrupt(file, "", "torch", first_line(exc)) from None


def _items(obj: object):
    """(key, item) of a list, tuple or dict; None for anything else."""
    if isinstance(obj, (list, tuple)):
        return enumerate(obj)
    if isinstance(obj, dict):
        return obj.items()
    return None


def _references(file: DumpFile, root: object) -> int:
    """How many objects a walk of ``root``'s lists and dicts reaches (a shared container is
    reached, and counted, once per reference), computed with one visit per container: its
    count is kept by ``id``.  Refused past ``MAX_REFERENCES``, and for a container that holds
    itself or nests deeper than a name can be long."""
    counted: dict[int, int] = {}
    open_now: set[int] = set()

    def count(obj: object, depth: int) -> int:
        items = _items(obj)
        if items is None:
            return 1
        key = id(obj)
        if key in counted:
            return counted[key]
        if key in open_now:
            raise refuse("self_reference", file=file.name)
        if depth > MAX_NAME_CHARS // 2:  # every level adds at least 2 characters to a name
            length, name = 2 * depth - 1, ".".join(["0"] * 20)
            raise refuse(
                "name_too_long", file=file.name, length=length, name=name, limit=MAX_NAME_CHARS
            )
        open_now.add(key)
        total = 1
        for _, item in items:
            total = min(total + count(item, depth + 1), MAX_REFERENCES + 1)
        open_now.discard(key)
        counted[key] = total
        return total

    total = count(root, 0)
    if total > MAX_REFERENCES:
        raise refuse(
            "too_many_references", file=file.name, limit=MAX_REFERENCES, entries=MAX_ENTRIES
        )
    return total


def _flatten(obj: object, prefix: str, found: dict, skipped: list, file: DumpFile) -> None:
    check_name(file, prefix)
    if prefix == TOKENS_KEY and (rows := token_rows(obj)) is not None:
        found[TOKENS_KEY] = rows  # each position's text, not an array
    elif isinstance(obj, torch.Tensor):
        found[prefix] = obj.detach()  # a Parameter, or a tensor that requires grad: its values
    elif (items := _items(obj)) is not None:
        for key, item in items:
            _flatten(item, f"{prefix}.{key}" if prefix else str(key), found, skipped, file)
    elif prefix:
        skipped.append(Skipped(prefix, "not_a_tensor", type(obj).__name__))
    else:
        raise refuse("pt_content", file=file.name, entry=WHOLE_FILE, kind=type(obj).__name__)


def _tensors(file: DumpFile) -> tuple[dict[str, torch.Tensor], list[Skipped]]:
    found: dict[str, torch.Tensor] = {}
    skipped: list[Skipped] = []
    loaded = _load(file)
    _references(file, loaded)  # before the walk: refuses what the walk could not finish
    _flatten(loaded, "", found, skipped, file)
    check_entry_count(file, len(found) + len(skipped))
    return found, skipped


def scan(file: DumpFile) -> FileScan:
    found, skipped = _tensors(file)
    rows = found.pop(TOKENS_KEY, None) if isinstance(found.get(TOKENS_KEY), tuple) else None
    metadata = () if rows is None else ((TOKENS_KEY, tokens_json(rows)),)
    entries = []
    for key, tensor in found.items():
        name = entry_name(key)  # WHOLE_FILE for a file of one tensor
        if tensor.device.type != "cpu" or tensor.layout != torch.strided:
            # a meta tensor holds no values, a sparse one is not rows of a stream
            layout = str(tensor.layout).removeprefix("torch.")
            skipped.append(Skipped(name, "no_values", f"{layout}, {tensor.device.type}"))
        elif tensor.dtype not in DTYPE_NAMES:
            skipped.append(Skipped(name, "dtype", str(tensor.dtype).removeprefix("torch.")))
        elif tensor.dim() == 0:
            skipped.append(Skipped(name, "scalar"))
        elif _overlapping(tensor):
            shape, strides = list(tensor.shape), list(tensor.stride())
            skipped.append(Skipped(name, "overlapping", f"shape {shape}, strides {strides}"))
        else:
            dtype = DTYPE_NAMES[tensor.dtype]
            entries.append(EntryInfo(file=file, key=key, shape=tuple(tensor.shape), dtype=dtype))
    return FileScan(file, tuple(entries), tuple(skipped), metadata)


def _overlapping(tensor: torch.Tensor) -> bool:
    """Whether two of the tensor's elements are one value of its storage (``expand``, a
    stride of 0): its values are not what the file holds, and a 1.5 KB file could hold 10¹¹
    of them for the report to read.  Where its dimensions longer than 1, by stride, each
    step past all the ones before, none is; else its elements' offsets are counted, up to
    ``_COUNTED_OFFSETS`` of them (a larger such tensor is taken to overlap)."""
    reach = 1  # the storage's elements the dimensions so far span
    for stride, size in sorted(zip(tensor.stride(), tensor.shape)):
        if size > 1:
            if stride < reach:
                break
            reach += stride * (size - 1)
    else:
        return False
    if tensor.numel() > _COUNTED_OFFSETS:
        return True
    offsets = torch.zeros((), dtype=torch.int64)
    for stride, size in zip(tensor.stride(), tensor.shape):
        offsets = offsets.unsqueeze(-1) + torch.arange(size) * stride
    return offsets.unique().numel() < tensor.numel()


_COUNTED_OFFSETS = 1 << 22  # 32 MB of int64 offsets


def _rows(tensor: torch.Tensor, d: int, start: int, stop: int) -> torch.Tensor:
    """Rows ``start:stop`` of ``tensor`` seen as ``[n, d]``: a view where its strides allow
    one, else those rows alone, gathered (``reshape`` would copy the whole tensor for every
    window of rows read)."""
    try:
        return tensor.view(-1, d)[start:stop]
    except RuntimeError:  # strides no view of [n, d] can follow (a transposed stream)
        stop = max(start, min(stop, tensor.numel() // d))
        return tensor[torch.unravel_index(torch.arange(start, stop), tensor.shape[:-1])]


class Reader:
    """Rows of a .pt file's tensors.

    On disk the file is loaded memory-mapped and kept while rows are read, then loaded
    again once ``WINDOW_BYTES`` have been handed out, so that pages already reduced are
    unmapped (with the tensors that viewed them) and the resident set stays bounded.  An
    upload is unpickled once per reader: loading from bytes copies every tensor.
    """

    def __init__(self, file: DumpFile):
        self.file = file
        self._held = _tensors(file)[0] if file.data is not None else None
        self._served = 0

    def rows(self, entry: EntryInfo, start: int, stop: int) -> torch.Tensor:
        if self.file.data is None:  # the mapped file, rewritten since: refused before a read
            self.file.on_disk()
        if self._held is None or (self.file.data is None and self._served > WINDOW_BYTES):
            self._held, self._served = _tensors(self.file)[0], 0
        tensor = self._held.get(entry.key)
        if tensor is None or tuple(tensor.shape) != entry.shape:
            raise refuse("dump_rewritten", file=self.file.name)  # on disk: seen by on_disk first
        rows = _rows(tensor, entry.d, start, stop)  # [n, d]
        self._served += rows.numel() * rows.element_size()
        return rows
