""".pt records against the pickle that names them: every storage's record must hold the
bytes its tensors need, stored as they are.

torch checks a record's size when it reads the record, not when it maps the file (``torch.load
(mmap=True)``, how ``torch_file`` loads a file on disk), so a short record was read on into
the records after it: numbers the file's tensors never held.  The bytes each storage needs
come from the pickle, read by ``_StorageSizes``, an unpickler that imports and calls nothing.
"""

from __future__ import annotations

import bisect
import io
import pickle
import struct
import zipfile

import torch

from engine.dumps.refusals import refuse
from engine.dumps.sources import DumpFile


class _Inert:
    """What the size reader's unpickler makes of any global: a name, called to nothing."""

    def __init__(self, *names):
        self.names = names

    def __call__(self, *args, **kwargs):
        return _Inert()

    def __setstate__(self, state):
        pass


class _StorageSizes(pickle.Unpickler):
    """Reads a torch.save pickle (already bounded by ``_check_pickle``) for the storages it
    names and the bytes each needs; it imports and calls nothing (every global is an
    ``_Inert``), and it takes a storage's key and size only in the types torch.save writes
    (a short str, an int): nothing the file built is printed or converted."""

    def __init__(self, data: bytes):
        super().__init__(io.BytesIO(data))
        self.sizes: dict[str, int] = {}

    def find_class(self, module, name):
        return _Inert(module, name)

    def persistent_load(self, pid):
        # ("storage", storage type, key, location, numel), as torch.save writes it
        if type(pid) is not tuple or len(pid) != 5:
            raise pickle.UnpicklingError("not a storage")
        kind, storage_type, key, _, numel = pid
        if not (
            type(kind) is str
            and kind == "storage"
            and type(storage_type) is _Inert
            and type(key) is str
            and len(key) <= 64
            and type(numel) is int
            and 0 <= numel < 2**62
        ):
            raise pickle.UnpicklingError("not a storage")
        name = storage_type.names[-1]
        if name == "UntypedStorage":
            self.sizes[key] = numel
        elif (dtype := _STORAGE_DTYPES.get(name)) is not None:
            self.sizes[key] = numel * dtype.itemsize
        return _Inert()  # a storage type torch does not name: torch.load refuses it


# torch.save's typed storage names (its pickles name storages so for older readers)
_STORAGE_DTYPES = {
    f"{name}Storage": dtype
    for name, dtype in {
        "Double": torch.float64,
        "Float": torch.float32,
        "Half": torch.float16,
        "BFloat16": torch.bfloat16,
        "Long": torch.int64,
        "Int": torch.int32,
        "Short": torch.int16,
        "Char": torch.int8,
        "Byte": torch.uint8,
        "Bool": torch.bool,
        "ComplexDouble": torch.complex128,
        "ComplexFloat": torch.complex64,
    }.items()
}


def storage_sizes(data: bytes) -> dict[str, int]:
    """{record key: bytes its storage needs} for the storages the pickle names (so far, if
    it is not a pickle torch would read: torch.load then refuses it)."""
    reader = _StorageSizes(data)
    try:
        reader.load()
    except Exception:
        pass
    return reader.sizes


def check_records(file: DumpFile, archive: zipfile.ZipFile, sizes: dict, prefix: str) -> None:
    """Refuse a storage whose record is compressed (torch.save never compresses) or holds
    fewer bytes than ``sizes`` says its tensors need.  The bytes a record holds are measured
    from where its data starts to where the next member (or the zip's directory) starts, not
    taken from the directory, which may say anything."""
    infos = {info.filename: info for info in archive.infolist()}
    starts = sorted({info.header_offset for info in infos.values()} | {archive.start_dir})
    for key, needed in sizes.items():
        info = infos.get(prefix + key)
        if info is None:
            continue  # torch.load refuses a missing record itself
        archive.fp.seek(info.header_offset + 26)
        name_length, extra_length = struct.unpack("<HH", archive.fp.read(4))
        data_start = info.header_offset + 30 + name_length + extra_length
        after = bisect.bisect_right(starts, info.header_offset)
        following = starts[after] if after < len(starts) else archive.start_dir
        stored = info.compress_type == zipfile.ZIP_STORED
        held = min(info.file_size, info.compress_size, following - data_start)
        if not stored or held < needed:
            raise refuse(
                "short_record" if stored else "compressed_record",
                file=file.name,
                record=key,
                held=max(held, 0),
                needed=needed,
            )
