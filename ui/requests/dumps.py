"""The Activation dumps page's requests: the operator's dump files (and the refusal of a
linked one they do not hold), and what the page reads and computes for the dump it shows,
through ``ui.compute`` (keyed by the dump's source, never by its bytes, and kept in the browser
session for an upload or a typed prompt), each drawn by ``ui/views/dumps.py`` and
``ui/views/dumps_real.py``.
``source`` is the ``ChosenDump`` read (ui/widgets/dumps.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial

import numpy as np

from engine.config import LIVE_PROMPTS, DumpSpec, LiveSpec
from engine.dumps.dump import Dump, open_dump, read_tokens
from engine.dumps.example import EXAMPLE_DUMP
from engine.dumps.live import LiveCapture, capture_live, capture_work, read_norm_io
from engine.dumps.live_precision import PrecisionComparison, compare_precisions
from engine.dumps.local_files import DUMP_DIRS_VARIABLE, LocalDump, find_dump, list_dumps
from engine.dumps.norm_step import NormStep, norm_step
from engine.dumps.norm_views import DyTFit, compare_norms, fit_dyt
from engine.dumps.report import DumpReport, report, report_work
from engine.dumps.story import StreamStory, stream_story
from engine.dumps.tables import json_text, report_summary, report_tables
from engine.errors import EngineError
from ui.compute import compute, run_heavy
from ui.errors import showing_refusals
from ui.formatting import bytes_text, literal
from ui.i18n import t
from ui.requests.linked import unlisted
from ui.text import dumps as text
from ui.url.pages import DUMPS


def folder_dumps() -> tuple[LocalDump, ...]:
    """The dump files in the operator's folders: listed again every ``ui.compute.RECENT_S``
    seconds at most, so a file written there shows soon, without every rerun walking the
    folders."""
    setting = os.environ.get(DUMP_DIRS_VARIABLE, "")
    if not setting.strip():
        return ()
    return compute(list_dumps, key=setting, recent=True)


def file_refusal(wanted: str, dumps: tuple[LocalDump, ...]) -> EngineError | None:
    """Why the linked folder file ``wanted`` is refused (None: none linked, or a listed one)."""
    return unlisted(find_dump, wanted, dumps)


def captured(live, prompt: LiveSpec | None) -> LiveCapture | None:
    """The live model's capture of ``prompt``, or None: no model, a refused prompt (its
    errors are the page's to show), or a long prompt from a link waiting for a click.  A
    given prompt's capture is shared between sessions, a typed one's kept in its session."""
    if live is None or prompt is None:
        return None
    with showing_refusals():  # e.g. a prompt over the model's token cap
        found = run_heavy(
            capture_live,
            [(live, prompt)],
            [t("dumps.live_running", model=live.name)],
            keys=[(live.name, prompt)],
            private=prompt.prompt not in LIVE_PROMPTS,
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
        "button": t("dumps.reading_large", size=bytes_text(dump.nbytes)),
        "widget_key": "dumps_read",
    }


def tables_and_tokens(source, rep: DumpReport) -> tuple[dict, tuple | None]:
    """The report's tables, and each token's text ([B][T], or None: the dump carries none)."""
    found = compute(report_tables, rep, key=(source.key, rep.spec), private=not source.share)
    return found, text.dump_tokens(rep)


def story(source, rep: DumpReport, batch: int) -> StreamStory:
    """What the stream shows (its sentences, its largest entry and the norm that reads it)."""
    key = (source.key, rep.spec, batch)
    return compute(stream_story, rep, batch, key=key, private=not source.share)


def largest_row(source, dump: Dump, found: StreamStory) -> np.ndarray | None:
    """The d stored numbers of the token holding the stream's largest entry (one row read),
    or None where the stream has none."""
    if found.largest_at is None:
        return None
    layer, at_batch, token, _ = found.largest_at
    index = at_batch * dump.layout.tokens + token
    key = (source.key, dump.spec, layer, index)
    row = compute(read_tokens, dump, [layer], [index], key=key, private=not source.share)
    return row[0, 0].numpy()


def token_norms(source, dump: Dump, rep: DumpReport, layer: int, batch: int, token: int):
    """LayerNorm and RMSNorm of one token of the dump (one row read)."""
    row = batch * rep.layout.tokens + token
    key = (source.key, dump.spec, layer, row)
    args = (dump, layer, [row], dump.spec.norm_eps)
    return compute(compare_norms, *args, key=key, private=not source.share)


def token_step(source, rep: DumpReport, pair, batch: int, token: int) -> NormStep:
    """One token through the chosen norm: its captured input and output, worked through."""
    private, key = not source.share, (source.key, rep.spec, pair.label, batch, token)
    io = compute(read_norm_io, rep, pair.label, batch, token, key=key, private=private)
    return compute(norm_step, io, key=key, private=private)


def dyt_fit(source, rep: DumpReport, pair) -> DyTFit:
    """The norm's DyT curve: the report's, or fitted here when the report was made without
    fits (the live model's)."""
    fits = {fit.label: fit for fit in rep.dyt}
    fit = fits.get(pair.label)
    if fit is None:
        fit = compute(fit_dyt, pair, key=(source.key, pair.label), private=not source.share)
    return fit


def precisions(live, capture: LiveCapture, shared: bool) -> PrecisionComparison | None:
    """The live model's prompt in float32, bfloat16 and float16, on a click (None until
    then)."""
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
    return found[0] if found else None


def json_writer(source, rep: DumpReport, tables: dict) -> Callable[[], str]:
    """The report's JSON download, written when clicked: the summary is plain data taken
    now (the report itself may hold an upload's bytes, and the writer is kept a while)."""
    head = compute(report_summary, rep, key=(source.key, rep.spec), private=not source.share)
    return partial(json_text, head, tables)
