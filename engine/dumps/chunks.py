"""One pass over a window of rows, a chunk at a time, into a ``LayerPartial``.

A chunk is copied once into a float32 buffer (float64 for float64 data) small enough to stay
in the CPU cache; the per-row sums and sums of squares, the per-row and per-channel maxima
and the chunk's per-channel mean and M2 (two-pass within the chunk, merged by Chan's formula
across chunks) are taken from that buffer and one scratch buffer of the same size, the
magnitude histogram from the chunk's own bits.  NaN and inf are rare, so a chunk is first
reduced as if finite; only when a row's sum of squares is not finite (a NaN, an inf, or a
float32 value whose square overflows) is the chunk redone in float64 with masks.  After the
last chunk, the rows whose maxima can hold the window's largest entries are read again (few
rows: the row maxima say which).  No threshold of the report enters the reduction, so a new
threshold is applied to these statistics without reading the data again.
"""

from __future__ import annotations

import numpy as np
import torch

from engine.config.norms import DTYPES
from engine.dumps.limits import CHUNK_VALUES
from engine.dumps.partials import (
    HIST_BINS,
    NONFINITE_CAP,
    Entries,
    LayerPartial,
    Magnitudes,
    RowBlock,
    chan_merge,
    kept_entries,
)


def grid_of(dtypes) -> str:
    """The histogram grid of a stream stored in ``dtypes`` (names): float16 data are
    histogrammed by their own bits (an exact median); anything else, or a mix, on
    bfloat16's grid (float32's range, 8 significant bits: a median to within 0.4 %)."""
    return "float16" if set(dtypes) == {"float16"} else "bfloat16"


def median_exact(dtypes) -> bool:
    """Whether a stream stored in ``dtypes`` (names) is histogrammed on its own bits (float16
    alone, or bfloat16 alone): its median |a| exact; otherwise read to within 0.4 %."""
    dtypes = set(dtypes)
    return dtypes == {grid_of(dtypes)}


def _bits(x: torch.Tensor, grid: str) -> torch.Tensor:
    """15-bit magnitude patterns of ``x`` on ``grid`` ([n, d] → [n*d] int16, >= 0)."""
    if x.dtype == DTYPES[grid]:
        raw = x.contiguous().view(torch.int16)  # [n, d]
    else:
        magnitude = x.abs()  # [n, d]
        largest = torch.finfo(DTYPES[grid]).max
        if torch.finfo(x.dtype).max > largest and magnitude.max() > largest:
            infinite = magnitude.isinf()  # [n, d]: ±inf keeps its own bin, above the finite
            magnitude.clamp_(max=largest)  # finite ones past the grid's end stay finite
            magnitude.masked_fill_(infinite, float("inf"))
        raw = magnitude.to(DTYPES[grid]).view(torch.int16)  # [n, d]
    return (raw & 0x7FFF).flatten()  # [n*d]


class _Accumulator:
    """Running statistics of one window (private, mutable; frozen into a partial at the end)."""

    def __init__(self, rows: int, d: int, dtype: torch.dtype, grid: str, first_row: int, top_k):
        self.first_row = first_row  # where the window starts within its layer
        self.work = torch.float64 if dtype == torch.float64 else torch.float32
        self.grid = grid
        self.top_k = top_k
        self.sums = np.zeros(rows)
        self.sumsq = np.zeros(rows)
        self.maxabs = np.zeros(rows)
        self.finite = np.full(rows, d, dtype=np.int64)
        self.row_m2 = np.zeros(rows)
        self.count = np.zeros(d, dtype=np.int64)
        self.mean = np.zeros(d)
        self.m2 = np.zeros(d)
        self.channel_maxsq = torch.zeros(d, dtype=torch.float64)
        self.hist = torch.zeros(HIST_BINS, dtype=torch.int64)  # dense while counting
        self.top = Entries.empty()
        self.nonfinite = [0, 0, 0]  # nan, +inf, -inf
        self.nonfinite_rows: list[int] = []

    def add_channels(self, count: np.ndarray, mean: np.ndarray, m2: np.ndarray) -> None:
        """Merge a chunk's per-channel (count, mean, M2) into the running ones."""
        self.count, self.mean, self.m2 = chan_merge(self.count, self.mean, self.m2, count, mean, m2)

    def partial(self, layer: int) -> LayerPartial:
        return LayerPartial(
            layer=layer,
            blocks=(
                RowBlock(
                    self.first_row, self.sums, self.sumsq, self.maxabs, self.finite, self.row_m2
                ),
            ),
            count=self.count,
            mean=self.mean,
            m2=self.m2,
            channel_maxabs=self.channel_maxsq.sqrt().numpy(),
            magnitudes=Magnitudes.of(self.hist.numpy(), self.grid),
            top=self.top,
            nan=self.nonfinite[0],
            posinf=self.nonfinite[1],
            neginf=self.nonfinite[2],
            nonfinite_rows=np.asarray(self.nonfinite_rows[:NONFINITE_CAP], dtype=np.int64),
            top_k=self.top_k,
        )


def _finite_chunk(acc: _Accumulator, x, buf, scratch, at: int) -> bool:
    """Reduce chunk ``x`` [n, d] assuming finite values; False (nothing added) if not."""
    n = x.shape[0]
    work = x if x.dtype == acc.work else buf[:n].copy_(x)  # [n, d]
    squares = torch.mul(work, work, out=scratch[:n])  # [n, d]
    row_sumsq = squares.sum(-1)  # [n]
    if not torch.isfinite(row_sumsq).all():
        return False
    row_maxsq = squares.amax(-1)  # [n]
    torch.maximum(acc.channel_maxsq, squares.amax(0).double(), out=acc.channel_maxsq)
    # Two passes over the cached chunk: torch.var_mean(work, 0) agrees to rounding, but its
    # column-wise Welford in float64 is far slower (docs/architecture.md).
    chunk_mean = work.sum(0) / n  # [d]
    centered = torch.sub(work, chunk_mean, out=scratch[:n])  # [n, d]
    m2 = centered.mul_(centered).sum(0)  # [d]
    row_sum = work.sum(-1)  # [n]
    acc.sums[at : at + n] = row_sum.double().numpy()
    acc.sumsq[at : at + n] = row_sumsq.double().numpy()
    deviations = torch.sub(work, (row_sum / work.shape[1])[:, None], out=scratch[:n])  # [n, d]
    acc.row_m2[at : at + n] = deviations.mul_(deviations).sum(-1).double().numpy()
    row_maxabs = row_maxsq.double().sqrt()  # [n]
    acc.maxabs[at : at + n] = row_maxabs.numpy()
    counts = np.full(x.shape[1], n, dtype=np.int64)
    acc.add_channels(counts, chunk_mean.double().numpy(), m2.double().numpy())
    return True


def _masked_chunk(acc: _Accumulator, x: torch.Tensor, at: int) -> None:
    """Reduce a chunk holding NaN/inf (or float32 squares that overflow) in float64."""
    values = x.double()  # [n, d]
    finite = torch.isfinite(values)  # [n, d]
    acc.nonfinite[0] += int(torch.isnan(values).sum())
    acc.nonfinite[1] += int((values == float("inf")).sum())
    acc.nonfinite[2] += int((values == float("-inf")).sum())
    bad_rows = torch.nonzero(~finite.all(-1)).flatten() + (acc.first_row + at)
    acc.nonfinite_rows.extend(bad_rows[: NONFINITE_CAP - len(acc.nonfinite_rows)].tolist())
    clean = torch.where(finite, values, 0.0)  # [n, d]
    n = x.shape[0]
    acc.sums[at : at + n] = clean.sum(-1).numpy()
    acc.sumsq[at : at + n] = (clean * clean).sum(-1).numpy()
    magnitude = clean.abs()  # [n, d]
    row_maxabs = magnitude.amax(-1)  # [n]
    acc.maxabs[at : at + n] = row_maxabs.numpy()
    acc.finite[at : at + n] = finite.sum(-1).numpy()
    row_mean = clean.sum(-1, keepdim=True) / finite.sum(-1, keepdim=True).clamp_min(1)  # [n, 1]
    deviations = torch.where(finite, clean - row_mean, 0.0)  # [n, d]
    acc.row_m2[at : at + n] = (deviations * deviations).sum(-1).numpy()
    torch.maximum(acc.channel_maxsq, magnitude.amax(0) ** 2, out=acc.channel_maxsq)
    count = finite.sum(0)  # [d]
    chunk_mean = clean.sum(0) / count.clamp_min(1)  # [d]
    centered = torch.where(finite, clean - chunk_mean, 0.0)  # [n, d]
    m2 = (centered * centered).sum(0)  # [d]
    acc.add_channels(count.numpy(), chunk_mean.numpy(), m2.numpy())


def _top_entries(window: torch.Tensor, maxabs: np.ndarray, top_k: int, first_row: int):
    """The ``top_k`` largest |a| of the window, ties broken by (row, channel).

    They lie in the ``top_k`` rows that come first by (largest row maximum, row): an entry
    of any other row is preceded by the maxima of ``top_k`` rows that are at least as large
    and, when equal, earlier.  So only those rows are read again.
    """
    rows = np.lexsort((np.arange(maxabs.shape[0]), -maxabs))[:top_k]
    values = window[torch.from_numpy(rows)].double()  # [k, d], a copy
    # NaN and ±inf are no entry: below every |a| (a row of them only has maxabs -1)
    magnitude = torch.where(values.isfinite(), values.abs(), -1.0).flatten()  # [k*d]
    k = min(top_k, int((magnitude >= 0).sum()))
    if k == 0:
        return Entries.empty()
    kth = magnitude.topk(k).values[-1]
    # the entries above the k-th, then as many of its ties as fill k, by (row, channel): taken
    # whole, a window of zeros made every entry a candidate (1.3 GB at d = 65,536)
    candidates = [torch.nonzero(magnitude > kth).flatten().numpy()]
    need, d = k - candidates[0].size, window.shape[1]
    for r in np.argsort(rows) if need > 0 else ():
        ties = torch.nonzero(magnitude[r * d : (r + 1) * d] == kth).flatten()[:need].numpy()
        candidates.append(r * d + ties)
        need -= ties.size
        if need <= 0:
            break
    candidates = np.concatenate(candidates)
    row_of, channel = candidates // d, candidates % d
    order = np.lexsort((channel, rows[row_of], -magnitude.numpy()[candidates]))[:k]
    picked = candidates[order]
    return Entries(
        values.flatten().numpy()[picked],
        rows[row_of[order]].astype(np.int64) + first_row,
        channel[order].astype(np.int64),
    )


def reduce_window(
    window: torch.Tensor,
    layer: int,
    first_row: int,
    top_k: int,
    grid: str,
    between_chunks=None,
) -> LayerPartial:
    """The partial of the rows of ``window`` ([rows, d], any accepted dtype, may be a view
    of a mapped file), which start at row ``first_row`` of layer ``layer``; its magnitude
    histogram on ``grid`` (the same for every window of a stream, see ``grid_of``).

    ``between_chunks(done)`` is called after each chunk with the rows done so far
    (progress, cancellation).
    """
    rows, d = window.shape
    acc = _Accumulator(rows, d, window.dtype, grid, first_row, top_k)
    step = max(1, CHUNK_VALUES // d)
    buf = torch.empty(min(step, rows), d, dtype=acc.work)  # [chunk, d]
    scratch = torch.empty_like(buf)  # [chunk, d]
    for start in range(0, rows, step):
        x = window[start : start + step]  # [n, d]
        torch.add(acc.hist, torch.bincount(_bits(x, grid), minlength=HIST_BINS), out=acc.hist)
        if not _finite_chunk(acc, x, buf, scratch, start):
            _masked_chunk(acc, x, start)
        if between_chunks is not None:
            between_chunks(min(start + step, rows))
    ranked = np.where(acc.finite > 0, acc.maxabs, -1.0)  # a row of NaN/inf holds no entry
    acc.top = _top_entries(window, ranked, kept_entries(top_k), first_row)
    return acc.partial(layer)
