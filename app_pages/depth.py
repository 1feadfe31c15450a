"""Depth: where the norm sits, and how the residual stream and gradients grow with depth."""

import streamlit as st

from ui.i18n import t
from ui.views import depth as view
from ui.widgets.depth import depth_inputs, training_inputs

st.title(t("depth.title"))
st.caption(t("depth.intro"))

inputs = depth_inputs()
for message in inputs.errors:
    st.error(message, icon=":material/error:")

stack_tab, sweep_tab, wiring_tab, training_tab = st.tabs(
    [t("depth.tab_stack"), t("depth.tab_sweep"), t("depth.tab_wiring"), t("depth.tab_training")]
)
if inputs.specs:
    with stack_tab:
        view.stack(view.simulate(inputs.specs))
    with sweep_tab:
        view.sweep(inputs.specs)
    with wiring_tab:
        view.wiring(inputs.specs)
with training_tab:
    st.markdown(t("depth.training_intro"))
    runs = training_inputs()
    start = st.button(
        t("depth.train"), type="primary", icon=":material/play_arrow:", key="tl_train"
    )
    view.training(runs.runs, start)
