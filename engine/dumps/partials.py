"""Per-chunk partial statistics and their associative merge.

Every statistic the diagnostics need is kept in a form where two partials of disjoint rows
merge into the partial of their union, in any grouping: counts and histograms add, maxima
take the larger, the k largest entries keep the k largest of both (ties broken by position,
so the result does not depend on the order), per-row values are concatenated by row, and a
channel's mean and variance merge by Chan, Golub & LeVeque's pairwise formula:

    n = n_a + n_b,  δ = mean_b − mean_a,
    mean = mean_a + δ·n_b/n,   M2 = M2_a + M2_b + δ²·n_a·n_b/n     (variance = M2/n)

which stays accurate when the mean is large against the spread, where Σx² − n·mean² would
cancel.  That is what lets shards reduce on a Dask cluster to the same result.

References:
- Chan, Golub, LeVeque 1979, "Updating formulae and a pairwise algorithm for computing
  sample variances", Stanford CS tech. report STAN-CS-79-773
- Sun, Chen, Kolter, Liu 2024, "Massive Activations in Large Language Models",
  arXiv:2402.17762 (the top-k and the median magnitude per layer)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

LARGE_CAP = 256  # the largest |a| kept per layer with their positions, whatever the
#   thresholds (a massive activation is one of them above the threshold; the histogram
#   counts every one above it)
NONFINITE_CAP = 16  # rows with NaN/inf kept per layer, to name them in the report
HIST_BINS = 1 << 15  # |a| by its 15-bit float16 / bfloat16 pattern (sign dropped)


@dataclass(frozen=True)
class RowBlock:
    """Per-row sums of rows ``start : start + len(sums)`` of one layer."""

    start: int
    sums: np.ndarray  # [n] float64, sum over the d channels of the finite values
    sumsq: np.ndarray  # [n] float64, sum of squares
    maxabs: np.ndarray  # [n] float64, largest |a|
    finite: np.ndarray  # [n] int64, finite values in the row (d unless NaN/inf)
    # [n] float64, squared deviations from the row's own mean, summed: its σ² times
    # ``finite``, two passes over the row (σ² = RMS² − μ² cancels where |μ| ≫ σ: 100 + 0.01·z
    # gave σ = 0.033 or 0 from float32 sums, for 0.010)
    m2: np.ndarray


@dataclass(frozen=True)
class Entries:
    """Signed values with their (row, channel), largest |value| first, ties by position."""

    values: np.ndarray  # [k] float64
    rows: np.ndarray  # [k] int64, row within the layer (b*T + t)
    channels: np.ndarray  # [k] int64

    @staticmethod
    def empty() -> Entries:
        return Entries(np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64))

    def merged(self, other: Entries, keep: int) -> Entries:
        values = np.concatenate([self.values, other.values])
        rows = np.concatenate([self.rows, other.rows])
        channels = np.concatenate([self.channels, other.channels])
        order = np.lexsort((channels, rows, -np.abs(values)))[:keep]
        return Entries(values[order], rows[order], channels[order])


@dataclass(frozen=True)
class Magnitudes:
    """A histogram of |a| by bit pattern on a grid, its occupied bins only.

    Dense, a layer's histogram is 32,768 int64 counts (256 KiB); a layer's values occupy a
    few thousand bins of the bfloat16 grid (8 significant bits: 128 bins per octave) and at
    most as many bins as it has values, so a report of many small layers stays small.
    """

    grid: str  # "float16" or "bfloat16": whose bit patterns ``bins`` are
    bins: np.ndarray  # [k] int64, ascending bit patterns (< HIST_BINS) holding values
    counts: np.ndarray  # [k] int64, > 0

    @staticmethod
    def of(dense: np.ndarray, grid: str) -> Magnitudes:
        """From a dense [HIST_BINS] histogram."""
        bins = np.flatnonzero(dense)
        return Magnitudes(grid, bins.astype(np.int64), dense[bins].astype(np.int64))

    def dense(self) -> np.ndarray:
        """[HIST_BINS] int64 counts."""
        out = np.zeros(HIST_BINS, dtype=np.int64)
        out[self.bins] = self.counts
        return out

    def merged(self, other: Magnitudes) -> Magnitudes:
        if self.grid != other.grid:
            raise ValueError(f"cannot merge histograms on {self.grid} and {other.grid}")
        dense = self.dense()
        dense[other.bins] += other.counts
        return Magnitudes.of(dense, self.grid)

    def median(self) -> float:
        """The median |a| of the finite values counted (numpy's convention: the mean of the
        two middle values when their number is even); NaN when there are none."""
        finite = self.bins < finite_bins(self.grid)
        bins, counts = self.bins[finite], self.counts[finite]
        total = int(counts.sum())
        if total == 0:
            return float("nan")
        cumulative = np.cumsum(counts)
        values = grid_values(self.grid)[bins]
        lower = values[np.searchsorted(cumulative, (total - 1) // 2, side="right")]
        upper = values[np.searchsorted(cumulative, total // 2, side="right")]
        return float((lower + upper) / 2)

    def count_above(self, threshold: float) -> int:
        """How many finite values counted lie above ``threshold`` (on the grid's values: exact
        for float16 data, to 8 significant bits for anything else)."""
        finite = self.bins < finite_bins(self.grid)
        above = grid_values(self.grid)[self.bins[finite]] > threshold
        return int(self.counts[finite][above].sum())


def kept_entries(top_k: int) -> int:
    """How many of a layer's largest |a| a partial keeps: ``top_k`` for the report's top
    list, ``LARGE_CAP`` to list the massive activations of any threshold."""
    return max(top_k, LARGE_CAP)


@dataclass(frozen=True)
class LayerPartial:
    """Everything one layer's diagnostics need, from some of its rows."""

    layer: int
    blocks: tuple[RowBlock, ...]
    count: np.ndarray  # [d] int64 finite values per channel
    mean: np.ndarray  # [d] float64
    m2: np.ndarray  # [d] float64, sum of squared deviations from the mean
    channel_maxabs: np.ndarray  # [d] float64
    magnitudes: Magnitudes  # |a| by bit pattern
    top: Entries  # the kept_entries(top_k) largest |a|
    nan: int
    posinf: int
    neginf: int
    nonfinite_rows: np.ndarray  # first NONFINITE_CAP rows holding NaN/inf, sorted
    top_k: int


def chan_merge(count_a, mean_a, m2_a, count_b, mean_b, m2_b):
    """Per-channel (count, mean, M2) of two disjoint sets of rows, by Chan et al.'s formula
    (module docstring); a channel with no values in either has mean and M2 0."""
    count = count_a + count_b
    safe = np.maximum(count, 1)
    delta = mean_b - mean_a
    mean = np.where(count > 0, mean_a + delta * (count_b / safe), 0.0)
    m2 = m2_a + m2_b + delta**2 * (count_a * (count_b / safe))
    return count, mean, np.where(count > 0, m2, 0.0)


def merge(a: LayerPartial, b: LayerPartial) -> LayerPartial:
    """The partial of both ``a``'s and ``b``'s rows (same layer, disjoint rows)."""
    if a.layer != b.layer:
        raise ValueError(f"cannot merge layer {a.layer} with layer {b.layer}")
    count, mean, m2 = chan_merge(a.count, a.mean, a.m2, b.count, b.mean, b.m2)
    nonfinite = np.union1d(a.nonfinite_rows, b.nonfinite_rows)[:NONFINITE_CAP]
    return LayerPartial(
        layer=a.layer,
        blocks=tuple(sorted(a.blocks + b.blocks, key=lambda block: block.start)),
        count=count,
        mean=mean,
        m2=m2,
        channel_maxabs=np.maximum(a.channel_maxabs, b.channel_maxabs),
        magnitudes=a.magnitudes.merged(b.magnitudes),
        top=a.top.merged(b.top, kept_entries(a.top_k)),
        nan=a.nan + b.nan,
        posinf=a.posinf + b.posinf,
        neginf=a.neginf + b.neginf,
        nonfinite_rows=nonfinite.astype(np.int64),
        top_k=a.top_k,
    )


def merge_all(partials: dict[int, LayerPartial], more: dict[int, LayerPartial]):
    """Layer-wise merge of two {layer: partial} maps (a new dict; neither is changed)."""
    merged = dict(partials)
    for layer, partial in more.items():
        merged[layer] = merge(merged[layer], partial) if layer in merged else partial
    return merged


@functools.cache
def grid_values(grid: str) -> np.ndarray:
    """The |a| each histogram bin stands for: bit pattern → float64 ([HIST_BINS], read-only)."""
    bits = np.arange(HIST_BINS, dtype=np.uint32)
    with np.errstate(invalid="ignore"):  # the NaN patterns at the top: never read as values
        if grid == "float16":
            values = bits.astype(np.uint16).view(np.float16).astype(np.float64)
        else:
            values = (bits << 16).view(np.float32).astype(np.float64)
    values.flags.writeable = False
    return values


def finite_bins(grid: str) -> int:
    """Bins below this index hold finite values (the next is +inf, then NaNs)."""
    return 0x7C00 if grid == "float16" else 0x7F80
