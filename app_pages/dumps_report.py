"""The activation dumps page's report, in sections that rerun alone (not a page of its own:
``app_pages/dumps.py`` reads the dump and calls ``report``)."""

import streamlit as st

from ui.sections import section
from ui.url.pages import DUMPS as P
from ui.views import dumps as view
from ui.views import dumps_requests as requests
from ui.widgets import dumps as widgets


@section  # the batch or the colour scale reruns the report, not the file's reading
def report(source, dump, rep, tables, tokens, live, capture) -> None:
    left, right = st.columns(2)
    log = widgets.log_colors(left)
    batch = widgets.batch_choice(rep, right)
    names = None if tokens is None else tokens[batch]  # tokens: [B][T] or None
    view.residual(rep, tables, batch, log, names)
    story = requests.story_section(source, dump, rep, batch, names)
    view.massive(rep, tables, tokens)
    view.centering(rep)
    token_detail(source, dump, rep, batch)
    view.channels(rep)
    channel_detail(rep, tables)
    if view.dyt_intro(rep):
        norm_detail(source, rep, tables, batch, names, story.largest_pair or 0)
    requests.precision_section(live, capture, source.share)  # nothing for a file
    view.downloads(tables, requests.json_writer(source, rep, tables), source.name)


@section  # a layer or token picked reruns this alone
def token_detail(source, dump, rep, batch: int) -> None:
    left, right = st.columns(2)
    layer = widgets.layer_choice(P["du_token_layer"], rep, left)
    requests.token_section(source, dump, rep, layer, batch, widgets.token_choice(rep, right))


@section
def channel_detail(rep, tables) -> None:
    layer = widgets.layer_choice(P["du_channel_layer"], rep, st.columns(2)[0])
    view.channel_detail(rep, tables, layer)


@section
def norm_detail(source, rep, tables, batch: int, names, largest: int) -> None:
    left, right = st.columns(2)
    pair = rep.layout.norm_pairs[widgets.pair_choice(rep, largest, left)]
    token = widgets.io_token_choice(rep, right)
    requests.norm_section(source, rep, tables, pair, batch, token, names)
