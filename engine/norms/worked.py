"""Worked examples for the Vector Lab: every number a person would write by hand.

``explain_vectors`` normalizes a few typed vectors with the chosen spec and collects, for
one row, the intermediate values (mu, sigma^2, sigma, RMS, rstd), the LayerNorm vs RMSNorm
comparison, and the precision story.

Precision.  A half ``compute_dtype`` runs the reference's *sum, then divide* (its
"Precision model"), one of several ways real code computes a norm in half precision;
``precision`` (``engine.norms.precision``) runs every one of them and says which quantity
first overflowed or stalled.

All formulas come from ``engine/norms/reference.py`` through ``engine.normalize``; this module only
arranges their results for display.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch

from engine.backend import compute_device
from engine.config import DTYPES, HALF_DTYPES, PRECISION_KINDS, NormSpec, PrecisionSpec
from engine.errors import EngineError
from engine.geometry.measures import cosine, cosine_gap, l2_norm, ones_component
from engine.norms.dispatch import native_op, normalize, reference, variance_from_rstd
from engine.norms.kinds import ROW_KINDS
from engine.norms.precision import PrecisionStory, precision_story


@dataclass(frozen=True)
class RowStatistics:
    """Descriptive statistics of one row, as computed in one dtype."""

    mean: float  # mu
    var: float  # sigma^2 (biased)
    std: float  # sigma
    mean_square: float  # RMS^2 = sigma^2 + mu^2
    rms: float


@dataclass(frozen=True)
class NormComparison:
    """LayerNorm vs RMSNorm on the same row, gamma = 1, beta = 0."""

    layernorm: tuple[float, ...]
    rmsnorm: tuple[float, ...]
    layernorm_l2: float
    rmsnorm_l2: float
    sqrt_d: float
    layernorm_ones: float  # <LN(x), 1>, zero up to rounding
    # whether layernorm_ones is what rounding the d outputs alone can give (_centred); where
    # it is not, the mean LayerNorm subtracted was itself rounded (float16: 1001.5, not 1001.625)
    layernorm_centred: bool
    rmsnorm_ones: float
    rmsnorm_cos_input: float  # cos(x, RMSNorm(x)) = 1: the direction is kept
    layernorm_cos_input: float
    # 1 − each cosine to its own digits (``cosine_gap``): what a cosine near 1 is written with
    rmsnorm_cos_gap: float = math.nan
    layernorm_cos_gap: float = math.nan


# Why a fused op's statistics for a row differ from the steps' (``FusedDisagreement.cause``):
# "moments_overflow": PyTorch's CPU LayerNorm takes mu and sigma^2 in one pass (Welford's
#   algorithm, aten/src/ATen/native/cpu/moments_utils.h, as in the installed wheel's header).
#   Merging partial moments adds delta^2 * c * m0, delta a difference of partial means, c and
#   m0 merge weights. The scalar merge (AddMoments, which merges the vector lanes last)
#   computes delta * delta * c * m0 from the left: in float32 delta * delta is inf once
#   |delta| > sqrt(3.4e38) ~ 1.8e19, and a weight c or m0 of 0 then makes it inf * 0 = NaN
#   (a constant row of 1.9e19s, d = 4, has rstd NaN; of 1.8e19s, 316); with both weights
#   nonzero sigma^2 is inf and rstd 0 (sixteen 1.9e19s and one 3.8e19). The vectorised merge
#   (AddMomentsVec) computes (delta * m0) * (c * delta) instead, which is 0 where m0 = 0;
# "sum_overflow": the steps' float32 sum, so their mu, is inf; a running mean never holds
#   the sum;
# "mean_rounded": a constant row whose float32 mean sum / d is not the row's value, so the
#   steps' x - mu is not 0; the one-pass mean of a constant row is the value itself;
# "other": the op and the steps round in a different order (cancellation, say).
FUSED_CAUSES = ("moments_overflow", "sum_overflow", "mean_rounded", "other")
_RSTD_TOLERANCE = 1e-3  # relative; float32 orders of summation differ by ~1e-7 per term
_OUTPUT_TOLERANCE = 1e-3  # relative to max(1, |y|): the outputs are of order 1
_FLOAT32_MAX = torch.finfo(torch.float32).max


def _zero_variance_rstd(eps: float) -> float:
    """rstd of a variance of exactly 0 in float32: 1/sqrt(eps)."""
    return float(torch.tensor(eps, dtype=torch.float32).rsqrt())


@dataclass(frozen=True)
class FusedDisagreement:
    """The fused op that computed the output took other statistics for the worked row than
    the steps (the reference formulas) show."""

    op: str  # "aten.native_layer_norm", "aten._fused_rms_norm" (``native_op``) or "triton"
    var: float  # the op's sigma^2 (RMSNorm: mean square) as rstd^-2 - eps: it returns no var
    rstd: float
    steps_var: float
    steps_rstd: float
    cause: str  # one of FUSED_CAUSES
    # the op's output for the row equals the steps' (within _OUTPUT_TOLERANCE, NaN as NaN)
    same_output: bool = False
    # the op's rstd is the steps' (within _RSTD_TOLERANCE), yet its output is not: eps = 0
    same_rstd: bool = False
    largest: float = _FLOAT32_MAX  # float32's largest finite number, where δ² overflows
    square_overflows_at: float = math.sqrt(_FLOAT32_MAX)  # |δ| whose square is beyond it


@dataclass(frozen=True)
class VectorExplanation:
    """Everything the Vector Lab shows for one configuration."""

    spec: NormSpec
    input_dtype: str
    rows: tuple[tuple[float, ...], ...]  # inputs as stored in input_dtype
    outputs: tuple[tuple[float, ...], ...]  # the chosen norm's outputs, in input_dtype
    statistics_mean: tuple[float, ...]  # NormResult.mean, flattened
    statistics_var: tuple[float, ...]
    statistics_rstd: tuple[float, ...]
    row_index: int  # the row worked step by step
    row_stats: RowStatistics  # in the compute dtype
    steps_rstd: float  # rstd from the steps' sigma^2 (RMSNorm: RMS^2); NaN but for row kinds
    comparison: NormComparison
    nonfinite_outputs: int  # count of inf/NaN in ``outputs``
    # eps = 0, as the statistics' dtype holds it, and the row's sigma^2 (RMSNorm: mean
    # square) is 0: 0/0
    zero_variance: bool
    # eps = 0 as above, the row not constant, yet its sigma^2 (RMSNorm: mean square) is 0 in the
    # statistics' dtype: every deviation's square (RMSNorm: entry's) rounds to 0 there, so
    # rstd = 1/sqrt(0) = inf and the outputs are +-inf or NaN: (the largest |deviation|, that
    # dtype's smallest positive number) where so, else None
    underflowed: tuple[float, float] | None
    # each statistic pools one value (BatchNorm or InstanceNorm over one row, GroupNorm with
    # groups of one channel over one row): variance 0, every output β, PyTorch's module refuses
    one_value_per_channel: bool
    # eps as the statistics' dtype holds it: 0 where eps > 0 is closer to 0 than to its
    # smallest positive number (5e-324 in float32, 1e-8 in float16), as PyTorch's ops round it
    eps_computed: float
    statistics_dtype: str  # the dtype the statistics are computed in ("float32", ...)
    # γ ("weight") and β ("bias") values typed nonzero that are 0 in the statistics' dtype,
    # where they scale and shift: (name, first such value, how many) per parameter
    parameters_lost: tuple[tuple[str, float, int], ...]
    # ... and those past its largest finite number: ±∞ in their place (the outputs ±∞ or NaN)
    parameters_overflowed: tuple[tuple[str, float, int], ...]
    backend: str  # the path that computed ``outputs``: "torch" or "triton"
    device: str  # where: "CPU" or the GPU's name
    # every real half-precision path on these rows (float16/bfloat16 input or statistics,
    # LayerNorm or RMSNorm; None otherwise or when the rows do not fit the half dtype)
    precision: PrecisionStory | None = None
    # the fused op's statistics for the worked row, where they are not the steps'
    fused: FusedDisagreement | None = None
    # a kind the precision story does not cover, in a half dtype: the largest difference of
    # its outputs from the same norm in float64 on the stored rows (NaN: not computed)
    float64_error: float = math.nan


def _one_value_each(spec: NormSpec, rows: int, d: int) -> bool:
    """Whether each of the kind's statistics pools a single value of ``rows`` rows of ``d``."""
    if spec.kind in ("batchnorm", "instancenorm"):
        return rows == 1
    return spec.kind == "groupnorm" and rows * (d // spec.groups) == 1


def _row_statistics(row: torch.Tensor, spec: NormSpec, compute_dtype: str) -> RowStatistics:
    # The readable oracle itself, not a fast path: these are the numbers a person checks.
    dtype = NormSpec(compute_dtype=compute_dtype).torch_compute_dtype(row.dtype)
    layer = reference.layer_norm(row, spec.eps, compute_dtype=dtype)
    mean_square = reference.rms_norm(row, spec.eps, compute_dtype=dtype).var
    mean, var = float(layer.mean), float(layer.var)
    std = math.sqrt(var) if var >= 0 else math.nan
    return RowStatistics(mean, var, std, float(mean_square), float(layer.rms))


def _steps(row: torch.Tensor, spec: NormSpec, weight, bias):
    """The steps' own result for ``row`` (LayerNorm or RMSNorm): the reference formulas in the
    compute dtype, γ and β included, so its rstd and y are what the steps write."""
    dtype = spec.torch_compute_dtype(row.dtype)
    formula = reference.layer_norm if spec.kind == "layernorm" else reference.rms_norm
    return formula(row, spec.eps, weight, bias, spec.offset, compute_dtype=dtype)


def _differ(a: float, b: float) -> bool:
    if not (math.isfinite(a) and math.isfinite(b)):
        return not (a == b or (math.isnan(a) and math.isnan(b)))
    return abs(a - b) > _RSTD_TOLERANCE * max(abs(a), abs(b))


def _same_output(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal entries, NaN as NaN and ∞ as ∞ of the same sign, finite ones within tolerance."""
    a, b = a.double(), b.double()
    close = (a - b).abs() <= _OUTPUT_TOLERANCE * torch.maximum(a.abs(), b.abs()).clamp(min=1)
    return bool(((a == b) | (a.isnan() & b.isnan()) | (a.isfinite() & b.isfinite() & close)).all())


def _fused_disagreement(
    row, spec: NormSpec, result, index: int, steps, steps_mean: float
) -> FusedDisagreement | None:
    """The fused op's statistics for ``row`` where they, or its output, differ from the steps'
    (``steps``: their ``NormResult`` for the row; ``steps_mean``: the μ they write)."""
    op = native_op(spec, row.dtype) if result.backend == "torch" else "triton"
    rstd, steps_rstd = float(result.rstd[index]), float(steps.rstd)
    same_output = _same_output(result.y[index].cpu(), steps.y.reshape(-1))
    if op is None or (same_output and not _differ(rstd, steps_rstd)):
        return None
    steps_var = float(steps.var)
    values = row.double()
    # the CPU kernel read in FUSED_CAUSES; the CUDA one and Triton's are not explained here
    welford = op == "aten.native_layer_norm" and result.rstd.device.type == "cpu"
    big = (
        float(values.abs().max()) > math.sqrt(_FLOAT32_MAX) / 2
    )  # a partial-mean gap can exceed it
    # δ·δ·c·m0 overflowed: NaN where a weight is 0, ∞ (rstd 0) where the steps' σ² is finite
    welford_overflow = math.isnan(rstd) or (rstd == 0 and math.isfinite(steps_var))
    if welford and welford_overflow and bool(values.isfinite().all()) and big:
        cause = "moments_overflow"
    elif welford and not math.isfinite(steps_mean):
        cause = "sum_overflow"
    elif welford and bool((values == values[0]).all()) and rstd == _zero_variance_rstd(spec.eps):
        cause = "mean_rounded"
    else:
        cause = "other"
    var = float(variance_from_rstd(result.rstd[index], spec.eps))
    same_rstd = not _differ(rstd, steps_rstd)
    return FusedDisagreement(op, var, rstd, steps_var, steps_rstd, cause, same_output, same_rstd)


def _precision(rows, spec: NormSpec, input_dtype: str) -> PrecisionStory | None:
    """The precision story in the half dtype this configuration uses, if any."""
    if spec.kind not in PRECISION_KINDS:
        return None
    if input_dtype in HALF_DTYPES:
        dtype = input_dtype
    elif spec.compute_dtype in HALF_DTYPES:
        dtype = spec.compute_dtype
    else:
        return None
    try:
        return precision_story(rows, PrecisionSpec(spec.kind, spec.eps, dtype))
    except EngineError:  # e.g. a float32 entry beyond float16's range: no half story to tell
        return None


def _compare_norms(row: torch.Tensor, spec: NormSpec) -> NormComparison:
    common = dict(eps=spec.eps, compute_dtype=spec.compute_dtype)
    ln = normalize(row, NormSpec("layernorm", **common)).y
    rms = normalize(row, NormSpec("rmsnorm", **common)).y
    return NormComparison(
        layernorm=tuple(ln.double().tolist()),
        rmsnorm=tuple(rms.double().tolist()),
        layernorm_l2=float(l2_norm(ln)),
        rmsnorm_l2=float(l2_norm(rms)),
        sqrt_d=math.sqrt(row.shape[-1]),
        layernorm_ones=float(ones_component(ln)),
        layernorm_centred=_centred(ln, row.dtype, spec.compute_dtype),
        rmsnorm_ones=float(ones_component(rms)),
        rmsnorm_cos_input=float(cosine(row, rms)),
        layernorm_cos_input=float(cosine(row, ln)),
        rmsnorm_cos_gap=float(cosine_gap(row, rms)),
        layernorm_cos_gap=float(cosine_gap(row, ln)),
    )


def _centred(y: torch.Tensor, stored: torch.dtype, compute_dtype: str) -> bool:
    """|<y, 1>| <= d * eps * max|y|, eps of the coarser of the stored and the compute dtype:
    each output rounded once is off by at most eps/2 of itself, so a larger sum of outputs
    that are exactly orthogonal to 1 comes from the statistics, not from the outputs."""
    compute = stored if compute_dtype == "input" else getattr(torch, compute_dtype)
    eps = max(torch.finfo(compute).eps, torch.finfo(y.dtype).eps)
    bound = y.shape[-1] * eps * float(y.double().abs().max())
    return abs(float(ones_component(y))) <= bound


def _param(values: tuple[float, ...] | None, d: int) -> torch.Tensor | None:
    """A gamma/beta given as None, one scalar (broadcast) or d values."""
    if values is None:
        return None
    if len(values) == 1:
        return torch.full((d,), float(values[0]), dtype=torch.float64)
    return torch.tensor(values, dtype=torch.float64)


def _lost_parameters(weight, bias, dtype: torch.dtype) -> tuple[tuple[str, float, int], ...]:
    """Each parameter's nonzero values that ``dtype`` holds as 0 (``affine`` in
    ``engine/norms/reference.py`` casts γ and β to the normalized values' dtype)."""
    lost = []
    for name, values in (("weight", weight), ("bias", bias)):
        if values is None:
            continue
        typed = torch.tensor(values, dtype=torch.float64)
        zero = (typed != 0) & (typed.to(dtype) == 0)
        if zero.any():
            lost.append((name, float(typed[zero][0]), int(zero.sum())))
    return tuple(lost)


def _overflowed_parameters(weight, bias, dtype: torch.dtype) -> tuple[tuple[str, float, int], ...]:
    """Each parameter's finite values that ``dtype`` holds as ±∞ (β = 70,000 in float16)."""
    over = []
    for name, values in (("weight", weight), ("bias", bias)):
        if values is None:
            continue
        typed = torch.tensor(values, dtype=torch.float64)
        infinite = torch.isfinite(typed) & torch.isinf(typed.to(dtype))
        if infinite.any():
            over.append((name, float(typed[infinite][0]), int(infinite.sum())))
    return tuple(over)


def _underflowed(row, centre, spec: NormSpec, eps: float, result, row_index: int):
    """(the largest |x - centre|, the smallest positive number of the statistics' dtype) of a
    row that is not constant but whose every deviation squares to below half that number (so
    to 0), where eps is 0 and the row's rstd came out infinite; else None."""
    rstd = float(result.rstd.reshape(-1)[row_index]) if spec.kind in ROW_KINDS else 0.0
    if eps != 0 or not math.isinf(rstd):
        return None
    largest = float((row.double() - centre).abs().max())
    info = torch.finfo(spec.torch_compute_dtype(row.dtype))
    smallest = info.smallest_normal * info.eps  # the smallest subnormal: 2**-149 in float32
    return (largest, smallest) if 0 < largest and largest**2 < smallest / 2 else None


def explain_vectors(
    rows: tuple[tuple[float, ...], ...],
    spec: NormSpec,
    input_dtype: str = "float32",
    weight: tuple[float, ...] | None = None,
    bias: tuple[float, ...] | None = None,
    row_index: int = 0,
) -> VectorExplanation:
    """Normalize ``rows`` ([T, d], one sequence) stored in ``input_dtype`` and explain row
    ``row_index`` step by step."""
    x = torch.tensor(rows, dtype=torch.float64).to(DTYPES[input_dtype])  # [T, d]
    d = x.shape[-1]
    device = compute_device()  # on a GPU server the kernels compute the output
    cpu_params = (_param(weight, d), _param(bias, d))
    params = [None if p is None else p.to(device) for p in cpu_params]
    result = normalize(x.to(device), spec, *params)
    row = x[row_index]  # [d]
    statistics_dtype = spec.torch_compute_dtype(x.dtype)
    eps_computed = float(torch.tensor(spec.eps, dtype=statistics_dtype))
    centre = row.double().mean() if spec.kind == "layernorm" else 0.0
    row_zero = bool(((row.double() - centre) == 0).all())  # sigma^2 (or RMS^2) is exactly 0
    row_stats = _row_statistics(row, spec, spec.compute_dtype)
    steps_rstd, fused = math.nan, None
    float64_error = math.nan
    half = input_dtype in HALF_DTYPES or spec.compute_dtype in HALF_DTYPES
    if half and spec.kind not in PRECISION_KINDS:  # its rounding, measured
        wide = replace(spec, compute_dtype="float64")
        exact = normalize(
            x.double(), wide, *(None if p is None else p.double() for p in cpu_params)
        )
        float64_error = float((result.y.cpu().double() - exact.y).abs().max())
    if spec.kind in ROW_KINDS:
        steps = _steps(row, spec, *cpu_params)
        steps_rstd = float(steps.rstd)
        fused = _fused_disagreement(row, spec, result, row_index, steps, row_stats.mean)
    return VectorExplanation(
        spec=spec,
        input_dtype=input_dtype,
        rows=tuple(tuple(r) for r in x.double().tolist()),
        outputs=tuple(tuple(r) for r in result.y.double().tolist()),
        statistics_mean=tuple(result.mean.reshape(-1).tolist()),
        statistics_var=tuple(result.var.reshape(-1).tolist()),
        statistics_rstd=tuple(result.rstd.reshape(-1).tolist()),
        row_index=row_index,
        row_stats=row_stats,
        steps_rstd=steps_rstd,
        fused=fused,
        comparison=_compare_norms(row, spec),
        zero_variance=eps_computed == 0 and spec.kind in ROW_KINDS and row_zero,
        underflowed=_underflowed(row, centre, spec, eps_computed, result, row_index),
        eps_computed=eps_computed,
        statistics_dtype=str(statistics_dtype).removeprefix("torch."),
        parameters_lost=_lost_parameters(weight, bias, statistics_dtype),
        parameters_overflowed=_overflowed_parameters(weight, bias, statistics_dtype),
        one_value_per_channel=_one_value_each(spec, x.shape[0], x.shape[-1]),
        nonfinite_outputs=int((~torch.isfinite(result.y)).sum()),
        backend=result.backend,
        device=torch.cuda.get_device_name(device) if torch.device(device).type == "cuda" else "CPU",
        precision=_precision(x.double().tolist(), spec, input_dtype),
        float64_error=float64_error,
    )
