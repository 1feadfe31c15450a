"""Depth page inputs: the stack to simulate and the two training-lab runs."""

from __future__ import annotations

from dataclasses import dataclass, replace

import streamlit as st

from engine.config import (
    DEPTH_NORMS,
    DEPTH_PLACEMENTS,
    DEPTH_SUBLAYERS,
    TRAIN_TASKS,
    DepthSpec,
    TrainSpec,
)
from engine.depth import (
    MAX_DEPTH_WIDTH,
    MAX_LAYERS,
    MAX_STREAM_ELEMENTS,
    MAX_TOKENS,
    MAX_WEIGHT_ELEMENTS,
    weight_elements,
)
from ui.i18n import t

BIND = "query-params"
WIDTHS = (64, 128, 256, 512, 1024, 2048, 4096)
TRAIN_WIDTHS = (64, 96, 128)  # the training lab's d; 4 heads divide each
LEARNING_RATES = (3e-4, 1e-3, 2e-3, 3e-3, 5e-3, 1e-2)
NORM_LABELS = {"layernorm": "LayerNorm", "rmsnorm": "RMSNorm", "dyt": "DyT"}


@dataclass(frozen=True)
class DepthInputs:
    specs: tuple[DepthSpec, ...]  # one per chosen placement, in the order chosen
    errors: tuple[str, ...]


def placement_label(placement: str) -> str:
    return t(f"depth.placement.{placement}")


def depth_inputs() -> DepthInputs:
    """The shared stack settings; one DepthSpec per chosen placement."""
    placements = st.multiselect(
        t("depth.placements"),
        DEPTH_PLACEMENTS,
        default=["post", "pre"],
        key="dp_placements",
        bind=BIND,
        format_func=placement_label,
    )
    c1, c2, c3, c4 = st.columns(4)
    layers = c1.number_input(
        t("depth.layers"),
        1,
        MAX_LAYERS,
        48,
        key="dp_layers",
        bind=BIND,
        help=t("depth.layers_help"),
    )
    d = c2.selectbox(
        t("depth.width"), WIDTHS, index=2, key="dp_d", bind=BIND, help=t("depth.width_help")
    )
    tokens = c3.number_input(t("depth.tokens"), 1, MAX_TOKENS, 64, key="dp_tokens", bind=BIND)
    seed = c4.number_input(t("depth.seed"), 0, 2**31 - 1, 0, key="dp_seed", bind=BIND)
    c1, c2, c3, c4 = st.columns(4)
    sublayer = c1.selectbox(
        t("depth.sublayer"),
        DEPTH_SUBLAYERS,
        key="dp_sublayer",
        bind=BIND,
        format_func=lambda s: t(f"depth.sublayers.{s}"),
    )
    norm = c2.selectbox(
        t("depth.norm"), DEPTH_NORMS, key="dp_norm", bind=BIND, format_func=NORM_LABELS.get
    )
    init = c3.selectbox(
        t("depth.init"),
        ("fixed", "fan_in"),
        index=1,  # 1/sqrt(fan-in): DESIGN.md's default, and Xiong et al.'s assumption
        key="dp_init",
        bind=BIND,
        format_func=lambda s: t(f"depth.init_{s}"),
    )
    activation = c4.selectbox(
        t("depth.activation"),
        ("gelu", "relu"),
        key="dp_activation",
        bind=BIND,
        format_func=str.upper,
    )
    c1, c2, c3 = st.columns(3)
    scaling = c1.toggle(
        t("depth.residual_scaling"),
        False,
        key="dp_scaling",
        bind=BIND,
        help=t("depth.residual_scaling_help"),
    )
    final_norm = c2.toggle(t("depth.final_norm"), True, key="dp_final", bind=BIND)
    alpha = 0.5
    if norm == "dyt":
        alpha = c3.number_input(
            t("depth.alpha"), 0.01, 10.0, 0.5, step=0.1, key="dp_alpha", bind=BIND
        )
    if not placements:
        return DepthInputs((), (t("depth.need_placement"),))
    base = DepthSpec(
        norm=norm,
        layers=int(layers),
        d=int(d),
        tokens=int(tokens),
        sublayer=sublayer,
        init_std=0.02 if init == "fixed" else None,
        residual_scaling=scaling,
        final_norm=final_norm,
        activation=activation,
        dyt_alpha=float(alpha),
        seed=int(seed),
    )
    stream = (base.layers + 1) * base.tokens * base.d
    if stream > MAX_STREAM_ELEMENTS or base.d > MAX_DEPTH_WIDTH["cpu"]:
        message = t("depth.limit_stream", values=f"{stream:,}", limit=f"{MAX_STREAM_ELEMENTS:,}")
        return DepthInputs((), (message,))
    if weight_elements(base) > MAX_WEIGHT_ELEMENTS:
        message = t(
            "depth.limit_weights",
            values=f"{weight_elements(base):,}",
            limit=f"{MAX_WEIGHT_ELEMENTS:,}",
        )
        return DepthInputs((), (message,))
    return DepthInputs(tuple(replace(base, placement=p) for p in placements), ())


@dataclass(frozen=True)
class TrainingInputs:
    runs: tuple[tuple[str, TrainSpec], ...]  # (translated name, spec)


def _run_inputs(column, name: str, prefix: str, placement: str, warmup: bool) -> tuple[str, bool]:
    with column:
        st.markdown(f"**{name}**")
        chosen = (
            st.segmented_control(
                t("depth.run_placement"),
                ("pre", "post"),
                default=placement,
                key=f"{prefix}_placement",
                bind=BIND,
                format_func=placement_label,
            )
            or placement
        )
        warm = st.toggle(
            t("depth.warmup", steps=TrainSpec().warmup_steps),
            warmup,
            key=f"{prefix}_warmup",
            bind=BIND,
        )
    return chosen, warm


def training_inputs() -> TrainingInputs:
    c1, c2, c3, c4, c5 = st.columns([3, 3, 2, 2, 2])
    task = c1.selectbox(
        t("depth.task"),
        TRAIN_TASKS,
        index=TRAIN_TASKS.index("reverse"),
        key="tl_task",
        bind=BIND,
        format_func=lambda s: t(f"depth.task_{s}"),
    )
    lr = c2.select_slider(
        t("depth.lr"),
        LEARNING_RATES,
        value=3e-3,
        key="tl_lr",
        bind=BIND,
        format_func=lambda v: f"{v:g}",
    )
    steps = c3.number_input(
        t("depth.steps"), 50, 1000, TrainSpec().steps, step=50, key="tl_steps", bind=BIND
    )
    layers = c4.number_input(
        t("depth.train_layers"), 2, 8, TrainSpec().layers, key="tl_layers", bind=BIND
    )
    width = c5.selectbox(t("depth.train_width"), TRAIN_WIDTHS, key="tl_d", bind=BIND)
    a, b = st.columns(2)
    runs = []
    for column, name, prefix, placement in (
        (a, t("depth.run_a"), "tla", "pre"),
        (b, t("depth.run_b"), "tlb", "post"),
    ):
        chosen, warm = _run_inputs(column, name, prefix, placement, False)
        spec = TrainSpec(
            task=task,
            placement=chosen,
            layers=int(layers),
            d=int(width),
            lr=float(lr),
            warmup=warm,
            steps=int(steps),
        )
        label = f"{name}: {placement_label(chosen)}" + (t("depth.with_warmup") if warm else "")
        runs.append((label, spec))
    return TrainingInputs(tuple(runs))
