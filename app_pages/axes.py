"""Axes: which cells of [B, T, d] share statistics under each norm, and BatchNorm's failures."""

import streamlit as st

from engine.axes import batch_of_one, causal_leak, padding, sharing, small_batch, train_eval
from engine.config import AxesSpec
from ui import presenting
from ui.compute import compute, run_heavy
from ui.i18n import t
from ui.landing import landmark
from ui.views import axes as view
from ui.widgets import axes as widgets

st.title(t("axes.title"))
st.caption(t("axes.intro"))

with presenting.controls("ax"):
    inputs = widgets.axes_inputs()
section = widgets.section()  # navigation: shown in every presentation mode
for message in inputs.errors:
    st.error(message, icon=":material/error:")

if inputs.spec is not None and section == "cells":
    stats = compute(sharing.axes_statistics, inputs.spec)
    view.summary_note(stats)
    view.example_note(stats)
    cell = widgets.cell_inputs(stats.x.shape)
    selection = compute(sharing.select_cell, stats, cell, key=(stats.spec, cell))
    view.cells(stats, selection, on_click=lambda: widgets.take_clicked_cell(stats.x.shape))
    view.selection_statistics(stats, selection)

if inputs.spec is not None and section == "batchnorm":
    spec = inputs.spec
    view.failures_intro(spec.source)
    with view.experiment(1):
        view.padding(compute(padding.padding_pollution, spec))
    with view.experiment(2):
        small = widgets.small_batch_inputs()
        noise = compute(small_batch.small_batch_noise, spec, small.batch_sizes, small.draws, 1)
        view.small_batch(noise)  # 1: one thread
    with view.experiment(3):  # steps x cells: up to seconds, so from a link only on a click
        drift = widgets.train_eval_inputs()
        found = run_heavy(
            train_eval.train_eval_gap,
            [(spec, drift.shift, drift.momentum, drift.steps)],
            [t("axes.experiment_running", number=3)],
            button=t("axes.experiment_run", number=3),
            widget_key="ax_train_eval_run",
            work=train_eval.train_eval_work,
            default=(AxesSpec(), 0.0, 0.0, train_eval.DEFAULT_STEPS),  # shift, momentum: no work
        )
        if found:
            view.train_eval(found[0])
    landmark("batch_of_one")
    with view.experiment(4):
        view.batch_of_one(compute(batch_of_one.batch_of_one, spec))
    with view.experiment(5):
        position = widgets.causal_inputs(spec.tokens)
        view.causal(compute(causal_leak.causal_leak, spec, position))
