"""Depth: where the norm sits, and how the residual stream and gradients grow with depth."""

import streamlit as st

from engine.depth import sweep_depths
from ui import jobs, presenting
from ui.compute import cached, run_on_request
from ui.i18n import t
from ui.views import depth as view
from ui.widgets import depth as widgets

st.title(t("depth.title"))
st.caption(t("depth.intro"))

with presenting.controls("dp_section"):
    section = widgets.section()

if section != "training":  # the stack's settings: the training lab has its own
    with presenting.controls("dp"):
        inputs = widgets.depth_inputs()
    for message in inputs.errors:
        st.error(message, icon=":material/error:")

if section == "stack" and inputs.specs:
    simulations = [jobs.depth_simulation(spec) for spec in inputs.specs]
    results = run_on_request(simulations, t("depth.simulate"), "dp_simulate")
    if results:
        view.stack(results)

if section == "sweep" and inputs.specs:
    depths = sweep_depths(inputs.specs[0])
    if view.sweep_depths_note(depths):
        sweeps = [jobs.depth_sweep(spec, depths) for spec in inputs.specs]
        results = run_on_request(sweeps, t("depth.sweep_run"), "dp_sweep_run")
        if results:
            view.sweep(inputs.specs, results)

if section == "wiring" and inputs.specs:
    view.wiring(inputs.specs)

if section == "training":
    st.markdown(t("depth.training_intro"))
    with presenting.controls("dp_training"):
        runs = widgets.training_inputs().runs
    trainings = [jobs.training_run(name, spec) for name, spec in runs]
    live = st.empty()

    def draw_live(index, partial):
        done = [(name, cached(job)) for (name, _), job in zip(runs[:index], trainings)]
        view.training_chart([*done, (runs[index][0], partial)], live, live=True)

    results = run_on_request(trainings, t("depth.train"), "dp_train", draw_live, always_ask=True)
    if results:
        finished = [(name, result) for (name, _), result in zip(runs, results)]
        view.training_chart(finished, live)
        view.training_outcomes(finished)
