""".npy and .npz: headers read with numpy's own parser, data never unpickled.

``.npy`` on disk is opened with ``np.load(mmap_mode="r", allow_pickle=False)``; an upload is
viewed in place with ``np.frombuffer``.  An ``.npz`` is a zip of ``.npy`` members, possibly
compressed, so it cannot be mapped: its members are streamed through ``zipfile`` a window
of rows at a time, each read going on from where the last ended (``NpzReader``).  An array
of Python objects would need pickle and is refused.

Reference: numpy's NEP 1, "A simple file format for NumPy arrays".
"""

from __future__ import annotations

import ast
import io
import math
import struct
import threading
import tokenize
import warnings
import zipfile

import numpy as np
import torch

from engine.dumps.formats.entries import (
    WHOLE_FILE,
    EntryInfo,
    FileScan,
    Skipped,
    check_claimed_bytes,
    check_entry_count,
    check_name,
    check_not_encrypted,
    check_unique_members,
    check_zip_directory,
    corrupt,
    entry_name,
    first_line,
)
from engine.dumps.limits import MAX_EXPANDED_UPLOAD_MB, MAX_NPY_HEADER_BYTES, MB
from engine.dumps.refusals import refuse
from engine.dumps.sources import DumpFile
from engine.dumps.token_names import (
    MAX_TOKEN_CHARS,
    MAX_TOKEN_STRINGS,
    TOKENS_KEY,
    token_rows,
    tokens_json,
)

_FLOAT_NAMES = {2: "float16", 4: "float32", 8: "float64"}
_LENGTH_FIELD = {(1, 0): "<H", (2, 0): "<I"}  # a .npy header's length, by format version
# plain values: what np.save writes (a dict of strings, a bool, a tuple of ints), and signs
_LITERAL_NODES = (ast.Expression, ast.Dict, ast.Tuple, ast.List, ast.Set, ast.Constant, ast.Load)
_LITERAL_NODES += (ast.UnaryOp, ast.UAdd, ast.USub)
_PLAIN_NAMES = {"True", "False", "None"}
_PUNCTUATION = {"(", ")", "[", "]", "{", "}", ",", ":", "..."}  # of a dict, tuple, list
_BEFORE_A_SIGN = {None, "(", "[", "{", ",", ":", "+", "-"}  # a + or - after these is a sign
_NOT_READ = {tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT, tokenize.ENDMARKER}
_NOT_READ |= {tokenize.INDENT, tokenize.DEDENT}
MAX_TOKENS_BYTES = 4 * MAX_TOKEN_CHARS * MAX_TOKEN_STRINGS  # a "tokens" string array read whole


def _read_header(file: DumpFile, key: str, stream, fmt: str) -> tuple[tuple, np.dtype, int]:
    """(shape, dtype, bytes of header) of the .npy at ``stream``'s position; checked.

    The header's length is checked before the header is read: numpy's reader reads as many
    bytes as the length field claims (up to 4 GiB in format 2.0) before its own check."""
    try:
        version = np.lib.format.read_magic(stream)
        if version not in _LENGTH_FIELD:
            raise ValueError(f"format version {version} is not 1.0 or 2.0")
        field = stream.read(struct.calcsize(_LENGTH_FIELD[version]))
        (length,) = struct.unpack(_LENGTH_FIELD[version], field)
    except Exception as exc:  # numpy raises ValueError, OSError, ...; struct.error when cut
        raise corrupt(file, key, fmt, first_line(exc)) from None
    if length > MAX_NPY_HEADER_BYTES:
        raise refuse(
            "npy_header_too_large",
            file=file.name,
            entry=entry_name(key),
            size=length,
            limit=MAX_NPY_HEADER_BYTES,
        )
    text = stream.read(length)
    read = (
        np.lib.format.read_array_header_1_0
        if version == (1, 0)
        else np.lib.format.read_array_header_2_0
    )
    try:
        header = read(io.BytesIO(field + text), MAX_NPY_HEADER_BYTES)
    except Exception as exc:  # numpy raises ValueError, SyntaxError, ...
        kind = _header_kind(text)  # never evaluated
        if kind is None and isinstance(exc, (MemoryError, RecursionError)):
            kind = "npy_header_nested"  # the parser's limits, never its words ("MemoryError")
        if kind is not None:
            raise refuse(kind, file=file.name, entry=entry_name(key)) from None
        raise corrupt(file, key, fmt, first_line(exc)) from None
    shape, fortran_order, dtype = header
    if any(n < 0 for n in shape):  # numpy's parser accepts them; no writer makes them
        raise refuse("negative_axis", file=file.name, entry=entry_name(key), shape=list(shape))
    if dtype.hasobject:
        raise refuse("object_array", file=file.name, entry=entry_name(key))
    if fortran_order and len(shape) > 1:
        raise refuse("fortran_order", file=file.name, entry=entry_name(key))
    return tuple(int(n) for n in shape), dtype, stream.tell()


def _header_kind(header: bytes) -> str | None:
    """What a header numpy refused holds, from its own syntax, parsed and never evaluated
    (at most ``MAX_NPY_HEADER_BYTES``): "npy_header_code" for something other than plain
    values (a call, a name, an operator), "npy_header_nested" for plain values nested
    deeper than Python's parser reads, None for plain values numpy refused for a key, the
    shape or the dtype (``ast.literal_eval`` reads them: ``set()``, ``1+2j``) or no Python
    at all: damaged, in numpy's words."""
    text = header.decode("latin-1")
    try:
        tree = ast.parse(text, mode="eval")
    except (MemoryError, RecursionError):  # CPython's parser refuses the nesting
        return _kind_of_tokens(text)
    except SyntaxError as exc:
        return _kind_of_tokens(text) if "too many nested" in str(exc) else None
    except Exception:  # ValueError: a NUL byte
        return None
    try:
        ast.literal_eval(tree)
    except Exception:  # ValueError, or a tree too deep for it: decided by its nodes
        nodes = ast.walk(tree)
        return "npy_header_code" if any(not isinstance(n, _LITERAL_NODES) for n in nodes) else None
    return None


def _kind_of_tokens(text: str) -> str:
    """``_header_kind`` of a header too deeply nested for Python's parser, from its tokens
    (``tokenize`` reads them one after another; Python 3.11's has no nesting limit, a
    later one's limit ends the reading, and the header is then called nested): a name other than
    True, False or None, an f-string, or an operator other than a sign and the punctuation
    of a dict, tuple or list is code; anything else is nested too deeply."""
    before = None  # the last token read: its text if an operator, else "value"
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in _NOT_READ:
                continue
            if token.type == tokenize.NAME and token.string not in _PLAIN_NAMES:
                return "npy_header_code"
            prefix = token.string[: len(token.string) - len(token.string.lstrip("bBrRuUfF"))]
            if token.type == tokenize.STRING and "f" in prefix.lower():  # an f-string
                return "npy_header_code"
            sign = token.string in ("+", "-") and before in _BEFORE_A_SIGN
            if token.type == tokenize.OP and not sign and token.string not in _PUNCTUATION:
                return "npy_header_code"
            before = token.string if token.type == tokenize.OP else "value"
    except (tokenize.TokenError, SyntaxError):  # cut, or a tokenizer with a nesting limit
        pass
    return "npy_header_nested"


def _is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" and dtype.itemsize in _FLOAT_NAMES


def _entry(file: DumpFile, key: str, shape: tuple, dtype: np.dtype) -> EntryInfo:
    return EntryInfo(file=file, key=key, shape=shape, dtype=_FLOAT_NAMES[dtype.itemsize])


def scan_npy(file: DumpFile) -> FileScan:
    stream = io.BytesIO(file.data) if file.data is not None else open(file.on_disk(), "rb")
    with stream:
        shape, dtype, start = _read_header(file, "", stream, "npy")
    if not _is_float(dtype):
        raise refuse("unsupported_dtype", file=file.name, entry=WHOLE_FILE, dtype=str(dtype))
    check_claimed_bytes(file, "", math.prod(shape) * dtype.itemsize, file.size - start)
    if not shape:
        return FileScan(file, (), (Skipped(WHOLE_FILE, "scalar"),))
    return FileScan(file, (_entry(file, "", shape, dtype),), ())


def _open_zip(file: DumpFile) -> zipfile.ZipFile:
    source = io.BytesIO(file.data) if file.data is not None else file.on_disk()
    try:
        return zipfile.ZipFile(source)
    except Exception as exc:  # BadZipFile, OSError, ValueError, ...
        raise corrupt(file, "", "npz", first_line(exc)) from None


def _check_expanded(file: DumpFile, members: list[zipfile.ZipInfo]) -> None:
    """An upload's members together may expand to ``MAX_EXPANDED_UPLOAD_MB`` at most, as the
    zip directory states their sizes (a member that holds more than it states is refused
    when read: ``check_claimed_bytes``)."""
    total = sum(info.file_size for info in members)
    if file.data is not None and total > MAX_EXPANDED_UPLOAD_MB * MB:
        raise refuse(
            "expands_too_far",
            file=file.name,
            size_mb=round(total / MB),
            limit_mb=MAX_EXPANDED_UPLOAD_MB,
        )


def _token_strings(file: DumpFile, archive: zipfile.ZipFile, info: zipfile.ZipInfo, size: int):
    """The ``tokens`` member's strings ([T] or [B][T]), read whole: its ``size`` bytes (its
    header and the data the header claims, at most ``MAX_TOKENS_BYTES``), None for a member
    that inflates to more (a 1 MB member held 990 MB of zeros after its 4 strings)."""
    try:
        with archive.open(info) as member:
            held = member.read(size + 1)
        if len(held) > size:
            return None
        return token_rows(np.load(io.BytesIO(held), allow_pickle=False))
    except (ValueError, OSError, zipfile.BadZipFile):
        return None


def _check_not_torch(file: DumpFile, members: list[zipfile.ZipInfo]) -> None:
    """Refuse a torch.save zip named .npz (a data.pkl and no .npy member) as what it is."""
    names = [info.filename for info in members]
    if not any(name.endswith(".npy") for name in names) and any(
        name.endswith("data.pkl") for name in names
    ):
        raise refuse("pt_as_npz", file=file.name)


def scan_npz(file: DumpFile) -> FileScan:
    check_zip_directory(file)
    found, skipped, metadata = [], [], []
    with _open_zip(file) as archive:
        try:
            members = archive.infolist()
        except Exception as exc:
            raise corrupt(file, "", "npz", first_line(exc)) from None
        check_entry_count(file, len(members))
        _check_expanded(file, members)
        check_unique_members(file, members, "npz")  # zipfile opens the last of them by name
        _check_not_torch(file, members)
        for info in members:
            if not info.filename.endswith(".npy"):
                check_name(file, info.filename)
                skipped.append(Skipped(info.filename, "not_npy_member"))
                continue
            key = info.filename[: -len(".npy")]
            check_name(file, key)
            check_not_encrypted(file, info, "npz")
            try:
                with archive.open(info) as member:
                    shape, dtype, start = _read_header(file, key, member, "npz")
            except zipfile.BadZipFile as exc:
                raise corrupt(file, key, "npz", first_line(exc)) from None
            claimed = math.prod(shape) * dtype.itemsize
            check_claimed_bytes(file, key, claimed, info.file_size - start)
            if key == TOKENS_KEY and dtype.kind == "U" and claimed <= MAX_TOKENS_BYTES:
                rows = _token_strings(file, archive, info, start + claimed)
                if rows is not None:
                    metadata.append((TOKENS_KEY, tokens_json(rows)))
                    continue
            if not _is_float(dtype):
                skipped.append(Skipped(key, "dtype", str(dtype)))
            elif not shape:
                skipped.append(Skipped(key, "scalar"))
            else:
                found.append(_entry(file, key, shape, dtype))
    return FileScan(file, tuple(found), tuple(skipped), tuple(metadata))


def _to_torch(array: np.ndarray) -> torch.Tensor:
    """A tensor over ``array`` (a read-only map or buffer: the reducer never writes to it)."""
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))  # big-endian file: copy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "non-writable tensors": never written
        return torch.from_numpy(array)


class NpyReader:
    """Rows of a .npy: a fresh memory map per call (dropped with the returned tensor)."""

    def __init__(self, file: DumpFile):
        self.file = file

    def rows(self, entry: EntryInfo, start: int, stop: int) -> torch.Tensor:
        if self.file.data is not None:
            stream = io.BytesIO(self.file.data)
            _, dtype, offset = _read_header(self.file, "", stream, "npy")
            count = math.prod(entry.shape)
            whole = np.frombuffer(self.file.data, dtype=dtype, count=count, offset=offset)
            return _to_torch(whole.reshape(-1, entry.d)[start:stop])  # [n, d]
        whole = np.load(self.file.on_disk(), mmap_mode="r", allow_pickle=False)
        return _to_torch(whole.reshape(-1, entry.d)[start:stop])  # [n, d], the mapped pages


class NpzReader:
    """Rows of a .npz member, read through zipfile into a buffer of exactly those rows.

    The member stays open after a read, at the row it ended on: the report reads a member's
    windows in order, and reading on from there decompresses each byte once (reopening
    for every window decompressed the member's start again each time: quadratic in its
    size; benchmarks/RESULTS.md, "A compressed `.npz` read window by window").  A read of
    an earlier row, or of another member, reopens.
    """

    def __init__(self, file: DumpFile):
        self.file = file
        self._lock = threading.Lock()  # one member stream, one reader at a time
        self._open: tuple[str, zipfile.ZipFile, object, np.dtype] | None = None
        self._next_row = 0  # where the open member's stream stands, in rows

    def rows(self, entry: EntryInfo, start: int, stop: int) -> torch.Tensor:
        with self._lock:
            try:
                if self.file.data is None:  # the open member's file, rewritten since: refused
                    self.file.on_disk()
                member, dtype = self._member_at(entry, start)
                row_bytes = entry.d * dtype.itemsize
                member.seek((start - self._next_row) * row_bytes, io.SEEK_CUR)  # forward
                wanted = (stop - start) * row_bytes
                data = member.read(wanted)  # fewer bytes only at the member's end
                self._next_row = stop
            except zipfile.BadZipFile as exc:
                self._close()
                raise corrupt(self.file, entry.key, "npz", first_line(exc)) from None
            except BaseException:
                self._close()
                raise
        check_claimed_bytes(self.file, entry.key, wanted, len(data))
        rows = np.frombuffer(data, dtype=dtype).reshape(stop - start, entry.d)
        return _to_torch(rows)  # [n, d]

    def _member_at(self, entry: EntryInfo, start: int):
        """The open stream of ``entry``'s member, at or before row ``start``, and its dtype."""
        if self._open is None or self._open[0] != entry.key or self._next_row > start:
            self._close()
            archive = _open_zip(self.file)
            member = archive.open(entry.key + ".npy")
            self._open = (entry.key, archive, member, None)  # closed if the header is refused
            _, dtype, _ = _read_header(self.file, entry.key, member, "npz")
            self._open, self._next_row = (entry.key, archive, member, dtype), 0
        _, _, member, dtype = self._open
        return member, dtype

    def _close(self) -> None:
        if self._open is not None:
            _, archive, member, _ = self._open
            member.close()
            archive.close()
            self._open, self._next_row = None, 0
