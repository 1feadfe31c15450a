"""A GGUF file's block count, read from the start of its header (``block_count``).

gguf's ``GGUFReader`` parses every metadata field and every tensor's entry before it
answers (SmolLM2-135M's vocabulary and merges: ~590,000 field parts, seconds;
``engine.dumps.gguf_parse``).  A page that only needs to know how many blocks a model has
(to refuse a block number as it is typed) reads the header's fields in order and stops at
``<architecture>.block_count``, which GGUF writers put before the tokenizer's arrays:
a few hundred bytes.

The layout (GGUF v2 and v3, little-endian): ``GGUF``, the version (uint32), the tensor
count and the field count (uint64), then each field: its key (uint64 length, UTF-8), its
type (uint32) and its value; a string is a uint64 length and its bytes, an array its item
type (uint32), its length (uint64) and its items.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

_SCALARS = {  # type id -> struct format
    0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
    10: "<Q", 11: "<q", 12: "<d",
}  # fmt: skip
_STRING, _ARRAY = 8, 9
_MAX_STRING = 1 << 20  # a key or a string field longer than this: not a header we read
_MAX_FIELDS = 1 << 16
# where the block count is not found by then, the header does not say (a writer that puts
# the tokenizer's arrays first: the run's own check refuses a block past the model instead);
# it also bounds the work a hostile header costs (an array of empty strings: 131,072 reads)
_MAX_BYTES = 1 << 20
_MAX_DEPTH = 4  # arrays within arrays (GGUF's writers nest none)


class _NotFound(Exception):
    pass


def _read(stream: BinaryIO, fmt: str):
    size = struct.calcsize(fmt)
    data = stream.read(size)
    if len(data) != size or stream.tell() > _MAX_BYTES:
        raise _NotFound
    return struct.unpack(fmt, data)[0]


def _string(stream: BinaryIO) -> str:
    length = _read(stream, "<Q")
    if length > _MAX_STRING:
        raise _NotFound
    data = stream.read(length)
    if len(data) != length:
        raise _NotFound
    return data.decode("utf-8", errors="replace")


def _value(stream: BinaryIO, kind: int, depth: int = 0):
    """The field's value (an array's is skipped: None)."""
    if kind in _SCALARS:
        return _read(stream, _SCALARS[kind])
    if kind == _STRING:
        return _string(stream)
    if kind != _ARRAY or depth >= _MAX_DEPTH:
        raise _NotFound
    item, count = _read(stream, "<I"), _read(stream, "<Q")
    if item in _SCALARS:
        skip = count * struct.calcsize(_SCALARS[item])
        if stream.tell() + skip > _MAX_BYTES:  # also what a seek cannot take (2**61 items)
            raise _NotFound
        stream.seek(skip, 1)
        return None
    for _ in range(count):
        _value(stream, item, depth + 1)
        if stream.tell() > _MAX_BYTES:
            raise _NotFound
    return None


def block_count(path: str | Path) -> int | None:
    """The ``<architecture>.block_count`` of the GGUF file at ``path``; None where the file
    is not a GGUF file this reads (v2 or v3) or its header does not say."""
    try:
        with open(path, "rb") as stream:
            if stream.read(4) != b"GGUF" or _read(stream, "<I") not in (2, 3):
                return None
            _read(stream, "<Q")  # the tensors' count
            fields = _read(stream, "<Q")
            architecture = None
            for _ in range(min(fields, _MAX_FIELDS)):
                key = _string(stream)
                value = _value(stream, _read(stream, "<I"))
                if key == "general.architecture" and isinstance(value, str):
                    architecture = value
                elif architecture and key == f"{architecture}.block_count":
                    ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
                    return value if ok else None
    except (OSError, _NotFound, struct.error):
        return None
    return None
