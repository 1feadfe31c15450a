"""Activation dumps: what a real model's residual stream says about its normalization."""

import streamlit as st

from app_pages.dumps_report import report
from ui import live_model, presenting
from ui.errors import show_errors, showing_refusals
from ui.i18n import t
from ui.requests import dumps as requests
from ui.views import dumps as view
from ui.views import dumps_real as real
from ui.widgets import dumps as widgets

st.title(t("dumps.title"))
st.caption(t("dumps.intro"))
capture = live = rep = None
with presenting.controls("du"):
    folder_dumps = requests.folder_dumps()  # the operator's (NORMSCOPE_DUMP_DIRS); none: hidden
    kind = widgets.source_choice(bool(folder_dumps))
    if kind == "example":
        source = widgets.example_dump()
        st.caption(t("dumps.example_note"))
    elif kind == "upload":
        source = widgets.uploaded_source()
    elif kind == "folder":
        refused = requests.file_refusal(widgets.linked_file(), folder_dumps)
        source = widgets.folder_source(folder_dumps, refused)
    else:
        live = real.live_status(live_model.model_load(), live_model.forget)
        prompt, errors = widgets.live_prompt()
        show_errors(errors)
        capture = requests.captured(live, prompt)
        source = None if capture is None else widgets.live_source(capture)
if source is not None:
    # presenting, what was read is a closed box titled so: it took a room two screens
    with presenting.controls("du_read", "dumps.inferred_title"):
        if not presenting.presenting():
            st.subheader(t("dumps.inferred_title"))
        facts = st.container()
    settings, errors, stream_slot = widgets.dump_settings()
    show_errors(errors)
    # a bad file, or an override that does not fit it (presenting, not in the closed box)
    with showing_refusals(st if presenting.presenting() else facts):
        if settings is not None:
            dump = requests.opened(source, source.opened, settings)
            spec = widgets.stream_override(source, dump.layout, settings, stream_slot)
            dump, rep = requests.read(source, dump, spec)
if rep is not None:
    tables, tokens = requests.tables_and_tokens(source, rep)  # tokens: [B][T] or None
    view.read_summary(rep, tables, facts, capture)
    report(source, dump, rep, tables, tokens, live, capture)
