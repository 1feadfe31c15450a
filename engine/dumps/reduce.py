"""Split a dump's stream into units of work, reduce each, merge the partials.

A unit is a window of rows of one piece (one entry of one file, one layer): at most
``limits.WINDOW_BYTES`` of data, mapped while it is reduced and dropped after, so peak
memory stays near one window whatever the file's size.  ``reduce_stream`` runs the units
in this process; ``engine.dumps.cluster.reduce_on_dask`` runs the same ``reduce_unit`` on a
Dask cluster.  Both merge with ``partials.merge``, so they agree to rounding.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import torch

from engine.config import DumpSpec
from engine.dumps.chunks import reduce_rows
from engine.dumps.formats import open_reader
from engine.dumps.formats.safetensors_file import TORCH_DTYPES
from engine.dumps.layout import Layout, Piece
from engine.dumps.limits import WINDOW_BYTES
from engine.dumps.partials import LayerPartial, merge_all
from engine.jobs import Cancelled, Progress, StopCheck


@dataclass(frozen=True)
class Unit:
    """Rows ``start:stop`` of ``piece`` (counted within the piece), layer ``layer``,
    starting at row ``layer_row`` of that layer."""

    layer: int
    piece: Piece
    start: int
    stop: int
    layer_row: int

    @property
    def rows(self) -> int:
        return self.stop - self.start


def make_units(layout: Layout, window_bytes: int = WINDOW_BYTES) -> tuple[Unit, ...]:
    """Every unit of the stream, layer by layer, file order within a layer."""
    units = []
    for layer, slot in enumerate(layout.layers):
        layer_row = 0
        for piece in slot.pieces:
            itemsize = torch.empty((), dtype=TORCH_DTYPES[piece.entry.dtype]).element_size()
            step = max(1, window_bytes // (piece.entry.d * itemsize))
            for start in range(0, piece.rows, step):
                stop = min(start + step, piece.rows)
                units.append(Unit(layer, piece, start, stop, layer_row + start))
            layer_row += piece.rows
    return tuple(units)


def reduce_unit(unit: Unit, spec: DumpSpec, reader=None, between_chunks=None) -> LayerPartial:
    """The partial of one unit; opens (and closes) its own reader unless given one."""
    own = reader is None
    reader = open_reader(unit.piece.entry.file) if own else reader
    entry, offset = unit.piece.entry, unit.piece.row_start + unit.start
    try:
        window = reader.rows(entry, offset, offset + unit.rows)  # [rows, d], mapped

        def read(start: int, stop: int) -> torch.Tensor:
            return window[start:stop]  # [n, d]

        return reduce_rows(
            read,
            rows=unit.rows,
            d=entry.d,
            dtype=TORCH_DTYPES[entry.dtype],
            layer=unit.layer,
            first_row=unit.layer_row,
            massive_abs=spec.massive_abs,
            top_k=spec.top_k,
            between_chunks=between_chunks,
        )
    finally:
        if own:
            reader.close()


def _by_file(units: Iterable[Unit]) -> dict:
    groups: dict = {}
    for unit in units:
        groups.setdefault(unit.piece.entry.file, []).append(unit)
    return groups


def reduce_stream(
    layout: Layout,
    spec: DumpSpec,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
) -> dict[int, LayerPartial]:
    """{layer: partial} over every row of the stream, in this process."""
    units = make_units(layout)
    total_rows = sum(unit.rows for unit in units) or 1
    done_rows = 0
    merged: dict[int, LayerPartial] = {}
    for file, file_units in _by_file(units).items():
        reader = open_reader(file)  # an upload's .pt is unpickled once here
        try:
            for unit in file_units:

                def between_chunks(rows_done: int, base: int = done_rows) -> None:
                    if should_stop is not None and should_stop():
                        raise Cancelled()
                    if progress is not None:
                        progress(min(1.0, (base + rows_done) / total_rows))

                partial = reduce_unit(unit, spec, reader, between_chunks)
                merged = merge_all(merged, {unit.layer: partial})
                done_rows += unit.rows
        finally:
            reader.close()
    return merged
