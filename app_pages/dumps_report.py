"""The activation dumps page's report, in sections that rerun alone (not a page of its own:
``app_pages/dumps.py`` reads the dump and calls ``report``)."""

import streamlit as st

from ui.requests import dumps as requests
from ui.sections import section
from ui.url.pages import DUMPS as P
from ui.views import dumps as view
from ui.widgets import dumps as widgets


@section  # the section or the colour scale rerun the report, not the file's reading
def report(source, dump, rep, tables, tokens, live, capture) -> None:
    chosen = widgets.section()  # navigation: shown in every presentation mode
    if chosen == "stream":
        left, right = st.columns(2)
        batch = widgets.batch_choice(rep, right)
        names = None if tokens is None else tokens[batch]  # tokens: [B][T] or None
        view.residual_intro()
        view.residual(rep, tables, batch, widgets.log_colors(left), names, source.share)
        requests.story_section(source, dump, rep, batch, names)
    elif chosen == "massive":
        view.massive(rep, tables, tokens, source.share)
        requests.precision_section(live, capture, source.share)  # nothing for a file
    elif chosen == "centering":
        view.centering(rep, source.share)
        token_detail(source, dump, rep)
    elif chosen == "channels":
        view.channels(rep, source.share)
        channel_detail(source, rep, tables)
    elif view.dyt_intro(rep):
        norm_detail(source, rep, tables, tokens)
    view.downloads(tables, requests.json_writer(source, rep, tables), source.name)


@section  # a layer or token picked reruns this alone
def token_detail(source, dump, rep) -> None:
    first, batch, last = widgets.one_token_row(rep)
    layer = widgets.layer_choice(P["du_token_layer"], rep, first)
    requests.token_section(source, dump, rep, layer, batch, widgets.token_choice(rep, last))


@section
def channel_detail(source, rep, tables) -> None:
    layer = widgets.layer_choice(P["du_channel_layer"], rep, st.columns(2)[0])
    view.channel_detail(rep, tables, layer, source.share)


@section
def norm_detail(source, rep, tables, tokens) -> None:
    first, batch, last = widgets.one_token_row(rep)
    largest = requests.story(source, rep, batch).largest_pair or 0  # the norm reading it
    pair = rep.layout.norm_pairs[widgets.pair_choice(rep, largest, first)]
    token = widgets.io_token_choice(rep, last)
    names = None if tokens is None else tokens[batch]  # tokens: [B][T] or None
    requests.norm_section(source, rep, tables, pair, batch, token, names)
