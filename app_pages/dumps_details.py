"""The activation dumps report's details, each a section that reruns alone: one token's
LayerNorm and RMSNorm, one layer's channels, one norm's input and output (not a page of its
own: ``app_pages/dumps_report.py`` calls them)."""

import streamlit as st

from ui import presenting
from ui.requests import dumps as requests
from ui.sections import section
from ui.url.pages import DUMPS as P
from ui.views import dumps as view
from ui.views import dumps_real as real
from ui.widgets import dumps as widgets


@section  # a layer or token picked reruns this alone
def token_detail(source, dump, rep) -> None:
    with presenting.controls("du_token", "dumps.controls.token"):
        first, batch, last = widgets.one_token_row(rep)
        layer = widgets.layer_choice(P["du_token_layer"], rep, first)
        token = widgets.token_choice(rep, last)
    view.token_detail(
        requests.token_norms(source, dump, rep, layer, batch, token), rep, source.share
    )


@section
def channel_detail(source, rep, tables) -> None:
    with presenting.controls("du_channel", "dumps.controls.channel"):
        layer = widgets.layer_choice(P["du_channel_layer"], rep, st.columns(2)[0])
    view.channel_detail(rep, tables, layer, source.share)


@section
def norm_detail(source, rep, tables, tokens) -> None:
    with presenting.controls("du_norm", "dumps.controls.norm"):
        first, batch, last = widgets.one_token_row(rep)
        largest = requests.story(source, rep, batch).largest_pair or 0  # the norm reading it
        pair = rep.layout.norm_pairs[widgets.pair_choice(rep, largest, first)]
        token = widgets.io_token_choice(rep, last)
    names = None if tokens is None else tokens[batch]  # tokens: [B][T] or None
    real.norm_io(requests.token_step(source, rep, pair, batch, token), names, rep, pair.label)
    view.dyt(requests.dyt_fit(source, rep, pair), tables, rep.spec, source.share)
