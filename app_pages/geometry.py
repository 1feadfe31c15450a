"""Geometry: where normalized vectors land — the √d sphere, the plane ⟂ 1, and what ε, γ and
DyT do to them; in 3-D, step by step, in high dimension and on a real model's activations."""

import streamlit as st

from engine.geometry import dyt_sweep, eps_curve, path, real_activations
from engine.geometry.scene import build_scene
from engine.geometry.two_dimensions import two_dimensional_layernorm
from ui.compute import compute
from ui.errors import showing_refusals
from ui.i18n import t
from ui.views import geometry as view
from ui.widgets import geometry as widgets

st.title(t("geometry.title"))
st.caption(t("geometry.intro"))

section = widgets.section()
st.markdown(t(f"geometry.lead_{section}"))
with showing_refusals():  # a vector, view or setting the engine does not take
    if section == "vector":
        typed = widgets.vector_inputs()
        for message in typed.errors:
            st.error(message, icon=":material/error:")
        if typed.vector is not None:
            drawn, meshes = compute(path.drawn_path, typed.vector, typed.spec)
            view.vector_path(drawn, meshes, typed.spec.eps, typed.spec.dyt_alpha)
    elif section == "real":
        real = compute(real_activations.real_activations)
        view.real_activations(real, widgets.pair_input(tuple(p.label for p in real.pairs)))
    else:
        inputs = widgets.cloud_inputs(section)
        for message in inputs.errors:
            st.error(message, icon=":material/error:")
        spec = inputs.spec
        if spec is not None and section == "high":
            report = view.wide_report(spec)
            if report is not None:
                view.high_dimension(report, spec.count)
            st.subheader(t("geometry.view_heading"))
            chosen = widgets.view_inputs()
            shown = view.wide_view(spec, chosen.method, chosen.axes)
            if shown is not None:
                view.plane_view(shown)
        elif spec is not None:
            scene = compute(build_scene, spec)
            if section == "scene":
                shown = widgets.scene_options()
                two = compute(two_dimensional_layernorm, spec) if spec.d == 2 else None
                view.scene(scene, shown.shown, shown.inputs, shown.lines, two)
            elif section == "eps":
                view.eps_section(compute(eps_curve.eps_curve, spec), scene)
            elif section == "affine":
                view.affine(scene)
            else:
                view.dyt(scene, compute(dyt_sweep.dyt_sweep, spec))
