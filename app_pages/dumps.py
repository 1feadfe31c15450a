"""Activation dumps: what a real model's residual stream says about its normalization."""

import streamlit as st

from ui import live_model, presenting
from ui.errors import showing_refusals
from ui.i18n import t
from ui.url import DUMPS as P
from ui.views import dumps as view
from ui.views import dumps_real as real
from ui.widgets import dumps as widgets

st.title(t("dumps.title"))
st.caption(t("dumps.intro"))
capture = live = rep = None
with presenting.controls("du"):
    kind = widgets.source_choice()
    if kind == "example":
        source = widgets.example_dump()
        st.caption(t("dumps.example_note"))
    elif kind == "upload":
        source = widgets.uploaded_source()
    else:
        live = real.live_status(live_model.model_load(), live_model.forget)
        capture = view.captured(live, widgets.live_prompt())
        source = None if capture is None else widgets.live_source(capture)
if source is not None:
    st.subheader(t("dumps.inferred_title"))
    facts = st.container()
    settings = widgets.dump_settings()
    for message in settings.errors:
        st.error(message, icon=":material/error:")
    with showing_refusals(facts):  # a bad file, or an override that does not fit it
        if settings.spec is not None:
            dump = view.opened(source, source.opened, settings.spec)
            spec = widgets.stream_override(source, dump.layout, settings)
            dump, rep = view.read(source, dump, spec)
if rep is not None:
    tables, tokens = view.read_summary(source, rep, facts, capture)  # tokens: [B][T] or None
    left, right = st.columns(2)
    log = widgets.log_colors(left)
    batch = widgets.batch_choice(rep, right)
    names = None if tokens is None else tokens[batch]
    view.residual(rep, tables, batch, log, names)
    story = view.story_section(source, dump, rep, batch, names)
    view.massive(rep, tables, tokens)
    view.centering(rep)
    left, right = st.columns(2)
    layer = widgets.layer_choice(P["du_token_layer"], rep, left)
    view.token_section(source, dump, rep, layer, batch, widgets.token_choice(rep, right))
    view.channels(rep)
    layer = widgets.layer_choice(P["du_channel_layer"], rep, st.columns(2)[0])
    view.channel_detail(rep, tables, layer)
    if view.dyt_intro(rep):
        left, right = st.columns(2)
        pair = rep.layout.norm_pairs[widgets.pair_choice(rep, story.largest_pair or 0, left)]
        token = widgets.io_token_choice(rep, right)
        view.norm_section(source, rep, tables, pair, batch, token, names)
    view.precision_section(live, capture, source.share)  # nothing for a file
    view.downloads(rep, tables, source.name)
