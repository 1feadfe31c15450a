"""Activation dumps: what a real model's residual stream says about its normalization."""

import streamlit as st

from engine.errors import EngineError
from ui import jobs, live_model, presenting
from ui.compute import compute, run_on_request
from ui.errors import error_text
from ui.i18n import t
from ui.text.dumps import dump_norm, dump_tokens, storage_dtype
from ui.url import DUMPS as P
from ui.views import dumps as view
from ui.views import dumps_real as real
from ui.widgets import dumps as widgets


def live_source():
    """The live model's capture of the prompt, as the dump the page reads (or None)."""
    live = real.live_status(live_model.model_load(), live_model.forget)
    prompt = widgets.live_prompt()
    for message in prompt.errors:
        st.error(message, icon=":material/error:")
    if live is None or prompt.spec is None:
        return None, None, None
    job = jobs.live_capture(live, prompt.spec, prompt.given)
    try:  # a long prompt takes about a second: from a link, only on a click
        found = run_on_request([job], t("dumps.live_run"), "dumps_live_run")
    except EngineError as error:  # e.g. a prompt over the model's token cap
        st.error(error_text(error), icon=":material/error:")
        return None, None, None
    if found is None:
        return None, None, None
    return widgets.live_source(found[0]), found[0], live


st.title(t("dumps.title"))
st.caption(t("dumps.intro"))
capture = live = None
with presenting.controls("du"):
    kind = widgets.source_choice()
    if kind == "example":
        source = widgets.example_dump()
        st.caption(t("dumps.example_note"))
    elif kind == "upload":
        source = widgets.uploaded_source()
    else:
        source, capture, live = live_source()
rep = None
if source is not None:
    st.subheader(t("dumps.inferred_title"))
    facts = st.container()
    settings = widgets.dump_settings()
    for message in settings.errors:
        st.error(message, icon=":material/error:")
    try:
        if settings.spec is not None:
            dump = compute(jobs.dump_open(source, settings.spec))
            spec = widgets.stream_override(source, dump.layout, settings)
            read = compute(jobs.dump_report(source, dump, spec))  # no thresholds: see below
            rep = compute(jobs.dump_judged(source, read, spec))  # thresholds: no data read
    except EngineError as error:  # a bad file, or an override that does not fit it
        facts.error(error_text(error), icon=":material/error:")
if rep is not None:
    tables = compute(jobs.dump_tables(source, rep))
    tokens = dump_tokens(rep)  # [B][T] each token's text, when a capture made the dump
    with facts:
        view.inferred(rep)
        if capture is not None:
            real.live_summary(capture)
    view.nonfinite(rep, tables)
    view.residual_intro()
    left, right = st.columns(2)
    log = widgets.log_colors(left)
    batch = widgets.batch_choice(rep, right)
    names = None if tokens is None else tokens[batch]
    view.residual(rep, tables, batch, log, names)
    story = compute(jobs.dump_story(source, rep, batch))
    where = story.largest_at
    row = None if where is None else compute(jobs.dump_row(source, dump, *where[:3]))
    real.story(story, names, row, *dump_norm(rep))
    view.massive(rep, tables, tokens)
    view.centering(rep)
    left, right = st.columns(2)
    layer = widgets.layer_choice(P["du_token_layer"], rep, left)
    token_row = batch * rep.layout.tokens + widgets.token_choice(rep, right)
    view.token_detail(compute(jobs.dump_token_norms(source, dump, spec, layer, token_row)), rep)
    view.channels(rep)
    layer = widgets.layer_choice(P["du_channel_layer"], rep, st.columns(2)[0])
    view.channel_detail(rep, tables, layer)
    if view.dyt_intro(rep):
        left, right = st.columns(2)
        pairs = rep.layout.norm_pairs
        pair = pairs[widgets.pair_choice(rep, story.largest_pair or 0, left)]
        io_token = widgets.io_token_choice(rep, right)
        step = compute(jobs.dump_norm_step(source, rep, pair.label, batch, io_token))
        real.norm_io(step, names, storage_dtype(rep), pair.label)
        fits = {fit.label: fit for fit in rep.dyt}
        view.dyt(fits.get(pair.label) or compute(jobs.dump_dyt_fit(source, pair)), tables)
    if live is not None:
        real.precision_intro()
        precision = jobs.live_precision(live, capture.spec.prompt, source.share)
        label = t("dumps.precision_run")
        found = run_on_request([precision], label, "dumps_precision", always_ask=True)
        if found:
            real.precision(found[0])
    view.downloads(rep, tables, source.name)
