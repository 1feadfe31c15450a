"""The Depth page's notes under the residual chart: pure, unit-tested.

Lemma 2 (Xiong et al. 2020, arXiv:2002.04745) gives Post-LN's mean square entering each
layer's *last* LayerNorm as 3/2 (its 3d/2 for E||x||^2) under its assumptions: attention and
a ReLU FFN, LayerNorm, N(0, 1/fan-in) weights, no extra residual scaling.  The note prints the
value the simulation measured next to that theory, and says when the theory does not apply,
instead of printing 3/2 unconditionally.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from engine.depth.coincidence import coinciding
from engine.depth.placements import PLACEMENTS
from engine.depth.simulator import DepthResult
from engine.depth.theory import POST_LN_LEVEL
from engine.training.loop import TrainResult
from ui.formatting import format_number, format_reading, times
from ui.i18n import join, sentence_joiner, translate
from ui.labels import label


def post_level_text() -> str:
    """Lemma 2's Post-LN level as the lemma writes it: 3/2."""
    level = Fraction(POST_LN_LEVEL).limit_denominator(16)
    return (
        str(level.numerator) if level.denominator == 1 else f"{level.numerator}/{level.denominator}"
    )


# The per-layer charts under the residual one, in the page's order; x0_weight is drawn for
# the placements that norm the stream only.
BELOW_CHARTS = ("grad_norm", "update_ratio", "x0_weight", "cosine")


def coincidence_notes(results: list[DepthResult], lang: str) -> list[str]:
    """Where two or more runs draw one line on the residual chart, why, and which charts below
    also draw them as one line or tell them apart (measured, as on the residual chart)."""
    notes = []
    for group in coinciding(results):
        names = join((label("placement", p, lang) for p in group.placements), lang)
        if group.all_branch_outputs_normed:
            why = "coincide_after"
        else:
            why = "coincide_stream" if group.all_streams_normed else "coincide_other"
        difference = f"{format_number(100 * group.largest_difference, 2)}\u00a0%"
        sentences = [
            translate("depth.coincide", lang, names=names, difference=difference),
            translate(f"depth.{why}", lang),
        ]
        members = [r for r in results if r.spec.placement in group.placements]
        same, apart = [], []
        for field in BELOW_CHARTS:
            if field == "x0_weight" and not group.all_streams_normed:
                continue  # not drawn for them
            found = {g.placements for g in coinciding(members, field)}
            chart = translate(f"depth.chart.{field}", lang)
            (same if group.placements in found else apart).append(chart)
        if same:
            sentences.append(translate("depth.coincide_same", lang, charts=join(same, lang)))
        if apart:
            sentences.append(translate("depth.coincide_apart", lang, charts=join(apart, lang)))
        notes.append(sentence_joiner(lang).join(sentences))
    return notes


def residual_notes(results: list[DepthResult], lang: str) -> list[str]:
    """One note per kind of placement shown: Pre-Norm's growth, Post-Norm's measured level."""
    notes = []
    pre = _pre_band(results)
    if pre is not None:  # measured: with small branches it barely grows, nothing like l
        stream = pre.residual_ms
        last = _last_finite(stream)
        if last >= 1:
            first, end = (format_reading(float(stream[i]), 3) for i in (0, last))
            said = translate("depth.residual_note_pre", lang, first=first, last=end, layer=last)
            notes.append(said)
    for result in results:
        if result.spec.placement == "none":
            notes += _no_norm_note(result, lang)
    for result in results:
        if PLACEMENTS[result.spec.placement].lemma2 != "post_level":
            continue
        if result.spec.norm == "dyt":  # no norm on the stream: Lemma 2's level does not apply
            stream = result.residual_ms[np.isfinite(result.residual_ms)]
            if stream.size > 1:
                first, last = (format_reading(float(stream[i])) for i in (1, -1))
                notes.append(
                    translate("depth.residual_note_post_dyt", lang, first=first, last=last)
                )
            continue
        measured = result.pre_norm_ms[np.isfinite(result.pre_norm_ms)]
        if not measured.size:
            continue
        broken = [key for key in result.lemma2_broken if key != "placement"]
        notes.append(
            translate(
                "depth.residual_note_post" if measured.size > 1 else "depth.residual_note_post_one",
                lang,
                measured=format_reading(float(measured.mean()), 2),
                low=format_reading(float(measured.min()), 2),
                high=format_reading(float(measured.max()), 2),
                layers=measured.size,
                level=post_level_text(),
            )
            + sentence_joiner(lang)
            + translate(
                "depth.residual_note_post_broken" if broken else "depth.residual_note_post_holds",
                lang,
                level=post_level_text(),
            )
        )
    return notes


def _no_norm_note(result: DepthResult, lang: str) -> list[str]:
    """The no-norm stack's geometric growth: the mean square's factor a layer, as measured
    (its geometric mean, up to the last layer float32 held)."""
    stream = result.residual_ms
    finite = np.flatnonzero(np.isfinite(stream) & (stream > 0))
    last = int(finite[-1]) if finite.size and finite[0] == 0 else 0
    if last < 1:
        return []
    factor = float((stream[last] / stream[0]) ** (1 / last))
    return [
        translate(
            "depth.residual_note_none",
            lang,
            factor=times(factor),
            first=format_reading(float(stream[0])),
            last=format_reading(float(stream[last])),
            layer=last,
        )
    ]


def _pre_band(results: list[DepthResult]) -> DepthResult | None:
    """The drawn run whose stream Lemma 2 bounds by its band (Pre-Norm), if any."""
    return next((r for r in results if PLACEMENTS[r.spec.placement].lemma2 == "pre_band"), None)


def _last_finite(values: np.ndarray) -> int:
    """The index of the last of ``values``' leading finite positive entries (-1: none)."""
    bad = np.flatnonzero(~(np.isfinite(values) & (values > 0)))
    return (int(bad[0]) if bad.size else len(values)) - 1


SQRT_L_BAND = (0.75, 4 / 3)  # a measured fall within this factor of √L "falls like 1/√l"


# a relative update above this at the last layer is not "barely changing the stream"
BARELY = 0.25


def update_notes(results: list[DepthResult], lang: str) -> list[str]:
    """The relative-update chart's note on Pre-Norm's ‖F_l‖/‖x_l‖, as measured: "falls like
    1/√l" only where its fall from layer 1 to the last is within ``SQRT_L_BAND`` of √L (with
    0.02 init and residual scaling it stayed flat, 0.0224 to 0.0223 over 24 layers, beside a
    sentence saying it fell 4.9-fold)."""
    pre = _pre_band(results)
    if pre is None:
        return []
    ratio = pre.update_ratio
    last = _last_finite(ratio)
    if last < 1:
        return []
    fall, expected = float(ratio[0] / ratio[last]), math.sqrt(last + 1)
    low, high = SQRT_L_BAND
    key = "depth.update_note" if low <= fall / expected <= high else "depth.update_note_other"
    if key == "depth.update_note" and ratio[last] > BARELY:  # 1/√l, but a sizeable share yet
        key = "depth.update_note_shallow"
    words = {
        "first": format_reading(float(ratio[0]), 3),
        "last": format_reading(float(ratio[last]), 3),
        "layer": last + 1,
        "fall": format_reading(fall, 2),
        "expected": format_reading(expected, 2),
    }
    return [translate(key, lang, **words)]


def warmup_cut_note(result: TrainResult, lang: str) -> str | None:
    """A warmed-up run that ended before its warm-up did never trained at the learning rate
    its label names (50 steps of a 100-step warm-up: half of it); the note says so."""
    if not result.spec.warmup or not len(result.lr) or result.lr[-1] >= result.spec.lr:
        return None
    return translate(
        "depth.warmup_cut",
        lang,
        warmup=result.spec.warmup_steps,
        steps=len(result.lr),
        reached=f"{float(result.lr[-1]):.2g}",
        peak=f"{result.spec.lr:g}",
    )


def run_name(run: str, placement: str, warmup: bool, lang: str) -> str:
    """A training run as its legend and outcome line name it: "Run B (Post-Norm + warm-up)"
    (with the punctuation of ``lang``: "运行 B（Post-Norm + 预热）"); "Run B: Post-Norm" made
    the outcome line "Run B: Post-Norm: trained"."""
    setting = label("placement", placement, lang)
    setting += translate("depth.with_warmup", lang) if warmup else ""
    return translate("depth.run_label", lang, run=run, placement=setting)


WASHED_OUT = 0.1  # x₀'s weight below this at the last layer: its identity path is washed out


def x0_note(post_like: list[DepthResult], gain: float | None, dyt: bool, lang: str) -> str:
    """Under the x₀-weight chart: how a norm on the stream scales x₀ (Post-Norm's √(1 + g) a
    layer, where a Post-Norm run is drawn), what the runs measured (washed out, or kept where
    the branches are small), and what the dashed line is, where one is drawn."""
    if dyt:
        return translate("depth.x0_note_dyt", lang)
    parts = []
    if any(not PLACEMENTS[r.spec.placement].deepnorm for r in post_like):
        parts.append(translate("depth.x0_note", lang))
    lowest = min(post_like, key=lambda r: float(r.x0_weight[_last_finite(r.x0_weight)]))
    layer = _last_finite(lowest.x0_weight)
    weight = float(lowest.x0_weight[layer])
    measured = "x0_note_washed" if weight < WASHED_OUT else "x0_note_kept"
    name = label("placement", lowest.spec.placement, lang)
    said = translate(
        f"depth.{measured}", lang, weight=format_reading(weight), layer=layer, name=name
    )
    parts.append(said)
    if gain is not None:  # the first-order line is drawn
        parts.append(translate("depth.x0_note_line", lang))
    return sentence_joiner(lang).join(parts)
