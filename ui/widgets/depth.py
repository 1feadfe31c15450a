"""Depth page inputs: the section shown, the stack to simulate and the two training-lab runs."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from engine.config import DepthSpec, TrainSpec
from engine.config.depth import INIT_STDS, MAX_DEPTH_WIDTH
from ui.i18n import current_language, t
from ui.text.depth import run_name
from ui.url.pages import DEPTH as P
from ui.widgets import bound


def section() -> str:
    """Which section the page shows (and computes): the stack, the sweep, wiring or training."""
    return bound.section(P["dp_section"], t("depth.section"), "depth.tab_")


def depth_inputs(section: str) -> tuple[tuple[DepthSpec, ...], tuple[str, ...]]:
    """The shared stack settings: one DepthSpec per chosen placement, in the order chosen
    (none where a setting is refused), and the translated refusals.  In the "wiring" section
    only what its diagrams draw (the placements, the final norm); in the "sweep" no L, which
    the sweep sets itself (the spec keeps its default).  The others keep their values."""
    placements = bound.multiselect(P["dp_placements"], t("depth.placements"))
    if section == "wiring":
        final_norm = bound.toggle(P["dp_final"], t("depth.final_norm"))
        if not placements:
            return (), (t("depth.need_placement"),)
        return tuple(DepthSpec(placement=p, final_norm=final_norm) for p in placements), ()
    depth = {}
    if section == "sweep":
        c2, c3, c4 = st.columns(3)
    else:
        c1, c2, c3, c4 = st.columns(4)
        depth["layers"] = bound.number(P["dp_layers"], t("depth.layers"), c1)  # help: the range
    width_help = t("depth.width_help", width=MAX_DEPTH_WIDTH["cpu"])
    d = bound.selectbox(P["dp_d"], t("depth.width"), c2, help=width_help)
    tokens = bound.number(P["dp_tokens"], t("depth.tokens"), c3)
    seed = bound.number(P["dp_seed"], t("depth.seed"), c4)
    c1, c2, c3, c4 = st.columns(4)
    sublayer = bound.selectbox(P["dp_sublayer"], t("depth.sublayer"), c1)
    norm = bound.selectbox(P["dp_norm"], t("depth.norm"), c2)
    init = bound.selectbox(P["dp_init"], t("depth.init"), c3)
    activation = bound.selectbox(P["dp_activation"], t("depth.activation"), c4)
    c1, c2, c3 = st.columns(3)
    scaling = bound.toggle(
        P["dp_scaling"], t("depth.residual_scaling"), c1, help=t("depth.residual_scaling_help")
    )
    final_norm = bound.toggle(P["dp_final"], t("depth.final_norm"), c2)
    dyt = {}
    if norm == "dyt":
        dyt["dyt_alpha"] = bound.number(P["dp_alpha"], t("depth.alpha"), c3, step=0.1)
    if not placements:
        return (), (t("depth.need_placement"),)
    base, errors = bound.spec_from(
        DepthSpec,
        norm=norm,
        d=d,
        tokens=tokens,
        sublayer=sublayer,
        init_std=INIT_STDS[init],
        residual_scaling=scaling,
        final_norm=final_norm,
        activation=activation,
        seed=seed,
        **depth,
        **dyt,
    )
    if base is None:
        return (), errors
    return tuple(replace(base, placement=p) for p in placements), ()


def _run_inputs(column, name: str, suffix: str) -> tuple[str, bool]:
    with column:
        st.markdown(f"**{name}**")
        chosen = bound.segmented(P[f"dp_run_{suffix}"], t("depth.run_placement"))
        warm = bound.toggle(
            P[f"dp_warmup_{suffix}"], t("depth.warmup", steps=TrainSpec().warmup_steps)
        )
    return chosen, warm


def training_inputs() -> tuple[tuple[str, TrainSpec], ...]:
    """The two runs: (translated name, spec) each."""
    c1, c2, c3, c4, c5 = st.columns([3, 3, 2, 2, 2])
    task = bound.selectbox(P["dp_task"], t("depth.task"), c1)
    lr = bound.select_slider(P["dp_lr"], t("depth.lr"), c2, format_func=lambda v: f"{v:g}")
    steps = bound.number(P["dp_steps"], t("depth.steps"), c3, step=50)
    layers = bound.number(P["dp_train_layers"], t("depth.train_layers"), c4)
    width = bound.selectbox(P["dp_train_d"], t("depth.train_width"), c5)
    a, b = st.columns(2)
    runs = []
    for column, name, suffix in ((a, t("depth.run_a"), "a"), (b, t("depth.run_b"), "b")):
        chosen, warm = _run_inputs(column, name, suffix)
        spec = TrainSpec(
            task=task, placement=chosen, layers=layers, d=width, lr=lr, warmup=warm, steps=steps
        )
        label = run_name(name, chosen, warm, current_language())
        runs.append((label, spec))
    return tuple(runs)
