"""Axes page inputs: the tensor and the norm (one ``AxesSpec``), the clicked cell, the section,
and the settings of BatchNorm's experiments.  No engine call: ``AxesSpec`` refuses what the
engine does not accept (``bound.spec_from``).
"""

from __future__ import annotations

import re

import streamlit as st

from engine.axes.limits import EXAMPLE_BATCH, EXAMPLE_CHANNELS, EXAMPLE_TOKENS
from engine.config import AxesSpec
from ui import presenting
from ui.figures.axes import cell_at
from ui.formatting import as_ascii, format_reading, literal
from ui.i18n import t
from ui.url.pages import AXES as P
from ui.widgets import bound

HEATMAP_KEY = "ax_heatmap"  # the heatmap chart's selection state (not a share-link setting)


def section() -> str:
    return bound.section(P["ax_section"], t("axes.section"), "axes.section_")


def parse_lengths(text: str) -> tuple[tuple[int, ...], str | None]:
    """ "16, 12, 8, 4" -> (16, 12, 8, 4); empty -> () (the engine's staircase); else a message.
    Read as every number field reads (``as_ascii``): "−4", full-width "１６，１２" too."""
    parts = [part for part in re.split(r"[\s,;]+", as_ascii(text).strip()) if part]
    lengths = []
    for part in parts:
        if not re.fullmatch(r"[+-]?\d+", part):
            return (), t("axes.lengths_not_whole", value=literal(part, 20))
        lengths.append(int(part))
    return tuple(lengths), None


def axes_inputs() -> tuple[AxesSpec | None, tuple[str, ...]]:
    """The tensor (source, preset, sizes, padding) and the norm applied to it: its spec, or
    None and the translated refusals."""
    with st.container(border=True):
        top = st.columns([3, 2])
        source = bound.segmented(P["ax_source"], t("axes.source"), top[0])
        example = source == "example"
        chosen = {}  # the settings shown for this source and norm; the others: the defaults
        if example:  # a real model's activations: no preset, no seed, a layer instead
            chosen["layer"] = bound.number(
                P["ax_layer"], t("axes.layer"), top[1], help=t("axes.layer_help")
            )
            st.caption(t("axes.example_note"))
        else:
            chosen["preset"] = bound.selectbox(P["ax_preset"], t("axes.preset"), top[1])
        c1, c2, c3, c4, c5 = st.columns(5)
        # the example's sizes: at most its B, T and d (AxesSpec refuses more; the inputs
        # stop there so a switch from a larger synthetic tensor lands on the largest slice)
        size = (EXAMPLE_BATCH, EXAMPLE_TOKENS, EXAMPLE_CHANNELS) if example else (None,) * 3
        names = (t("axes.batch"), t("axes.tokens"), t("axes.d"))
        if example:  # a size past the example dump's is said before it shows the largest
            for key, last, name in zip(("ax_batch", "ax_tokens", "ax_d"), size, names):
                bound.clamp(P[key], last, "axes.example_clamped", name=name)
        batch = bound.number(P["ax_batch"], names[0], c1, high=size[0])
        tokens = bound.number(P["ax_tokens"], names[1], c2, high=size[1])
        d = bound.number(P["ax_d"], names[2], c3, high=size[2])
        if not example:
            chosen["seed"] = bound.number(P["ax_seed"], t("axes.seed"), c4)
        dtype = bound.selectbox(P["ax_dtype"], t("axes.dtype"), c5)
        errors = []
        if source == "padded":
            left, right = st.columns([3, 1])
            text = bound.text_input(
                P["ax_lengths"],
                t("axes.lengths"),
                left,
                placeholder=t("axes.lengths_placeholder"),
                help=t("axes.lengths_help"),
            )
            chosen["pad_value"] = bound.number(P["ax_pad"], t("axes.pad_value"), right, step=1.0)
            chosen["lengths"], error = parse_lengths(text)
            errors += [error] if error else []
    with st.container(border=True):
        kind = bound.segmented(P["ax_norm"], t("axes.norm"), width="stretch")
        c1, c2, c3 = st.columns([2, 1, 1], vertical_alignment="bottom")
        eps = bound.select_slider(
            P["ax_eps"], t("axes.eps"), c1, format_func=format_reading, help=t("axes.eps_help")
        )
        if kind == "groupnorm":
            chosen["groups"] = bound.number(
                P["ax_groups"], t("axes.groups"), c2, help=t("axes.groups_help")
            )
        if kind == "batchnorm" and source == "padded":
            chosen["mask_padding"] = bound.toggle(
                P["ax_mask"], t("axes.mask"), c2, help=t("axes.mask_help")
            )
    if errors:
        return None, tuple(errors)
    shown = dict(source=source, batch=batch, tokens=tokens, d=d, kind=kind, eps=eps, dtype=dtype)
    return bound.spec_from(AxesSpec, **shown, **chosen)


@presenting.among_controls(title="axes.controls.cell")
def cell_inputs(shape: tuple[int, int, int]) -> tuple[int, int, int]:
    """The clicked cell (b, t, c); a click on the heatmap sets these three inputs."""
    batch, tokens, d = shape
    # each box wide enough for its − and + buttons (Streamlit drops them under 7.5rem) down
    # to a 1,024 px window with the sidebar open: stepping through positions is the point
    hint, c1, c2, c3 = st.columns([3, 2, 2, 2], vertical_alignment="bottom")
    hint.markdown(t("axes.cell_hint"))
    b = bound.number(P["ax_cell_b"], t("axes.cell_b"), c1, high=batch - 1)
    position = bound.number(P["ax_cell_t"], t("axes.cell_t"), c2, high=tokens - 1)
    c = bound.number(P["ax_cell_c"], t("axes.cell_c"), c3, high=d - 1)
    return int(b), int(position), int(c)


def take_clicked_cell(shape: tuple[int, int, int]) -> None:
    """``on_select`` callback of the heatmap: the clicked point becomes the chosen cell."""
    state = st.session_state.get(HEATMAP_KEY)
    points = state.selection.points if state else []
    if not points:  # a click that cleared the selection keeps the cell
        return
    point = points[0]
    cell = cell_at(point["x"], point["y"], shape)
    for key, value in zip(("ax_cell_b", "ax_cell_t", "ax_cell_c"), cell):
        st.session_state[key] = value


@presenting.among_controls(title="axes.controls.small")
def small_batch_inputs() -> tuple[tuple[int, ...], int]:
    """The batch sizes compared, and the draws of each."""
    left, right = st.columns([3, 1])
    sizes = bound.pills(P["ax_sizes"], t("axes.small.sizes"), left)
    draws = bound.number(P["ax_draws"], t("axes.small.draws_count"), right, step=50)
    return tuple(sorted(sizes)), int(draws)


@presenting.among_controls(title="axes.controls.train_eval")
def train_eval_inputs() -> tuple[float, float, int]:
    """The shift, the running statistics' momentum and the training steps."""
    c1, c2, c3 = st.columns([2, 1, 1])
    shift = bound.slider(P["ax_shift"], t("axes.train_eval.shift"), c1, step=0.25)
    momentum = bound.number(P["ax_momentum"], t("axes.train_eval.momentum"), c2, step=0.05)
    steps = bound.number(P["ax_steps"], t("axes.train_eval.steps"), c3, step=50)
    return float(shift), float(momentum), int(steps)


@presenting.among_controls(title="axes.controls.causal")
def causal_inputs(tokens: int) -> int:
    """The position of the replaced token (1 … T-1)."""
    column, _ = st.columns([1, 3])
    high = max(1, tokens - 1)
    return int(bound.number(P["ax_position"], t("axes.causal.position"), column, high=high))
