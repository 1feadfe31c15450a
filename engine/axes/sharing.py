"""Which cells of ``[B, T, d]`` share statistics, and the statistics themselves.

A click on cell ``(b, t, c)`` selects the statistic that normalizes it; the *pooled* cells are
those whose values enter that statistic, the *shared* cells those normalized with it.  They
are the same set except under BatchNorm with a padding mask, where PAD cells are normalized
with their channel's statistic but do not enter it.  The axes come from the table in
``engine/norms/kinds.py``; the numbers from ``engine.normalize`` (or ``masked_batch_norm``),
i.e. from the formulas in ``engine/norms/reference.py``.

Every cell gets a *label*: the flat index of its statistic in the kind's statistics array
(``[B, T]`` for LayerNorm, ``[d]`` for BatchNorm, ``[B, d]`` for InstanceNorm, ``[B, G]`` for
GroupNorm), or -1 under DyT, which shares nothing.  ``labels == labels[b, t, c]`` is the
shared set; a page can also colour all sets at once by label.

References:
- Wu, He 2018, "Group Normalization", arXiv:1803.08494 (Figure 2: the four pooling shapes)
- Ioffe, Szegedy 2015, "Batch Normalization", arXiv:1502.03167
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from engine.axes.limits import MAX_DRAWN_CELLS, is_whole, refusal
from engine.axes.sources import make_tensor
from engine.config import AxesSpec, NormSpec
from engine.norms.dispatch import masked_batch_norm, normalize
from engine.norms.kinds import KIND_AXES, axis_sizes, statistics_count, statistics_shape


def statistic_labels(kind: str, batch: int, tokens: int, d: int, groups: int = 1) -> np.ndarray:
    """``[B, T, d]`` int64: the flat index of the statistic each cell is normalized with."""
    axes = KIND_AXES[kind]
    if not axes.indexed:
        return np.full((batch, tokens, d), -1, dtype=np.int64)
    sizes = axis_sizes(batch, tokens, d, groups)
    channel = np.arange(d)[None, None, :]  # [1, 1, d]
    coordinate = {
        "B": np.arange(batch)[:, None, None],  # [B, 1, 1]
        "T": np.arange(tokens)[None, :, None],  # [1, T, 1]
        "d": channel,
        "G": channel // sizes["d/G"],  # [1, 1, d]: the group of each channel
    }
    label = np.zeros((1, 1, 1), dtype=np.int64)
    for axis in axes.indexed:  # row-major over the indexed axes, as the stat arrays are laid out
        label = label * sizes[axis] + coordinate[axis]
    return np.broadcast_to(label, (batch, tokens, d)).copy()  # [B, T, d]


def _check_cell(cell, shape) -> tuple[int, int, int]:
    cell = tuple(cell)
    if len(cell) != 3 or not all(is_whole(i) and 0 <= i < n for i, n in zip(cell, shape)):
        raise refusal(
            "cell_out_of_range",
            cell=str(cell),
            shape=str(tuple(shape)),
        )
    return tuple(int(i) for i in cell)


@dataclass(frozen=True)
class AxesStatistics:
    """One kind applied to one tensor: everything the heatmap, the legend and the box draw."""

    spec: AxesSpec
    x: np.ndarray  # [B, T, d] float64: the input (PAD cells hold spec.pad_value)
    real: np.ndarray  # [B, T] bool: True = real token
    y: np.ndarray  # [B, T, d] float64: the normalized tensor (gamma = 1, beta = 0)
    labels: np.ndarray  # [B, T, d] int64: flat index of each cell's statistic (-1: none)
    counted: np.ndarray  # [B, T, d] bool: cells that enter their statistic
    n_statistics: int  # how many (mean, var) pairs (mean squares for RMSNorm); 0 for DyT
    count_formula: str  # "B·T", "d", "B·d", "B·G", "0"
    stat_shape: tuple[int, ...]  # shape of mean/var/rstd/count, e.g. (B, T)
    param_shape: tuple[int, ...]  # shape of gamma and of beta: (d,)
    # statistics as NormResult holds them (float32 values, widened), y in spec.dtype
    mean: np.ndarray  # stat_shape: the centre subtracted (zeros for RMSNorm)
    var: np.ndarray  # stat_shape: variance about it (RMSNorm: the mean square)
    rstd: np.ndarray  # stat_shape: 1 / sqrt(var + eps)
    count: np.ndarray  # stat_shape int64: cells pooled into each statistic
    masked: bool  # BatchNorm statistics with PAD left out
    drawn_cell_by_cell: bool  # B*T*d <= MAX_DRAWN_CELLS; else a page summarises
    backend: str  # "torch" or "triton"
    channels: tuple[int, ...] | None = None  # example source: the dump's channel of each column
    # PyTorch's own module in training mode on this tensor: (its name, its message, whether
    # it refuses in eval mode too) where it refuses a statistic of one value (BatchNorm at
    # B·T = 1, InstanceNorm at T = 1, GroupNorm at B = T = 1 with G = d; InstanceNorm and
    # GroupNorm, keeping no running statistics, refuse in eval mode as well, BatchNorm then
    # takes its running statistics)
    module_refusal: tuple[str, str, bool] | None = None


@dataclass(frozen=True)
class CellSelection:
    """A clicked cell, the cells it shares statistics with, and that statistic."""

    cell: tuple[int, int, int]  # (b, t, c)
    label: int  # flat index into the statistics arrays; -1 under DyT
    pooled: np.ndarray  # [B, T, d] bool: cells whose values enter the statistic
    shared: np.ndarray  # [B, T, d] bool: cells normalized with the statistic
    count: int  # number of pooled cells
    mean: float  # NaN under DyT
    var: float
    rstd: float
    x: float  # the cell's input value
    y: float  # the cell's output value


def axes_statistics(spec: AxesSpec) -> AxesStatistics:
    """Normalize ``spec``'s tensor with ``spec.kind`` and label every cell by its statistic;
    the statistics are computed in ``spec.dtype``."""
    tensor = make_tensor(spec)
    x = tensor.x  # [B, T, d]
    b, t, d = x.shape
    groups = spec.groups if spec.kind == "groupnorm" else 1
    norm = NormSpec(kind=spec.kind, eps=spec.eps, groups=groups, compute_dtype="input")
    masked = spec.kind == "batchnorm" and spec.mask_padding
    if spec.kind == "batchnorm":
        result = masked_batch_norm(x, norm, tensor.real if masked else None)
    else:
        result = normalize(x, norm)
    axes = KIND_AXES[spec.kind]
    stat_shape = statistics_shape(spec.kind, b, t, d, groups)
    labels = statistic_labels(spec.kind, b, t, d, groups)
    counted = labels >= 0
    if masked:
        counted &= tensor.real.numpy()[:, :, None]

    def stat(values: torch.Tensor) -> np.ndarray:
        if not stat_shape:  # DyT: its row statistics describe the input, they normalize nothing
            return np.zeros(0)
        return values.detach().double().numpy().reshape(stat_shape)

    n_statistics = statistics_count(spec.kind, b, t, d, groups)
    per_statistic = np.bincount(labels[counted], minlength=n_statistics)  # [n_statistics]
    return AxesStatistics(
        spec=spec,
        x=tensor.x.double().numpy(),
        real=tensor.real.numpy(),
        y=result.y.detach().double().numpy(),
        labels=labels,
        counted=counted,
        n_statistics=n_statistics,
        count_formula=axes.count_formula,
        stat_shape=stat_shape,
        param_shape=(d,),
        mean=stat(result.mean),
        var=stat(result.var),
        rstd=stat(result.rstd),
        count=per_statistic.reshape(stat_shape) if stat_shape else np.zeros(0, dtype=np.int64),
        masked=masked,
        drawn_cell_by_cell=b * t * d <= MAX_DRAWN_CELLS,
        backend=result.backend,
        channels=tensor.channels,
        module_refusal=_module_refusal(spec, x),
    )


# The modules that refuse a statistic of one value in training mode, when that is (batch,
# tokens, the spec) and how the module is built for d channels.  GroupNorm checks only its
# whole input: B·(d/G)·T = 1 (at B > 1 a group of one channel and one position passes).
_ONE_VALUE = {
    "batchnorm": (torch.nn.BatchNorm1d, lambda b, t, spec: b * t == 1),
    "instancenorm": (torch.nn.InstanceNorm1d, lambda b, t, spec: t == 1),
    "groupnorm": (torch.nn.GroupNorm, lambda b, t, spec: b * t == 1 and spec.groups == spec.d),
}


def _module_refusal(spec: AxesSpec, x: torch.Tensor) -> tuple[str, str, bool] | None:
    """What ``nn.BatchNorm1d``, ``nn.InstanceNorm1d`` or ``nn.GroupNorm`` in training mode
    raise on ``x`` ([B, T, d], as the [B, d, T] they take) where each statistic holds one value: the
    formula computes it (σ² = 0), the modules refuse it; and whether the module, built with
    its defaults, refuses it in eval mode too.  Run only then."""
    module, refuses = _ONE_VALUE.get(spec.kind, (None, None))
    if module is None or not refuses(*x.shape[:2], spec):
        return None
    sizes = (spec.groups, x.shape[2]) if spec.kind == "groupnorm" else (x.shape[2],)
    made = module(*sizes, eps=spec.eps, dtype=torch.float64)
    message = _raised(made.train(), x)
    return (
        None
        if message is None
        else (f"nn.{module.__name__}", message, _raised(made.eval(), x) is not None)
    )


def _raised(module: torch.nn.Module, x: torch.Tensor) -> str | None:
    """The message ``module`` raises on ``x`` ([B, T, d] as its [B, d, T]), or None."""
    try:
        with torch.no_grad():
            module(x.double().permute(0, 2, 1))
    except Exception as error:  # noqa: BLE001 - whatever it raises is the fact we report
        return str(error)
    return None


def select_cell(stats: AxesStatistics, cell: tuple[int, int, int]) -> CellSelection:
    """The cells ``cell`` shares its statistic with, and that statistic's numbers."""
    cell = _check_cell(cell, stats.x.shape)
    label = int(stats.labels[cell])
    if label < 0:
        alone = np.zeros(stats.x.shape, dtype=bool)
        alone[cell] = True
        nan = float("nan")
        return CellSelection(cell, -1, alone, alone, 1, nan, nan, nan, *_values(stats, cell))
    shared = stats.labels == label  # [B, T, d]
    pooled = shared & stats.counted  # [B, T, d]
    mean, var, rstd = (float(a.reshape(-1)[label]) for a in (stats.mean, stats.var, stats.rstd))
    count = int(pooled.sum())
    return CellSelection(cell, label, pooled, shared, count, mean, var, rstd, *_values(stats, cell))


def _values(stats: AxesStatistics, cell) -> tuple[float, float]:
    return float(stats.x[cell]), float(stats.y[cell])
