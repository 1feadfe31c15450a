"""Experiments page sentences: each one built from the run it describes, and chosen by what
the numbers show, so no sentence states what the data do not (tests/ui check each branch
on runs where it is false)."""

from __future__ import annotations

import numpy as np

from engine.experiments.experiment import early_points, perplexity_band
from ui.formatting import literal, runs, significant
from ui.i18n import join, translate
from ui.labels import NORM_NAMES
from ui.text.dumps import and_more, token_text

SHOWN_ENTRIES = 6  # massive entries named in a sentence
SHOWN_BLOCKS = 12  # blocks named in a sentence (the rest counted)


def number(value: float) -> str:
    """Four significant digits (44.26, 22,550, 4.006×10⁶), ∞ for an infinite perplexity."""
    return significant(float(value))


def token_label(texts, position: int) -> str:
    """The token at ``position`` as the dumps page shows one: "␣market", not " market"."""
    return literal(token_text(texts[position])) if 0 <= position < len(texts) else "—"


def option_text(experiment: str, option: str, lang: str) -> str:
    """A prediction's answer, as the question offers it."""
    kind = experiment if experiment in ("lens", "sweep") else "perplexity"
    return translate(f"experiments.options.{kind}.{option}", lang)


def band_sentence(run, lang: str) -> str | None:
    """Before, after and how far apart, in the words of the band the ratio falls in."""
    effect = getattr(run.result, "effect", None)
    if effect is None:
        return None
    band = perplexity_band(effect.perplexity_ratio)
    return translate(
        f"experiments.band.{band}",
        lang,
        before=number(effect.reference_perplexity),
        after=number(effect.perplexity),
        ratio=number(effect.perplexity_ratio),
    )


def _window_ranges(run, lang: str) -> tuple[list[str], float]:
    """Each entry's lowest and highest value over the windows, one entry at a time (pooled,
    two channels of SmolLM2 read "from 1,645 to 24,660" beside a spread of 3 %), the first
    ``SHOWN_ENTRIES`` named and the rest counted; and the largest relative spread (std /
    mean) of every entry a window reached, named or not."""
    result, ranges, spreads = run.result, [], []
    for i, (token, channel) in enumerate(zip(result.token, result.channel)):
        values = result.window_values[:, i]
        values = values[np.isfinite(values)]
        if not values.size:  # no window reaches its position
            continue
        spreads.append(float(values.std() / abs(values.mean())))
        if len(ranges) < SHOWN_ENTRIES:
            ranges.append(
                translate(
                    "experiments.massive.window_range",
                    lang,
                    token=f"{int(token)} ({token_label(run.token_texts, int(token))})",
                    channel=int(channel),
                    low=number(values.min()),
                    high=number(values.max()),
                )
            )
    if len(spreads) > len(ranges):
        more = len(spreads) - len(ranges)
        ranges.append(translate("experiments.massive.more_entries", lang, count=more))
    return ranges, max(spreads, default=float("nan"))


def massive_sentences(run, lang: str) -> list[str]:
    result = run.result
    if result.effect is None:
        return [translate("experiments.nothing_changed", lang)]
    entries = [
        translate(
            "experiments.massive.entry",
            lang,
            token=f"{int(t)} ({token_label(run.token_texts, int(t))})",
            channel=int(c),
            value=number(v),
            replacement=number(r),
        )
        for t, c, v, r in list(zip(result.token, result.channel, result.value, result.replacement))[
            :SHOWN_ENTRIES
        ]
    ]
    lines = [
        translate(
            "experiments.massive.found" + ("_one" if len(result.token) == 1 else ""),
            lang,
            point=result.point,
            count=len(result.token),
            entries=join(entries, lang) + and_more(len(result.token), SHOWN_ENTRIES, lang),
        )
    ]
    if result.spec.setting == "mean" and result.window_values.size:
        reached = result.windows[result.windows > 0]
        ranges, spread = _window_ranges(run, lang)
        if ranges and reached.size:
            one = len(ranges) == 1  # one entry: "its spread", not "each entry's"
            lines.append(
                translate(
                    "experiments.massive.windows" + ("_one" if one else ""),
                    lang,
                    windows=int(reached.max()),
                    spread=number(spread),
                    ranges=join(ranges, lang),
                )
            )
    band = perplexity_band(result.effect.perplexity_ratio)
    expected = {"zero": "broken", "mean": "same", "keep": "same"}[result.spec.setting]
    if result.spec.setting != "keep":
        key = "sun_agrees" if band == expected else "sun_differs"
        lines.append(translate(f"experiments.massive.{key}", lang))
    return lines


def where(spec, lang: str) -> str:
    """Which norms a swap or a freeze changed, as the room reads it beside the result (in
    presentation's results view the inputs are hidden): "blocks 0–5 and the final norm"."""
    if spec.layers is None:
        blocks = translate("experiments.where.every", lang)
    elif not spec.layers:
        return translate("experiments.where.final_only", lang)
    else:
        key = "one" if len(spec.layers) == 1 else "some"
        blocks = translate(f"experiments.where.{key}", lang, blocks=join(runs(spec.layers), lang))
    return translate("experiments.where.and_final", lang, blocks=blocks) if spec.final else blocks


def chosen_line(experiment: str, spec, lang: str) -> str:
    """The experiment and what its closed Settings box holds, in one line above the question
    while presenting: the questions say "set them as chosen", "in the chosen blocks", and a
    room saw no choice.  Each value is named by its control's own label."""

    def said(label: str, value: str) -> str:
        return translate("app.labelled", lang, label=translate(label, lang), value=value)

    def yes_no(flag: bool) -> str:
        return translate("app.yes" if flag else "app.no", lang)

    parts = [said("experiments.experiment", translate(f"experiments.names.{experiment}", lang))]
    if experiment == "massive":
        parts.append(
            said(
                "experiments.setting.label", translate(f"experiments.setting.{spec.setting}", lang)
            )
        )
        if spec.setting == "mean":
            parts.append(said("experiments.setting.window", f"{spec.window:,}"))
    elif experiment in ("swap", "freeze"):
        parts.append(where(spec, lang))
    if experiment in ("freeze", "sweep"):
        parts.append(
            said("experiments.freeze.exempt", translate(f"experiments.exempt.{spec.exempt}", lang))
        )
    if experiment == "fold":
        parts.append(said("experiments.fold.final", yes_no(spec.final)))
    if experiment == "lens":
        parts.append(said("experiments.lens.top_k", f"{spec.top_k:,}"))
    if experiment == "half":
        parts.append(said("experiments.half.upcast", yes_no(spec.upcast)))
    return " · ".join(parts)


def swap_sentences(run, lang: str) -> list[str]:
    result = run.result
    changed = 1 - result.effect.top1_agreement
    return [
        translate(
            "experiments.swap_result.swapped" + ("_one" if len(result.norms) == 1 else ""),
            lang,
            count=len(result.norms),
            to_kind=NORM_NAMES[result.to_kind],
            from_kind=NORM_NAMES[result.from_kind],
            where=where(result.spec, lang),
        ),
        translate("experiments.swap_result.top1", lang, share=f"{100 * changed:.1f}\u00a0%"),
    ]


def freeze_sentences(run, lang: str) -> list[str]:
    result = run.result
    lines = [
        translate(
            "experiments.freeze_result.scales" + ("_one" if len(result.norms) == 1 else ""),
            lang,
            count=len(result.norms),
            where=where(result.spec, lang),
            low=number(float(result.variation.min())),
            high=number(float(result.variation.max())),
        )
    ]
    if result.exempt:
        shown = [f"{t} ({token_label(run.token_texts, t)})" for t in result.exempt[:SHOWN_ENTRIES]]
        named = join(shown, lang) + and_more(len(result.exempt), SHOWN_ENTRIES, lang)
        lines.append(translate("experiments.freeze_result.exempt", lang, tokens=named))
    return lines


def block_name(layer: int | None, lang: str) -> str:
    if layer is None:
        return translate("experiments.sweep_result.final", lang)
    return translate("experiments.sweep_result.block", lang, block=layer)


def sweep_sentences(run, lang: str) -> list[str]:
    sweep = run.result
    ratios = sweep.perplexity_ratio
    tolerance = f"{100 * sweep.spec.tolerance:g}"
    held = [layer for layer, ok in zip(sweep.layers, sweep.tolerated) if ok]
    finite = np.where(np.isfinite(ratios), ratios, np.inf)
    lines = []
    if held:
        names = [block_name(layer, lang) for layer in held[:SHOWN_BLOCKS]]
        if len(held) > SHOWN_BLOCKS:
            names.append(f"+{len(held) - SHOWN_BLOCKS}")
        lines.append(
            translate(
                "experiments.sweep_result.tolerated",
                lang,
                count=len(held),
                total=len(sweep.layers),
                tolerance=tolerance,
                blocks=join(names, lang),
            )
        )
    else:
        mildest = int(np.argmin(np.abs(finite - 1)))  # the least change, up or down
        lines.append(
            translate(
                "experiments.sweep_result.none",
                lang,
                total=len(sweep.layers),
                tolerance=tolerance,
                block=block_name(sweep.layers[mildest], lang),
                ratio=number(ratios[mildest]),
            )
        )
    ranked = np.where(np.isnan(ratios), np.inf, ratios)
    worst = int(np.argmax(ranked))
    if ranked[worst] > ranked.min():  # every freeze alike (×1 each): none is the worst
        lines.append(
            translate(
                "experiments.sweep_result.worst",
                lang,
                block=block_name(sweep.layers[worst], lang),
                ratio=number(ratios[worst]),
            )
        )
    return lines


# A relative logit difference below this is called float32 rounding: float32 keeps ~7 digits
# (ε = 1.2e-7) and a pass sums thousands of products through 30 blocks; the sentence states it.
FLOAT32_ROUNDING = 1e-5


def fold_sentences(run, lang: str) -> list[str]:
    r = run.result
    relative = r.max_logit_difference / max(r.max_abs_logit, 1e-30)
    key = "difference" if relative <= FLOAT32_ROUNDING else "difference_large"
    lines = [
        translate(
            f"experiments.fold_result.{key}",
            lang,
            difference=number(r.max_logit_difference),
            scale=number(r.max_abs_logit),
            relative=number(relative),
            threshold=number(FLOAT32_ROUNDING),
        ),
        translate(
            "experiments.fold_result.saves",
            lang,
            norms=len(r.folded),
            multiplications=f"{r.multiplications_saved:,}",
            total=f"{r.multiplications_per_token:,}",
            removed=f"{r.parameters_removed:,}",
            added=f"{r.parameters_added:,}",
        ),
    ]
    if r.unfoldable:
        names = join([literal(n) for n in r.unfoldable[:SHOWN_ENTRIES]], lang)
        lines.append(translate("experiments.fold_result.unfoldable", lang, norms=names))
    if r.untied:
        names = join([literal(n) for n in r.untied], lang)
        lines.append(translate("experiments.fold_result.untied", lang, maps=names))
    return lines


def lens_sentences(run, lang: str) -> list[str]:
    r = run.result
    entropy = r.mean_entropy  # [3, L+1]
    points = early_points(entropy.shape[1] - 1)
    early = entropy[:, points].mean(-1)  # [3]
    names = [translate(f"experiments.lens_name.{v}", lang) for v in r.variants]
    values = join(
        [
            translate("experiments.lens_result.value", lang, value=f"{value:.2f}", name=name)
            for name, value in zip(names, early)
        ],
        lang,
    )
    highest = names[int(np.argmax(early))]
    kl = r.kl_to_model[:, -1].mean(-1)  # [3] at the last point
    return [
        translate(
            # one point (a model of under 6 blocks): not "points 1 to 1"
            "experiments.lens_result.early"
            if points.stop > 2
            else "experiments.lens_result.early_one",
            lang,
            last=points.stop - 1,
            values=values,
            variant=highest,
        ),
        translate(
            "experiments.lens_result.final",
            lang,
            kl_own=number(float(kl[0])),
            kl_cached=number(float(kl[1])),
        ),
    ]


def half_sentences(run, lang: str) -> list[str]:
    r = run.result
    lines = []
    if r.first_failure is not None:
        io = r.first_failure
        lines.append(
            translate(
                "experiments.half_result.failed",
                lang,
                norm=literal(io.label),
                token=io.token,
                text=token_label(run.token_texts, io.token),
                how=translate(f"experiments.half_result.how_{r.failure}", lang),
            )
        )
    else:
        lines.append(translate("experiments.half_result.no_failure", lang))
    divergence = number(r.spec.divergence)
    if r.diverges_at is not None:
        point, token = r.diverges_at
        lines.append(
            translate(
                "experiments.half_result.diverges",
                lang,
                divergence=divergence,
                point=point,
                token=token,
                text=token_label(run.token_texts, token),
            )
        )
    else:
        lines.append(
            translate("experiments.half_result.no_divergence", lang, divergence=divergence)
        )
    return lines


SENTENCES = {
    "massive": massive_sentences,
    "swap": swap_sentences,
    "freeze": freeze_sentences,
    "sweep": sweep_sentences,
    "fold": fold_sentences,
    "lens": lens_sentences,
    "half": half_sentences,
}


def left_out_sentence(run, lang: str) -> str | None:
    """Under the loss and KL charts, where the changed model's values are not finite (an
    infinite perplexity): how many points the charts leave out, which a line cannot draw."""
    effect = getattr(run.result, "effect", None)
    if effect is None:
        return None
    nll = int((~np.isfinite(effect.nll)).sum())
    kl = int((~np.isfinite(np.asarray(effect.kl[:-1], dtype=float))).sum())
    if not nll and not kl:
        return None
    return translate("experiments.chart.left_out", lang, nll=nll, kl=kl, total=len(effect.nll))


def sentences(run, lang: str) -> list[str]:
    """Everything the page says about ``run``, each sentence conditioned on its numbers."""
    lines = [band_sentence(run, lang), *SENTENCES[run.experiment](run, lang)]
    return [line for line in lines if line]
