"""The Vector Lab's precision section as sentences: pure, unit-tested.

Every number comes from the engine: the paths' outputs, statistics and diagnoses from
``engine.norms.precision.precision_story``; resolution, overflow threshold and the running-sum
limit from ``engine.norms.precision_facts``; default epsilons from ``default_eps_table``.
This module only chooses the sentence and writes the numbers the way a person reads them.

What the sentences say (``engine/norms/precision.py`` pins each case):
- LayerNorm, Sum x overflowing: mu = inf, every x - mu is infinite, the outputs are NaN.
- LayerNorm, the squared deviations (x - mu)^2 overflowing: var = inf, rstd = 0, every output
  silently 0; the number squared is the deviation x - mu, not the entry.
- RMSNorm, a square x^2 or the sum of squares overflowing: mean square = inf, rstd = 0, every
  output silently 0.
- A running half sum that stalls: the statistic is finite but wrong, and so are the outputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.norms.precision import WRONG_TOLERANCE, PathResult, PrecisionStory
from engine.norms.precision_facts import OPMATH, DefaultEps, DtypeFacts
from engine.norms.worked import VectorExplanation
from ui.formatting import (
    count,
    format_eps,
    format_number,
    format_reading,
    format_vector,
    significant,
    superscript,
)
from ui.i18n import sentence_joiner, translate
from ui.labels import label
from ui.text.vector_lab_steps import welford_merge

_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
# quantities formed one entry at a time; the rest are sums (running or whole-row) or statistics
_ENTRY_QUANTITIES = ("square", "deviation", "squared_deviation")
_SUMS = ("sum", "sum_of_squares", "sum_of_squared_deviations")


@dataclass(frozen=True)
class PathMessage:
    """What happened on one path, as one paragraph, and how loudly to say it."""

    path: str
    title: str  # "<path name>: <outcome>"
    code: str
    text: str
    level: str  # "ok", "warning" (finite but wrong), "error" (silent zero, inf/NaN)


def _n(value: float) -> str:
    """A number in a sentence, its power of ten written out as the formulas beside it write it
    (4.096×10⁵, never 4.096e+05)."""
    return format_reading(float(value))


def subscript(index: int) -> str:
    """0-based ``index`` as the 1-based subscript people write: 0 -> "₁"."""
    return str(index + 1).translate(_SUBSCRIPTS)


def steps_path(ex: VectorExplanation) -> str | None:
    """The path the worked steps compute (reference formulas in the spec's compute dtype).

    "upcast" is F.layer_norm(x.float()) for LayerNorm, one-pass moments where the steps take
    two: it is marked only where its outputs for the worked row are the steps' (bfloat16
    1e20s: NaN from the op, 0 from the steps)."""
    story = ex.precision
    if story is None:
        return None
    if ex.spec.compute_dtype == story.spec.dtype:
        return "sum_then_divide_half"  # the reference formulas, every result stored in half
    if ex.spec.compute_dtype == "float32" and ex.input_dtype == story.spec.dtype:
        computed = story.path("upcast").y[ex.row_index]
        steps = np.asarray(ex.outputs[ex.row_index], dtype=float)
        same = np.allclose(
            computed, steps, rtol=WRONG_TOLERANCE, atol=WRONG_TOLERANCE, equal_nan=True
        )
        return "upcast" if same else None
    return None


def summary(facts: DtypeFacts, lang: str) -> str:
    """Storage dtype, its range and its resolution in significant decimal digits."""
    r = facts.resolution
    return translate(
        "vector_lab.precision.summary",
        lang,
        dtype=r.dtype,
        max=_n(r.max),
        digits=format_number(r.significant_digits, 1),
        bits=r.significand_bits,
        power=f"2{superscript(1 - r.significand_bits)}",  # eps = 2^(1-p)
        eps=_n(r.eps),  # as the largest number beside it: 1.192×10⁻⁷
    )


def overview(
    story: PrecisionStory, row: int, lang: str, marked: str | None
) -> tuple[list[str], dict[str, list[str]]]:
    """The overview table of row ``row``: its lines' names (the float64 line, then one per
    path) and its columns (outcome, accumulation dtype, μ for LayerNorm, the statistic, rstd
    and y), as text."""
    kind = story.spec.kind
    names, outcomes, dtypes = [translate("vector_lab.precision.exact", lang)], [""], ["float64"]
    for result in story.paths:
        name = label("path", result.path, lang)
        if result.path == marked:
            name = translate("vector_lab.precision.steps_marker", lang, name=name)
        names.append(name)
        outcomes.append(translate(f"vector_lab.precision.outcome.{result.rows[row].outcome}", lang))
        dtypes.append(result.statistics_dtype)
    results = [story.exact, *story.paths]
    columns = {
        translate("vector_lab.precision.col_result", lang): outcomes,
        translate("vector_lab.precision.col_accumulate", lang): dtypes,
    }
    if kind == "layernorm":
        columns["μ"] = [_n(result.mean[row]) for result in results]
    columns[translate(f"vector_lab.precision.col_var_{kind}", lang)] = [
        _n(result.var[row]) for result in results
    ]
    columns["rstd"] = [_n(result.rstd[row]) for result in results]
    columns["y"] = [format_vector(result.y[row], head=2, tail=1) for result in results]
    return names, columns


def _diagnosis(story: PrecisionStory, result: PathResult, row: int, lang: str) -> str:
    """The first intermediate that overflowed, stalled or left var + eps = 0, as a sentence."""
    event = result.rows[row].diagnosis
    x = story.x[row]
    common = {
        "dtype": event.dtype,
        "max": _n(event.dtype_max),
        "exact": _n(event.exact),
        "computed": _n(event.computed),
        "accumulate": result.statistics_dtype,
    }
    if event.failure == "zero_variance":
        return ""  # said once for the whole section (zero_variance_*)
    if event.failure == "moments_overflow":
        merge = welford_merge(
            event.dtype, event.dtype_max, math.sqrt(event.dtype_max), event.computed, lang
        )
        return translate("vector_lab.precision.overflow.moments", lang, **common) + merge
    if event.failure == "stall":
        stall = {"step": count(event.index + 1), "term": _n(event.term), **common}
        sentence = translate(
            f"vector_lab.precision.stall.{event.quantity}",
            lang,
            spacing=_n(event.spacing),
            intended=_n(event.intended),
            **stall,
        )
        if event.drifted:  # the stored sum was not the exact one: say both
            drift = translate(
                "vector_lab.precision.stall.drift",
                lang,
                exact_before=_n(event.exact_before),
                **stall,
            )
            sentence += sentence_joiner(lang) + drift
        return sentence
    if event.quantity in _ENTRY_QUANTITIES:
        mean = result.mean[row] if result.mean is not None else 0.0
        return translate(
            f"vector_lab.precision.overflow.{event.quantity}",
            lang,
            sub=subscript(event.index),
            entry=_n(x[event.index]),
            deviation=_n(x[event.index] - mean),
            mean=_n(mean),
            **common,
        )
    if event.quantity in _SUMS and event.index is not None:
        return translate(
            f"vector_lab.precision.overflow.{event.quantity}_running",
            lang,
            step=count(event.index + 1),
            **common,
        )
    return translate(f"vector_lab.precision.overflow.{event.quantity}", lang, **common)


def _consequence(story: PrecisionStory, result: PathResult, row: int, lang: str) -> str:
    """What the failure did to the statistics and the outputs of this path."""
    kind = story.spec.kind
    state = result.rows[row]
    d = result.y.shape[-1]
    tolerance = format_number(100 * WRONG_TOLERANCE)
    error = _n(state.max_abs_error)
    mean = result.mean[row] if result.mean is not None else 0.0
    if state.outcome == "ok":
        key = "ok_despite" if state.diagnosis is not None else "ok"
        return translate(
            f"vector_lab.precision.consequence.{key}", lang, tolerance=tolerance, error=error
        )
    if state.outcome == "nonfinite":
        if kind == "layernorm" and not math.isfinite(mean):
            return translate(
                "vector_lab.precision.consequence.mean_inf",
                lang,
                mean=_n(mean),
                count=count(state.nonfinite_outputs),
                d=count(d),
            )
        one = "_one" if state.nonfinite_outputs == 1 else ""
        return translate(
            f"vector_lab.precision.consequence.nonfinite{one}",
            lang,
            count=count(state.nonfinite_outputs),
            d=count(d),
        )
    if state.outcome == "silent_zero":
        if result.rstd[row] == 0:
            return translate(
                f"vector_lab.precision.consequence.rstd_zero_{kind}",
                lang,
                var=_n(result.var[row]),
                rstd=_n(result.rstd[row]),
            )
        return translate("vector_lab.precision.consequence.silent_zero", lang)
    exact = story.exact
    if state.cancelled is not None:  # right statistics: the error is in x·rstd − rstd·μ
        return translate(
            "vector_lab.precision.consequence.cancelled",
            lang,
            mean=_n(mean),
            rstd=_n(result.rstd[row]),
            product=_n(state.cancelled),
            spacing=_n(state.cancelled_spacing),
            error=error,
            y=_n(result.y[row, 0]),
            y_exact=_n(exact.y[row, 0]),
        )
    rounding = ""
    if state.diagnosis is None:  # no overflow or stall: the statistics were rounded
        digits = format_number(story.resolution.significant_digits, 1)
        rounding = translate(
            "vector_lab.precision.consequence.rounding", lang, dtype=story.spec.dtype, digits=digits
        )
        rounding += sentence_joiner(lang)
    stats = {"mean": (_n(mean), _n(exact.mean[row]) if exact.mean is not None else "—")}
    stats["var"] = (_n(result.var[row]), _n(exact.var[row]))
    if kind != "layernorm":
        del stats["mean"]
    # only the statistics that read differently from float64's are called wrong
    wrong = [name for name, (shown, right) in stats.items() if shown != right]
    variant = "" if len(wrong) == len(stats) else f"_{wrong[0]}" if wrong else "_close"
    return rounding + translate(
        f"vector_lab.precision.consequence.wrong_{kind}{variant}",
        lang,
        **{name: shown for name, (shown, _) in stats.items()},
        **{f"{name}_exact": right for name, (_, right) in stats.items()},
        error=error,
        y=_n(result.y[row, 0]),
        y_exact=_n(exact.y[row, 0]),
    )


def _who(path: str, kind: str, dtype: str, lang: str) -> str:
    key = f"{path}_{kind}" if path in ("upcast", "fused_half") else path
    module = "nn.LayerNorm" if kind == "layernorm" else "nn.RMSNorm"
    return translate(f"vector_lab.precision.who.{key}", lang, module=module, dtype=dtype)


_LEVELS = {"ok": "ok", "wrong": "warning", "silent_zero": "error", "nonfinite": "error"}


def path_messages(story: PrecisionStory, row: int, lang: str) -> list[PathMessage]:
    """For every path: its code line and what happened on row ``row``, in order."""
    messages = []
    for result in story.paths:
        state = result.rows[row]
        parts = [_who(result.path, story.spec.kind, story.spec.dtype, lang)]
        if state.diagnosis is not None:
            parts.append(_diagnosis(story, result, row, lang))
        parts.append(_consequence(story, result, row, lang))
        title = translate(
            "vector_lab.precision.expander",
            lang,
            name=label("path", result.path, lang),
            outcome=translate(f"vector_lab.precision.outcome.{state.outcome}", lang),
        )
        text = sentence_joiner(lang).join(part for part in parts if part)
        messages.append(PathMessage(result.path, title, result.code, text, _LEVELS[state.outcome]))
    return messages


def dtype_facts(facts: DtypeFacts, lang: str) -> str | None:
    """Where this half dtype breaks: the square threshold and the running sum of ones."""
    if facts.square_threshold is None or facts.running_limit is None:
        return None
    limit = facts.running_limit
    return translate(
        "vector_lab.precision.facts",
        lang,
        dtype=facts.resolution.dtype,
        threshold=_n(facts.square_threshold),
        max=_n(facts.resolution.max),
        limit=_n(limit.value),
        spacing=_n(limit.spacing),
        term=_n(limit.term),
    )


def constant_row_note(story: PrecisionStory, row: int, lang: str) -> str | None:
    """F.layer_norm's residue on a constant row (exactly 0 in real arithmetic), if any, while
    the table calls it right (a residue beyond that has the path's own sentence)."""
    if story.spec.kind != "layernorm" or story.path("fused_half").rows[row].outcome != "ok":
        return None
    exact_y = story.exact.y[row]
    fused = story.path("fused_half").y[row]
    if not np.isfinite(exact_y).all() or exact_y.any() or not fused.any():
        return None
    if not np.isfinite(fused).all():
        return None
    return translate(
        "vector_lab.precision.constant_row",
        lang,
        dtype=story.spec.dtype,
        value=significant(float(np.max(np.abs(fused)))),
        tolerance=format_number(100 * WRONG_TOLERANCE),
    )


def default_eps_sentence(table: tuple[DefaultEps, ...], kind: str, dtype: str, lang: str) -> str:
    """What PyTorch (and, for RMSNorm, Hugging Face) use as epsilon when none is given."""
    rows = [row for row in table if row.kind == kind and row.api.startswith("torch.")]
    if not rows:
        return translate("vector_lab.default_eps.none", lang)
    apis = " / ".join(row.api.removeprefix("torch.") for row in rows)
    first = rows[0]
    if first.rule == "opmath_eps":
        # eps=None: the machine epsilon of the type the op computes in (float32 for half input)
        text = translate(
            "vector_lab.default_eps.opmath",
            lang,
            apis=apis,
            opmath=OPMATH[dtype],
            dtype=dtype,
            eps=format_eps(first.effective),
        )
    else:
        text = translate(
            "vector_lab.default_eps.literal", lang, apis=apis, eps=format_eps(first.effective)
        )
    hf = [row for row in table if row.kind == kind and row.api.startswith("transformers")]
    module = next((row for row in hf if row.rule == "literal"), None)
    if module is not None:
        text += sentence_joiner(lang) + translate("vector_lab.default_eps.transformers", lang,
                                api=module.api.removeprefix("transformers "),
                                eps=format_eps(module.effective))  # fmt: skip
    return text
