"""The geometry in high dimension (d up to 8192): histograms over many random inputs.

Three measures of each output y, over the spec's random inputs x:

- ||y||: a spike at sqrt(d) for LayerNorm and RMSNorm (eps pulls it in, see eps_curve.py);
- <y, 1>: zero for LayerNorm (it removed the all-ones component), mu-dependent for RMSNorm;
- cos(x, y): exactly 1 for RMSNorm (it keeps the direction), below 1 for LayerNorm unless
  mu = 0: cos(x, LN(x)) = sigma / rms.

``EpsSpread`` repeats them over a range of eps; ``IdentityCheck`` measures
LayerNorm(x) - RMSNorm(x - mu 1), zero up to rounding because centring then taking the
root mean square *is* LayerNorm (the RMS of x - mu 1 is sigma).

Size: a call sees ``bounded_rows(spec)`` inputs (``MAX_CLOUD_CELLS`` in cloud.py).

References:
- Ba, Kiros, Hinton 2016, "Layer Normalization", arXiv:1607.06450
- Zhang, Sennrich 2019, "Root Mean Square Layer Normalization", arXiv:1910.07467
- Zhu, Chen, He, LeCun, Liu 2025, "Transformers without Normalization", arXiv:2503.10622
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import torch

from engine.config import GEOMETRY_MAX_EPS, GeometrySpec, NormSpec
from engine.geometry.arrays import readonly
from engine.geometry.cloud import bounded_rows, input_vectors, norm_spec, sorted_values
from engine.geometry.degenerate import degeneracy_flags
from engine.geometry.measures import (
    cosine,
    cosine_gap,
    l2_norm,
    ones_component,
    split_along_ones,
)
from engine.norms.dispatch import normalize
from engine.norms.kinds import PER_TOKEN_KINDS, ROW_KINDS
from engine.threads import Cancelled, Progress, StopCheck, torch_threads

DEFAULT_EPS_VALUES = (0.0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)
MAX_EPS_VALUES = 16


@dataclass(frozen=True)
class Measures:
    """||y||, <y, 1> and cos(x, y) of one norm's outputs (or of the inputs, y = x), one entry
    per input."""

    norm: np.ndarray  # [N] ||y||
    ones: np.ndarray  # [N] <y, 1>
    cos_input: np.ndarray  # [N] cos(x, y); NaN for a zero vector
    # [N] 1 − cos(x, y) to its own digits (measures.cosine_gap); None in the ε sweep, whose
    # rows are summarised by their mean and spread
    cos_gap: np.ndarray | None = None


def measured(x64: torch.Tensor, y: torch.Tensor, gap: bool = True) -> Measures:
    """The measures of outputs ``y`` [N, d] of inputs ``x64`` (float64) [N, d]; the
    cosines' gaps from 1 when ``gap``."""
    y64 = y.double()  # [N, d] measured in float64: the rounding shown is the norm's
    return Measures(
        norm=readonly(l2_norm(y64)),
        ones=readonly(ones_component(y64)),
        cos_input=readonly(cosine(x64, y64)),
        cos_gap=readonly(cosine_gap(x64, y64)) if gap else None,
    )


@dataclass(frozen=True)
class Histograms:
    """The three measures for each norm, at the spec's eps and alpha."""

    d: int
    rows: int  # inputs drawn: min(spec.count, MAX_CLOUD_CELLS // d)
    sqrt_d: float
    layernorm: Measures
    rmsnorm: Measures
    dyt: Measures
    flags: tuple[str, ...]


def _histograms(x: torch.Tensor, spec: GeometrySpec) -> Histograms:
    x64 = x.double()  # [N, d]
    outputs = {kind: normalize(x, norm_spec(kind, spec)).y for kind in PER_TOKEN_KINDS}  # [N, d]
    return Histograms(
        d=spec.d,
        rows=x.shape[0],
        sqrt_d=math.sqrt(spec.d),
        **{kind: measured(x64, y) for kind, y in outputs.items()},
        flags=degeneracy_flags(x, spec.eps),
    )


@dataclass(frozen=True)
class Spread:
    """One norm's ||y|| and cos(x, y) at each eps, summarised over the inputs."""

    norm_mean: np.ndarray  # [E] mean ||y|| (NaN-free rows only)
    norm_std: np.ndarray  # [E] standard deviation of ||y|| across inputs
    cos_mean: np.ndarray  # [E]
    cos_std: np.ndarray  # [E]


@dataclass(frozen=True)
class EpsSpread:
    """How the histograms widen as eps grows (gamma = 1, beta = 0)."""

    sqrt_d: float
    eps_values: np.ndarray  # [E], ascending
    layernorm: Spread
    rmsnorm: Spread


def _spread(rows: list[Measures]) -> Spread:
    norm = np.stack([m.norm for m in rows])  # [E, N]
    cos = np.stack([m.cos_input for m in rows])  # [E, N]
    with warnings.catch_warnings():
        # every input degenerate at eps = 0 (all NaN): NaN summaries, not warnings
        warnings.simplefilter("ignore", RuntimeWarning)
        return Spread(
            norm_mean=readonly(np.nanmean(norm, axis=1)),
            norm_std=readonly(np.nanstd(norm, axis=1)),
            cos_mean=readonly(np.nanmean(cos, axis=1)),
            cos_std=readonly(np.nanstd(cos, axis=1)),
        )


def _eps_spread(
    x: torch.Tensor,
    spec: GeometrySpec,
    eps_values: tuple[float, ...],
    progress: Progress | None,
    should_stop: StopCheck | None,
) -> EpsSpread:
    x64 = x.double()  # [N, d]
    rows: dict[str, list[Measures]] = {kind: [] for kind in ROW_KINDS}  # DyT has no eps
    for done, eps in enumerate(eps_values):
        if should_stop is not None and should_stop():
            raise Cancelled()
        for kind in ROW_KINDS:
            y = normalize(x, norm_spec(kind, spec, eps=eps)).y  # [N, d]
            rows[kind].append(measured(x64, y, gap=False))
        if progress is not None:
            progress((done + 1) / len(eps_values))
    return EpsSpread(
        sqrt_d=math.sqrt(spec.d),
        eps_values=readonly(eps_values),
        **{kind: _spread(per_eps) for kind, per_eps in rows.items()},
    )


@dataclass(frozen=True)
class IdentityCheck:
    """LayerNorm(x) against RMSNorm(x - mu 1), entry by entry, over the spec's inputs."""

    d: int
    rows: int
    eps: float
    max_abs_difference: float  # float32, as the app computes: rounding only (NaN: nothing
    max_abs_difference_float64: float  # compared); the same ops in float64: ~1e-15
    max_abs_output: float  # the size of the outputs compared, for scale (NaN: every one NaN)

    @property
    def float32_ulps(self) -> float:
        """The float32 difference in units in the last place of the largest output."""
        ulp = float(np.spacing(np.float32(self.max_abs_output)))
        return self.max_abs_difference / ulp if ulp > 0 else float("nan")


def _identity_difference(x: torch.Tensor, eps: float, compute_dtype: str) -> tuple[float, float]:
    """max |LN(x) - RMSNorm(x - mu 1)| and max |LN(x)|, both norms computed in
    ``compute_dtype`` on ``x``'s dtype; x - mu 1 is exact in float64, then rounded to it."""
    layer = normalize(x, NormSpec(kind="layernorm", eps=eps, compute_dtype=compute_dtype))
    _, centered = split_along_ones(x)  # [N, d] float64
    rms = normalize(
        centered.to(x.dtype), NormSpec(kind="rmsnorm", eps=eps, compute_dtype=compute_dtype)
    )
    # nearly equal floats subtract exactly (Sterbenz), so the tiny differences measured here
    # are not rounded away in x's dtype; constant rows at eps = 0 are NaN on both sides
    if layer.y.isnan().all():  # every input constant at eps = 0: no output to compare
        return float("nan"), float("nan")
    difference = (layer.y - rms.y).abs().nan_to_num(nan=0.0)  # [N, d]
    return float(difference.max()), float(layer.y.abs().nan_to_num(nan=0.0).max())


def _torch_identity_difference(x: torch.Tensor, eps: float) -> float:
    """max |LN(x) - RMSNorm(x - mu 1)| by PyTorch's own ``F.layer_norm`` and ``F.rms_norm`` on
    ``x`` in its dtype (float64: the ops float32 runs, which the engine's float64 path does
    not, since it runs its reference formulas there, the same sums on both sides)."""
    d = x.shape[-1]
    _, centered = split_along_ones(x)  # [N, d] float64
    layer = torch.nn.functional.layer_norm(x, (d,), eps=eps)
    rms = torch.nn.functional.rms_norm(centered.to(x.dtype), (d,), eps=eps)
    if layer.isnan().all():  # as above: nothing compared
        return float("nan")
    return float((layer - rms).abs().nan_to_num(nan=0.0).max())


def _identity(x: torch.Tensor, spec: GeometrySpec) -> IdentityCheck:
    """max |LayerNorm(x) - RMSNorm(x - mu 1)| in float32 and in float64 (gamma = 1), both by
    PyTorch's fused LayerNorm and RMSNorm.

    Mathematically zero: the RMS of x - mu 1 is sigma.  The two ops sum in different orders
    and leave a few ulps of |y_i|: a few float32 ulps, ~1e-15 in float64.
    """
    single, biggest = _identity_difference(x, spec.eps, "float32")
    double = _torch_identity_difference(x.double(), spec.eps)
    return IdentityCheck(
        d=spec.d,
        rows=x.shape[0],
        eps=spec.eps,
        max_abs_difference=single,
        max_abs_difference_float64=double,
        max_abs_output=biggest,
    )


@dataclass(frozen=True)
class HighDimensionReport:
    """Histograms, their spread over eps and the identity check, from one set of inputs."""

    histograms: Histograms
    spread: EpsSpread
    identity: IdentityCheck


def high_dimension_report(
    spec: GeometrySpec,
    eps_values: tuple[float, ...] = DEFAULT_EPS_VALUES,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
    threads: int | None = None,
) -> HighDimensionReport:
    """The histograms of the spec's random inputs (any d <= 8192), the measures of LayerNorm
    and RMSNorm at each of ``eps_values`` (``spec.eps`` is not used there) and the identity
    check, drawing the inputs once (at d = 8192 drawing them takes about as long as
    everything else together)."""
    values = sorted_values(
        eps_values, MAX_EPS_VALUES, GEOMETRY_MAX_EPS, "geometry.eps_values_invalid"
    )

    def spread_progress(fraction: float) -> None:
        if progress is not None:
            progress(0.2 + 0.7 * fraction)

    with torch_threads(threads):
        x = input_vectors(spec, bounded_rows(spec))  # [N, d]
        found = _histograms(x, spec)
        if progress is not None:
            progress(0.2)
        spread = _eps_spread(x, spec, values, spread_progress, should_stop)
        identity = _identity(x, spec)
    if progress is not None:
        progress(1.0)
    return HighDimensionReport(histograms=found, spread=spread, identity=identity)
