"""Vector Lab: type a vector, pick a norm, see every step in the precision it runs in."""

import streamlit as st

from ui import jobs, presenting
from ui.compute import compute
from ui.i18n import t
from ui.views import vector_lab as view
from ui.widgets.vector_lab import vector_lab_inputs

st.title(t("vector_lab.title"))
st.caption(t("vector_lab.intro"))

default_eps = compute(jobs.default_eps())
layout = st.container(key="vl_layout")  # stacks on narrow screens (ui/styles/base.css)
inputs_column, results_column = layout.columns([1, 2], gap="large")
with inputs_column, presenting.controls("vl"):
    inputs = vector_lab_inputs(default_eps)

with results_column:
    for message in inputs.errors:
        st.error(message, icon=":material/error:")
    for note in inputs.notes:
        st.info(note, icon=":material/info:")
    if inputs.config is None:
        st.info(t("vector_lab.fix_input"), icon=":material/edit:")
    else:
        explanation = compute(jobs.vector_explanation(inputs.config))
        story = explanation.precision
        facts = compute(
            jobs.precision_facts(story.spec.dtype if story else inputs.config.input_dtype)
        )
        view.steps(explanation)
        view.chart(explanation)
        view.precision(explanation, inputs.config.rows, facts, default_eps)
        view.comparison(explanation)
        view.outputs_table(explanation)
        view.formula(explanation)
