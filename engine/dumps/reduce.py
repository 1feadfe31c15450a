"""Split a dump's stream into units of work, reduce each, merge the partials.

A unit is a window of rows of one piece (one entry of one file, one layer): at most
``limits.WINDOW_BYTES`` of data, mapped while it is reduced and dropped after, so peak
memory stays near one window whatever the file's size.  ``reduce_stream`` runs the units
in this process; ``engine.dumps.cluster.reduce_on_dask`` runs the same ``reduce_unit`` on a
Dask cluster.  Both merge with ``partials.merge``, so they agree to rounding.
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from engine.config import DumpSpec
from engine.config.norms import DTYPES
from engine.dumps.chunks import grid_of, reduce_window
from engine.dumps.formats import open_reader
from engine.dumps.layout import Layout, Piece
from engine.dumps.limits import WINDOW_BYTES
from engine.dumps.partials import LayerPartial, merge, merge_all
from engine.threads import Cancelled, Progress, StopCheck, torch_threads


@dataclass(frozen=True)
class Unit:
    """Rows ``start:stop`` of ``piece`` (counted within the piece), layer ``layer``,
    starting at row ``layer_row`` of that layer."""

    layer: int
    piece: Piece
    start: int
    stop: int
    layer_row: int
    grid: str  # the stream's histogram grid (chunks.grid_of)

    @property
    def rows(self) -> int:
        return self.stop - self.start


def make_units(layout: Layout) -> tuple[Unit, ...]:
    """Every unit of the stream, layer by layer, file order within a layer."""
    grid = grid_of(p.entry.dtype for slot in layout.layers for p in slot.pieces)
    units = []
    for layer, slot in enumerate(layout.layers):
        layer_row = 0
        for piece in slot.pieces:
            itemsize = DTYPES[piece.entry.dtype].itemsize
            step = max(1, WINDOW_BYTES // (piece.entry.d * itemsize))
            for start in range(0, piece.rows, step):
                stop = min(start + step, piece.rows)
                units.append(Unit(layer, piece, start, stop, layer_row + start, grid))
            layer_row += piece.rows
    return tuple(units)


def reduce_unit(
    unit: Unit, spec: DumpSpec, reader=None, between_chunks=None, workers: int = 1
) -> LayerPartial:
    """The partial of one unit, read through ``reader`` (one of its own if none is given).

    ``workers`` > 1 splits the window's rows between that many threads (each running torch
    with one thread: on a busy machine OpenMP's own workers wait for each other, see
    engine/threads.py) and merges their partials.
    """
    reader = reader or open_reader(unit.piece.entry.file)
    offset = unit.piece.row_start + unit.start
    window = reader.rows(unit.piece.entry, offset, offset + unit.rows)  # [rows, d], mapped
    if workers <= 1 or unit.rows < 2 * workers:
        return reduce_window(
            window,
            unit.layer,
            unit.layer_row,
            spec.top_k,
            unit.grid,
            between_chunks,
        )
    bounds = [unit.rows * part // workers for part in range(workers + 1)]

    def part(index: int) -> LayerPartial:
        start, stop = bounds[index], bounds[index + 1]
        progress = between_chunks if index == 0 else None
        with torch_threads(1):  # OpenMP's setting is per thread
            return reduce_window(
                window[start:stop],
                unit.layer,
                unit.layer_row + start,
                spec.top_k,
                unit.grid,
                None if progress is None else (lambda done: progress(done * workers)),
            )

    with ThreadPoolExecutor(workers) as pool:
        partials = list(pool.map(part, range(workers)))
    return functools.reduce(merge, partials)


def reduce_stream(
    layout: Layout,
    spec: DumpSpec,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
    workers: int = 1,
) -> dict[int, LayerPartial]:
    """{layer: partial} over every row of the stream, in this process (``workers`` threads
    per window, torch itself held to one thread)."""
    units = make_units(layout)
    total_rows = sum(unit.rows for unit in units) or 1
    done_rows = 0
    merged: dict[int, LayerPartial] = {}
    by_file: dict = {}
    for unit in units:
        by_file.setdefault(unit.piece.entry.file, []).append(unit)
    with torch_threads(1):
        for file, file_units in by_file.items():
            reader = open_reader(file)  # an upload's .pt is unpickled once here
            for unit in file_units:

                def between_chunks(rows_done: int, base: int = done_rows) -> None:
                    if should_stop is not None and should_stop():
                        raise Cancelled()
                    if progress is not None:
                        progress(min(1.0, (base + rows_done) / total_rows))

                partial = reduce_unit(unit, spec, reader, between_chunks, workers)
                merged = merge_all(merged, {unit.layer: partial})
                done_rows += unit.rows
    return merged
