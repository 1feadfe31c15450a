"""What a scan of one file finds: its float entries, what it skipped, its metadata."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from engine.dumps.refusals import refuse
from engine.dumps.sources import DumpFile

TORCH_DTYPES = {  # the accepted dtypes (limits.ACCEPTED_DTYPES) by name
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
}


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


@dataclass(frozen=True)
class FileScan:
    """A file's usable entries, the ones it skipped (key, why) and its string metadata."""

    file: DumpFile
    entries: tuple[EntryInfo, ...]
    skipped: tuple[tuple[str, str], ...]
    metadata: tuple[tuple[str, str], ...] = ()


def corrupt(file: DumpFile, entry: str, fmt: str, detail: str, accepted: str):
    """The refusal for a file that cannot be parsed as ``fmt``."""
    return refuse(
        "corrupt",
        file=file.name,
        entry=entry or "(file)",
        format=fmt,
        detail=detail,
        accepted=accepted,
    )


def check_claimed_bytes(file: DumpFile, entry: str, claimed: int, available: int) -> None:
    """Refuse a header that claims more data than the file holds (before any allocation)."""
    if claimed > available:
        raise refuse(
            "truncated",
            file=file.name,
            entry=entry or "(file)",
            claimed=claimed,
            available=max(available, 0),
        )
