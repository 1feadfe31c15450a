"""Depth: where the norm sits, and how the residual stream and gradients grow with depth."""

import streamlit as st

from engine.depth.limits import sweep_depths
from ui import presenting
from ui.compute import compute
from ui.i18n import t
from ui.landing import landmark
from ui.views import depth as view
from ui.widgets import depth as widgets

st.title(t("depth.title"))
st.caption(t("depth.intro"))

section = widgets.section()  # navigation: shown in every presentation mode

if section != "training":  # the stack's settings: the training lab has its own
    with presenting.controls("dp"):
        inputs = widgets.depth_inputs()
    for message in inputs.errors:
        st.error(message, icon=":material/error:")

if section == "stack" and inputs.specs:
    results = view.simulations(inputs.specs)
    if results:
        landmark("results")
        view.stack(results)

if section == "sweep" and inputs.specs:
    depths = compute(sweep_depths, inputs.specs[0])
    if view.sweep_depths_note(depths):
        results = view.sweeps(inputs.specs, depths)
        if results:
            view.sweep(inputs.specs, results)

if section == "wiring" and inputs.specs:
    view.wiring(inputs.specs)

if section == "training":
    st.markdown(t("depth.training_intro"))
    with presenting.controls("dp_training"):
        runs = widgets.training_inputs().runs
    live = st.empty()
    finished = view.trainings(runs, live)
    if finished:
        view.training_chart(finished, live)
        view.training_outcomes(finished)
