"""Geometry page inputs: the section, the cloud of inputs (one ``GeometrySpec``), what the
scene draws, the vector followed step by step, the 2-D view and the dump's norm.  No engine
call: ``GeometrySpec`` refuses what the engine does not accept (``bound.spec_from``).
"""

from __future__ import annotations

import streamlit as st

from engine.config import MAX_ROWS, GeometrySpec
from ui import presenting
from ui.errors import input_error_text
from ui.formatting import format_reading
from ui.i18n import t
from ui.labels import INPUT_AXES
from ui.url.pages import GEOMETRY as P
from ui.vector_input import VectorInputError, parse_vectors, underflow_notes
from ui.widgets import bound

SCENE_SECTIONS = ("scene", "eps", "affine", "dyt")  # the sections drawn at d = 1, 2 or 3


def section() -> str:
    return bound.section(P["ge_section"], t("geometry.section"), "geometry.section_")


def _affine_inputs() -> dict[str, float]:
    """gamma and beta of each drawn axis (the ellipsoid)."""
    values = {}
    for name in ("gamma", "beta"):
        columns = st.columns(3)
        for column, axis, drawn in zip(columns, ("x", "y", "z"), INPUT_AXES):
            key = f"ge_{name}_{axis}"
            text = t(f"geometry.{name}_axis", axis=drawn)  # the scene's axes (y is the output)
            values[f"{name}_{axis}"] = bound.slider(P[key], text, column, step=0.05)
    return values


@presenting.among_controls(title="geometry.controls.cloud")
def cloud_inputs(section: str) -> tuple[GeometrySpec | None, tuple[str, ...]]:
    """The random inputs and the norms' settings (their spec, or None and the translated
    refusals); the section decides which are offered."""
    chosen = {}  # the settings this section offers; the others: the defaults
    with st.container(border=True):
        c1, c2, c3, c4 = st.columns([2, 2, 1, 1])
        if section in SCENE_SECTIONS:
            d = bound.segmented(P["ge_d"], t("geometry.d"), c1, help=t("geometry.d_help"))
        else:
            d = bound.selectbox(P["ge_wide_d"], t("geometry.wide_d"), c1)
        distribution = bound.selectbox(P["ge_dist"], t("geometry.distribution"), c2)
        count = bound.number(P["ge_count"], t("geometry.count"), c3, step=100)
        seed = bound.number(P["ge_seed"], t("geometry.seed"), c4)
        c1, c2, c3 = st.columns(3)
        spread = bound.select_slider(
            P["ge_spread"],
            t("geometry.spread"),
            c1,
            format_func=format_reading,
            help=t("geometry.spread_help"),
        )
        shift = bound.slider(
            P["ge_shift"], t("geometry.shift"), c2, step=0.1, help=t("geometry.shift_help")
        )
        if section == "dyt":  # DyT has no ε: the link's value kept, not offered
            eps = st.session_state.get(P["ge_eps"].key, P["ge_eps"].default)
        else:
            eps = bound.select_slider(
                P["ge_eps"], t("geometry.eps"), c3, format_func=format_reading
            )
        if section == "affine":
            chosen = _affine_inputs()
        if section == "dyt":
            chosen["dyt_alpha"] = bound.select_slider(
                P["ge_alpha"], t("geometry.alpha"), format_func=format_reading
            )
    shown = dict(distribution=distribution, spread=spread, shift=shift, count=count, d=d)
    return bound.spec_from(GeometrySpec, **shown, seed=seed, eps=eps, **chosen)


@presenting.among_controls(title="geometry.controls.scene")
def scene_options() -> tuple[tuple[str, ...], bool, bool]:
    """Which norms' outputs the scene draws, whether it draws the inputs, and whether it
    joins each input to its output."""
    # the lines toggle's column holds its label on one line ("Input → output lines")
    c1, c2, c3 = st.columns([5, 2, 3], vertical_alignment="bottom")
    shown = bound.pills(P["ge_show"], t("geometry.show"), c1)
    inputs = bound.toggle(P["ge_inputs"], t("geometry.show_inputs"), c2)
    lines = bound.toggle(P["ge_lines"], t("geometry.show_lines"), c3)
    return tuple(shown), bool(inputs), bool(lines)


@presenting.among_controls(title="geometry.controls.vector")
def vector_inputs() -> tuple[tuple[float, ...] | None, GeometrySpec, tuple[str, ...]]:
    """One vector (any width the engine takes; None when the text was refused), the spec
    of the eps it is normalized with (the vector's own width replaces d), and the refusal."""
    left, right = st.columns([3, 1])
    text = bound.text_input(
        P["ge_vector"], t("geometry.vector"), left, help=t("geometry.vector_help")
    )
    eps = bound.select_slider(P["ge_eps"], t("geometry.eps"), right, format_func=format_reading)
    # the DyT step's α: the link's (or the DyT section's) value, not offered here
    alpha = st.session_state.get(P["ge_alpha"].key, P["ge_alpha"].default)
    spec = GeometrySpec(eps=eps, dyt_alpha=alpha)
    try:
        rows = parse_vectors(text, "float32")
    except VectorInputError as error:
        return None, spec, (input_error_text(error, "geometry.input"),)
    if len(rows) != 1:
        return None, spec, (t("geometry.one_vector", rows=len(rows), limit=MAX_ROWS),)
    # e.g. 1e-50 is stored, and drawn, as 0
    for note in underflow_notes(rows, "float32", "geometry.input"):
        st.info(note, icon=":material/info:")
    return rows[0], spec, ()


@presenting.among_controls(title="geometry.controls.view")
def view_inputs(d: int) -> tuple[str, tuple[int, int]]:
    """The flat view's method ("pca", "axes" or "ones") and, for "axes", its two axes, each
    from 0 to ``d`` − 1 (the boxes offer no axis the cloud lacks)."""
    method = bound.segmented(
        P["ge_view"], t("geometry.view"), format_func=lambda key: t(f"geometry.view_{key}")
    )
    axes = (P["ge_axis_a"].default, P["ge_axis_b"].default)
    if method == "axes":
        c1, c2, _ = st.columns([1, 1, 2])
        first = bound.number(P["ge_axis_a"], t("geometry.axis_a"), c1, high=d - 1)
        second = bound.number(P["ge_axis_b"], t("geometry.axis_b"), c2, high=d - 1)
        axes = (int(first), int(second))
    return method, axes


@presenting.among_controls(title="geometry.controls.pair")
def pair_input(labels: tuple[str, ...]) -> int:
    """Which norm of the dump (an index into its norm pairs, in the dump's order)."""
    param = P["ge_pair"]
    bound.clamp(param, len(labels) - 1, "geometry.real.clamped")  # a link for another dump
    column, _ = st.columns([2, 3])
    indices = list(range(len(labels)))
    return int(
        bound.selectbox(
            param, t("geometry.real.pair"), column, options=indices, format_func=labels.__getitem__
        )
    )
