"""The Vector Lab's worked example as (caption, LaTeX) steps: pure, unit-tested.

Numbers come from ``engine.norms.worked.VectorExplanation`` (computed by the reference formulas in
the chosen precision); this module only writes them the way a person would by hand.
"""

from __future__ import annotations

import math

import torch

from engine.norms.kinds import KIND_AXES, PER_TOKEN_KINDS, ROW_KINDS
from engine.norms.worked import FusedDisagreement, VectorExplanation
from ui.formatting import format_power, format_reading
from ui.i18n import join, translate
from ui.text.latex import LINE_WIDTH, Step, chain, latex_power, latex_width, wrapped_sum
from ui.text.latex import latex_number as _n
from ui.text.latex import wrapped_vector as _vec

_SHOW_TERMS_UP_TO = 8  # write every term of a sum when d is at most this


def _square(value: float) -> str:
    return f"{latex_power(value)}^2"


def _sum_terms(values, term) -> str:
    """Terms joined by + (squares are never negative), over lines when long."""
    terms = [term(v) for v in values]
    return wrapped_sum(terms[:1] + [f"+ {text}" for text in terms[1:]])


def _signed_sum(values) -> str:
    """1 + (−2) + 3 written as a person would: 1 - 2 + 3, over lines when long."""
    pieces = [_n(values[0])] if len(values) else []
    for value in values[1:]:
        pieces.append(f"- {_n(-value)}" if value < 0 else f"+ {_n(value)}")
    return wrapped_sum(pieces)


def worked_steps(ex: VectorExplanation, lang: str) -> list[Step]:
    row = ex.rows[ex.row_index]
    d = len(row)
    stats = ex.row_stats
    spec = ex.spec
    short = d <= _SHOW_TERMS_UP_TO
    steps = [
        Step(
            translate("vector_lab.steps.input", lang, row=ex.row_index + 1, d=d),
            "x = " + _vec(row, after=rf",\quad d = {d}"),
        )
    ]
    out = _vec(ex.outputs[ex.row_index])
    scale = r"\gamma_i" if spec.offset == 0 else rf"({_n(spec.offset)} + \gamma_i)"
    shift = r" + \beta_i" if "beta" in KIND_AXES[spec.kind].params else ""  # RMSNorm has none
    if spec.kind not in PER_TOKEN_KINDS:
        # Pooled statistics: this row's own mu and sigma^2 are not what the norm uses.
        pooled = Step(
            translate(f"vector_lab.steps.pooled_{spec.kind}", lang),
            _pooled_formula(spec.kind, scale),
        )
        return [*steps, pooled, Step(translate("vector_lab.steps.output", lang), rf"y = {out}")]
    if spec.kind == "dyt":  # no statistic at all: each entry squashed on its own
        formula = rf"y_i = {scale}\,\tanh(\alpha x_i){shift},\quad \alpha = {_n(spec.alpha)}"
        return [
            *steps,
            Step(translate("vector_lab.steps.dyt", lang), formula),
            Step(translate("vector_lab.steps.output", lang), rf"y = {out}"),
        ]

    total = stats.mean * d
    sum_text = _signed_sum(row) if short else _n(total)
    exact = math.fsum(row) / d  # the stored row's mean, to float64's last digit
    if math.isfinite(exact) and _n(exact) != _n(stats.mean):  # (10⁸ + 1 − 10⁸)/3 is not 0
        dtype = ex.statistics_dtype
        mean_caption = translate(
            "vector_lab.steps.mean_rounded", lang, exact=format_reading(exact), dtype=dtype,
            computed=format_reading(stats.mean),
        )  # fmt: skip
        mean_value = rf"{_n(exact)} \xrightarrow{{\text{{{dtype}}}}} {_n(stats.mean)}"
    else:
        mean_caption, mean_value = translate("vector_lab.steps.mean", lang), _n(stats.mean)
    steps.append(
        Step(
            mean_caption,
            chain(
                r"\mu",
                r"\frac{1}{d}\sum_{i=1}^{d} x_i",
                *([rf"\frac{{{sum_text}}}{{{d}}}"] if short else []),
                mean_value,
            ),
        )
    )
    # xᵢ − μ as the compute dtype holds it: in float16, 60000 − 7500 is 52,512 and
    # −60000 − 7500 is −∞ (the NaN below comes from it), not float64's 52,500 and −67,500
    dtype = getattr(torch, ex.statistics_dtype)
    held = (torch.tensor(row, dtype=dtype) - torch.tensor(stats.mean, dtype=dtype)).tolist()
    deviations = _sum_terms(held, _square)
    var_middle = [rf"\frac{{{deviations}}}{{{d}}}"] if short else []
    steps.append(
        Step(
            translate("vector_lab.steps.variance", lang),
            chain(r"\sigma^2", r"\frac{1}{d}\sum_{i=1}^{d}(x_i-\mu)^2", *var_middle, _n(stats.var)),
        )
    )
    steps.append(
        Step(
            translate("vector_lab.steps.std", lang),
            rf"\sigma = \sqrt{{\sigma^2}} = \sqrt{{{_n(stats.var)}}} = {_n(stats.std)}",
        )
    )
    squares = rf"\frac{{{_sum_terms(row, _square)}}}{{{d}}}"
    rms_middle = [rf"\sqrt{{{squares}}}"] if short else []
    steps.append(
        Step(
            translate("vector_lab.steps.rms", lang),
            chain(
                r"\mathrm{RMS}",
                r"\sqrt{\frac{1}{d}\sum_{i=1}^{d} x_i^2}",
                *rms_middle,
                rf"\sqrt{{{_n(stats.mean_square)}}}",
                _n(stats.rms),
            ),
        )
    )
    steps.append(_identity_step(stats, spec.compute_dtype, lang))
    if spec.kind in ROW_KINDS:  # LayerNorm centres with mu, RMSNorm does not
        centred = spec.kind == "layernorm"
        symbol, value = (
            (r"\sigma^2", stats.var) if centred else (r"\mathrm{RMS}^2", stats.mean_square)
        )
        steps.append(
            Step(
                translate(f"vector_lab.steps.rstd_{spec.kind}", lang),
                chain(
                    r"\mathrm{rstd}",
                    rf"\frac{{1}}{{\sqrt{{{symbol}+\varepsilon}}}}",
                    # ε as the statistics' dtype holds it (10⁻⁸ is 0 in float16)
                    rf"\frac{{1}}{{\sqrt{{{_n(value)} + {_n(ex.eps_computed)}}}}}",
                    _n(ex.steps_rstd),
                ),
            )
        )
        if ex.fused is not None:
            steps.append(_fused_step(ex.fused, symbol, ex.statistics_dtype, lang))
        x = r"(x_i - \mu)" if centred else "x_i"
        formula = rf"y_i = {x}\cdot\mathrm{{rstd}}\cdot {scale}{shift}"
    steps.append(
        Step(
            translate(
                "vector_lab.steps.output_formula"
                if shift
                else "vector_lab.steps.output_formula_scale",
                lang,
            ),
            formula,
        )
    )
    return steps + [Step(translate("vector_lab.steps.output", lang), rf"y = {out}")]


def _fused_step(fused: FusedDisagreement, symbol: str, dtype: str, lang: str) -> Step:
    """The op that computed the output took other statistics than the steps: both, and why."""
    op = "triton" if fused.op == "triton" else "torch"
    variant = "_same" if fused.same_output else "_same_rstd" if fused.same_rstd else ""
    headline = f"vector_lab.steps.fused_{op}{variant}"
    caption = translate(headline, lang, op=fused.op)
    if fused.cause == "moments_overflow":
        merged = fused.rstd if math.isnan(fused.rstd) else math.inf  # rstd 0: σ² = ∞
        caption += welford_merge(dtype, fused.largest, fused.square_overflows_at, merged, lang)
    else:
        caption += translate(f"vector_lab.steps.fused_{fused.cause}", lang, dtype=dtype)
    escaped = fused.op.replace("_", r"\_")
    name = r"\text{Triton}" if fused.op == "triton" else rf"\texttt{{{escaped}}}"
    pairs = [(r"\mathrm{rstd}", fused.rstd, fused.steps_rstd), (symbol, fused.var, fused.steps_var)]
    lines = []
    for quantity, own, steps in pairs:
        relation = "=" if _n(own) == _n(steps) else r"\neq"  # as the digits shown compare
        lines.append(rf"{quantity}_{{{name}}} &= {_n(own)} {relation} {_n(steps)}")
    return Step(caption, r"\begin{aligned}" + r" \\ ".join(lines) + r"\end{aligned}")


def welford_merge(dtype: str, largest: float, gap: float, merged: float, lang: str) -> str:
    """How PyTorch's one-pass (Welford) merge overflows, then what it stored (``merged``, the
    op's σ²: NaN where a part was empty, ∞ where both had entries), then where the code is:
    one text for the steps' note and the precision story."""
    mechanism = translate(
        "vector_lab.welford.merge",
        lang,
        dtype=dtype,
        largest=format_power(largest),
        gap=format_power(gap),
    )
    outcome = translate("vector_lab.welford." + ("nan" if math.isnan(merged) else "inf"), lang)
    return mechanism + outcome + translate("vector_lab.welford.source", lang)


def _identity_step(stats, compute_dtype: str, lang: str) -> Step:
    """RMS^2 = sigma^2 + mu^2 with the row's numbers, unless one of them is not finite."""
    identity = r"\mathrm{RMS}^2 = \sigma^2 + \mu^2"
    values = {"RMS²": stats.mean_square, "σ²": stats.var, "μ": stats.mean}
    broken = [symbol for symbol, value in values.items() if not math.isfinite(value)]
    if broken:  # "inf = inf + 0" would read as a fact: say what overflowed instead
        which = join(broken, lang)
        undefined = translate(
            "vector_lab.steps.identity_undefined", lang, which=which, dtype=compute_dtype
        )
        return Step(undefined, identity)
    # exact where the three values agree; else each was rounded on its own in the compute
    # dtype (0, 1, …, 299 in float32: 29850.166 against 7499.9165 + 149.5²)
    exact = stats.mean_square == stats.var + stats.mean**2
    relation = "&=" if exact else r"&\approx"
    numbers = rf"{_n(stats.mean_square)} {relation} {_n(stats.var)} + {_square(stats.mean)}"
    if latex_width(numbers) > LINE_WIDTH:  # μ² on a line of its own, under σ²
        numbers = numbers.replace(" + ", r" \\ &\quad {}+ ", 1)
    lines = rf"\begin{{aligned}}{identity.replace('=', '&=')} \\ {numbers}\end{{aligned}}"
    heading = "vector_lab.steps.identity" if exact else "vector_lab.steps.identity_rounded"
    return Step(translate(heading, lang, dtype=compute_dtype), lines)


def _pooled_formula(kind: str, scale: str) -> str:
    """Kinds whose statistics are shared by more than one row."""
    index = {"batchnorm": "c", "instancenorm": "b,c", "groupnorm": "b,g"}[kind]
    return (
        rf"y_{{t,c}} = \frac{{x_{{t,c}} - \mu_{{{index}}}}}{{\sqrt{{\sigma^2_{{{index}}}"
        rf" + \varepsilon}}}}\cdot {scale.replace('_i', '_c')} + \beta_c"
    )
