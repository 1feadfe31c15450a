"""The activation dumps page's report, in sections that rerun alone (not a page of its own:
``app_pages/dumps.py`` reads the dump and calls ``report``)."""

import streamlit as st

from app_pages.dumps_details import channel_detail, norm_detail, token_detail
from ui import presenting
from ui.i18n import t
from ui.requests import dumps as requests
from ui.sections import section
from ui.views import dumps as view
from ui.views import dumps_real as real
from ui.widgets import dumps as widgets


@section  # the section or the colour scale rerun the report, not the file's reading
def report(source, dump, rep, tables, tokens, live, capture) -> None:
    if rep.nothing_finite:  # said above, with its counts; every chart would be empty
        st.info(t("dumps.nothing_finite"), icon=":material/block:")
        return view.downloads(tables, requests.json_writer(source, rep, tables), source.name)
    chosen = widgets.section()  # navigation: shown in every presentation mode
    if chosen == "stream":
        with presenting.controls("du_stream", "dumps.controls.stream"):
            left, right = st.columns(2)
            batch, log_colors = widgets.batch_choice(rep, right), widgets.log_colors(left)
        names = None if tokens is None else tokens[batch]  # tokens: [B][T] or None
        view.residual_intro()
        view.residual(rep, tables, batch, log_colors, names, source.share)
        found = requests.story(source, rep, batch)
        real.story(found, names, requests.largest_row(source, dump, found), rep)
    elif chosen == "massive":
        view.massive(rep, tables, tokens, source.share)
        if live is not None:  # the live model's prompt in three precisions; nothing for a file
            real.precision_intro()
            if (found := requests.precisions(live, capture, source.share)) is not None:
                real.precision(found)
    elif chosen == "centering":
        view.centering(rep, source.share)
        token_detail(source, dump, rep)
    elif chosen == "channels":
        view.channels(rep, source.share)
        channel_detail(source, rep, tables)
    elif view.dyt_intro(rep):
        norm_detail(source, rep, tables, tokens)
    view.downloads(tables, requests.json_writer(source, rep, tables), source.name)
