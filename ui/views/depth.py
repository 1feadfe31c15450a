"""Depth page sections (Streamlit): the simulated stack, the L-sweep, wiring, training lab."""

from __future__ import annotations

import time
from dataclasses import replace

import streamlit as st

from engine.config import DepthSpec
from engine.depth import (
    SWEEP_LAYERS,
    DepthResult,
    simulate_depth,
    sweep_depths,
    sweep_last_layer_grad,
    weight_elements,
)
from engine.depth.placements import PLACEMENTS
from engine.depth.theory import branch_gain, deepnorm_layers, lemma2_violations
from engine.training.loop import iter_training, summarize
from ui import cache
from ui.figures.depth import (
    AxisLabels,
    cosine_figure,
    grad_norm_figure,
    residual_figure,
    sweep_figure,
    training_loss_figure,
    update_ratio_figure,
    x0_weight_figure,
)
from ui.figures.depth_wiring import WiringLabels, wiring_figure
from ui.formatting import format_number
from ui.i18n import t
from ui.widgets.depth import placement_label

_STREAM_EVERY = 25  # redraw the live loss chart every this many steps (each redraw costs)
DEFAULT_TRAINING_SECONDS = 20  # both default runs, measured (benchmarks/RESULTS.md)
SWEEP_AUTO_WEIGHTS = 2**26  # sweeps drawing more weights than this (~3 s) wait for a click


def _labels(prefix: str, x_key: str = "depth.residual_x") -> AxisLabels:
    return AxisLabels(t(f"depth.{prefix}_title"), t(x_key), t(f"depth.{prefix}_y"))


def simulate(specs: tuple[DepthSpec, ...]) -> list[tuple[str, DepthResult]]:
    """Each spec's result from the shared store, or simulated now with a progress bar."""
    store = cache.result_store("depth")
    series = []
    for spec in specs:
        result = store.get(spec)
        if result is None:
            name = placement_label(spec.placement)
            bar = st.progress(0.0, text=t("depth.simulating", name=name, layers=spec.layers))
            result = simulate_depth(
                spec, progress=lambda f, bar=bar: bar.progress(min(f, 1.0)), threads=1
            )
            bar.empty()
            store.put(spec, result)
        series.append((placement_label(spec.placement), result))
    return series


def stack(series: list[tuple[str, DepthResult]]) -> None:
    specs = [result.spec for _, result in series]
    for result in (r for _, r in series if PLACEMENTS[r.spec.placement].deepnorm):
        st.info(
            t(
                "depth.deepnorm_constants",
                branches=result.spec.layers * result.branches_per_layer,
                n=format_number(deepnorm_layers(result.spec)),
                alpha=format_number(result.alpha),
                beta=format_number(result.beta),
            ),
            icon=":material/tune:",
        )
    broken = [key for key in lemma2_violations(specs[0]) if key != "placement"]
    if broken:
        st.caption(
            t(
                "depth.assumptions_broken",
                broken=", ".join(t(f"depth.violation.{key}") for key in broken),
            )
        )
    else:
        st.caption(t("depth.assumptions_hold"))
    st.plotly_chart(
        residual_figure(series, _labels("residual"), t("depth.band"), t("depth.before_norm")),
        width="stretch",
        key="dp_residual",
    )
    st.caption(t("depth.residual_note"))
    left, right = st.columns(2)
    left.plotly_chart(grad_norm_figure(series, _labels("grad")), width="stretch", key="dp_grad")
    right.plotly_chart(
        update_ratio_figure(series, _labels("update")), width="stretch", key="dp_update"
    )
    right.caption(t("depth.update_note"))
    left, right = st.columns(2)
    post_like = [(n, r) for n, r in series if PLACEMENTS[r.spec.placement].norms.on_stream]
    post = next((r.spec for _, r in post_like if not PLACEMENTS[r.spec.placement].deepnorm), None)
    gain = branch_gain(post) if post is not None else None  # E||F||^2 / E||x||^2 at init
    reference = None if gain is None else t("depth.x0_reference", gain=format_number(gain, 3))
    if post_like:
        left.plotly_chart(
            x0_weight_figure(post_like, _labels("x0"), reference, gain or 1.0),
            width="stretch",
            key="dp_x0",
        )
        left.caption(t("depth.x0_note"))
    right.plotly_chart(cosine_figure(series, _labels("cosine")), width="stretch", key="dp_cos")
    seconds = sum(r.seconds for _, r in series)
    st.caption(t("depth.timing", count=len(series), seconds=format_number(seconds, 2)))


def _sweep_one(spec: DepthSpec, depths: tuple[int, ...]):
    store = cache.result_store("sweep")
    key = (replace(spec, layers=1), depths)  # the sweep sets L itself: any L shares it
    result = store.get(key)
    if result is None:
        name = placement_label(spec.placement)
        bar = st.progress(0.0, text=t("depth.sweep_running", name=name))
        result = sweep_last_layer_grad(
            spec, layers=depths, threads=1, progress=lambda f, bar=bar: bar.progress(min(f, 1.0))
        )
        bar.empty()
        store.put(key, result)
    return result


def sweep(specs: tuple[DepthSpec, ...]) -> None:
    st.markdown(t("depth.sweep_intro"))
    depths = sweep_depths(specs[0])
    if len(depths) < 2:
        st.warning(t("depth.sweep_too_big", depths=", ".join(map(str, SWEEP_LAYERS))))
        return
    if depths != SWEEP_LAYERS:
        st.caption(t("depth.sweep_clipped", depths=", ".join(map(str, depths))))
    cost = len(specs) * sum(weight_elements(replace(specs[0], layers=n)) for n in depths)
    if cost > SWEEP_AUTO_WEIGHTS and not st.button(t("depth.sweep_run"), key="dp_sweep_run"):
        st.info(t("depth.sweep_on_request"), icon=":material/play_circle:")
        return
    sweeps = [(placement_label(spec.placement), _sweep_one(spec, depths)) for spec in specs]
    labels = AxisLabels(t("depth.sweep_title"), t("depth.sweep_x"), t("depth.sweep_y"))
    # Theorem 1's slopes assume Pre-LN's final norm: without it they are not the theory.
    theory = t("depth.theory_slope") if specs[0].final_norm else None
    st.plotly_chart(
        sweep_figure(sweeps, labels, t("depth.slope"), theory),
        width="stretch",
        key="dp_sweep",
    )


def wiring(specs: tuple[DepthSpec, ...]) -> None:
    st.markdown(t("depth.wiring_intro"))
    for spec in specs:
        labels = WiringLabels(
            placement_label(spec.placement),
            t("depth.wiring_norm"),
            t("depth.wiring_attention"),
            t("depth.wiring_mlp"),
            "x_l",
            "x_{l+1}",
            t("depth.wiring_identity"),
            t("depth.wiring_final"),
        )
        st.plotly_chart(
            wiring_figure(spec.placement, labels, spec.final_norm),
            width="stretch",
            key=f"dp_wiring_{spec.placement}",
        )


def training(runs, start: bool) -> None:
    """Show stored runs; when ``start``, train the missing ones live, streaming the losses."""
    store = cache.result_store("training", max_entries=32)
    results = [(name, store.get(spec)) for name, spec in runs]
    labels = AxisLabels(t("depth.loss_title"), t("depth.loss_x"), t("depth.loss_y"))
    chart = st.empty()
    if start and any(result is None for _, result in results):
        bar = st.progress(0.0)
        done = [(name, r) for name, r in results if r is not None]
        for name, spec in runs:
            if store.get(spec) is not None:
                continue
            records, started = [], time.perf_counter()
            for record in iter_training(spec, threads=1):
                records.append(record)
                bar.progress(
                    record.step / spec.steps,
                    text=t("depth.training", name=name, step=record.step, steps=spec.steps),
                )
                if record.step % _STREAM_EVERY == 0:
                    live = [*done, (name, summarize(spec, records))]
                    chart.plotly_chart(
                        training_loss_figure(live, labels, t("depth.chance")),
                        width="stretch",
                        key=f"tl_live_{name}_{record.step}",
                    )
            result = summarize(spec, records, time.perf_counter() - started)
            store.put(spec, result)
            done.append((name, result))
        bar.empty()
        results = [(name, store.get(spec)) for name, spec in runs]
    finished = [(name, r) for name, r in results if r is not None]
    if not finished:
        st.info(
            t("depth.train_hint", seconds=DEFAULT_TRAINING_SECONDS), icon=":material/play_circle:"
        )
        return
    chart.plotly_chart(
        training_loss_figure(finished, labels, t("depth.chance")), width="stretch", key="tl_loss"
    )
    for name, result in finished:
        tail = result.loss[-30:]
        st.markdown(
            "- "
            + t(
                "depth.outcome_line",
                name=name,
                outcome=t(f"depth.outcome_{result.outcome}"),
                loss=format_number(float(tail.mean()), 3),
                accuracy=format_number(100 * float(result.accuracy[-30:].mean()), 1),
                seconds=format_number(result.seconds, 1),
            )
        )
