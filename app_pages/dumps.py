"""Activation dumps: what a real model's residual stream says about its normalization."""

import streamlit as st

from engine.errors import EngineError
from ui import jobs, presenting
from ui.compute import compute
from ui.errors import error_text
from ui.i18n import t
from ui.share import DUMPS as P
from ui.views import dumps as view
from ui.widgets import dumps as widgets

st.title(t("dumps.title"))
st.caption(t("dumps.intro"))
with presenting.controls("du"):
    uploaded = widgets.dump_source()
rep = None
if uploaded is not None:
    st.subheader(t("dumps.inferred_title"))
    facts = st.container()
    settings = widgets.dump_settings()
    for message in settings.errors:
        st.error(message, icon=":material/error:")
    try:
        if settings.spec is not None:
            dump = compute(jobs.dump_open(uploaded, settings.spec))
            spec = widgets.stream_override(uploaded, dump.layout, settings)
            rep = compute(jobs.dump_report(uploaded, dump, spec))
    except EngineError as error:  # a bad file, or an override that does not fit it
        facts.error(error_text(error), icon=":material/error:")
if rep is not None:
    tables = compute(jobs.dump_tables(uploaded, rep))
    with facts:
        view.inferred(rep)
    view.nonfinite(rep, tables)
    view.residual_intro()
    left, right = st.columns(2)
    log = widgets.log_colors(left)
    batch = widgets.batch_choice(rep, right)
    view.residual(rep, tables, batch, log)
    view.massive(rep, tables)
    view.centering(rep)
    left, right = st.columns(2)
    layer = widgets.layer_choice(P["du_token_layer"], rep, left)
    row = batch * rep.layout.tokens + widgets.token_choice(rep, right)
    view.token_detail(compute(jobs.dump_token_norms(uploaded, dump, spec, layer, row)), rep)
    view.channels(rep)
    layer = widgets.layer_choice(P["du_channel_layer"], rep, st.columns(2)[0])
    view.channel_detail(rep, tables, layer)
    if view.dyt_intro(rep):
        view.dyt(rep, tables, widgets.pair_choice(rep))
    view.downloads(rep, tables, uploaded.upload.name)
