""".pt / .pth: only through ``torch.load(weights_only=True)``, which unpickles tensors,
containers and plain values and refuses every other global, so a payload never runs.

Accepted content: a tensor, a list or tuple of tensors (HF ``output_hidden_states``), or a
dict of them, nested (keys joined with "."). Files on disk are loaded with ``mmap=True``:
the tensors view the file instead of being read into memory.  The legacy (pre-1.6, non-zip)
format is refused: its storages are read whole, with sizes taken from the pickle.  Before
refusing it, the stream's opcodes are listed (``pickletools.genops`` parses, never runs), so
a plain pickle that would call functions is named as such.
"""

from __future__ import annotations

import io
import pickle
import pickletools
import re
import warnings
import zipfile

import torch

from engine.dumps.formats.entries import EntryInfo, FileScan, corrupt
from engine.dumps.limits import WINDOW_BYTES
from engine.dumps.refusals import refuse
from engine.dumps.sources import DumpFile

_ACCEPTED = "a file written by torch.save (zip format, PyTorch >= 1.6)"
_FLOATS = {
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.float32: "float32",
    torch.float64: "float64",
}
_CALLS = {"GLOBAL", "STACK_GLOBAL", "REDUCE", "INST", "OBJ", "NEWOBJ", "NEWOBJ_EX"}


_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # torch bolds part of its message for terminals
# The line of torch's refusal that names what the pickle would call; its first lines explain
# how to load the file unsafely, which is no advice to show a person who uploaded it.
_UNSUPPORTED = re.compile(r"Unsupported global: GLOBAL ([^\s]+)")


def _first_line(exc: BaseException) -> str:
    text = _ANSI.sub("", str(exc)).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


def _unpickling_detail(exc: BaseException) -> str:
    """What the pickle would have called, e.g. "it calls builtins.exec", or its first line."""
    found = _UNSUPPORTED.search(str(exc))
    return f"it calls {found.group(1)}" if found else _first_line(exc)


def _refuse_legacy(file: DumpFile, head: bytes):
    """The refusal for a non-zip file: unsafe if its pickle would call anything."""
    try:
        for opcode, _, _ in pickletools.genops(io.BytesIO(head)):
            if opcode.name in _CALLS:
                detail = f"pickle opcode {opcode.name}"
                return refuse("unsafe_pickle", file=file.name, detail=detail)
    except Exception:  # not a pickle at all
        pass
    return corrupt(file, "", "torch", "not a zip archive", _ACCEPTED)


def _load(file: DumpFile) -> object:
    source = io.BytesIO(file.data) if file.data is not None else file.path
    try:
        is_zip = zipfile.is_zipfile(source)
    except Exception as exc:
        raise corrupt(file, "", "torch", _first_line(exc), _ACCEPTED) from None
    if not is_zip:
        if file.data is not None:
            head = file.data[: 1 << 20]
        else:
            with open(file.path, "rb") as handle:
                head = handle.read(1 << 20)
        raise _refuse_legacy(file, head)
    if isinstance(source, io.BytesIO):
        source.seek(0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. "unusual pickle protocol": we refuse or read
            # A payload makes the restricted unpickler raise before anything is called.
            return torch.load(source, map_location="cpu", weights_only=True, mmap=file.data is None)
    except pickle.UnpicklingError as exc:
        raise refuse("unsafe_pickle", file=file.name, detail=_unpickling_detail(exc)) from None
    except Exception as exc:  # RuntimeError from the zip reader, EOFError, ...
        raise corrupt(file, "", "torch", _first_line(exc), _ACCEPTED) from None


def _flatten(obj: object, prefix: str, found: dict, skipped: list, file: DumpFile) -> None:
    if isinstance(obj, torch.Tensor):
        found[prefix] = obj
    elif isinstance(obj, (list, tuple)):
        for index, item in enumerate(obj):
            _flatten(item, f"{prefix}.{index}" if prefix else str(index), found, skipped, file)
    elif isinstance(obj, dict):
        for key, item in obj.items():
            _flatten(item, f"{prefix}.{key}" if prefix else str(key), found, skipped, file)
    elif prefix:
        skipped.append((prefix, type(obj).__name__))
    else:
        raise refuse("pt_content", file=file.name, entry="(file)", kind=type(obj).__name__)


def _tensors(file: DumpFile) -> tuple[dict[str, torch.Tensor], list[tuple[str, str]]]:
    found: dict[str, torch.Tensor] = {}
    skipped: list[tuple[str, str]] = []
    _flatten(_load(file), "", found, skipped, file)
    return found, skipped


def scan(file: DumpFile) -> FileScan:
    found, skipped = _tensors(file)
    entries = []
    for key, tensor in found.items():
        if tensor.device.type != "cpu" or tensor.layout != torch.strided:
            # a meta tensor holds no values, a sparse one is not rows of a stream
            skipped.append((key, f"a {tensor.layout} tensor on {tensor.device.type}"))
        elif tensor.dtype in _FLOATS and tensor.dim() >= 1:
            shape = tuple(tensor.shape)
            entries.append(EntryInfo(file=file, key=key, shape=shape, dtype=_FLOATS[tensor.dtype]))
        else:
            skipped.append((key, f"{tensor.dtype} of shape {list(tensor.shape)}"))
    return FileScan(file, tuple(entries), tuple(skipped))


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
        if self._held is None or (self.file.data is None and self._served > WINDOW_BYTES):
            self._held, self._served = _tensors(self.file)[0], 0
        tensor = self._held.get(entry.key)
        if tensor is None or tuple(tensor.shape) != entry.shape:
            raise corrupt(self.file, entry.key, "torch", "changed since it was scanned", _ACCEPTED)
        rows = tensor.reshape(-1, entry.d)[start:stop]  # [n, d]
        self._served += rows.numel() * rows.element_size()
        return rows

    def close(self) -> None:
        self._held = None
