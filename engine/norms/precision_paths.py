"""Five ways real code computes one LayerNorm / RMSNorm row in half precision, each run for real.

The formula is the reference's (``engine/norms/reference.py``); what differs between these
paths is the *order of evaluation* and the dtype each intermediate is stored in, which is
all that decides whether float16 overflows or stalls.  Every path below runs PyTorch's own
ops on the stored half-precision tensor; nothing is simulated from a float64 total.

What PyTorch 2.13 does on the CPU (measured; tests/norms/test_precision.py pins each):

- A reduction of a half tensor (``sum``, ``mean``, ``var``) accumulates in float32 and
  rounds once, at the end, to half: ``x.pow(2).mean(-1)`` of 4096 entries of 100 is 10000,
  while ``x.pow(2).sum(-1)`` is 4.1e7 rounded to float16 = inf.
- An elementwise op on half tensors (``x * x``, ``x - mu``, ``s + t``) computes in float32
  and rounds the result to half.  That is the correctly rounded half result: float32 has
  24 >= 2 * 11 + 2 significand bits, so rounding twice never differs from rounding once.
- ``torch.cumsum`` of a half tensor also accumulates in float32, so it cannot show a
  half-precision running sum; ``running_sum`` adds one column at a time instead.
- ``F.layer_norm`` / ``F.rms_norm`` on a half tensor (what ``nn.LayerNorm`` and
  ``nn.RMSNorm`` in a ``.half()`` model call) compute their statistics in float32 inside
  the fused op and only round the output (and, for LayerNorm, the returned mean and rstd).

The paths (``PATHS``):

``upcast``
    float32 statistics, output cast back: HF ``LlamaRMSNorm`` / ``GemmaRMSNorm`` for RMSNorm
    (``x.to(float32)``, ``pow(2).mean``, ``rsqrt``), the ``Fp32LayerNorm`` idiom
    ``F.layer_norm(x.float(), ...).type_as(x)`` for LayerNorm.
``torch_half``
    PyTorch's half ops written out without upcasting: RMSNorm
    ``x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)`` (``x.pow(2)`` is *stored* in
    half, so |x| >= 256 squares to inf); LayerNorm
    ``(x - x.mean(-1)) / torch.sqrt(x.var(-1, correction=0) + eps)`` (the variance is
    accumulated in float32 but stored in half: inf once sigma > 256).
``fused_half``
    ``F.layer_norm`` / ``F.rms_norm`` called on the half tensor.
``sum_then_divide_half``
    the reference formulas with ``compute_dtype=float16``: ``t.sum(-1) / d`` with the *sum*
    stored in half (``engine/norms/reference.py``'s ``_mean_last``).
``naive_running_half``
    a hand-written kernel that keeps its running sum in half: s_i = fl(s_{i-1} + t_i), every
    partial sum rounded to half.  A running float16 sum of ones stalls at 2048 (2048 + 1 is
    a tie between 2048 and 2050 and rounds to the even 2048).

Every path returns a ``PathTrace``: the output, the statistics as stored, and the
intermediate quantities (``Step``) in the order the code forms them, for
``engine.norms.precision`` to diagnose.

References:
- Ba, Kiros, Hinton 2016, "Layer Normalization", arXiv:1607.06450
- Zhang, Sennrich 2019, "Root Mean Square Layer Normalization", arXiv:1910.07467
- Micikevicius et al. 2018, "Mixed Precision Training", arXiv:1710.03740 (float32
  accumulation of float16 products and reductions)
- Higham 2002, "Accuracy and Stability of Numerical Algorithms", 2nd ed., ch. 2 and 4
  (rounding, double rounding, recursive summation)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import torch

PATHS = ("upcast", "torch_half", "fused_half", "sum_then_divide_half", "naive_running_half")

# What each path runs, as one line of PyTorch (x is the half tensor, d its width).
PATH_CODE = {
    ("upcast", "rmsnorm"): (
        "x32 = x.float(); (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)"
    ),
    ("upcast", "layernorm"): "F.layer_norm(x.float(), (d,), eps=eps).to(x.dtype)",
    ("torch_half", "rmsnorm"): "x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)",
    ("torch_half", "layernorm"): (
        "(x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, correction=0, keepdim=True) + eps)"
    ),
    ("fused_half", "rmsnorm"): "F.rms_norm(x, (d,), eps=eps)",
    ("fused_half", "layernorm"): "F.layer_norm(x, (d,), eps=eps)",
    ("sum_then_divide_half", "rmsnorm"): (
        "ms = (x * x).sum(-1, keepdim=True) / d; x * torch.rsqrt(ms + eps)"
    ),
    ("sum_then_divide_half", "layernorm"): (
        "mu = x.sum(-1, keepdim=True) / d; xc = x - mu; "
        "var = (xc * xc).sum(-1, keepdim=True) / d; xc * torch.rsqrt(var + eps)"
    ),
    ("naive_running_half", "rmsnorm"): (
        "s = 0 (half); for i: s = s + x[i] * x[i]; ms = s / d; x * rsqrt(ms + eps)"
    ),
    ("naive_running_half", "layernorm"): (
        "s = 0 (half); for i: s = s + x[i]; mu = s / d; "
        "q = 0; for i: q = q + (x[i] - mu)**2; var = q / d; (x - mu) * rsqrt(var + eps)"
    ),
}

# Step layouts: "row" is one value per row [T]; "entry" one per entry [T, d]; "running" the
# partial sums s_1..s_d of a running sum [T, d] (with its terms); "denominator" is
# var + eps (or mean square + eps) as computed [T], where 0 means rstd = 1/sqrt(0) = inf.
# "welford": the variance of the fused CPU LayerNorm's one-pass moments, NaN or inf where
# they overflow
LAYOUTS = ("row", "entry", "running", "denominator", "welford")


@dataclass(frozen=True)
class Step:
    """One intermediate quantity as a path stores it."""

    quantity: str  # e.g. "sum", "square", "squared_deviation", "variance"
    layout: str  # one of LAYOUTS
    computed: torch.Tensor  # [T] or [T, d], in the dtype it is stored in
    terms: torch.Tensor | None = None  # "running": the terms t_i that were added, [T, d]
    stored_dtype: torch.dtype | None = None  # set when ``computed`` was recovered in float64


@dataclass(frozen=True)
class PathTrace:
    """A path's output, its statistics as stored, and its intermediates in order."""

    y: torch.Tensor  # [T, d], in x's dtype
    mean: torch.Tensor | None  # [T] LayerNorm's mu as stored; None for RMSNorm
    # [T] variance (LayerNorm) or mean square (RMSNorm).  The fused ops and F.layer_norm in
    # float32 return rstd, not var: there it is rstd^-2 - eps (float64, clamped at 0), exact
    # to the precision of the returned rstd while var >> eps.
    var: torch.Tensor
    rstd: torch.Tensor  # [T] 1/sqrt(var + eps) as the path has it
    statistics_dtype: torch.dtype  # where the accumulation happens
    steps: tuple[Step, ...]


def running_sum(terms: torch.Tensor) -> torch.Tensor:
    """Partial sums s_i = fl(s_{i-1} + t_i) along the last axis, each stored in terms.dtype.

    One column at a time for every row at once: d additions of [T] tensors, each rounded to
    half as a kernel that accumulates in half does (its cost: benchmarks/RESULTS.md).
    """
    columns = terms.transpose(0, 1).contiguous()  # [d, T]
    partial = torch.empty_like(columns)  # [d, T]
    total = torch.zeros_like(columns[0])  # [T]
    for i in range(columns.shape[0]):
        total = torch.add(total, columns[i], out=partial[i])  # [T], rounded to terms.dtype
    return partial.transpose(0, 1)  # [T, d]


def _upcast(x: torch.Tensor, kind: str, eps: float) -> PathTrace:
    # On float32 inputs the half paths below are exactly the upcast code: HF's RMSNorm is
    # ``torch_half``'s line, ``F.layer_norm(x.float())`` is ``fused_half``'s call.
    trace = (_torch_half if kind == "rmsnorm" else _fused_half)(x.float(), kind, eps)
    return replace(trace, y=trace.y.to(x.dtype))


def _torch_half(x: torch.Tensor, kind: str, eps: float) -> PathTrace:
    if kind == "rmsnorm":
        square = x.pow(2)  # [T, d], stored in half
        mean_square = square.mean(-1, keepdim=True)  # [T, 1], float32 sum rounded once
        denominator = mean_square + eps  # [T, 1]
        rstd = torch.rsqrt(denominator)  # [T, 1]
        y = x * rstd  # [T, d]
        steps = (
            Step("square", "entry", square),
            Step("mean_square", "row", mean_square[:, 0]),
            Step("mean_square", "denominator", denominator[:, 0]),
        )
        return PathTrace(y, None, mean_square[:, 0], rstd[:, 0], torch.float32, steps)
    mean = x.mean(-1, keepdim=True)  # [T, 1]
    deviation = x - mean  # [T, d]
    var = x.var(-1, correction=0, keepdim=True)  # [T, 1], float32 inside, stored in half
    denominator = var + eps  # [T, 1]
    std = torch.sqrt(denominator)  # [T, 1]
    y = deviation / std  # [T, d]
    steps = (
        Step("mean", "row", mean[:, 0]),
        Step("deviation", "entry", deviation),
        Step("variance", "row", var[:, 0]),
        Step("variance", "denominator", denominator[:, 0]),
    )
    rstd = 1.0 / std[:, 0].double()  # [T]: this code divides by std; rstd is its reciprocal
    return PathTrace(y, mean[:, 0], var[:, 0], rstd, torch.float32, steps)


def _fused_half(x: torch.Tensor, kind: str, eps: float) -> PathTrace:
    # aten.native_layer_norm / aten._fused_rms_norm are what F.layer_norm / F.rms_norm call
    # on the CPU; they also return the statistics (tests check y against the F.* calls).
    d = x.shape[-1]
    if kind == "rmsnorm":
        y, rstd = torch.ops.aten._fused_rms_norm(x, [d], None, eps)  # [T, d], [T, 1] float32
        mean = None
    else:
        y, mean, rstd = torch.native_layer_norm(x, [d], None, None, eps)  # rstd in half
        mean = mean[:, 0]
    denominator = rstd[:, 0].double().pow(-2)  # [T] var + eps, 0 where rstd = inf
    quantity = "mean_square" if kind == "rmsnorm" else "variance"
    steps = (Step(quantity, "denominator", denominator, stored_dtype=rstd.dtype),)
    if kind == "layernorm":  # its one-pass moments, taken in float32, may turn NaN
        steps = (Step("variance", "welford", denominator - eps, stored_dtype=torch.float32), *steps)
    var = (denominator - eps).clamp_min(0.0)  # [T], derived from the returned rstd
    return PathTrace(y, mean, var, rstd[:, 0], torch.float32, steps)


def _half_sums(x: torch.Tensor, kind: str, eps: float, running: bool) -> PathTrace:
    """``sum_then_divide_half`` (``running=False``) and ``naive_running_half``: the same
    operations, in the same order, as reference.layer_norm / reference.rms_norm with
    compute_dtype = x.dtype (a test pins them equal bit for bit), each sum stored in half
    once (``torch.sum``) or at every step (``running_sum``)."""
    d = x.shape[-1]

    def total(quantity: str, terms: torch.Tensor) -> tuple[torch.Tensor, Step]:
        if running:
            sums = running_sum(terms)  # [T, d]
            return sums[:, -1:], Step(quantity, "running", sums, terms=terms)
        summed = terms.sum(dim=-1, keepdim=True)  # [T, 1], stored in half
        return summed, Step(quantity, "row", summed[:, 0])

    if kind == "rmsnorm":
        square = x * x  # [T, d]
        sum_of_squares, summed = total("sum_of_squares", square)  # [T, 1]
        mean_square = sum_of_squares / d  # [T, 1]
        denominator = mean_square + eps  # [T, 1]
        rstd = torch.rsqrt(denominator)  # [T, 1]
        y = x * rstd  # [T, d]
        steps = (
            Step("square", "entry", square),
            summed,
            Step("mean_square", "denominator", denominator[:, 0]),
        )
        return PathTrace(y, None, mean_square[:, 0], rstd[:, 0], x.dtype, steps)
    sum_x, summed = total("sum", x)  # [T, 1]
    mean = sum_x / d  # [T, 1]
    deviation = x - mean  # [T, d]
    squared = deviation * deviation  # [T, d]
    sum_squared, summed_squared = total("sum_of_squared_deviations", squared)  # [T, 1]
    var = sum_squared / d  # [T, 1]
    denominator = var + eps  # [T, 1]
    rstd = torch.rsqrt(denominator)  # [T, 1]
    y = deviation * rstd  # [T, d]
    steps = (
        summed,
        Step("deviation", "entry", deviation),
        Step("squared_deviation", "entry", squared),
        summed_squared,
        Step("variance", "denominator", denominator[:, 0]),
    )
    return PathTrace(y, mean[:, 0], var[:, 0], rstd[:, 0], x.dtype, steps)


_RUNNERS = {
    "upcast": _upcast,
    "torch_half": _torch_half,
    "fused_half": _fused_half,
    "sum_then_divide_half": functools.partial(_half_sums, running=False),
    "naive_running_half": functools.partial(_half_sums, running=True),
}


def run_path(path: str, x: torch.Tensor, kind: str, eps: float) -> PathTrace:
    """Evaluate ``kind`` ("layernorm" or "rmsnorm") on ``x`` ([T, d], half) along ``path``."""
    return _RUNNERS[path](x, kind, eps)
