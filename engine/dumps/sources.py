"""Where a dump's bytes are: files on disk (one, a directory, or a glob of shards) or the
bytes of one uploaded file, held in memory for its browser session only.

``DumpFile`` names one file; ``resolve_files`` turns what a user typed or uploaded into
the files to read, refusing unknown extensions and uploads over the size limit before any
byte is parsed.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from pathlib import Path

from engine.dumps.limits import ACCEPTED_SUFFIXES, MAX_FILES, MB, UPLOAD_LIMIT_MB
from engine.dumps.local_files import LocalDump, unchanged_path
from engine.dumps.refusals import refuse
from engine.errors import Listing


@dataclass(frozen=True)
class DumpFile:
    """One file of a dump: a path on disk, or an upload's name and bytes.

    ``data`` is excluded from equality and hashing (comparing hundreds of megabytes to
    look up a cache entry would cost more than the lookup saves); an upload is keyed by
    its session in the UI, never shared.  A file on disk is opened again by every read of a
    report (a header, then rows, chunk by chunk): ``stamp``, its size and modification time
    when the dump was opened, is checked at each (``on_disk``), so that a file rewritten
    while it is read is refused rather than read half old, half new.
    """

    path: str  # the path on disk, or the uploaded file's name
    data: bytes | None = field(default=None, repr=False, compare=False)
    stamp: tuple[int, int] | None = None  # on disk: (bytes, st_mtime_ns) when opened

    @classmethod
    def opened(cls, path: str) -> DumpFile:
        """The file at ``path`` as it is now (its stamp taken)."""
        try:
            found = os.stat(path)
        except OSError:  # gone since it was listed
            raise refuse("not_found", file=path) from None
        return cls(path=path, stamp=(found.st_size, found.st_mtime_ns))

    def on_disk(self) -> str:
        """The path to open, refused (``dumps.dump_rewritten``) where the file is no longer
        the one the dump opened: another size or modification time, or gone."""
        if self.stamp is not None:
            try:
                found = os.stat(self.path)
                now = (found.st_size, found.st_mtime_ns)
            except OSError:
                now = None
            if now != self.stamp:
                raise refuse("dump_rewritten", file=self.name)
        return self.path

    @property
    def name(self) -> str:
        return Path(self.path).name

    @property
    def suffix(self) -> str:
        return Path(self.path).suffix.lower()

    @property
    def stem(self) -> str:
        return Path(self.path).stem

    @property
    def size(self) -> int:
        if self.data is not None:
            return len(self.data)
        return self.stamp[0] if self.stamp is not None else os.path.getsize(self.path)

    def read(self, offset: int, count: int) -> bytes:
        """Up to ``count`` bytes from ``offset`` (fewer at the end of the file)."""
        if self.data is not None:
            return bytes(self.data[offset : offset + count])
        with open(self.on_disk(), "rb") as handle:
            handle.seek(offset)
            return handle.read(count)


@dataclass(frozen=True)
class Upload:
    """The bytes of one uploaded file and the name it was uploaded under."""

    name: str
    data: bytes = field(repr=False, compare=False)


def _check_suffix(path: str) -> None:
    suffix = Path(path).suffix.lower()
    if suffix not in ACCEPTED_SUFFIXES:
        raise refuse(
            "unsupported_suffix",
            file=Path(path).name,
            suffix=suffix or "(none)",
            accepted=Listing(ACCEPTED_SUFFIXES),
        )


def upload_file(upload: Upload) -> DumpFile:
    """The ``DumpFile`` of an upload, refused if its name or size is not accepted."""
    _check_suffix(upload.name)
    if len(upload.data) > UPLOAD_LIMIT_MB * MB:  # MB = 10**6 bytes, as the browser counts
        size = round(len(upload.data) / MB, 1)
        raise refuse("upload_too_large", file=upload.name, size_mb=size, limit_mb=UPLOAD_LIMIT_MB)
    return DumpFile(path=upload.name, data=bytes(upload.data))


def resolve_files(
    source: str | os.PathLike | Upload | DumpFile | LocalDump,
) -> tuple[DumpFile, ...]:
    """The files of a dump: a file, every dump file in a directory, or a glob's matches.

    Shards are returned in sorted name order, which is the order their rows are joined in
    when several files hold the same entry.
    """
    if isinstance(source, DumpFile):
        return (source,)
    if isinstance(source, LocalDump):  # a listed folder file: still the one listed
        return (DumpFile(path=unchanged_path(source), stamp=(source.size, source.modified_ns)),)
    if isinstance(source, Upload):
        return (upload_file(source),)
    text = os.fspath(source)
    if os.path.isdir(text):  # by name first: a folder of 100,000 files is refused unread
        paths = sorted(
            os.path.join(text, name)
            for name in os.listdir(text)
            if Path(name).suffix.lower() in ACCEPTED_SUFFIXES
        )
        if len(paths) > MAX_FILES:
            raise refuse("too_many_files", source=text, count=len(paths), limit=MAX_FILES)
        paths = [p for p in paths if os.path.isfile(p)]  # a link that loops is no file
    elif os.path.isfile(text):
        _check_suffix(text)
        return (DumpFile.opened(text),)
    elif glob.has_magic(text):
        paths = sorted(p for p in glob.glob(text) if os.path.isfile(p))
        for path in paths:
            _check_suffix(path)
    else:
        raise refuse("not_found", file=text)
    if not paths:
        raise refuse("no_files", source=text, accepted=Listing(ACCEPTED_SUFFIXES))
    if len(paths) > MAX_FILES:
        raise refuse("too_many_files", source=text, count=len(paths), limit=MAX_FILES)
    return tuple(DumpFile.opened(p) for p in paths)
