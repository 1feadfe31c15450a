"""The activation-dump page's sentences about real activations: what a dump's stream shows
(the first token's jump, ordinary tokens' growth, the largest entry against float16), which
tokens carry massive activations, one norm worked on one token, how to read a norm's DyT
curve, and the live model's float32 / bfloat16 / float16 comparison.

Pure: every number comes from the engine's results (``engine.dumps.story``,
``engine.dumps.norm_step``, ``engine.dumps.norm_views``, ``engine.dumps.live_precision``);
nothing here is a literal about SmolLM2.  Token texts and entry names are shown with ``literal``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from engine.config import DumpSpec, NormSpec
from engine.dumps.diagnostics import massive_threshold
from engine.dumps.live_precision import PrecisionComparison
from engine.dumps.norm_step import NormStep
from engine.dumps.norm_views import DyTFit
from engine.dumps.report import DumpReport
from engine.dumps.story import FLOAT16_MAX, StreamStory
from engine.norms.kinds import ROW_KINDS
from ui.formatting import (
    count,
    format_power,
    format_reading,
    literal,
    runs,
    significant,
    times,
)
from ui.i18n import join, sentence_joiner, translate
from ui.labels import label
from ui.text.dumps import and_more, token_text

JUMP_FACTOR = 10.0  # the first token "jumps" where its step is this many times the others'
MAX_TOKENS_LISTED = 6  # tokens named in a sentence before "and N more"
R2_CLOSE = 0.9  # a DyT fit from this r² on is said to follow the points


def _token(tokens: Sequence[str] | None, position: int) -> str:
    """ "0 `The`" when the dump names its tokens, else "0"."""
    if tokens is None or position >= len(tokens):
        return str(position)
    return f"{position} {literal(token_text(tokens[position]))}"


def story_sentences(story: StreamStory, tokens: Sequence[str] | None, lang: str) -> list[str]:
    """Three Markdown sentences: the first token's jump (or that there is none), ordinary
    tokens' growth, and the largest entry against float16's range."""
    sentences = []
    if story.jump_point is not None:
        outgrow = story.jump_ratio / story.others_step if story.others_step > 0 else math.nan
        jumped = math.isfinite(outgrow) and outgrow >= JUMP_FACTOR
        sentences.append(
            translate(
                # Sun et al.'s name only where the massive section lists an entry of it
                "dumps.story_no_jump"
                if not jumped
                else "dumps.story_jump"
                if story.first_token_massive
                else "dumps.story_jump_unlisted",
                lang,
                batch=story.batch,
                token=_token(tokens, 0),
                before=format_reading(story.jump_before, 3),
                after=format_reading(story.jump_after, 3),
                previous=story.jump_point - 1,
                layer=story.jump_point,
                ratio=times(story.jump_ratio),
                others=times(story.others_step),
                factor=times(JUMP_FACTOR),
            )
        )
        steady = not story.others_max_step >= JUMP_FACTOR  # NaN: no step to call a jump
        if not steady:
            key = "dumps.story_ordinary_jump"
        elif story.others_max_step < 1:  # every step falls: the stream shrinks
            key = "dumps.story_ordinary_shrink"
        elif story.others_end < story.others_start:  # up and down, lower at the end (a
            key = "dumps.story_ordinary_change"  # hidden_states dump's final norm, say)
        else:
            key = "dumps.story_ordinary"
        sentences.append(
            translate(
                key,
                lang,
                start=format_reading(story.others_start, 3),
                first=story.others_start_at,  # the point read: layer 1, or 0 of two points
                end=format_reading(story.others_end, 3),
                step=times(story.others_max_step),
                layer=story.others_max_step_at,
            )
        )
        if story.others_zero_at:
            key = "story_zero_point" if len(story.others_zero_at) == 1 else "story_zero_points"
            layers = join(runs(story.others_zero_at), lang)
            sentences.append(translate(f"dumps.{key}", lang, layers=layers))
    if math.isfinite(story.largest):
        where = ""
        if story.largest_at is not None:
            layer, batch, token, channel = story.largest_at
            where = translate(
                "dumps.story_where", lang, layer=layer, batch=batch, token=token, channel=channel
            )
        if not story.fits_float16:
            verdict = "story_over_float16"
        elif story.square_overflows_float16:
            verdict = "story_square_overflows"
        else:
            verdict = "story_square_fits"
        sentences.append(
            translate(
                f"dumps.{verdict}",
                lang,
                value=significant(story.largest, 6),  # the digits its square is taken from
                where=where,
                square=significant(story.largest * story.largest),  # 90,660, not 90,662.5736
                max=f"{FLOAT16_MAX:,.0f}",
            )
        )
    return sentences


def massive_tokens_sentence(
    rep: DumpReport, tokens: Sequence[Sequence[str]] | None, lang: str
) -> str | None:
    """Which tokens carry massive activations (None when there are none): every token whose
    largest |a| passes its layer's threshold (``MassiveDiagnostics.carriers``),
    not only those among the entries listed."""
    if not rep.massive.count.sum():
        return None
    found = rep.massive.carriers
    if not found.peak.size:
        return None
    parts = []
    for batch, token, layers, peak in list(zip(found.batch, found.token, found.layers, found.peak))[
        :MAX_TOKENS_LISTED
    ]:
        batch, token, layers = int(batch), int(token), int(layers)
        names = tokens[batch] if tokens is not None and batch < len(tokens) else None
        parts.append(
            translate(
                "dumps.carrier_one" if layers == 1 else "dumps.carrier",
                lang,
                token=_token(names, token),
                batch=batch,
                layers=layers,
                peak=format_reading(float(peak), 1),
            )
        )
    listed = translate("dumps.list_separator", lang).join(parts)
    listed += and_more(found.peak.size, MAX_TOKENS_LISTED, lang)
    key = "carriers" if found.peak.size > 1 else "carrier_alone"
    return translate(f"dumps.{key}", lang, count=count(int(found.peak.size)), tokens=listed)


def norm_step_sentence(
    step: NormStep, tokens: Sequence[str] | None, storage: str | None, lang: str
) -> str:
    """The worked statistics of one token through one captured norm, and the check against
    the reference formula."""
    io = step.io
    statistics = translate(
        "dumps.io_statistics",
        lang,
        norm=literal(io.label),
        batch=io.batch,
        token=_token(tokens, io.token),
        mean=format_reading(step.mean, 4),
        ms=format_reading(step.mean_square, 4),
        rms=format_reading(step.rms, 4),
        peak=format_reading(step.peak, 4),
        channel=step.peak_channel,
        output=format_reading(float(io.y[step.peak_channel]), 4),
    )
    if step.recomputed is None:
        return statistics + sentence_joiner(lang) + translate("dumps.io_unknown_kind", lang)
    check = translate(
        "dumps.io_check",
        lang,
        kind=label("norm", io.kind, lang),
        eps=format_reading(io.eps) if io.eps is not None else "—",
        rstd=format_reading(step.rstd, 6),
        difference=format_reading(step.max_difference, 3),
        largest=format_reading(float(np.abs(io.y).max()), 4),
        storage=storage or "—",
    )
    return statistics + sentence_joiner(lang) + check


def dyt_reading(fit: DyTFit, spec: DumpSpec, lang: str) -> str | None:
    """How to read a norm's DyT chart, from its fit: what its r² says, and where the fit
    found a flat band (``engine.dumps.norm_views.FlatBand``), which tokens make it, how much
    flatter their lines are and the r² without them.  The band is said to come from its
    tokens' larger scale only where the engine found every one of them that much larger
    (``FlatBand.scale``); their largest input is called a massive activation only past
    ``spec``'s threshold (Sun et al. 2024), the layer's median |a| taken as the median |x|
    read.  None where nothing was fitted."""
    if not math.isfinite(fit.r2):
        return None
    fits = "close" if fit.r2 >= R2_CLOSE else "far" if fit.r2 >= 0 else "negative"
    if fits == "close" and fit.straight:  # tanh in its linear part: one slope, no S
        fits = "line"
    reading = translate(f"dumps.dyt_read_{fits}", lang, r2=format_reading(fit.r2, 3))
    flat = fit.flat
    if flat is None:
        return reading
    massive = flat.largest > massive_threshold(np.array([flat.median_abs]), spec)[0]
    reach = "massive" if massive else "reach"
    inputs = translate(f"dumps.dyt_flat_{reach}", lang, largest=format_reading(flat.largest))
    flatter = (
        translate("dumps.dyt_flatter", lang, factor=count(math.floor(flat.factor)))
        if math.isfinite(flat.factor)
        else translate("dumps.dyt_flatter_level", lang)
    )
    band = translate(
        f"dumps.dyt_flat_{'scale' if flat.scale else 'plain'}",
        lang,
        count=flat.tokens,
        read=flat.read,
        scale=label("dyt_scale", flat.scale or "rms", lang),
        largest_scale=significant(flat.largest_scale),
        median_scale=significant(flat.median_scale),
        inputs=inputs,
        flatter=flatter,
    )
    parts = [reading, band]
    if math.isfinite(flat.r2_rest):
        parts.append(translate("dumps.dyt_flat_rest", lang, r2=format_reading(flat.r2_rest, 3)))
    return sentence_joiner(lang).join(parts)


def precision_sentences(comparison: PrecisionComparison, lang: str) -> list[str]:
    """Where each half dtype parts from float32, and which norms would overflow in float16
    without upcasting."""
    sentences = []
    for run in comparison.runs:
        if run.dtype == "float32":
            continue
        worst = float(np.nanmax(np.where(np.isfinite(run.relative_error), run.relative_error, 1e9)))
        params = dict(
            dtype=run.dtype,
            worst=format_reading(100 * worst, 2) if worst < 1e9 else "∞",
            next=literal(token_text(run.next_token)),
            reference=literal(token_text(comparison.run("float32").next_token)),
        )
        if run.diverges_at is None:
            sentences.append(translate("dumps.precision_close", lang, **params))
        else:
            sentences.append(
                translate("dumps.precision_diverges", lang, layer=run.diverges_at, **params)
            )
    failing = [norm for norm in comparison.norms if norm.failing_tokens]
    if not failing:
        largest = max((norm.max_abs for norm in comparison.norms), default=0.0)
        sentences.append(
            translate(
                "dumps.overflow_none",
                lang,
                largest=format_reading(largest, 4),
                square=format_reading(largest * largest, 4),
            )
        )
    else:
        layers = comparison.overflowing_layers
        tokens = sorted({t for norm in failing for t in norm.failing_tokens})
        listed = join((_token(comparison.tokens, t) for t in tokens[:MAX_TOKENS_LISTED]), lang)
        listed += and_more(len(tokens), MAX_TOKENS_LISTED, lang)
        upcast = "ok" if all(n.upcast_ok for n in failing) else "not_ok"
        final = any(norm.layer is None for norm in failing)  # the norm after the last block
        where = "blocks_final" if layers and final else "blocks" if layers else "final"
        sentences.append(
            translate(
                "dumps.overflow_found",
                lang,
                norms=len(failing),
                total=len(comparison.norms),
                where=translate(
                    f"dumps.overflow_where.{where}", lang, layers=join(runs(layers), lang)
                ),
                tokens=listed,
                upcast=translate(f"dumps.upcast_{upcast}", lang),
            )
        )
    return sentences


def overflow_rows(comparison: PrecisionComparison, lang: str) -> list[dict]:
    """One row per norm that overflows in float16 without upcasting, for a table."""
    rows = []
    for norm in comparison.norms:
        if not norm.failing_tokens:
            continue
        shown = norm.failing_tokens[:MAX_TOKENS_LISTED]
        named = [f"{t} “{token_text(comparison.tokens[t])}”" for t in shown]  # ", " is a token too
        if len(norm.failing_tokens) > MAX_TOKENS_LISTED:
            named.append(
                translate(
                    "dumps.and_more", lang, count=len(norm.failing_tokens) - MAX_TOKENS_LISTED
                )
            )
        rows.append(
            {
                "norm": norm.label,
                "block": str(norm.layer) if norm.layer is not None else "—",  # one type: Arrow
                "max_abs": norm.max_abs,
                "tokens": join(named, lang),
                "first": quantity_text(norm.first_failure, lang),
                "upcast": "✓" if norm.upcast_ok else "✗",
            }
        )
    return rows


QUANTITIES = ("square", "sum_of_squares", "mean_square", "variance", "input", "sum")


def quantity_text(quantity: str, lang: str) -> str:
    """The quantity that overflowed first, in words (an id the page does not know: as is)."""
    return (
        translate(f"dumps.quantity.{quantity}", lang) if quantity in QUANTITIES else quantity or "—"
    )


ASSUMED_KIND = "rmsnorm"  # what the Vector Lab link opens a norm of unnamed kind as


def io_link_text(d: int, kind: str, eps: float | None, lang: str) -> str:
    """The Vector Lab link's words for one token of a norm; where the dump names no kind, the
    kind the link assumes and the ε it opens with (the norm's own, or the Vector Lab's
    default, ``NormSpec``'s)."""
    if kind in ROW_KINDS:
        return translate("dumps.io_link", lang, d=d)
    shown = format_power(NormSpec.eps if eps is None else eps, 6)
    assumed = label("norm", ASSUMED_KIND, lang)
    return translate("dumps.io_link_assumed", lang, d=d, kind=assumed, eps=shown)
