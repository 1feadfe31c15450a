"""Geometry page sections (Streamlit): the scene, one vector, eps, gamma/beta, DyT, high
dimension, real activations (the wide cloud's requests: ``ui/requests/geometry.py``)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engine.config import GEOMETRY_SCENE_MAX_D
from engine.geometry.dyt_sweep import DytSweep
from engine.geometry.eps_curve import EpsCurve
from engine.geometry.high_dimension import HighDimensionReport
from engine.geometry.meshes import SceneMeshes
from engine.geometry.path import VectorPath
from engine.geometry.real_activations import RealActivations
from engine.geometry.scene import Scene
from engine.geometry.views import PlaneView
from engine.norms.kinds import PER_TOKEN_KINDS, ROW_KINDS
from ui.figures import geometry_charts as charts
from ui.figures.geometry import path_figure, scene_figure
from ui.formatting import count, format_reading
from ui.i18n import current_language, t
from ui.labels import INPUT_AXES, NORM_NAMES
from ui.plotly_frame import plotly_frame
from ui.text import geometry as text
from ui.text import geometry_high as text_high
from ui.views.charts import built, show_chart

AFFINE_LATEX = (  # one side per line: the column beside the chart is narrow
    r"\begin{aligned}y &= \gamma\odot\hat{x} + \beta"
    r" \\ &= (1 + \gamma_{\mathrm{Gemma}})\odot\hat{x} + \beta"
    r" \\ \gamma_{\mathrm{Gemma}} &= \gamma - 1\end{aligned}"
)


def degenerate(flags: tuple[str, ...], inputs: int) -> None:
    """The degenerate cases' notes, for ``inputs`` input vectors."""
    for note in text.degenerate_notes(flags, current_language(), inputs):
        st.info(note, icon=":material/info:")


def scene(
    result: Scene,
    shown: tuple[str, ...],
    inputs: bool,
    lines: bool,
) -> None:
    """The rotatable scene and, beside it, what it shows measured; at d = 2 first of all the
    surprise: LayerNorm's two outputs, counted (``result.two_d``)."""
    cloud, d = result.cloud, result.cloud.inputs.shape[-1]
    left, right = st.columns([3, 2], gap="medium")
    with left:
        figure = built(scene_figure, result, shown, current_language(), inputs, lines)
        plotly_frame(figure, "ge_chart_scene")
        st.caption(t(f"geometry.scene_caption_d{d}"))
    with right:
        if result.two_d is not None:
            summary = text.two_dimensions_summary(result.two_d, current_language())
            st.warning(summary, icon=":material/lightbulb:")
        st.markdown(t(f"geometry.scene_intro_d{d}"))
        for line in text.cloud_summary(cloud, shown, current_language()):
            st.markdown(f"- {line}")
    degenerate(cloud.flags, len(cloud.inputs))


def vector_path(path: VectorPath, meshes: SceneMeshes | None, eps: float, alpha: float) -> None:
    """The vector's picture (d <= 3) beside its steps in numbers; degenerate cases first."""
    degenerate(path.flags, 1)  # one typed vector
    if meshes is None:
        limit = GEOMETRY_SCENE_MAX_D
        st.info(
            t("geometry.path.too_wide", d=count(len(path.x)), limit=limit), icon=":material/info:"
        )
        steps = st.container()
    else:
        with st.container(key="ge_path_layout"):  # stacked when narrow (ui/styles/base.css)
            left, steps = st.columns([1, 1], gap="medium")
        with left:
            plotly_frame(path_figure(path, meshes, current_language()), "ge_chart_path")
            st.caption(t("geometry.path.caption"))
    with steps:
        for step in text.path_steps(path, eps, alpha, current_language()):
            st.caption(step.caption)
            st.latex(step.latex)


def eps_section(curve: EpsCurve, result: Scene) -> None:
    lang = current_language()
    left, right = st.columns([3, 2], gap="medium")
    with left:
        show_chart(built(charts.eps_curve_figure, curve, lang), "ge_chart_eps_curve")
    with right:
        st.markdown(t("geometry.eps_curve.intro"))
        st.latex(r"\lVert y\rVert = \sqrt{d}\,\frac{s}{\sqrt{s^2+\varepsilon}}")
        st.markdown(text.eps_summary(curve, lang))
    st.markdown(t("geometry.eps_curve.scene"))
    figure = built(scene_figure, result, ROW_KINDS, lang, True, False)
    plotly_frame(figure, "ge_chart_eps_scene")
    degenerate(result.cloud.flags, len(result.cloud.inputs))


def affine(result: Scene) -> None:
    lang = current_language()
    d = result.cloud.inputs.shape[-1]
    left, right = st.columns([3, 2], gap="medium")
    with left:
        figure = built(scene_figure, result, ("layernorm",), lang, False, False, "affine")
        plotly_frame(figure, "ge_chart_affine")
    with right:
        st.markdown(t("geometry.affine.intro"))
        st.latex(AFFINE_LATEX)
        frame = pd.DataFrame(text.affine_table(result.ellipsoids, lang), index=list(INPUT_AXES[:d]))
        st.table(frame)
        st.markdown(text.affine_summary(result.ellipsoids, d, lang))
    degenerate(result.cloud.flags, len(result.cloud.inputs))


def dyt(result: Scene, sweep: DytSweep) -> None:
    lang = current_language()
    left, right = st.columns([3, 2], gap="medium")
    with left:
        figure = built(scene_figure, result, ("dyt",), lang, True, True, "dyt")
        plotly_frame(figure, "ge_chart_dyt_scene")
    with right:
        st.markdown(t("geometry.dyt.intro"))
        st.markdown(text.dyt_summary(result.cloud, lang))
        figure = built(charts.dyt_norms_figure, sweep, result.cloud.dyt_alpha, lang)
        show_chart(figure, "ge_chart_dyt_norms")


def high_dimension(report: HighDimensionReport, count: int) -> None:
    lang = current_language()
    found = report.histograms
    st.caption(text_high.sample_note(report, count, lang))
    titles = ("‖y‖", "⟨y, 1⟩", "cos(x, y)")
    series = [(NORM_NAMES[kind], kind, getattr(found, kind)) for kind in PER_TOKEN_KINDS]
    scales = (found.sqrt_d, float(found.d), 1.0)
    figure = built(charts.histograms_figure, series, titles, scales, found.sqrt_d)
    show_chart(figure, "ge_chart_histograms")
    for line in text_high.measure_lines(report, lang):
        st.markdown(f"- {line}")
    degenerate(found.flags, found.rows)
    st.subheader(t("geometry.high.spread_title"))
    st.caption(t("geometry.high.spread_intro"))
    show_chart(built(charts.spread_figure, report.spread, lang), "ge_chart_spread")
    st.subheader(t("geometry.identity.title"))
    st.latex(r"\mathrm{LayerNorm}(x) = \mathrm{RMSNorm}(x - \mu\mathbf{1})")
    identity = report.identity
    c1, c2, c3 = st.columns(3)
    # written as the sentence below writes them: 7.153×10⁻⁷, never 7.153e-07 beside it
    c1.metric(t("geometry.identity.float32"), format_reading(identity.max_abs_difference))
    c2.metric(t("geometry.identity.float64"), format_reading(identity.max_abs_difference_float64))
    c3.metric(t("geometry.identity.largest"), format_reading(identity.max_abs_output))
    for line in text_high.identity_lines(identity, lang):
        st.markdown(line)


def plane_view(view: PlaneView) -> None:
    shown = PER_TOKEN_KINDS
    figure = built(charts.plane_view_figure, view, current_language(), shown)
    show_chart(figure, "ge_chart_plane_view")
    st.caption(t(f"geometry.view_note_{view.method}"))


def real_activations(real: RealActivations, index: int) -> None:
    lang = current_language()
    st.markdown(text_high.real_intro(real, lang))
    pair = real.pairs[index]
    titles = ("‖y‖", "⟨y, 1⟩", "cos(x, y)")
    series = [
        (t("geometry.real.stored_name"), "stored", pair.stored),
        (f"{NORM_NAMES['rmsnorm']} · γ = 1", "rmsnorm", pair.recomputed["rmsnorm"]),
        (f"{NORM_NAMES['layernorm']} · γ = 1", "layernorm", pair.recomputed["layernorm"]),
    ]
    lines = text_high.pair_lines(pair, lang)
    st.markdown(lines[0])
    inputs = [(t("geometry.real.inputs_name"), "input", pair.inputs)]
    figure = built(
        charts.histograms_figure, inputs, ("‖x‖", "⟨x, 1⟩"), (None, None), log_first=True
    )
    show_chart(figure, "ge_chart_real_inputs")
    for line in lines[1:]:
        st.markdown(f"- {line}")
    scales = (pair.sqrt_d, float(pair.d), 1.0)
    figure = built(charts.histograms_figure, series, titles, scales, pair.sqrt_d)
    show_chart(figure, "ge_chart_real_outputs")
