"""Vector Lab: type a vector, pick a norm, see every step in the precision it runs in."""

import streamlit as st

from engine.config import STORAGE_DTYPES
from engine.norms.precision_facts import default_eps_table, dtype_facts
from engine.norms.worked import explain_vectors
from ui import presenting
from ui.compute import compute
from ui.errors import show_errors
from ui.i18n import t
from ui.requests import vector_lab as requests
from ui.sections import section
from ui.views import vector_lab as view
from ui.widgets import vector_lab as widgets

st.title(t("vector_lab.title"))
st.caption(t("vector_lab.intro"))


@section  # a new vector or setting reruns this, not the sidebar
def lab() -> None:
    default_eps = {dtype: compute(default_eps_table, dtype) for dtype in STORAGE_DTYPES}
    inputs_column, steps_column, results_column = view.layout()
    with inputs_column, presenting.controls("vl"):
        choice = widgets.vector_choice(requests.presets())  # typed rows, or what names them
        vectors = requests.vectors(choice)  # a preset's or a random draw, stored in its dtype
        config, errors, notes = widgets.norm_inputs(choice, vectors, default_eps)

    with steps_column:
        show_errors(errors)
        for note in notes:
            st.info(note, icon=":material/info:")
        if config is None:
            st.info(t("vector_lab.fix_input"), icon=":material/edit:")
        else:
            rows, spec, dtype = config.rows, config.spec, config.input_dtype
            explanation = compute(
                explain_vectors, rows, spec, dtype, config.weight, config.bias, config.row_index
            )
            story = explanation.precision
            facts = compute(dtype_facts, story.spec.dtype if story else dtype)
            view.steps(explanation)
            with results_column:
                view.chart(explanation)
                typed = None if choice.random else rows  # a draw's float64 values were never shown
                view.precision(explanation, typed, facts, default_eps)
                view.comparison(explanation)
                view.outputs_table(explanation)
                view.formula(explanation)


lab()
