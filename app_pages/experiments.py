"""Experiments: change one norm of a real model, predict what breaks, then measure it."""

import streamlit as st

from ui import presenting
from ui.i18n import t
from ui.requests import experiments as requests
from ui.views import experiments as view
from ui.widgets import experiments as widgets

st.title(t("experiments.title"))
st.caption(t("experiments.intro"))
with presenting.controls("ex"):
    chosen = widgets.inputs(requests.local_models())
for message in chosen.errors:
    st.error(message, icon=":material/error:")
if chosen.spec is not None and chosen.text is not None:
    committed = widgets.prediction(chosen)
    if committed is not None:
        found = requests.run(chosen)
        if found is not None:
            view.verdict(chosen.experiment, committed, found)
            view.results(found)
