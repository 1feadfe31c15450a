"""The file formats a dump may come in, behind two calls.

- ``scan_file(file)``: the file's float entries from its header (no data read), every
  refusal an ``EngineError`` naming the file and entry;
- ``open_reader(file)``: an object whose ``rows(entry, start, stop)`` returns rows
  ``start:stop`` of an entry as a ``[n, d]`` tensor of the entry's dtype.  What a reader
  maps goes away with the tensors it returned, and with the reader; an ``.npz`` reader
  keeps the member it read last open (one file handle) until the reader goes.

Whatever a library raises on a damaged file (and fuzzing finds many kinds) is turned into
the ``corrupt`` (or ``corrupt_file``) refusal here, so no other exception escapes a loader.
"""

from __future__ import annotations

from contextlib import contextmanager

from engine.dumps.formats import numpy_file, safetensors_file, torch_file
from engine.dumps.formats.entries import WRITERS, EntryInfo, FileScan, corrupt, first_line
from engine.dumps.refusals import refuse
from engine.dumps.sources import DumpFile
from engine.errors import EngineError

_FORMATS = {  # suffix: (format, scan, reader)
    ".safetensors": ("safetensors", safetensors_file.scan, safetensors_file.Reader),
    ".npy": ("npy", numpy_file.scan_npy, numpy_file.NpyReader),
    ".npz": ("npz", numpy_file.scan_npz, numpy_file.NpzReader),
    ".pt": ("torch", torch_file.scan, torch_file.Reader),
    ".pth": ("torch", torch_file.scan, torch_file.Reader),
}


@contextmanager
def _parsing(file: DumpFile, entry: str = ""):
    """Anything a parser raises on bytes it does not expect, as the ``corrupt`` refusal (or
    ``corrupt_file`` where no entry is named)."""
    try:
        yield
    except EngineError:
        raise
    except PermissionError as exc:  # the bytes were never seen: not "damaged"
        raise refuse("unreadable", file=file.name, detail=exc.strerror or "") from None
    except Exception as exc:
        detail = f"{type(exc).__name__}: {first_line(exc)}"
        raise corrupt(file, entry, _FORMATS[file.suffix][0], detail) from None


def scan_file(file: DumpFile) -> FileScan:
    """The float entries of ``file`` (suffix already checked by ``sources``)."""
    fmt = _FORMATS[file.suffix][0]
    if file.size == 0:  # said as such, not as a header that claims more than nothing holds
        raise refuse("empty_file", file=file.name, format=fmt, writer=WRITERS[fmt])
    with _parsing(file):
        return _FORMATS[file.suffix][1](file)


class _SafeReader:
    """A format's reader whose failures on a damaged file still end in EngineError."""

    def __init__(self, file: DumpFile):
        self.file = file
        with _parsing(file):
            self._reader = _FORMATS[file.suffix][2](file)

    def rows(self, entry: EntryInfo, start: int, stop: int):
        with _parsing(self.file, entry.key):
            return self._reader.rows(entry, start, stop)


def open_reader(file: DumpFile) -> _SafeReader:
    """A reader of ``file``'s rows."""
    return _SafeReader(file)
