"""Experiments: change one norm of a real model, predict what breaks, then measure it."""

import streamlit as st

from ui import live_model, presenting
from ui.i18n import current_language, t
from ui.requests import experiments as requests
from ui.text.experiments import chosen_line
from ui.views import experiments as view
from ui.views.dumps_real import live_status
from ui.widgets import experiments as widgets


def run(chosen):
    """The run: precomputed, computed by any session, or on a click; None until then (or
    while the model loads)."""
    stored = requests.precomputed(chosen)
    if stored is not None:
        view.precomputed(stored)
        return stored.run
    live = live_status(live_model.model_load(requests.model_path(chosen)), live_model.forget)
    found = None if live is None else requests.run(chosen, live)
    if found is not None:
        view.ran(found)
    return found


st.title(t("experiments.title"))
st.caption(t("experiments.intro"))
with presenting.controls("ex"):
    models = requests.local_models()  # the operator's; a linked id they lack is refused
    chosen = widgets.inputs(models, requests.model_refusal(widgets.linked_model(), models))
chosen = requests.within_model(chosen)  # a block past the model: refused before it loads
for message in chosen.errors:
    st.error(message, icon=":material/error:")
if chosen.spec is not None and chosen.text is not None:
    if presenting.presenting():  # the settings a question names are in a closed box
        st.markdown(chosen_line(chosen.experiment, chosen.spec, current_language()))
    committed = widgets.prediction(chosen)
    if committed is not None:
        found = run(chosen)
        if found is not None:
            first = widgets.judged(chosen.request, committed)
            view.verdict(chosen.experiment, committed, found, first)
            view.results(found)
