"""``report``: open a dump, reduce its residual stream in one streaming pass, and derive
every diagnostic the page and the CLI show (``DumpReport``).

The pass reads each value once (``reduce.reduce_stream``, or ``cluster.reduce_on_dask``);
afterwards a few tokens per layer are read again for the LayerNorm/RMSNorm comparison and
a sample of each norm pair for the DyT fit.  Before any data is read, a dump whose report
would pass ``MEMORY_BUDGET_BYTES`` at its peak (``report_bytes``, from the layout) is
refused.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

import numpy as np

from engine.config import DumpSpec
from engine.dumps import diagnostics
from engine.dumps.dump import Dump, open_dump, read_tokens
from engine.dumps.layout import Layout
from engine.dumps.limits import MEMORY_BUDGET_BYTES, WINDOW_BYTES
from engine.dumps.norm_views import DyTFit, fit_dyt, token_norms
from engine.dumps.partials import kept_entries
from engine.dumps.reduce import reduce_stream
from engine.dumps.refusals import refuse
from engine.dumps.sources import DumpFile, Upload
from engine.dumps.stats import StreamStats, finalize
from engine.threads import Cancelled, Progress, StopCheck, torch_threads

_REDUCTION_SHARE = 0.9  # of the progress bar: the streaming pass; the rest: re-reads


@dataclass(frozen=True)
class NormComparison:
    """LayerNorm vs RMSNorm on a few chosen tokens at every layer."""

    batch: np.ndarray  # [k]
    token: np.ndarray  # [k]
    reasons: tuple[str, ...]  # [k] "first_token" | "largest_outlier" | "median_token"
    difference_rms: np.ndarray  # [L, k] sqrt(mean over d of (LN − RMSNorm)²)
    output_rms: np.ndarray  # [L, k] sqrt(mean over d of RMSNorm(x)²): the scale it is read on
    cosine: np.ndarray  # [L, k]
    mu2_share: np.ndarray  # [L, k] μ²/RMS² of the token


@dataclass(frozen=True)
class DumpReport:
    """Everything the dumps page and ``python -m engine.dumps report`` show."""

    files: tuple[str, ...]
    nbytes: int
    metadata: tuple[tuple[str, str], ...]
    spec: DumpSpec
    layout: Layout
    labels: tuple[str, ...]  # [L] each layer's entry name
    stats: StreamStats
    residual: diagnostics.ResidualDiagnostics
    massive: diagnostics.MassiveDiagnostics
    centering: diagnostics.CenteringDiagnostics
    comparison: NormComparison
    channels: diagnostics.ChannelDiagnostics
    dyt: tuple[DyTFit, ...]
    backend: str  # "local" or "dask"

    @property
    def values(self) -> int:
        """How many values the stream read holds: L · B · T · d."""
        return len(self.labels) * self.layout.batch * self.layout.tokens * self.layout.d

    @property
    def nothing_finite(self) -> bool:
        """Every value is NaN or ±inf: no statistic, chart or fit has a number to show."""
        return int(self.stats.nonfinite.sum()) == self.values

    def judged(self, spec: DumpSpec) -> DumpReport:
        """This report with the thresholds of ``spec`` (``engine.config.dumps.THRESHOLDS``)
        applied to its statistics: the outlier tokens and channels and the massive
        activations.  No data is read, and the arrays that do not depend on a threshold are
        shared with this one."""
        if spec.reading != self.spec.reading:
            raise ValueError("judged() changes thresholds only; read the dump again for the rest")
        if spec == self.spec:
            return self
        residual = diagnostics.outlier_tokens(self.residual.token_ratio, spec.outlier_ratio)
        channels = diagnostics.outlier_channels(self.channels.ratio, spec.outlier_ratio)
        return replace(
            self,
            spec=spec,
            residual=replace(self.residual, **residual),
            massive=diagnostics.massive(self.stats, spec),
            channels=replace(self.channels, **channels),
        )


def chosen_rows(residual: diagnostics.ResidualDiagnostics) -> tuple[list[int], list[str]]:
    """The first token, the token furthest above its layer's median RMS (the largest
    outlier, whatever the threshold), and the median token of the middle layer."""
    layers, _, tokens = residual.rms.shape
    rows, reasons = [0], ["first_token"]
    ratio = np.nan_to_num(residual.token_ratio, nan=0.0).max(axis=0).reshape(-1)  # [B*T]
    worst = int(np.argmax(ratio))
    if ratio[worst] > 1.0 and worst not in rows:
        rows.append(worst)
        reasons.append("largest_outlier")
    middle = residual.rms[layers // 2].reshape(-1)  # [B*T]
    finite = np.where(np.isfinite(middle), middle, np.inf)
    order = np.argsort(finite, kind="stable")
    median = int(order[(np.isfinite(middle).sum() - 1) // 2]) if np.isfinite(middle).any() else 0
    if median not in rows:
        rows.append(median)
        reasons.append("median_token")
    return rows, reasons


def _comparison(dump: Dump, residual, centering, spec: DumpSpec) -> NormComparison:
    rows, reasons = chosen_rows(residual)
    layers, _, tokens = residual.rms.shape
    x = read_tokens(dump, list(range(layers)), rows)  # [L, k, d]
    per_layer = [token_norms(x[layer], layer, rows, spec.norm_eps) for layer in range(layers)]
    index = np.asarray(rows, dtype=np.int64)
    return NormComparison(
        batch=index // tokens,
        token=index % tokens,
        reasons=tuple(reasons),
        difference_rms=np.stack([norms.difference_rms for norms in per_layer]),
        output_rms=np.stack([np.sqrt((norms.rmsnorm**2).mean(-1)) for norms in per_layer]),
        cosine=np.stack([norms.cosine for norms in per_layer]),
        mu2_share=centering.token_share.reshape(layers, -1)[:, index],
    )


# Memory.  A report keeps, per token of every layer (L·B·T rows), its sums, maxima and the
# diagnostics built from them, and the page's tables hold a row per token, written again as
# text for a download; per channel of every layer (L·d), Chan's mean and M2, maxima and
# ratios, and a row of the channel table; per layer, its histogram's occupied bins and its
# largest entries.  Reading holds a window of data and its working copies besides.  Set
# above the peak RSS of ``report``, the page's tables and its JSON download, measured in a
# fresh interpreter (benchmarks/bench_dump_memory.py, figures in benchmarks/RESULTS.md).
MEMORY_BASE_BYTES = 64 * 2**20  # readers, the comparison's re-reads, torch's first buffers
ROW_BYTES = 700  # per token of every layer (its rows in the tables and their JSON: ~2/3)
CHANNEL_BYTES = 500  # per channel of every layer
LAYER_BYTES = 64 * 2**10  # per layer: a dense histogram while reducing, the kept entries
WINDOW_COPIES = 2  # a window mapped or copied (an upload's .npz, a .pt) and its chunks
# per value of the rows read again for a layer's largest entries (chunks._top_entries: the
# rows as read, as float64, and their magnitudes, 4 + 8 + 8 bytes, and what sorting them takes)
TOP_ROW_BYTES = 24  # measured: benchmarks/RESULTS.md, "A very wide dump's largest entries"


def report_bytes(layout: Layout, top_k: int = DumpSpec.top_k) -> int:
    """Predicted peak memory of ``report`` and the page's tables on a dump with this layout,
    above the process's own (the file's bytes not counted: an upload is held already);
    ``top_k``: the entries kept per layer, whose rows are read again."""
    layers = len(layout.layers)
    rows = layers * layout.batch * layout.tokens
    values = rows * layout.d
    itemsize = 8 if "float64" in layout.dtype.split(", ") else 4
    window = min(WINDOW_BYTES, values * itemsize)
    files = {piece.entry.file for slot in layout.layers for piece in slot.pieces}
    unpickled = sum(f.size for f in files if f.data is not None and f.suffix in (".pt", ".pth"))
    return int(
        MEMORY_BASE_BYTES
        + ROW_BYTES * rows
        + CHANNEL_BYTES * layers * layout.d
        + LAYER_BYTES * layers
        + WINDOW_COPIES * window
        + TOP_ROW_BYTES * layout.d * min(kept_entries(top_k), layout.batch * layout.tokens)
        + unpickled  # an uploaded .pt's tensors, copied out of its bytes by torch.load
    )


def check_memory(layout: Layout, top_k: int = DumpSpec.top_k) -> None:
    """Refuse a dump whose report would take more than ``MEMORY_BUDGET_BYTES``."""
    need = report_bytes(layout, top_k)
    if need > MEMORY_BUDGET_BYTES:
        files = {piece.entry.file.name for slot in layout.layers for piece in slot.pieces}
        raise refuse(
            "too_much_memory",
            file=", ".join(sorted(files)[:3]) + (" …" if len(files) > 3 else ""),
            need=round(need / 2**30, 1),
            layers=len(layout.layers),
            rows=layout.batch * layout.tokens,
            d=layout.d,
            limit=round(MEMORY_BUDGET_BYTES / 2**30, 1),
        )


def report_work(dump: Dump, spec: DumpSpec | None = None, fit_norms: bool = True) -> int:
    """The values ``report``'s streaming pass reads (its time grows with them): what a page
    weighs a file's reading by (``ui.compute``'s auto-start rule)."""
    lay = dump.layout
    return len(lay.layers) * lay.batch * lay.tokens * lay.d


def report(
    source: str | os.PathLike | Upload | DumpFile | Dump,
    spec: DumpSpec | None = None,
    fit_norms: bool = True,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
    threads: int | None = None,
    dask: str | None = None,
    workers: int = 1,
) -> DumpReport:
    """Every diagnostic of the dump at ``source`` (a path, directory, glob or ``Upload``).

    ``dask`` is a scheduler address, or "local" for an in-process cluster; None reduces in
    this process, with ``workers`` threads.  ``progress`` gets the fraction done;
    ``should_stop`` is polled between chunks and raises ``engine.threads.Cancelled``;
    ``threads``: torch's intra-op threads for the rest (the reduction itself takes one).
    ``fit_norms=False`` leaves ``dyt`` empty: a live model's 61 norm pairs would take
    seconds to fit, so the live page fits the one a user picks (``norm_views.fit_dyt``).
    """
    spec = spec or DumpSpec()
    with torch_threads(threads):
        dump = open_dump(source, spec.reading)
        check_memory(dump.layout, spec.top_k)

        def reduction_progress(fraction: float) -> None:
            if progress is not None:
                progress(_REDUCTION_SHARE * fraction)

        if dask is None:
            partials = reduce_stream(dump.layout, spec, reduction_progress, should_stop, workers)
        else:
            from engine.dumps.cluster import reduce_on_dask

            partials = reduce_on_dask(dump.layout, spec, dask, reduction_progress, should_stop)
        stats = finalize(dump.layout, partials)
        residual = diagnostics.residual(stats, dump.spec)
        centering = diagnostics.centering(stats)
        comparison = _comparison(dump, residual, centering, spec)
        fits, readers = [], {}
        for done, pair in enumerate(dump.layout.norm_pairs if fit_norms else ()):
            if should_stop is not None and should_stop():
                raise Cancelled()
            fits.append(fit_dyt(pair, readers))
            if progress is not None:
                share = (done + 1) / len(dump.layout.norm_pairs)
                progress(_REDUCTION_SHARE + (1 - _REDUCTION_SHARE) * share)
        if progress is not None:
            progress(1.0)
        read = DumpReport(
            files=tuple(file.path for file in dump.files),
            nbytes=dump.nbytes,
            metadata=tuple(sorted(dump.metadata.items())),
            spec=dump.spec,
            layout=dump.layout,
            labels=tuple(slot.label for slot in dump.layout.layers),
            stats=stats,
            residual=residual,
            massive=diagnostics.massive(stats, dump.spec),
            centering=centering,
            comparison=comparison,
            channels=diagnostics.channels(stats, dump.spec),
            dyt=tuple(fits),
            backend="local" if dask is None else "dask",
        )
        return read.judged(spec)
