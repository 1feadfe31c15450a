"""Axes: which cells of [B, T, d] share statistics under each norm, and BatchNorm's failures."""

import streamlit as st

from engine.axes import batch_of_one, causal_leak, padding, sharing, small_batch
from engine.config import AxesSpec
from ui import presenting
from ui.compute import compute
from ui.errors import show_errors
from ui.i18n import t
from ui.landing import landmark
from ui.requests import axes as requests
from ui.sections import section
from ui.views import axes as view
from ui.widgets import axes as widgets


@section  # a clicked cell reruns this alone
def cells(spec: AxesSpec) -> None:
    stats = compute(sharing.axes_statistics, spec)
    view.summary_note(stats)
    view.example_note(stats)
    cell = widgets.cell_inputs(stats.x.shape)
    selection = compute(sharing.select_cell, stats, cell, key=(stats.spec, cell))
    view.cells(stats, selection, on_click=lambda: widgets.take_clicked_cell(stats.x.shape))
    view.selection_statistics(stats, selection)


@section  # an experiment's own setting reruns the five, not the page
def failures(spec: AxesSpec) -> None:
    view.failures_intro(spec.source)
    with view.experiment(1):
        view.padding(compute(padding.padding_pollution, spec))
    with view.experiment(2):  # 1: one thread
        sizes, draws = widgets.small_batch_inputs()
        view.small_batch(compute(small_batch.small_batch_noise, spec, sizes, draws, 1))
    with view.experiment(3):
        found = requests.train_eval_gap(spec, *widgets.train_eval_inputs())
        if found is not None:
            view.train_eval(found)
    landmark("batch_of_one")
    with view.experiment(4):
        view.batch_of_one(compute(batch_of_one.batch_of_one, spec))
    with view.experiment(5):
        view.causal(compute(causal_leak.causal_leak, spec, widgets.causal_inputs(spec.tokens)))


st.title(t("axes.title"))
st.caption(t("axes.intro"))
with presenting.controls("ax", title="axes.controls.tensor"):
    spec, errors = widgets.axes_inputs()
chosen = widgets.section()  # navigation: shown in every presentation mode
show_errors(errors)
if spec is not None:
    (cells if chosen == "cells" else failures)(spec)
