"""The Activation dumps page's requests: what it reads and computes for the dump it shows,
through ``ui.compute`` (keyed by the dump's source, never by its bytes, and kept in the browser
session for an upload or a typed prompt), each drawn by the sections of ``ui/views/dumps.py``.
``source`` is the ``ChosenDump`` read (ui/widgets/dumps.py).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import streamlit as st

from engine.config import DumpSpec, LiveSpec
from engine.dumps.dump import Dump, open_dump, read_tokens
from engine.dumps.example import EXAMPLE_DUMP
from engine.dumps.live import LiveCapture, capture_live, capture_work, read_norm_io
from engine.dumps.live_precision import compare_precisions
from engine.dumps.norm_step import norm_step
from engine.dumps.norm_views import compare_norms, fit_dyt
from engine.dumps.report import DumpReport, report, report_work
from engine.dumps.story import StreamStory, stream_story
from engine.dumps.tables import json_text, report_summary, report_tables
from ui.compute import compute, run_heavy
from ui.errors import showing_refusals
from ui.formatting import literal
from ui.i18n import current_language, t
from ui.text import dumps as text
from ui.url.pages import DUMPS
from ui.views import dumps_real as real
from ui.views.dumps import dyt, inferred, nonfinite, token_detail


def captured(live, prompt) -> LiveCapture | None:
    """The live model's capture of ``prompt`` (a ``LivePrompt``), or None: no model, a refused
    prompt, or a long prompt from a link waiting for a click."""
    for message in prompt.errors:
        st.error(message, icon=":material/error:")
    if live is None or prompt.spec is None:
        return None
    with showing_refusals():  # e.g. a prompt over the model's token cap
        found = run_heavy(
            capture_live,
            [(live, prompt.spec)],
            [t("dumps.live_running", model=live.name)],
            keys=[(live.name, prompt.spec)],
            private=not prompt.given,
            button=t("dumps.live_run"),
            widget_key="dumps_live_run",
            work=capture_work,
            default=(live, LiveSpec(DUMPS["du_prompt"].default)),
        )
        return None if found is None else found[0]
    return None


def opened(source, dump_or_file, spec: DumpSpec) -> Dump:
    """The dump's headers scanned and its layout inferred as ``spec`` says (or an opened dump
    laid out again, reading nothing), keyed without the thresholds: a new threshold reopens
    nothing.  An uploaded .pt is unpickled here: in a core slot, stopped with the page."""
    reading = spec.reading
    (dump,) = run_heavy(
        open_dump,
        [(dump_or_file, reading)],
        [t("dumps.opening", file=literal(source.name))],
        keys=[(source.key, reading)],
        private=not source.share,
    )
    return dump


def read(source, dump: Dump, spec: DumpSpec) -> tuple[Dump, DumpReport | None]:
    """``dump`` laid out as ``spec`` says (its stream: nothing read), and its report with the
    thresholds of ``spec``: every value is read once per layout; a new threshold reads
    nothing."""
    dump = opened(source, dump, spec)
    found = run_heavy(
        report,
        [(dump, dump.spec, source.fit_norms)],
        [t("dumps.reducing", file=literal(source.name))],
        keys=[(source.key, dump.spec)],
        private=not source.share,
        **_weighed(source, dump),
    )
    if found is None:  # a large file of the server's folders, waiting for a click
        return dump, None
    return dump, found[0].judged(spec)  # not kept: milliseconds, and it would hold the bytes


def _weighed(source, dump: Dump) -> dict:
    """A server folder's file is weighed against the built-in example (the page's default):
    up to ``AUTO_START_FACTOR`` times its values it is read at once, a larger one on a click.
    An upload is read at once (the upload limit bounds it, and uploading was the click)."""
    if source.kind != "folder":
        return {}
    example = compute(open_dump, str(EXAMPLE_DUMP), DumpSpec())
    return {
        "work": report_work,
        "default": (example, example.spec, True),
        "button": t("dumps.reading_large", size=text.size_text(dump.nbytes)),
        "widget_key": "dumps_read",
    }


def read_summary(source, rep: DumpReport, facts, capture) -> tuple[dict, tuple | None]:
    """What was read (in ``facts``, with the live capture's tokens), the non-finite values
    and the residual stream's introduction; the report's tables and each token's text."""
    tables = compute(report_tables, rep, key=(source.key, rep.spec), private=not source.share)
    with facts:
        inferred(rep)
        if (note := text.tokens_note(rep, current_language())) is not None:
            st.caption(note)
        if capture is not None:
            real.live_summary(capture)
    nonfinite(rep, tables)
    return tables, text.dump_tokens(rep)


def story(source, rep: DumpReport, batch: int) -> StreamStory:
    """What the stream shows (its sentences, its largest entry and the norm that reads it)."""
    key = (source.key, rep.spec, batch)
    return compute(stream_story, rep, batch, key=key, private=not source.share)


def story_section(source, dump: Dump, rep: DumpReport, batch: int, names) -> None:
    """What the stream shows, with the largest entry's token opened in the Vector Lab."""
    private = not source.share
    found = story(source, rep, batch)
    row = None
    if found.largest_at is not None:
        layer, at_batch, token, _ = found.largest_at
        index = at_batch * dump.layout.tokens + token
        key = (source.key, dump.spec, layer, index)
        row = compute(read_tokens, dump, [layer], [index], key=key, private=private)[0, 0]
    real.story(found, names, None if row is None else row.numpy(), *text.dump_norm(rep))


def token_section(source, dump: Dump, rep: DumpReport, layer: int, batch: int, token: int):
    """LayerNorm and RMSNorm of one token of the dump (one row read)."""
    row = batch * rep.layout.tokens + token
    key = (source.key, dump.spec, layer, row)
    args = (dump, layer, [row], dump.spec.norm_eps)
    norms = compute(compare_norms, *args, key=key, private=not source.share)
    token_detail(norms, rep, source.share)


def norm_section(source, rep: DumpReport, tables, pair, batch: int, token: int, names) -> None:
    """One token through the chosen norm, and the norm's DyT curve (fitted here when the
    report was made without fits: the live model's)."""
    private, key = not source.share, (source.key, rep.spec, pair.label, batch, token)
    io = compute(read_norm_io, rep, pair.label, batch, token, key=key, private=private)
    step = compute(norm_step, io, key=key, private=private)
    real.norm_io(step, names, text.storage_dtype(rep), pair.label)
    fits = {fit.label: fit for fit in rep.dyt}
    fit = fits.get(pair.label)
    if fit is None:
        fit = compute(fit_dyt, pair, key=(source.key, pair.label), private=private)
    dyt(fit, tables, source.share)


def precision_section(live, capture: LiveCapture | None, shared: bool) -> None:
    """The live model's prompt in float32, bfloat16 and float16, on a click (nothing for a
    file: ``live`` is None)."""
    if live is None:
        return
    real.precision_intro()
    prompt = capture.spec.prompt
    found = run_heavy(
        compare_precisions,
        [(live, prompt)],
        [t("dumps.precision_running")],
        keys=[(live.name, prompt)],
        private=not shared,
        button=t("dumps.precision_run"),
        widget_key="dumps_precision",
        always_ask=True,
    )
    if found:
        real.precision(found[0])


def json_writer(source, rep: DumpReport, tables: dict) -> Callable[[], str]:
    """The report's JSON download, written when clicked: the summary is plain data taken
    now (the report itself may hold an upload's bytes, and the writer is kept a while)."""
    head = compute(report_summary, rep, key=(source.key, rep.spec), private=not source.share)
    return partial(json_text, head, tables)
