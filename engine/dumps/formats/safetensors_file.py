""".safetensors, through the safetensors library.

Its parser checks the header before any data is mapped: the JSON, every dtype, that each
shape matches its offsets, and that the entries tile the data from its first byte to its
last; so a header claiming a terabyte tensor in a kilobyte file is refused without
allocating.  Before the library reads the header, its length is bounded
(``limits.MAX_SAFETENSORS_HEADER_BYTES``: the format allows 100 MB, which parsed takes
gigabytes); after, its entries and their names, still before any tensor is read.

A file on disk is opened with ``safe_open``: ``offset_keys()`` lists the entries in the order
their data is stored (``layer_order="file"``), ``get_slice`` gives their dtype and shape, and
rows are sliced from the memory-mapped ``get_tensor``.  The library has no such reader for
bytes (``safetensors.deserialize`` copies every tensor and returns no metadata), so an upload
is checked by ``deserialize``, the copy dropped at once, and its rows are viewed in place at
the offsets of the header the library has just accepted.
"""

from __future__ import annotations

import json
import math
import warnings

import safetensors
import torch

from engine.config.norms import DTYPES
from engine.dumps.formats.entries import (
    EntryInfo,
    FileScan,
    Skipped,
    check_claimed_bytes,
    check_entry_count,
    check_name,
    corrupt,
    entry_name,
    first_line,
)
from engine.dumps.limits import MAX_ENTRIES, MAX_SAFETENSORS_HEADER_BYTES
from engine.dumps.refusals import refuse
from engine.dumps.sources import DumpFile

_FLOATS = {"F16": "float16", "BF16": "bfloat16", "F32": "float32", "F64": "float64"}
_ITEM_BYTES = {  # the format's dtype codes and their sizes (safetensors' Dtype)
    **{code: 1 for code in ("BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0")},
    **{code: 2 for code in ("U16", "I16", "F16", "BF16")},
    **{code: 4 for code in ("U32", "I32", "F32")},
    **{code: 8 for code in ("U64", "I64", "F64")},
}
_SHOWN_AXES = 16  # a longer shape, or one needing 2**64 bytes or more, is the parser's to refuse


def _data_start(file: DumpFile) -> int:
    """Where the data begins (8 + the header's length); refuses a header past the file's end
    (a file of another kind, or cut off) or past the bound, before it is read."""
    length = int.from_bytes(file.read(0, 8).ljust(8, b"\0"), "little")
    if 8 + length > file.size:  # first: text or another format read as a length is huge
        raise refuse("not_safetensors", file=file.name, size=length, available=file.size)
    if length > MAX_SAFETENSORS_HEADER_BYTES:
        raise refuse(
            "header_too_large",
            file=file.name,
            size=length,
            limit=MAX_SAFETENSORS_HEADER_BYTES,
            entries=MAX_ENTRIES,
        )
    return 8 + length


def _described(file: DumpFile, start: int) -> tuple[dict, list[tuple[str, str, list]]]:
    """(metadata, [(key, dtype code, shape)] in the order the data is stored), once the
    library has accepted the file and the entries' count and names are within bounds."""
    if file.data is not None:
        safetensors.deserialize(file.data)  # every check; the copies it makes are dropped
        header = json.loads(file.read(8, start - 8))
        metadata = header.pop("__metadata__", None) or {}
        keys = _checked_keys(file, sorted(header, key=lambda k: header[k]["data_offsets"][0]))
        return metadata, [(key, header[key]["dtype"], header[key]["shape"]) for key in keys]
    with safetensors.safe_open(file.on_disk(), framework="pt") as handle:
        keys = _checked_keys(file, handle.offset_keys())
        slices = [(key, handle.get_slice(key)) for key in keys]
        return handle.metadata() or {}, [(k, s.get_dtype(), s.get_shape()) for k, s in slices]


def _check_cut_off(file: DumpFile, start: int) -> None:
    """After the library refused a file: a header that reads and places an entry's data past
    the file's end (a copy or download cut off) is refused as ``truncated``, with the sizes,
    rather than in the parser's words.  The header is read only now, bounded by
    ``_data_start``; one that does not read leaves the parser's refusal."""
    try:
        header = json.loads(file.read(8, start - 8))
        spans = [
            (int(info["data_offsets"][1]), str(key))
            for key, info in header.items()
            if key != "__metadata__"
        ]
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError):
        return
    except RecursionError:  # nested past CPython's parser too: the library's words stand
        return
    if spans:  # the data the header places, to its last entry's end, against what is there
        end, key = max(spans)
        check_claimed_bytes(file, key, end, file.size - start)
    for key, info in header.items():  # an entry whose shape needs more than its own span
        if key != "__metadata__":
            _check_entry_span(file, str(key), info)


def _check_entry_span(file: DumpFile, key: str, info) -> None:
    """A shape that needs more bytes than the entry's data_offsets give it (a header claiming
    a terabyte tensor over a few bytes of data) is refused with both sizes, not in the
    parser's words; a header that does not read so is left to the parser's refusal, and so is
    one past any real tensor (more than ``_SHOWN_AXES`` axes, or 2**64 bytes and more: the
    parser says its size overflows), whose sizes would not print (a product of thousands of
    digits) or would fill the page."""
    try:
        size = _ITEM_BYTES[info["dtype"]]
        shape = info["shape"]
        begin, end = (int(n) for n in info["data_offsets"])
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError):
        return
    if not isinstance(shape, list) or len(shape) > _SHOWN_AXES:
        return
    if not all(type(n) is int and n >= 0 for n in shape):  # the parser's: 2.5, "4", -1
        return
    needed = size * math.prod(shape)
    if 0 <= begin <= end < 2**64 and end - begin < needed < 2**64:
        raise refuse(
            "shape_beyond_data",
            file=file.name,
            entry=entry_name(key),
            shape=shape,
            dtype=info["dtype"],
            claimed=needed,
            available=end - begin,
        )


def _checked_keys(file: DumpFile, keys: list[str]) -> list[str]:
    check_entry_count(file, len(keys))
    for key in keys:
        check_name(file, key)
    return keys


def scan(file: DumpFile) -> FileScan:
    """The float entries of a safetensors file, in the order their data is stored."""
    start = _data_start(file)
    try:
        metadata, described = _described(file, start)
    except (safetensors.SafetensorError, OSError) as exc:
        _check_cut_off(file, start)
        raise corrupt(file, "", "safetensors", first_line(exc)) from None
    found, skipped = [], []
    for key, code, shape in described:
        if code not in _FLOATS:
            skipped.append(Skipped(key, "dtype", code))
        elif not shape:
            skipped.append(Skipped(key, "scalar"))
        else:
            found.append(EntryInfo(file=file, key=key, shape=tuple(shape), dtype=_FLOATS[code]))
    return FileScan(file, tuple(found), tuple(skipped), tuple(sorted(metadata.items())))


class Reader:
    """Rows of a safetensors file's entries, mapped anew on every call.

    On disk, ``get_tensor`` returns a tensor that views the memory-mapped file; slicing rows
    of it reads only those pages, and the mapping goes away with the returned tensor, so a
    caller that drops each window keeps the resident set bounded.  An upload is viewed in
    place in its bytes (read-only: the reducer never writes into it).
    """

    def __init__(self, file: DumpFile):
        self.file = file
        self._offsets: dict[str, int] = {}
        if file.data is not None:
            start = _data_start(file)
            header = json.loads(file.read(8, start - 8))
            header.pop("__metadata__", None)
            self._offsets = {key: start + info["data_offsets"][0] for key, info in header.items()}

    def rows(self, entry: EntryInfo, start: int, stop: int) -> torch.Tensor:
        """Rows ``start:stop`` of ``entry`` as a ``[n, d]`` tensor of its own dtype."""
        if self.file.data is None:
            with safetensors.safe_open(self.file.on_disk(), framework="pt") as handle:
                whole = handle.get_tensor(entry.key)  # [*, d], a view of the mapped file
            return whole.reshape(-1, entry.d)[start:stop]
        dtype = DTYPES[entry.dtype]
        first = self._offsets[entry.key] + start * entry.d * dtype.itemsize
        count = (stop - start) * entry.d * dtype.itemsize
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # read-only bytes: never written to
            raw = torch.frombuffer(self.file.data, dtype=torch.uint8, count=count, offset=first)
        if first % dtype.itemsize:
            raw = raw.clone()  # a view as float needs an aligned start
        return raw.view(dtype).reshape(stop - start, entry.d)  # [n, d]
