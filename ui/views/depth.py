"""Depth page sections (Streamlit): the simulated stack, the L-sweep, wiring, training lab;
each drawn from the results of ``ui/requests/depth.py``."""

from __future__ import annotations

import streamlit as st

from engine.config import DepthSpec
from engine.depth.limits import SWEEP_LAYERS
from engine.depth.placements import PLACEMENTS
from engine.depth.simulator import DepthResult
from engine.depth.sweep import SweepResult
from engine.training.loop import TrainResult
from ui.figures.depth import (
    per_layer_figure,
    residual_figure,
    sweep_figure,
    training_loss_figure,
    x0_weight_figure,
)
from ui.figures.depth_wiring import legible_width, wiring_figure
from ui.formatting import format_number, format_reading, signed
from ui.i18n import current_language, join, sentence_joiner, t
from ui.labels import placement_label
from ui.projected import for_screen
from ui.text.depth import (
    coincidence_notes,
    post_level_text,
    residual_notes,
    update_notes,
    warmup_cut_note,
    x0_note,
)
from ui.views.charts import built, show_chart, show_fitting_chart


def _nonfinite_warnings(series: list[tuple[str, DepthResult]]) -> None:
    """Say where a run left float32's range; its charts stop there (nothing drawn as 0)."""
    for name, result in series:
        where = result.nonfinite
        if where is None:
            continue
        st.warning(
            t(
                f"depth.nonfinite_{where.quantity}",
                name=name,
                layer=where.layer,
                limit=format_reading(where.limit),
                largest=format_reading(where.largest),
            ),
            icon=":material/warning:",
        )


def stack(results: list[DepthResult]) -> None:
    lang = current_language()
    series = [(placement_label(r.spec.placement), r) for r in results]
    _nonfinite_warnings(series)
    for result in (r for _, r in series if PLACEMENTS[r.spec.placement].deepnorm):
        st.info(
            t(
                "depth.deepnorm_constants",
                branches=result.spec.layers * result.branches_per_layer,
                n=format_number(result.deepnorm_layers),
                alpha=format_number(result.alpha),
                beta=format_number(result.beta),
            ),
            icon=":material/tune:",
        )
    show_chart(built(residual_figure, series, lang), "dp_residual")  # first: what a projector shows
    described = [r for r in results if PLACEMENTS[r.spec.placement].lemma2 is not None]
    if described:  # Lemma 2 speaks of Pre-LN and Post-LN only: how far to read its band
        broken = [key for key in described[0].lemma2_broken if key != "placement"]
        drawn = {PLACEMENTS[r.spec.placement].lemma2 for r in described}  # the band, the level
        only = "" if len(drawn) == 2 else "_pre" if "pre_band" in drawn else "_post"
        if broken:
            names = join((t(f"depth.violation.{key}") for key in broken), lang)
            st.caption(t(f"depth.assumptions_broken{only}", broken=names, level=post_level_text()))
        else:
            st.caption(t(f"depth.assumptions_hold{only}", level=post_level_text()))
    for note in coincidence_notes(results, lang):
        st.info(note, icon=":material/layers:")
    for note in residual_notes(results, lang):
        st.caption(note)
    left, right = st.columns(2)
    show_chart(built(per_layer_figure, series, "grad", lang), "dp_grad", left)
    show_chart(built(per_layer_figure, series, "update", lang), "dp_update", right)
    for note in update_notes(results, lang):
        right.caption(note)
    left, right = st.columns(2)
    post_like = [(n, r) for n, r in series if PLACEMENTS[r.spec.placement].norms.on_stream]
    post = next((r for _, r in post_like if not PLACEMENTS[r.spec.placement].deepnorm), None)
    dyt = any(r.spec.norm == "dyt" for _, r in post_like)  # divides by no RMS: no √(1 + g)
    gain = post.branch_gain if post is not None and not dyt else None  # E||F||^2/E||x||^2 at init
    if post_like:
        show_chart(built(x0_weight_figure, post_like, lang, gain), "dp_x0", left)
        left.caption(x0_note([r for _, r in post_like], gain, dyt, lang))
    # no x₀ chart (no placement renormalises the stream): the cosines take its place
    show_chart(
        built(per_layer_figure, series, "cosine", lang), "dp_cos", right if post_like else left
    )
    seconds = sum(r.seconds for _, r in series)
    key = "depth.timing_one" if len(series) == 1 else "depth.timing"
    st.caption(t(key, count=len(series), seconds=format_number(seconds, 2)))


def sweep_depths_note(depths: tuple[int, ...]) -> bool:
    """Say which depths the sweep uses; False when too few are within the limits."""
    shown = depths if len(depths) >= 2 else SWEEP_LAYERS  # the range the chart draws
    st.markdown(
        t(
            "depth.sweep_intro",
            low=shown[0],
            high=shown[-1],
            pre_slope=signed(PLACEMENTS["pre"].theorem1_slope, 1),
            post_slope=signed(PLACEMENTS["post"].theorem1_slope, 1),
        )
    )
    if len(depths) < 2:
        st.warning(t("depth.sweep_too_big", depths=join(SWEEP_LAYERS, current_language())))
        return False
    if depths != SWEEP_LAYERS:
        st.caption(t("depth.sweep_clipped", depths=join(depths, current_language())))
    return True


def sweep(specs: tuple[DepthSpec, ...], sweeps: list[SweepResult]) -> None:
    named = [(placement_label(spec.placement), result) for spec, result in zip(specs, sweeps)]
    # Theorem 1's slopes assume Pre-LN's final norm: without it they are not the theory.
    figure = sweep_figure(named, current_language(), theory=specs[0].final_norm)
    show_chart(figure, "dp_sweep")
    st.caption(t("depth.sweep_gradient_note"))
    if not specs[0].final_norm:  # the theory lines are left out: said why
        slopes = {f"{p}_slope": signed(PLACEMENTS[p].theorem1_slope, 1) for p in ("pre", "post")}
        st.caption(t("depth.sweep_no_final_norm", **slopes))
    broken = sweeps[0].theorem1_broken if sweeps else ()
    if broken and specs[0].final_norm:  # the default stack (a linear sublayer) among them
        names = join((t(f"depth.violation.{key}") for key in broken), current_language())
        st.caption(t("depth.sweep_assumptions_broken", broken=names))


def wiring_chart(key: str, placement: str, final_norm: bool, **labels) -> None:
    """A placement's wiring diagram in one, two or three rows: the widest that fits the
    column shows.  Each built once per input, not three layouts on every rerun."""
    figures = [
        built(wiring_figure, placement, current_language(), final_norm, rows=rows, **labels)
        for rows in (1, 2, 3)
    ]
    # presenting: larger labels, wider boxes
    variants = [(figure, legible_width(for_screen(figure))) for figure in figures]
    show_fitting_chart(variants, key, table=False)


def wiring(specs: tuple[DepthSpec, ...]) -> None:
    st.markdown(t("depth.wiring_intro", placements=t("depth.placements")))  # the control's name
    for spec in specs:
        wiring_chart(f"dp_wiring_{spec.placement}", spec.placement, spec.final_norm)


def training_chart(runs: list[tuple[str, TrainResult]], slot, live: bool = False) -> None:
    """The runs' losses drawn into ``slot``: so far (``live``, redrawn) or finished."""
    # built once for all the sessions following the same runs (ui/compute.py)
    figure = built(training_loss_figure, runs, current_language(), live=live)
    with slot.container():  # an st.empty holds one element: the chart and its downloads
        show_chart(figure, None if live else "dp_loss")


def training_outcomes(runs: list[tuple[str, TrainResult]]) -> None:
    lang = current_language()
    for name, result in runs:
        line = t(
            "depth.outcome_line",
            name=name,
            outcome=t(f"depth.outcome_{result.outcome}"),
            window=result.final_window,
            loss=format_number(result.final_loss, 3),
            accuracy=format_number(result.final_accuracy, 1),
            seconds=format_number(result.seconds, 1),
        )
        cut = warmup_cut_note(result, lang)  # a warm-up longer than the run
        st.markdown("- " + line + ((sentence_joiner(lang) + cut) if cut else ""))
    st.caption(t("depth.trained_kept"))
