"""Geometry: where normalized vectors land — the √d sphere, the plane ⟂ 1, and what ε, γ and
DyT do to them; in 3-D, step by step, in high dimension and on a real model's activations."""

import streamlit as st

from engine.errors import EngineError
from ui import jobs
from ui.compute import compute, run_on_request
from ui.errors import error_text
from ui.i18n import t
from ui.views import geometry as view
from ui.widgets import geometry as widgets

st.title(t("geometry.title"))
st.caption(t("geometry.intro"))

section = widgets.section()
st.markdown(t(f"geometry.lead_{section}"))
try:
    if section == "vector":
        typed = widgets.vector_inputs()
        for message in typed.errors:
            st.error(message, icon=":material/error:")
        if typed.vector is not None:
            path, meshes = compute(jobs.geometry_vector_path(typed.vector, typed.spec))
            view.vector_path(path, meshes, typed.spec.eps, typed.spec.dyt_alpha)
    elif section == "real":
        real = compute(jobs.geometry_real_activations())
        view.real_activations(real, widgets.pair_input(tuple(p.label for p in real.pairs)))
    else:
        inputs = widgets.cloud_inputs(section)
        for message in inputs.errors:
            st.error(message, icon=":material/error:")
        spec = inputs.spec
        if spec is not None and section == "high":
            report = run_on_request(
                [jobs.geometry_high_dimension(spec)], t("geometry.high.run"), "ge_high_run"
            )
            if report:
                view.high_dimension(report[0], spec.count)
            st.subheader(t("geometry.view_heading"))
            chosen = widgets.view_inputs()
            plane = jobs.geometry_plane_view(spec, chosen.method, chosen.axes)
            shown = run_on_request([plane], t("geometry.view_run"), "ge_view_run")
            if shown:
                view.plane_view(shown[0])
        elif spec is not None:
            scene = compute(jobs.geometry_scene(spec))
            if section == "scene":
                shown = widgets.scene_options()
                two = compute(jobs.geometry_two_dimensions(spec)) if spec.d == 2 else None
                view.scene(scene, shown.shown, shown.inputs, shown.lines, two)
            elif section == "eps":
                view.eps_section(compute(jobs.geometry_eps_curve(spec)), scene)
            elif section == "affine":
                view.affine(scene)
            else:
                view.dyt(scene, compute(jobs.geometry_dyt_sweep(spec)))
except EngineError as error:  # a vector, view or setting the engine does not take
    st.error(error_text(error), icon=":material/error:")
