"""The Vector Lab's LayerNorm-vs-RMSNorm notes: pure, unit-tested.

A note states a geometric fact (the output lies on the sphere of radius sqrt(d), is orthogonal
to 1, keeps x's direction) only when the output has a direction.  When a statistic overflowed
(every output 0, or NaN) the note says so and names the statistic instead of printing
"cos(x, y) = NaN" or "inf = inf + 0" as if they were facts.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from engine.config import HALF_DTYPES
from engine.norms.kinds import ROW_KINDS
from engine.norms.worked import VectorExplanation
from ui.formatting import format_cosine, format_eps, format_number, format_reading, true_minus
from ui.i18n import join, sentence_joiner, translate
from ui.labels import NORM_NAMES

OVERFLOWS = ("mean", "variance", "mean_square")  # reasons a wider compute dtype removes
# ||y|| at least this share of sqrt(d) is "slightly inside" (s^2 >= ~50·eps); below it the
# note gives the norms and why (``_l2_note``)
SLIGHTLY_INSIDE = 0.99
# A mean square this far from its float64 value, relatively, has lost its digits to the
# squares' underflow (the compute dtype's rounding is far smaller: 2^-8 for bfloat16)
UNDERFLOWED = 0.5


def _outputs(ex: VectorExplanation, kind: str) -> np.ndarray:
    c = ex.comparison
    return np.asarray(c.layernorm if kind == "layernorm" else c.rmsnorm, dtype=np.float64)


def broken_statistic(ex: VectorExplanation, kind: str) -> str | None:
    """Why ``kind``'s comparison output has no direction, or None when it has one.

    "mean" (mu = inf: the sum overflowed), "variance" / "mean_square" (inf: rstd = 0, every
    output 0), "zero_variance" (var + eps = 0 of a constant row or the zero vector: NaN),
    "underflow" (var or the mean square is 0 only because the entries' squares underflowed,
    and eps = 0), "zero_input" (x = 0), "constant_row" (LayerNorm of equal entries: 0
    exactly), "nonfinite" (other).  A statistic that underflowed to 0 with eps > 0 leaves
    the output a direction (1e-30, 2e-30, 3e-30: y = ±3.162e-28): no reason.
    The statistics are those of the worked steps, computed in the chosen compute dtype, as
    the comparison's outputs are.
    """
    y = _outputs(ex, kind)
    x = np.asarray(ex.rows[ex.row_index], dtype=np.float64)
    stats = ex.row_stats
    if kind == "layernorm" and not math.isfinite(stats.mean):
        return "mean"
    statistic = stats.var if kind == "layernorm" else stats.mean_square
    if not math.isfinite(statistic):
        return "variance" if kind == "layernorm" else "mean_square"
    degenerate = bool((x == x[0]).all()) if kind == "layernorm" else not x.any()
    if not np.isfinite(y).all():
        if statistic == 0 and ex.eps_computed == 0:
            return "zero_variance" if degenerate else "underflow"
        return "nonfinite"
    if not x.any():
        return "zero_input"
    if kind == "layernorm" and statistic == 0 and degenerate:
        return "constant_row"  # x - mu = 0: the exact output is the zero vector
    return None


def undefined_cell(ex: VectorExplanation, kind: str, text: str) -> str:
    """``text``, or "—" where ``kind``'s output has no direction to measure."""
    return "—" if broken_statistic(ex, kind) is not None else text


def _status(y: np.ndarray) -> str:
    """What the outputs are: "zero" (finite: all 0), "nan" or "inf" (every one), "some_nan"
    or "some_inf" (beside finite ones), "mixed" (NaN and ±∞)."""
    nan, inf = np.isnan(y), np.isinf(y)
    if not (nan.any() or inf.any()):
        return "zero"
    if nan.any() and inf.any():
        return "mixed"
    which = "nan" if nan.any() else "inf"
    return which if (nan | inf).all() else f"some_{which}"


def _undefined_note(ex: VectorExplanation, kind: str, why: str, lang: str) -> str:
    y = _outputs(ex, kind)
    status = _status(y)
    symbol = "σ²" if kind == "layernorm" else "RMS²"
    if why == "zero_variance" and kind == "rmsnorm":  # RMS² = 0: the zero vector, not any
        why = "zero_mean_square"  # constant row
    elif why in ("variance", "mean_square") and np.isnan(y).any():  # rstd = 0 makes 0s: the
        why += "_nan"  # NaN is a term that overflowed itself, times 0
    note = translate(
        "vector_lab.compare_undefined",
        lang,
        norm=NORM_NAMES[kind],
        status=translate(f"vector_lab.compare_status.{status}", lang),
        why=translate(
            f"vector_lab.compare_why.{why}", lang, dtype=ex.spec.compute_dtype, symbol=symbol
        ),
    )
    story = ex.precision
    if why in OVERFLOWS and story is not None and story.spec.kind == kind:
        # only where the Precision section runs this kind's real code paths on the row
        see = translate(
            "vector_lab.compare_see_precision", lang, norm=NORM_NAMES[kind], dtype=story.spec.dtype
        )
        note += sentence_joiner(lang) + see
    return note


def _rms_note(ex: VectorExplanation, lang: str) -> str:
    stats = ex.row_stats
    if stats.mean == 0:
        return translate("vector_lab.compare_equal_note", lang)
    x = np.asarray(ex.rows[ex.row_index], dtype=np.float64)
    exact = float(np.mean(x * x))
    if abs(stats.mean_square - exact) > UNDERFLOWED * exact:  # squares below the normal range
        return translate(
            "vector_lab.compare_rms_underflow_note",
            lang,
            mean=format_reading(stats.mean),
            dtype=ex.spec.compute_dtype,
            computed=format_reading(stats.mean_square),
            exact=format_reading(exact),
        )
    if not stats.var > 0:
        ratio = "∞"
    else:
        # RMS/σ = √(1 + μ²/σ²) from the steps' μ and σ²: the RMS and σ each rounded on their
        # own would put their rounding in the ratio's last digits (1 − 3.6×10⁻⁸, below "≥")
        share = stats.mean**2 / stats.var
        gap = share / (1 + math.sqrt(1 + share))  # RMS/σ − 1, without cancellation
        if gap < torch.finfo(getattr(torch, ex.statistics_dtype)).eps / 2:
            return translate(
                "vector_lab.compare_rms_close_note",
                lang,
                mean=format_reading(stats.mean),
                std=format_reading(stats.std),
                gap=format_reading(gap),
                dtype=ex.statistics_dtype,
            )
        ratio = format_cosine(1 + gap)  # 1.0009, never 1.00 beside "the outputs differ"
    return translate(
        "vector_lab.compare_rms_note",
        lang,
        rms=format_reading(stats.rms),
        std=format_reading(stats.std),
        mean=format_reading(stats.mean),
        ratio=f"({ratio})" if " " in ratio else ratio,  # (1 + 1.2×10⁻⁶)× σ
    )


def _l2_note(ex: VectorExplanation, lang: str) -> str:
    """Where the outputs lie against the sphere of radius sqrt(d), as the table shows them.

    Exactly, ||y|| <= sqrt(d) (eps >= 0 only pulls inward); an output rounded to a half dtype
    (stored in it, or computed in it) can land just outside, and the note then says so
    rather than "slightly inside" beside a larger number.  Compared at the table's 4 decimals.
    """
    c = ex.comparison
    sqrt_d = format_number(c.sqrt_d)
    norms = {"layernorm": c.layernorm_l2, "rmsnorm": c.rmsnorm_l2}
    outside = [kind for kind, l2 in norms.items() if round(l2, 4) > round(c.sqrt_d, 4)]
    if not outside and min(norms.values()) >= SLIGHTLY_INSIDE * c.sqrt_d:
        return translate("vector_lab.compare_l2_note", lang, sqrt_d=sqrt_d)
    if not outside:  # sigma^2 or RMS^2 not large against eps: ||y|| = sqrt(d)·s/sqrt(s^2 + eps)
        return translate(
            "vector_lab.compare_l2_inside_note",
            lang,
            sqrt_d=sqrt_d,
            norms=join([f"{NORM_NAMES[k]} {format_reading(v)}" for k, v in norms.items()], lang),
            eps=format_eps(ex.eps_computed),
        )
    dtypes = [d for d in (ex.spec.compute_dtype, ex.input_dtype) if d in HALF_DTYPES]
    return translate(
        "vector_lab.compare_l2_outside_note",
        lang,
        sqrt_d=sqrt_d,
        norms=join([f"{NORM_NAMES[kind]} {format_reading(norms[kind])}" for kind in outside], lang),
        dtype=join(dict.fromkeys(dtypes or [ex.input_dtype]), lang),
    )


def comparison_notes(ex: VectorExplanation, lang: str) -> list[str]:
    broken = {kind: broken_statistic(ex, kind) for kind in ROW_KINDS}
    c = ex.comparison
    if any(broken.values()):
        notes = [
            _undefined_note(ex, kind, why, lang) for kind, why in broken.items() if why is not None
        ]
        for kind in (kind for kind, why in broken.items() if why is None):  # the healthy one
            rounded = "_rounded" if kind == "layernorm" and not c.layernorm_centred else ""
            notes.append(
                translate(
                    f"vector_lab.compare_direction_{kind}_only{rounded}",
                    lang,
                    rms_cos=format_cosine(c.rmsnorm_cos_input, c.rmsnorm_cos_gap),
                    ln_cos=format_cosine(c.layernorm_cos_input, c.layernorm_cos_gap),
                    ln_ones=format_reading(c.layernorm_ones),
                    mean=format_reading(ex.row_stats.mean),
                )
            )
        return notes
    return [
        _l2_note(ex, lang),
        translate(
            "vector_lab.compare_ones_note" + ("" if c.layernorm_centred else "_rounded"),
            lang,
            ln_ones=format_reading(c.layernorm_ones),
            rms_ones=format_reading(c.rmsnorm_ones),
            mean=format_reading(ex.row_stats.mean),
        ),
        translate(
            "vector_lab.compare_direction_note"
            + ("_centred" if ex.row_stats.mean == 0 else ""),  # x − μ = x: no turn
            lang,
            rms_cos=format_cosine(c.rmsnorm_cos_input, c.rmsnorm_cos_gap),
            ln_cos=format_cosine(c.layernorm_cos_input, c.layernorm_cos_gap),
        ),
        _rms_note(ex, lang),
    ]


def _ratio(value: float) -> str:
    """A ratio to 2 decimals ("0.33", "2"); one too small for them keeps 2 significant digits
    ("−2×10⁻⁶", as the cells above write theirs), where rounding wrote "−0", a sign on
    nothing, or "0", which it is not."""
    if not math.isfinite(value):
        return format_number(value)  # "NaN", "∞", as every other cell writes them
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    if text in ("0", "-0"):
        return format_reading(value, 2) if value != 0 else "0"
    return true_minus(text)


def ratios(values) -> str:
    """y1 : y2 : ... relative to the first finite nonzero entry (short rows only)."""
    pivot = next((v for v in values if math.isfinite(v) and v != 0), None)
    if pivot is None or len(values) > 8:
        return "—"
    return " : ".join(_ratio(v / pivot) for v in values)
