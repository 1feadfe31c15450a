"""Geometry: where normalized vectors land — the √d sphere, the plane ⟂ 1, and what ε, γ and
DyT do to them; in 3-D, step by step, in high dimension and on a real model's activations."""

import streamlit as st

from app_pages.geometry_high import high
from engine.geometry import dyt_sweep, eps_curve, path, real_activations
from engine.geometry.scene import build_scene
from ui.compute import compute
from ui.errors import show_errors, showing_refusals
from ui.i18n import t
from ui.sections import section
from ui.views import geometry as view
from ui.widgets import geometry as widgets


@section  # a typed vector or setting reruns this section alone
def vector() -> None:
    typed, spec, errors = widgets.vector_inputs()
    show_errors(errors)
    if typed is not None:
        with showing_refusals():  # a vector or setting the engine does not take
            drawn, meshes = compute(path.drawn_path, typed, spec)
            view.vector_path(drawn, meshes, spec.eps, spec.dyt_alpha)


@section
def real() -> None:
    found = compute(real_activations.real_activations)
    view.real_activations(found, widgets.pair_input(tuple(p.label for p in found.pairs)))


@section  # a cloud's setting reruns this section alone
def cloud(chosen: str) -> None:
    spec, errors = widgets.cloud_inputs(chosen)
    show_errors(errors)
    with showing_refusals():  # a view or setting the engine does not take
        if spec is not None and chosen == "high":
            high(spec)
        elif spec is not None:
            scene = compute(build_scene, spec)
            if chosen == "scene":
                shown = widgets.scene_options()
                view.scene(scene, *shown)
            elif chosen == "eps":
                view.eps_section(compute(eps_curve.eps_curve, spec), scene)
            elif chosen == "affine":
                view.affine(scene)
            else:
                view.dyt(scene, compute(dyt_sweep.dyt_sweep, spec))


st.title(t("geometry.title"))
st.caption(t("geometry.intro"))
chosen = widgets.section()
st.markdown(t(f"geometry.lead_{chosen}"))
{"vector": vector, "real": real}.get(chosen, lambda: cloud(chosen))()
