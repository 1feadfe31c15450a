"""Open a dump: resolve its files, scan their headers, infer its layout.  No data is read."""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch

from engine.config import DumpSpec
from engine.dumps.formats import open_reader, scan_file
from engine.dumps.formats.entries import EntryInfo, FileScan
from engine.dumps.layout import Layout, Piece, infer_layout
from engine.dumps.limits import MAX_ENTRIES
from engine.dumps.refusals import refuse
from engine.dumps.sources import DumpFile, Upload, resolve_files
from engine.threads import Cancelled, Progress, StopCheck, torch_threads


@dataclass(frozen=True)
class Dump:
    """A dump's files, what their headers hold, and how it is read (``layout``)."""

    files: tuple[DumpFile, ...]
    scans: tuple[FileScan, ...]
    layout: Layout
    spec: DumpSpec

    @property
    def metadata(self) -> dict[str, str]:
        """The files' string metadata (safetensors ``__metadata__``), first file first."""
        merged: dict[str, str] = {}
        for scan in reversed(self.scans):
            merged.update(scan.metadata)
        return merged

    @property
    def nbytes(self) -> int:
        return sum(file.size for file in self.files)


def open_dump(
    source: str | os.PathLike | Upload | DumpFile | Dump,
    spec: DumpSpec | None = None,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
    threads: int | None = None,
) -> Dump:
    """Resolve, scan and lay out ``source``: a path, a directory or glob of shards, or an
    ``Upload`` (an uploaded file's name and bytes).  Every refusal is an ``EngineError``;
    ``should_stop`` is polled and ``progress`` told between files (``engine.threads``)."""
    spec = spec or DumpSpec()
    if isinstance(source, Dump):
        if source.spec == spec:
            return source
        return Dump(source.files, source.scans, infer_layout(source.scans, spec), spec)
    files = resolve_files(source)
    scans, entries = [], 0
    for done, file in enumerate(files):
        if should_stop is not None and should_stop():
            raise Cancelled()
        with torch_threads(threads):  # an upload's .pt is unpickled here
            scans.append(scan_file(file))
        if progress is not None:
            progress((done + 1) / len(files))
        entries += len(scans[-1].entries) + len(scans[-1].skipped)
        if entries > MAX_ENTRIES:  # shards together: refused before the next is scanned
            names = f"{files[0].name} … {file.name}"
            raise refuse("too_many_entries", file=names, count=entries, limit=MAX_ENTRIES)
    return Dump(files, tuple(scans), infer_layout(tuple(scans), spec), spec)


def locate(pieces: tuple[Piece, ...], row: int) -> tuple[Piece, int]:
    """The piece holding row ``row`` (b*T + t) of ``pieces`` joined, and the row in its entry."""
    for piece in pieces:
        if row < piece.rows:
            return piece, piece.row_start + row
        row -= piece.rows
    raise IndexError(row)


def stream_row(layout: Layout, batch: int, token: int) -> int:
    """Row b*T + t of sequence ``batch``'s token ``token``; refused outside the stream."""
    if not (0 <= batch < layout.batch and 0 <= token < layout.tokens):
        raise refuse(
            "row_out_of_range",
            batch=batch,
            token=token,
            last_batch=layout.batch - 1,
            last_token=layout.tokens - 1,
        )
    return batch * layout.tokens + token


def read_tokens(dump: Dump, layers: list[int], rows: list[int]) -> torch.Tensor:
    """The residual-stream vectors of ``rows`` (b*T + t) at each of ``layers``:
    [len(layers), k, d], float32, read with one reader per file."""
    layout = dump.layout
    located = []
    for layer in layers:
        if not 0 <= layer < len(layout.layers):
            raise refuse("layer_out_of_range", layer=layer, last=len(layout.layers) - 1)
        for row in rows:
            row = stream_row(layout, *divmod(row, layout.tokens))
            located.append(locate(layout.layers[layer].pieces, row))
    return read_piece_rows(located).reshape(len(layers), len(rows), layout.d)


def read_piece_rows(located: list[tuple[Piece, int]], readers: dict | None = None) -> torch.Tensor:
    """Entry row ``at`` of each ``(piece, at)``, as float32 [k, d] (one reader per file, in
    ``readers`` where the caller keeps them for several reads)."""
    readers = {} if readers is None else readers
    out = []
    for piece, at in located:
        file = piece.entry.file
        if file not in readers:
            readers[file] = open_reader(file)
        out.append(readers[file].rows(piece.entry, at, at + 1).float())  # [1, d]
    return torch.cat(out) if out else torch.empty(0, 0)  # [k, d]


def read_param(entry: EntryInfo, readers: dict | None = None) -> torch.Tensor:
    """A norm's weight or bias (a [d] entry) as float64 [d]."""
    return read_piece_rows([(Piece(entry, 0, 1), 0)], readers)[0].double()
