"""What a scan of one file finds: its float entries, what it skipped, its metadata."""

from __future__ import annotations

import io
import math
import re
import struct
import zipfile
from dataclasses import dataclass
from typing import NamedTuple

from engine.dumps.limits import MAX_ENTRIES, MAX_NAME_CHARS, MAX_ZIP_DIRECTORY_BYTES
from engine.dumps.refusals import refuse
from engine.dumps.sources import DumpFile
from engine.errors import Listing, Phrase, english


@dataclass(frozen=True)
class EntryInfo:
    """One float array in a file, described by its header (no data read).

    Rows are the array's leading axes flattened: an entry of shape ``[L, B, T, d]`` has
    ``L*B*T`` rows of ``d`` values each, in C order.
    """

    file: DumpFile
    key: str  # its key inside the file; "" for a file that holds one bare array
    shape: tuple[int, ...]
    dtype: str  # one of limits.ACCEPTED_DTYPES

    @property
    def name(self) -> str:
        """The name layout inference reads: the key, or the file's stem for a bare array."""
        return self.key if self.key else self.file.stem

    @property
    def label(self) -> str:
        """How messages name it: the file and the key."""
        return f"{self.file.name}:{self.key}" if self.key else self.file.name

    @property
    def d(self) -> int:
        return self.shape[-1]

    @property
    def rows(self) -> int:
        return math.prod(self.shape[:-1])


class Skipped(NamedTuple):
    """An entry a dump holds and the report does not use: its key, why (the message
    ``errors.dumps.skipped.<why>`` in ``locales/``) and the detail it names (a dtype, a
    shape, a type)."""

    key: str
    why: str
    detail: str = ""

    @property
    def message_key(self) -> str:
        return f"dumps.skipped.{self.why}"

    def english(self) -> str:
        return english(self.message_key, {"detail": self.detail})


@dataclass(frozen=True)
class FileScan:
    """A file's usable entries, the ones it skipped and its string metadata."""

    file: DumpFile
    entries: tuple[EntryInfo, ...]
    skipped: tuple[Skipped, ...]
    metadata: tuple[tuple[str, str], ...] = ()


WRITERS = {  # what writes each format (what a "corrupt" refusal accepts)
    "safetensors": "safetensors.torch.save_file",
    "npy": "np.save",
    "npz": Listing(("np.savez", "np.savez_compressed")),
    "torch": "torch.save",
}


# How messages and tables name the one array of a file without keys (a plain .npy): words of
# errors.toml, written in the reader's language on a page.
WHOLE_FILE = Phrase("dumps.whole_file")


def entry_name(key: str) -> str:
    """An entry as messages name it: its key, or ``WHOLE_FILE`` for a keyless file's array."""
    return key or WHOLE_FILE


ANSI = re.compile(r"\x1b\[[0-9;]*m")  # torch bolds part of its messages for terminals


def first_line(exc: BaseException) -> str:
    """The first line of a parser's message (its type's name when it has none), plain text."""
    text = ANSI.sub("", str(exc)).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


def corrupt(file: DumpFile, entry: str, fmt: str, detail: str):
    """The refusal for a file that cannot be parsed as ``fmt`` (``detail``: the parser's words):
    ``corrupt`` names the entry that failed, ``corrupt_file`` a file that failed as a whole."""
    named = {"entry": entry} if entry else {}
    key = "corrupt" if entry else "corrupt_file"
    return refuse(key, file=file.name, **named, format=fmt, detail=detail, writer=WRITERS[fmt])


def check_claimed_bytes(file: DumpFile, entry: str, claimed: int, available: int) -> None:
    """Refuse a header that claims more data than the file holds (before any allocation)."""
    if claimed > available:
        raise refuse(
            "truncated",
            file=file.name,
            entry=entry_name(entry),
            claimed=claimed,
            available=max(available, 0),
        )


def check_entry_count(file: DumpFile, count: int) -> None:
    """Refuse a file holding more than ``MAX_ENTRIES`` arrays."""
    if count > MAX_ENTRIES:
        raise refuse("too_many_entries", file=file.name, count=count, limit=MAX_ENTRIES)


def check_name(file: DumpFile, name: str) -> None:
    """Refuse an entry name longer than ``MAX_NAME_CHARS`` (shown cut, in the message)."""
    if len(name) > MAX_NAME_CHARS:
        raise refuse(
            "name_too_long", file=file.name, length=len(name), name=name[:40], limit=MAX_NAME_CHARS
        )


def check_unique_members(file: DumpFile, members: list, fmt: str) -> None:
    """Refuse a zip with two members of one name: readers may each take another of them."""
    seen: set[str] = set()
    for info in members:
        name = info.filename
        if name in seen:
            shown = name if len(name) <= 40 else name[:39] + "…"
            raise refuse("duplicate_member", file=file.name, entry=shown, writer=WRITERS[fmt])
        seen.add(name)


_ENCRYPTED = 0x1  # a zip member's general-purpose flag bit 0 (APPNOTE.TXT 4.4.4)


def check_not_encrypted(file: DumpFile, info, fmt: str) -> None:
    """Refuse an encrypted zip member (``info``, a ``zipfile.ZipInfo``), which no writer we
    accept makes, before it is read: zipfile's refusal shows its ZipInfo repr, torch's
    names a miniz internal."""
    if info.flag_bits & _ENCRYPTED:
        raise refuse("encrypted_member", file=file.name, entry=info.filename, writer=WRITERS[fmt])


# the zip64 end record's locator and the record (APPNOTE.TXT 4.3.14-15)
_LOCATOR = struct.Struct("<4sLQL")  # signature, disk, offset of the zip64 record, disks
_ZIP64_END = struct.Struct("<4sQ2H2L4Q")  # signature, size, versions, disks, members, size, offset


def check_zip_directory(file: DumpFile, most_members: int = MAX_ENTRIES) -> None:
    """Refuse a zip whose directory lists more than ``most_members`` members or takes more
    than ``MAX_ZIP_DIRECTORY_BYTES``, before it is parsed: zipfile and torch read the whole
    directory on opening.  The numbers are read from the end record as zipfile finds it (its
    own ``_EndRecData``: the file's last 64 KiB, and the zip64 record just before the
    locator) and from the zip64 record at the offset the locator names, which torch's
    reader (miniz) takes: a file may hold two, and the one not checked let 3.9 million
    members through (2 GB).  A file without one is left to zipfile and torch, which refuse
    it themselves."""
    with io.BytesIO(file.data) if file.data is not None else open(file.on_disk(), "rb") as tail:
        try:
            end = zipfile._EndRecData(tail)  # noqa: SLF001 - what ZipFile itself calls
        except (OSError, struct.error, zipfile.BadZipFile):
            end = None
        if end is None:
            return
        members, size = end[zipfile._ECD_ENTRIES_TOTAL], end[zipfile._ECD_SIZE]  # noqa: SLF001
        tail.seek(max(end[zipfile._ECD_LOCATION] - _LOCATOR.size, 0))  # noqa: SLF001
        locator = tail.read(_LOCATOR.size)
        if len(locator) == _LOCATOR.size and locator[:4] == b"PK\x06\x07":
            tail.seek(_LOCATOR.unpack(locator)[2])
            record = tail.read(_ZIP64_END.size)
            if len(record) == _ZIP64_END.size and record[:4] == b"PK\x06\x06":
                named = _ZIP64_END.unpack(record)
                members, size = max(members, named[7]), max(size, named[8])
    if members > most_members:
        raise refuse("too_many_entries", file=file.name, count=members, limit=MAX_ENTRIES)
    if size > MAX_ZIP_DIRECTORY_BYTES:
        raise refuse(
            "directory_too_large",
            file=file.name,
            count=members,
            size=size,
            limit=MAX_ZIP_DIRECTORY_BYTES,
            entries=MAX_ENTRIES,
        )
