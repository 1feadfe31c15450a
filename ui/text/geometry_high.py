"""The Geometry page's sentences in high dimension and on real activations: pure, unit-tested.

The identity LayerNorm(x) = RMSNorm(x - mu 1) is reported as measured in float32 (PyTorch's
two fused kernels sum in different orders: a few ulps) and in float64 (~1e-15; 0 at d = 2), next
to the size of the outputs, so "1e-6" reads as rounding and not as a broken identity.
"""

from __future__ import annotations

import math

import numpy as np

from engine.geometry.high_dimension import HighDimensionReport, IdentityCheck, Measures
from engine.geometry.real_activations import PairMeasures, RealActivations
from engine.norms.kinds import PER_TOKEN_KINDS
from ui.formatting import format_power, format_reading, literal, upper_bound
from ui.i18n import sentence_joiner, translate
from ui.labels import NORM_NAMES
from ui.text.dumps import dtype_text
from ui.text.geometry import (
    cosine_ends,
    cosine_spread,
    largest_abs,
    min_median_max,
    rounding_sentence,
    spread_text,
)

# The longest token this many times the median one: said to be far out (Sun et al. 2024
# report massive activations thousands of times the median; the random cloud stays below 2).
FAR_OUT_RATIO = 10.0


def sample_note(report: HighDimensionReport, count: int, lang: str) -> str:
    """How many inputs the histograms saw (fewer than asked at large d: a memory bound)."""
    rows, d = report.histograms.rows, report.histograms.d
    key = "geometry.high.sample" if rows == count else "geometry.high.sample_bounded"
    return translate(
        key, lang, rows=f"{rows:,}", d=f"{d:,}", count=f"{count:,}", cells=f"{rows * d:,}"
    )


def measure_lines(report: HighDimensionReport, lang: str) -> list[str]:
    """One sentence per norm: ||y|| against sqrt(d), <y, 1> against rounding, cos(x, y)."""
    found = report.histograms
    lines = []
    for kind in PER_TOKEN_KINDS:  # the norms the report measures
        measures: Measures = getattr(found, kind)
        if not np.isfinite(measures.cos_input).any():  # no direction: the notes below say why
            norms = spread_text(measures.norm, lang, median=True)
            name = NORM_NAMES[kind]
            lines.append(translate("geometry.high.unmeasured", lang, name=name, norms=norms))
            continue
        lines.append(
            translate(
                f"geometry.high.{kind}",
                lang,
                norms=spread_text(measures.norm, lang, median=True),
                sqrt_d=format_reading(found.sqrt_d),
                ones=format_reading(largest_abs(measures.ones)),
                # LayerNorm's cosines spread (σ/rms); the others' are 1 up to rounding
                cosines=cosine_spread(
                    measures.cos_input, measures.cos_gap, lang, median=kind == "layernorm"
                ),
            )
        )
    layer = found.layernorm
    rounding = rounding_sentence(layer.ones, layer.norm, layer.cos_input, found.d, lang)
    return lines + ([rounding] if rounding else [])


def identity_lines(identity: IdentityCheck, lang: str) -> list[str]:
    if math.isnan(identity.max_abs_output):  # constant inputs at ε = 0: every output 0/0
        words = dict(rows=f"{identity.rows:,}", d=f"{identity.d:,}")
        return [translate("geometry.identity.measured_all_nan", lang, **words)]
    # every output 0 (a cloud of constant vectors): no share of it to give ("NaN of 0")
    measured = "measured" if identity.max_abs_output > 0 else "measured_all_zero"
    return [
        translate(
            f"geometry.identity.{measured}",
            lang,
            rows=f"{identity.rows:,}",
            d=f"{identity.d:,}",
            eps=format_power(identity.eps, 4),
            float32=format_reading(identity.max_abs_difference),
            float64=format_reading(identity.max_abs_difference_float64),
            largest=format_reading(identity.max_abs_output),
            relative=format_reading(
                identity.max_abs_difference / identity.max_abs_output
                if identity.max_abs_output > 0
                else 0.0
            ),
        ),
        translate(  # exactly equal (a constant input): nothing was rounded differently
            "geometry.identity.why"
            if identity.max_abs_difference
            else "geometry.identity.why_exact",
            lang,
            ulps=format_reading(identity.float32_ulps, 1),
        ),
    ]


# --- real activations ---------------------------------------------------------------------------


def real_intro(real: RealActivations, lang: str) -> str:
    """The dump's own words (its model, its storage dtype) are file metadata: shown literally
    (or as a dtype word a capture writes), as on the dumps page, never as Markdown."""
    return translate(
        "geometry.real.intro",
        lang,
        model=literal(real.model) if real.model else "?",
        tokens=real.tokens,
        pairs=len(real.pairs),
        storage=dtype_text(real.storage_dtype),
    )


def pair_lines(pair: PairMeasures, lang: str) -> list[str]:
    """The chosen norm's inputs, its stored output, and the recomputed outputs at gamma = 1."""
    low, median, high = min_median_max(pair.inputs.norm)
    norms = pair.inputs.norm[np.isfinite(pair.inputs.norm)]
    ratio = float(norms.max() / np.median(norms)) if norms.size and np.median(norms) > 0 else 0.0
    rms, layer = pair.recomputed["rmsnorm"], pair.recomputed["layernorm"]
    weight = pair.weight
    inputs = translate(
        "geometry.real.inputs",
        lang,
        rows=pair.rows,
        d=pair.d,
        low=low,
        median=median,
        high=high,
        ratio=format_reading(ratio, 1),
    )
    far = int((norms >= FAR_OUT_RATIO * np.median(norms)).sum()) if ratio >= FAR_OUT_RATIO else 0
    if far:  # four prompts, four first tokens: "one token far out" was said of them
        key = "geometry.real.far_out_one" if far == 1 else "geometry.real.far_out"
        said = translate(key, lang, count=far, ratio=format_reading(FAR_OUT_RATIO, 0))
        inputs += sentence_joiner(lang) + said
    stored = translate(
        "geometry.real.stored",
        lang,
        norms=spread_text(pair.stored.norm, lang),
        sqrt_d=format_reading(pair.sqrt_d),
        gamma_low=format_reading(float(weight.min())),
        gamma_mean=format_reading(float(weight.mean())),
        gamma_high=format_reading(float(weight.max())),
        cosines=cosine_spread(pair.stored.cos_input, pair.stored.cos_gap, lang),
    )
    flipped = int((weight < 0).sum())
    if flipped:  # a negative γ reverses its axis: more than a stretch
        said = translate("geometry.real.stored_flips", lang, count=flipped, d=pair.d)
        stored += sentence_joiner(lang) + said
    return [
        inputs,
        stored,
        translate(
            "geometry.real.recomputed",
            lang,
            eps=format_power(pair.eps, 4),
            rms_norms=spread_text(rms.norm, lang),
            ln_norms=spread_text(layer.norm, lang),
            sqrt_d=format_reading(pair.sqrt_d),
            rms_cos=cosine_ends(rms.cos_input, rms.cos_gap)[0],
            ln_ones=upper_bound(largest_abs(layer.ones)),
            rms_ones=format_reading(largest_abs(rms.ones)),
        ),
        translate(
            "geometry.real.check",
            lang,
            difference=format_reading(pair.recomputed_max_abs_difference),
            largest=format_reading(pair.stored_max_abs),
        ),
    ]
