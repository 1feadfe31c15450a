"""Axes: which cells of [B, T, d] share statistics under each norm, and BatchNorm's failures."""

from functools import partial

import streamlit as st

from ui import jobs, presenting
from ui.compute import compute, run_on_request
from ui.i18n import t
from ui.views import axes as view
from ui.widgets import axes as widgets

st.title(t("axes.title"))
st.caption(t("axes.intro"))

with presenting.controls("ax"):
    inputs = widgets.axes_inputs()
    section = widgets.section()
for message in inputs.errors:
    st.error(message, icon=":material/error:")

if inputs.spec is not None and section == "cells":
    stats = compute(jobs.axes_statistics(inputs.spec))
    view.summary_note(stats)
    view.example_note(stats)
    cell = widgets.cell_inputs(stats.x.shape)
    selection = compute(jobs.axes_selection(stats, cell))
    view.cells(stats, selection, on_click=partial(widgets.take_clicked_cell, stats.x.shape))
    view.selection_statistics(stats, selection)

if inputs.spec is not None and section == "batchnorm":
    spec = inputs.spec
    view.failures_intro(spec.source)
    with view.experiment(1):
        view.padding(compute(jobs.padding_pollution(spec)))
    with view.experiment(2):
        small = widgets.small_batch_inputs()
        view.small_batch(compute(jobs.small_batch_noise(spec, small.batch_sizes, small.draws)))
    with view.experiment(3):  # steps x cells: up to seconds, so from a link only on a click
        drift = widgets.train_eval_inputs()
        gap = jobs.train_eval_gap(spec, drift.shift, drift.momentum, drift.steps)
        found = run_on_request([gap], t("axes.experiment_run", number=3), "ax_train_eval_run")
        if found:
            view.train_eval(found[0])
    with view.experiment(4):
        view.batch_of_one(compute(jobs.batch_of_one(spec)))
    with view.experiment(5):
        position = widgets.causal_inputs(spec.tokens)
        view.causal(compute(jobs.causal_leak(spec, position)))
