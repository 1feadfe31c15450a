"""``.safetensors``: the header is parsed and checked here, the data read through
``safetensors.safe_open`` (memory-mapped, zero-copy) or, for an upload, viewed in place.

Format (github.com/huggingface/safetensors): 8 bytes little-endian header length ``n``,
``n`` bytes of JSON ``{name: {"dtype", "shape", "data_offsets": [begin, end]}, ...,
"__metadata__": {str: str}}``, then the data; offsets count from the end of the header.
Every claimed shape is checked against the bytes the file holds before anything is mapped,
so a header claiming a terabyte tensor in a kilobyte file is refused without allocating.
The header's size, its entries and their names are bounded (``limits``) before it is parsed
or read; the entries must tile the data exactly, from its first byte to its last, which is
the rule ``safe_open`` enforces, so an upload and a file on disk are refused alike.
"""

from __future__ import annotations

import json
import math
import warnings

import torch

from engine.dumps.formats.entries import (
    TORCH_DTYPES,
    EntryInfo,
    FileScan,
    check_claimed_bytes,
    check_entry_count,
    check_name,
    corrupt,
)
from engine.dumps.limits import MAX_ENTRIES, MAX_SAFETENSORS_HEADER_BYTES
from engine.dumps.refusals import refuse
from engine.dumps.sources import DumpFile

FORMAT = "safetensors"
_ACCEPTED = "a safetensors file as written by safetensors.torch.save_file"
_FLOATS = {
    "F16": "float16",
    "BF16": "bfloat16",
    "F32": "float32",
    "F64": "float64",
}
_ITEMSIZE = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "I16": 2, "U16": 2, "F16": 2,
    "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8, "C64": 8,
}  # fmt: skip


def _parse_header(file: DumpFile) -> tuple[int, dict]:
    """(data start, header dict), every field checked; refuses before reading any data."""
    total = file.size
    prefix = file.read(0, 8)
    if len(prefix) < 8:
        raise corrupt(file, "", FORMAT, "shorter than the 8-byte header length", _ACCEPTED)
    length = int.from_bytes(prefix, "little")
    if length > MAX_SAFETENSORS_HEADER_BYTES:
        raise refuse(
            "header_too_large",
            file=file.name,
            size=length,
            limit=MAX_SAFETENSORS_HEADER_BYTES,
            entries=MAX_ENTRIES,
        )
    check_claimed_bytes(file, "(header)", 8 + length, total)
    try:
        header = json.loads(file.read(8, length).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise corrupt(file, "", FORMAT, f"header is not JSON: {exc}", _ACCEPTED) from None
    if not isinstance(header, dict):
        raise corrupt(file, "", FORMAT, "header is not a JSON object", _ACCEPTED)
    return 8 + length, header


def _check_entry(file: DumpFile, key: str, info: object, data_bytes: int) -> tuple:
    if not isinstance(info, dict):
        raise corrupt(file, key, FORMAT, "entry is not a JSON object", _ACCEPTED)
    dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    if dtype not in _ITEMSIZE:
        raise corrupt(file, key, FORMAT, f"unknown dtype {dtype!r}", _ACCEPTED)
    if not isinstance(shape, list) or not all(type(n) is int and n >= 0 for n in shape):
        raise corrupt(file, key, FORMAT, f"shape {shape!r} is not a list of sizes", _ACCEPTED)
    if (
        not isinstance(offsets, list)
        or len(offsets) != 2
        or not all(type(n) is int for n in offsets)
        or not 0 <= offsets[0] <= offsets[1]
    ):
        raise corrupt(file, key, FORMAT, f"data_offsets {offsets!r} are invalid", _ACCEPTED)
    claimed = math.prod(shape) * _ITEMSIZE[dtype]
    if claimed != offsets[1] - offsets[0]:
        raise corrupt(
            file,
            key,
            FORMAT,
            f"shape {shape} needs {claimed} bytes but its offsets span {offsets[1] - offsets[0]}",
            _ACCEPTED,
        )
    check_claimed_bytes(file, key, offsets[1], data_bytes)
    return dtype, tuple(shape), offsets[0]


def scan(file: DumpFile) -> FileScan:
    """The float entries of a safetensors file, in the order their data is stored."""
    start, header = _parse_header(file)
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise corrupt(file, "__metadata__", FORMAT, "metadata is not {str: str}", _ACCEPTED)
    check_entry_count(file, len(header))
    found, skipped, spans = [], [], []
    for key, info in header.items():
        check_name(file, key)
        dtype, shape, begin = _check_entry(file, key, info, file.size - start)
        spans.append((begin, begin + math.prod(shape) * _ITEMSIZE[dtype], key))
        if dtype not in _FLOATS:
            skipped.append((key, f"dtype {dtype}"))
        elif not shape:
            skipped.append((key, "a scalar (shape [])"))
        else:
            found.append((begin, EntryInfo(file=file, key=key, shape=shape, dtype=_FLOATS[dtype])))
    _check_tiling(file, spans, file.size - start)
    if file.data is None:
        _validate_with_library(file)
    entries = tuple(entry for _, entry in sorted(found, key=lambda pair: pair[0]))
    return FileScan(file, entries, tuple(skipped), tuple(sorted(metadata.items())))


def _check_tiling(file: DumpFile, spans: list, data_bytes: int) -> None:
    """The entries' data must follow each other from byte 0 to the file's end, with no gap
    and no overlap (what ``safe_open`` requires; an upload is never passed to it)."""
    at = 0
    for begin, end, key in sorted(spans):
        if begin != at:
            detail = f"its data starts at byte {begin}, not {at}: entries overlap or leave a gap"
            raise corrupt(file, key, FORMAT, detail, _ACCEPTED)
        at = end
    if at != data_bytes:
        detail = f"the entries cover {at} bytes of data but the file holds {data_bytes}"
        raise corrupt(file, "", FORMAT, detail, _ACCEPTED)


def _validate_with_library(file: DumpFile) -> None:
    """Let safetensors check what we do not (overlaps, holes) before any data is mapped."""
    from safetensors import safe_open

    try:
        with safe_open(file.path, framework="pt") as handle:
            handle.keys()
    except Exception as exc:  # SafetensorError and OSError: both mean "cannot be read"
        raise corrupt(file, "", FORMAT, str(exc).splitlines()[0][:200], _ACCEPTED) from None


class Reader:
    """Rows of a safetensors file's entries, mapped anew on every call.

    On disk, ``safe_open(...).get_tensor`` returns a tensor that views the memory-mapped
    file; slicing rows of it reads only those pages, and the mapping goes away with the
    returned tensor, so a caller that drops each window keeps the resident set bounded.
    An upload is viewed in place in its bytes (read-only: the reducer never writes into it).
    """

    def __init__(self, file: DumpFile):
        self.file = file
        self._layout: dict[str, tuple[int, str, tuple[int, ...]]] | None = None
        if file.data is not None:
            start, header = _parse_header(file)
            header.pop("__metadata__", None)
            self._layout = {
                key: (start + info["data_offsets"][0], info["dtype"], tuple(info["shape"]))
                for key, info in header.items()
            }

    def rows(self, entry: EntryInfo, start: int, stop: int) -> torch.Tensor:
        """Rows ``start:stop`` of ``entry`` as a ``[n, d]`` tensor of its own dtype."""
        if self._layout is None:
            from safetensors import safe_open

            with safe_open(self.file.path, framework="pt") as handle:
                whole = handle.get_tensor(entry.key)  # [*, d], a view of the mapped file
            return whole.reshape(-1, entry.d)[start:stop]
        offset, _, _ = self._layout[entry.key]
        dtype = TORCH_DTYPES[entry.dtype]
        itemsize = torch.empty((), dtype=dtype).element_size()
        first = offset + start * entry.d * itemsize
        count = (stop - start) * entry.d * itemsize
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # read-only bytes: never written to
            raw = torch.frombuffer(self.file.data, dtype=torch.uint8, count=count, offset=first)
        if first % itemsize:
            raw = raw.clone()  # a view as float needs an aligned start
        return raw.view(dtype).reshape(stop - start, entry.d)  # [n, d]

    def close(self) -> None:
        """Nothing to release: each call's mapping lives as long as the tensor it returned."""
