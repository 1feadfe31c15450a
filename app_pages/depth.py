"""Depth: where the norm sits, and how the residual stream and gradients grow with depth."""

import streamlit as st

from engine.depth.limits import check_limits, check_sweep, sweep_depths
from ui import presenting
from ui.compute import compute
from ui.errors import show_errors, showing_refusals
from ui.i18n import t
from ui.landing import landmark
from ui.requests import depth as requests
from ui.sections import section
from ui.views import depth as view
from ui.widgets import depth as widgets


@section  # a setting of the stack reruns this section alone
def stack(chosen: str) -> None:
    with presenting.controls("dp"):
        specs, errors = widgets.depth_inputs(chosen)
    show_errors(errors)
    if not specs:
        return
    with showing_refusals():  # the engine's limits, before any work (the sweep: per depth)
        if chosen != "sweep":
            compute(check_limits, specs[0])
        if chosen == "stack" and (results := requests.simulations(specs)):
            landmark("results")
            view.stack(results)
        if chosen == "sweep":
            depths = compute(sweep_depths, specs[0])
            if not view.sweep_depths_note(depths):  # which limit its depths are over
                compute(check_sweep, specs[0])
            elif found := requests.sweeps(specs, depths):
                view.sweep(specs, found)
        if chosen == "wiring":
            view.wiring(specs)


@section  # the training lab has its own settings
def training() -> None:
    st.markdown(t("depth.training_intro"))
    with presenting.controls("dp_training"):
        runs = widgets.training_inputs()
    live = st.empty()
    finished = requests.trainings(runs, lambda done: view.training_chart(done, live, live=True))
    if finished:
        view.training_chart(finished, live)
        view.training_outcomes(finished)


st.title(t("depth.title"))
st.caption(t("depth.intro"))
chosen = widgets.section()  # navigation: shown in every presentation mode
if chosen == "training":
    training()
else:
    stack(chosen)
