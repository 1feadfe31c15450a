"""The precision story of one LayerNorm / RMSNorm: every real way to compute it in half
precision, what each returns, and which quantity first overflowed or stalled.

``precision_story(rows, PrecisionSpec(kind, eps, dtype))`` stores ``rows`` in float16 (or
bfloat16), runs each path of ``engine.norms.precision_paths`` (``upcast``, ``torch_half``,
``fused_half``, ``sum_then_divide_half``, ``naive_running_half``) for real, and compares
every intermediate with the same quantity in float64 computed from the same stored
inputs.  For each row of each path it reports:

- the *diagnosis*: the first intermediate, in the order the code forms them, that
  overflowed (stored as inf while the float64 value is finite), stalled (a running sum that
  a nonzero term left unchanged: the term was lost entirely), or left a zero denominator
  (var + eps = 0 as computed, so rstd = 1/sqrt(0) = inf and 0 * inf = NaN); with the value
  the path stored, the float64 value, the dtype's largest finite number, and where
  (entry or summation step, 0-based);
- the *outcome* of the outputs against the float64 outputs: ``nonfinite`` (some inf or NaN),
  ``silent_zero`` (every output 0 although the float64 outputs are not: no NaN warns),
  ``wrong`` (finite but off by more than 1 % of max(1, max |y_exact|)), or ``ok``.

What each failure does to the outputs, input by input: ``engine/norms/precision_presets.py``.

References:
- Ba, Kiros, Hinton 2016, "Layer Normalization", arXiv:1607.06450
- Zhang, Sennrich 2019, "Root Mean Square Layer Normalization", arXiv:1910.07467
- Micikevicius et al. 2018, "Mixed Precision Training", arXiv:1710.03740
- Sun, Chen, Liu, Liu 2024, "Massive Activations in Large Language Models",
  arXiv:2402.17762 (single entries in the thousands, whose squares overflow float16)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from engine.config import DTYPES, PrecisionSpec
from engine.errors import EngineError
from engine.norms import reference
from engine.norms.precision_facts import Resolution, resolution, spacing
from engine.norms.precision_paths import PATH_CODE, PATHS, PathTrace, Step, run_path

MAX_ROW_WIDTH = 16384  # d: the naive path adds one column at a time (benchmarks/RESULTS.md)
MAX_ENTRIES = 1 << 20  # T * d
WRONG_TOLERANCE = 0.01  # "wrong": max |y - y_exact| > 1 % of max(1, max |y_exact|)
OUTCOMES = ("ok", "wrong", "silent_zero", "nonfinite")
# moments_overflow: the fused CPU LayerNorm's one-pass (Welford) merge squared a gap of
# partial means beyond float32: times a weight 0, inf * 0 = NaN; times nonzero weights,
# sigma^2 = inf and rstd 0 (the mechanism engine/norms/worked.py's FUSED_CAUSES describes)
FAILURES = ("overflow", "stall", "zero_variance", "moments_overflow")


@dataclass(frozen=True)
class PrecisionEvent:
    """The first intermediate of one row that overflowed, stalled or hit a zero variance."""

    quantity: str  # "sum", "square", "deviation", "squared_deviation", "sum_of_squares", ...
    failure: str  # one of FAILURES
    computed: float  # what the path stored: inf, the stalled running sum, or 0 (var + eps)
    exact: float  # the same quantity in float64 from the same stored inputs
    dtype: str  # the dtype the quantity was stored in
    dtype_max: float  # that dtype's largest finite number
    index: int | None  # entry or summation step (0-based); None for a whole-row value
    term: float | None = None  # stall: the term that was lost (1.0 for a row of ones)
    spacing: float | None = None  # stall: the gap above the running sum (2.0 at 2048)
    exact_before: float | None = None  # stall: the exact partial sum before that term

    @property
    def intended(self) -> float | None:
        """Stall: what adding the term to the stored sum should give, computed + term."""
        return None if self.term is None else self.computed + self.term

    @property
    def drifted(self) -> bool:
        """Stall: earlier roundings had already moved the stored sum off the exact one."""
        return self.exact_before is not None and self.exact_before != self.computed


@dataclass(frozen=True)
class RowPrecision:
    """One row of one path: its diagnosis and what happened to its outputs."""

    diagnosis: PrecisionEvent | None  # None: nothing overflowed, stalled or hit 0
    outcome: str  # one of OUTCOMES
    max_abs_error: float  # max |y - y_exact| (inf or NaN when an output is)
    nonfinite_outputs: int
    # F.layer_norm with mu and rstd right but y wrong: it computes x*rstd - rstd*mu in float32,
    # two terms of about |rstd*mu| (this), whose difference keeps float32's rounding at that
    # size (``cancelled_spacing``): 60000 x 4 in float16 gives 0.9922, not 0
    cancelled: float | None = None
    cancelled_spacing: float | None = None


@dataclass(frozen=True)
class PathResult:
    """One path on every row: outputs and statistics as computed, and each row's story."""

    path: str  # one of PATHS
    statistics_dtype: str  # where the sums accumulate ("float32" inside PyTorch reductions)
    code: str  # the PyTorch line this path runs
    y: np.ndarray  # [T, d] the outputs as stored (as float64 numbers)
    mean: np.ndarray | None  # [T] LayerNorm's mu as stored; None for RMSNorm
    var: np.ndarray  # [T] variance (LayerNorm) or mean square (RMSNorm)
    rstd: np.ndarray  # [T]
    rows: tuple[RowPrecision, ...]


@dataclass(frozen=True)
class ExactResult:
    """The same norm in float64 on the same stored inputs: the ground truth."""

    y: np.ndarray  # [T, d]
    mean: np.ndarray | None  # [T]; None for RMSNorm
    var: np.ndarray  # [T] variance or mean square
    rstd: np.ndarray  # [T]


@dataclass(frozen=True)
class PrecisionStory:
    """Every path of ``spec`` on ``x``, the float64 truth, and the dtype's resolution."""

    spec: PrecisionSpec
    x: np.ndarray  # [T, d] the inputs as stored in spec.dtype
    exact: ExactResult
    paths: tuple[PathResult, ...]  # in PATHS order
    resolution: Resolution

    def path(self, name: str) -> PathResult:
        """The result of path ``name`` (one of PATHS)."""
        return self.paths[PATHS.index(name)]


def _stored_rows(rows, spec: PrecisionSpec) -> torch.Tensor:
    """``rows`` as a [T, d] tensor in ``spec.dtype``, or the EngineError that says why not."""
    try:
        typed = torch.as_tensor(np.asarray(rows, dtype=np.float64))  # [T, d]
    except ValueError as error:  # ragged nested sequences
        raise EngineError("precision.ragged_rows", {}) from error
    if typed.dim() == 1:
        typed = typed.unsqueeze(0)  # one row
    if typed.dim() != 2 or typed.numel() == 0:
        raise EngineError("precision.empty_rows", {})
    t, d = typed.shape
    if d > MAX_ROW_WIDTH:
        raise EngineError(
            "precision.row_too_wide",
            {"d": d, "limit": MAX_ROW_WIDTH},
        )
    if t * d > MAX_ENTRIES:
        raise EngineError(
            "precision.too_many_entries",
            {"entries": t * d, "limit": MAX_ENTRIES},
        )
    stored = typed.to(DTYPES[spec.dtype])  # [T, d]
    bad = ~torch.isfinite(stored)
    if bad.any():
        row, index = (int(i) for i in torch.nonzero(bad)[0])
        value = float(typed[row, index])
        params = {"row": row, "index": index, "value": value, "dtype": spec.dtype,
                  "max": torch.finfo(stored.dtype).max}  # fmt: skip
        key = "precision.input_overflow" if math.isfinite(value) else "precision.nonfinite_input"
        raise EngineError(key, params)
    return stored


def _exact_intermediates(x64: np.ndarray, eps: float) -> dict[str, dict[str, np.ndarray]]:
    """Every intermediate any path forms, in float64 from the stored inputs: by ``Step`` layout
    ("row" [T], "entry" [T, d], "running" [T, d] partial sums, "denominator" [T]), then name."""
    d = x64.shape[-1]
    mean = x64.sum(-1) / d  # [T]
    deviation = x64 - mean[:, None]  # [T, d]
    squared_deviation = deviation * deviation  # [T, d]
    square = x64 * x64  # [T, d]
    variance = squared_deviation.sum(-1) / d  # [T]
    mean_square = square.sum(-1) / d  # [T]
    return dict(
        row={
            "sum": x64.sum(-1),
            "mean": mean,
            "sum_of_squared_deviations": squared_deviation.sum(-1),
            "variance": variance,
            "sum_of_squares": square.sum(-1),
            "mean_square": mean_square,
        },
        entry={"deviation": deviation, "squared_deviation": squared_deviation, "square": square},
        running={
            "sum": np.cumsum(x64, -1),
            "sum_of_squares": np.cumsum(square, -1),
            "sum_of_squared_deviations": np.cumsum(squared_deviation, -1),
        },
        denominator={"variance": variance + eps, "mean_square": mean_square + eps},
    )


def _first_event(step: Step, row: int, exact: dict) -> PrecisionEvent | None:
    """The first failure of ``step`` in row ``row``, or None."""
    computed = step.computed[row].double().numpy()  # [d] or scalar
    torch_dtype = step.stored_dtype or step.computed.dtype
    dtype = str(torch_dtype).removeprefix("torch.")
    index, stall = None, {}
    if step.layout == "row":
        if math.isfinite(computed):
            return None
        failure, value = "overflow", exact["row"][step.quantity][row]
    elif step.layout == "welford":
        # δ·δ·c·m₀ overflowed: NaN where a merge weight is 0; ∞ (rstd 0) where both are
        # nonzero, although the row's σ² fits in the dtype the moments are taken in
        value = exact["row"]["variance"][row]
        fits = value <= torch.finfo(torch_dtype).max
        if not (math.isnan(computed) or (math.isinf(computed) and fits)):
            return None
        failure = "moments_overflow"
    elif step.layout == "denominator":
        if computed != 0.0:
            return None
        failure, value, computed = "zero_variance", exact["denominator"][step.quantity][row], 0.0
    else:  # "entry" or "running": the first entry or summation step that failed
        overflow = ~np.isfinite(computed)
        stalled = np.zeros_like(overflow)
        exact_values = exact[step.layout][step.quantity]
        if step.layout == "running":
            terms = step.terms[row].double().numpy()  # [d]
            previous = np.concatenate([[0.0], computed[:-1]])  # [d]
            exact_previous = np.concatenate([[0.0], exact_values[row, :-1]])  # [d]
            # a term lost that the exact sum keeps (3e38 + 1 is 3e38 in float64 too: no stall)
            stalled = (terms != 0) & (computed == previous) & (exact_values[row] != exact_previous)
        bad = np.flatnonzero(overflow | stalled)
        if not len(bad):
            return None
        index = int(bad[0])
        value, computed = exact_values[row, index], computed[index]
        failure = "overflow" if overflow[index] else "stall"
        if failure == "stall":
            stall = {
                "term": float(terms[index]),
                "spacing": spacing(float(computed), dtype),
                "exact_before": float(exact_values[row, index - 1]) if index else 0.0,
            }
    return PrecisionEvent(
        quantity=step.quantity,
        failure=failure,
        computed=float(computed),
        exact=float(value),
        dtype=dtype,
        dtype_max=float(torch.finfo(torch_dtype).max),
        index=index,
        **stall,
    )


def _outcome(y: np.ndarray, y_exact: np.ndarray) -> tuple[str, float, int]:
    """(outcome, max |y - y_exact|, count of non-finite outputs) of one row."""
    nonfinite = int((~np.isfinite(y)).sum())
    error = float(np.max(np.abs(y - y_exact)))
    if nonfinite:
        return "nonfinite", error, nonfinite
    if not np.isfinite(y_exact).all():
        return "wrong", error, 0  # 0/0 in float64, yet this path returned numbers
    scale = float(np.max(np.abs(y_exact)))
    if not y.any() and scale >= WRONG_TOLERANCE:
        return "silent_zero", error, 0
    if error > WRONG_TOLERANCE * max(1.0, scale):
        return "wrong", error, 0
    return "ok", error, 0


def _cancelled(trace: PathTrace, row: int, exact: dict) -> float | None:
    """|rstd * mu| where the fused LayerNorm's mu and rstd match float64's (within
    WRONG_TOLERANCE), so its wrong outputs come from x*rstd - rstd*mu, not the statistics."""
    mean = float(exact["row"]["mean"][row])
    rstd = 1.0 / math.sqrt(exact["denominator"]["variance"][row])
    right_mean = float(trace.mean[row]) == float(torch.tensor(mean, dtype=trace.mean.dtype))
    if not right_mean or abs(float(trace.rstd[row]) - rstd) > WRONG_TOLERANCE * rstd:
        return None
    return abs(rstd * mean)


def _path_result(name: str, trace: PathTrace, spec: PrecisionSpec, exact_y, exact) -> PathResult:
    y = trace.y.double().numpy()  # [T, d]
    rows = []
    for row in range(y.shape[0]):
        events = [e for e in (_first_event(step, row, exact) for step in trace.steps) if e]
        outcome, error, nonfinite = _outcome(y[row], exact_y[row])
        # inf, NaN or a silent 0 come from an overflow, not from a stall that came first
        broken = outcome in ("nonfinite", "silent_zero")
        overflows = [e for e in events if e.failure != "stall"] if broken else []
        diagnosis = (overflows or events or [None])[0]
        cancelled = None
        fused = name in ("upcast", "fused_half") and spec.kind == "layernorm"
        if fused and outcome == "wrong" and diagnosis is None:
            cancelled = _cancelled(trace, row, exact)
        spacing_at = None if cancelled is None else spacing(cancelled, "float32")
        rows.append(RowPrecision(diagnosis, outcome, error, nonfinite, cancelled, spacing_at))
    return PathResult(
        path=name,
        statistics_dtype=str(trace.statistics_dtype).removeprefix("torch."),
        code=PATH_CODE[name, spec.kind],
        y=y,
        mean=None if trace.mean is None else trace.mean.double().numpy(),
        var=trace.var.double().numpy(),
        rstd=trace.rstd.double().numpy(),
        rows=tuple(rows),
    )


def precision_story(rows, spec: PrecisionSpec) -> PrecisionStory:
    """Store ``rows`` ([T, d] numbers, or one row of d) in ``spec.dtype`` and run every path.

    Raises ``EngineError`` ("precision.*") for empty or ragged rows, rows wider than
    MAX_ROW_WIDTH or with more than MAX_ENTRIES entries, and entries that are not finite once
    stored in ``spec.dtype``.  Runs on the CPU: the numbers are those of PyTorch's CPU ops.
    """
    x = _stored_rows(rows, spec)  # [T, d]
    x64 = x.double()  # [T, d], exact copies of the stored values
    formula = reference.layer_norm if spec.kind == "layernorm" else reference.rms_norm
    y_exact = formula(x64, spec.eps, compute_dtype=torch.float64).y.numpy()  # [T, d]
    exact = _exact_intermediates(x64.numpy(), spec.eps)
    # reference's statistics are float32 (NormResult); the float64 ones are the intermediates
    statistic = "variance" if spec.kind == "layernorm" else "mean_square"
    with np.errstate(divide="ignore"):  # var + eps = 0 (eps = 0, constant row): rstd = inf
        rstd = 1.0 / np.sqrt(exact["denominator"][statistic])  # [T]
    exact_result = ExactResult(
        y=y_exact,
        mean=exact["row"]["mean"] if spec.kind == "layernorm" else None,
        var=exact["row"][statistic],
        rstd=rstd,
    )
    paths = tuple(
        _path_result(name, run_path(name, x, spec.kind, spec.eps), spec, y_exact, exact)
        for name in PATHS
    )
    return PrecisionStory(spec, x64.numpy(), exact_result, paths, resolution(spec.dtype))
