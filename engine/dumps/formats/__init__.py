"""The file formats a dump may come in, behind two calls.

- ``scan_file(file)``: the file's float entries from its header (no data read), every
  refusal an ``EngineError`` naming the file and entry;
- ``open_reader(file)``: an object whose ``rows(entry, start, stop)`` returns rows
  ``start:stop`` of an entry as a ``[n, d]`` tensor of the entry's dtype, and ``close()``.

Whatever a library raises on a damaged file (and fuzzing finds many kinds) is turned into
the ``corrupt`` refusal here, so no other exception escapes a loader.
"""

from __future__ import annotations

from engine.dumps.formats import numpy_file, safetensors_file, torch_file
from engine.dumps.formats.entries import EntryInfo, FileScan, corrupt
from engine.dumps.sources import DumpFile
from engine.errors import EngineError

_FORMATS = {  # suffix: (format, scan, reader)
    ".safetensors": ("safetensors", safetensors_file.scan, safetensors_file.Reader),
    ".npy": ("npy", numpy_file.scan_npy, numpy_file.NpyReader),
    ".npz": ("npz", numpy_file.scan_npz, numpy_file.NpzReader),
    ".pt": ("torch", torch_file.scan, torch_file.Reader),
    ".pth": ("torch", torch_file.scan, torch_file.Reader),
}

__all__ = ["EntryInfo", "FileScan", "open_reader", "scan_file"]


def _unexpected(file: DumpFile, entry: str, exc: Exception) -> EngineError:
    detail = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
    return corrupt(file, entry, _FORMATS[file.suffix][0], f"{type(exc).__name__}: {detail}")


def scan_file(file: DumpFile) -> FileScan:
    """The float entries of ``file`` (suffix already checked by ``sources``)."""
    try:
        return _FORMATS[file.suffix][1](file)
    except EngineError:
        raise
    except Exception as exc:  # anything a parser raises on bytes it does not expect
        raise _unexpected(file, "", exc) from None


class _SafeReader:
    """Wraps a format's reader so that a damaged file read later still ends in EngineError."""

    def __init__(self, file: DumpFile):
        self.file = file
        self._reader = _FORMATS[file.suffix][2](file)

    def rows(self, entry: EntryInfo, start: int, stop: int):
        try:
            return self._reader.rows(entry, start, stop)
        except EngineError:
            raise
        except Exception as exc:
            raise _unexpected(self.file, entry.key, exc) from None

    def close(self) -> None:
        self._reader.close()


def open_reader(file: DumpFile) -> _SafeReader:
    """A reader of ``file``'s rows; call ``close()`` when done."""
    try:
        return _SafeReader(file)
    except EngineError:
        raise
    except Exception as exc:
        raise _unexpected(file, "", exc) from None
