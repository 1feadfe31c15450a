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

from dataclasses import dataclass

import numpy as np

LARGE_CAP = 256  # entries above massive_abs kept per layer (the count above it is exact)
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
class LayerPartial:
    """Everything one layer's diagnostics need, from some of its rows."""

    layer: int
    blocks: tuple[RowBlock, ...]
    count: np.ndarray  # [d] int64 finite values per channel
    mean: np.ndarray  # [d] float64
    m2: np.ndarray  # [d] float64, sum of squared deviations from the mean
    channel_maxabs: np.ndarray  # [d] float64
    hist: np.ndarray  # [HIST_BINS] int64
    grid: str  # "float16" or "bfloat16": whose bit patterns index ``hist``
    top: Entries  # the top_k largest |a|
    large: Entries  # up to LARGE_CAP entries with |a| > massive_abs
    large_total: int  # how many entries have |a| > massive_abs (exact)
    nan: int
    posinf: int
    neginf: int
    nonfinite_rows: np.ndarray  # first NONFINITE_CAP rows holding NaN/inf, sorted
    top_k: int


def _chan(a: LayerPartial, b: LayerPartial) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    count = a.count + b.count
    safe = np.maximum(count, 1)
    delta = b.mean - a.mean
    mean = np.where(count > 0, a.mean + delta * (b.count / safe), 0.0)
    m2 = a.m2 + b.m2 + delta**2 * (a.count * (b.count / safe))
    return count, mean, np.where(count > 0, m2, 0.0)


def merge(a: LayerPartial, b: LayerPartial) -> LayerPartial:
    """The partial of both ``a``'s and ``b``'s rows (same layer, disjoint rows)."""
    if a.layer != b.layer or a.grid != b.grid:
        raise ValueError(f"cannot merge layer {a.layer} ({a.grid}) with {b.layer} ({b.grid})")
    count, mean, m2 = _chan(a, b)
    nonfinite = np.union1d(a.nonfinite_rows, b.nonfinite_rows)[:NONFINITE_CAP]
    return LayerPartial(
        layer=a.layer,
        blocks=tuple(sorted(a.blocks + b.blocks, key=lambda block: block.start)),
        count=count,
        mean=mean,
        m2=m2,
        channel_maxabs=np.maximum(a.channel_maxabs, b.channel_maxabs),
        hist=a.hist + b.hist,
        grid=a.grid,
        top=a.top.merged(b.top, a.top_k),
        large=a.large.merged(b.large, LARGE_CAP),
        large_total=a.large_total + b.large_total,
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


def grid_values(grid: str) -> np.ndarray:
    """The |a| each histogram bin stands for: bit pattern → float64 ([HIST_BINS])."""
    bits = np.arange(HIST_BINS, dtype=np.uint32)
    with np.errstate(invalid="ignore"):  # the NaN patterns at the top: never read as values
        if grid == "float16":
            return bits.astype(np.uint16).view(np.float16).astype(np.float64)
        return (bits << 16).view(np.float32).astype(np.float64)


def finite_bins(grid: str) -> int:
    """Bins below this index hold finite values (the next is +inf, then NaNs)."""
    return 0x7C00 if grid == "float16" else 0x7F80


def hist_median(hist: np.ndarray, grid: str) -> float:
    """The median |a| of the finite values counted in ``hist`` (numpy's convention: the
    mean of the two middle values when their number is even); NaN when there are none."""
    finite = hist[: finite_bins(grid)]
    total = int(finite.sum())
    if total == 0:
        return float("nan")
    cumulative = np.cumsum(finite)
    values = grid_values(grid)[: finite_bins(grid)]
    lower = values[np.searchsorted(cumulative, (total - 1) // 2, side="right")]
    upper = values[np.searchsorted(cumulative, total // 2, side="right")]
    return float((lower + upper) / 2)
