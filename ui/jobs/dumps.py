"""The Activation dumps page's jobs: open, report, tables, one token, one norm, the live model."""

from __future__ import annotations

from pathlib import Path

from ui.compute import Job
from ui.formatting import literal
from ui.i18n import t

# Activation dumps.  Every job below takes the ``ChosenDump`` (ui/widgets/dumps.py) it reads
# and keeps its results as that source says: an upload, or a prompt someone typed, is their
# own data (``share=False``: kept in this browser session's state, never in the process-wide
# store, dropped with the session); the shipped example and the given prompts are shared.
# A source is keyed by its id, never by its bytes.


def _dump_job(name: str, source, key, run, label="", seconds=0.0, max_entries=2) -> Job:
    kept = max_entries * 4 if source.share else max_entries  # shared: every session's views
    return Job(name, (source.key, key), run, label, seconds, source.share, kept)


def dump_open(source, spec) -> Job:
    """The dump's headers scanned and its layout inferred (no data read; an uploaded .pt is
    unpickled, on the pool with a progress bar when that may take a while).  Keyed without
    the thresholds (``reading_spec``): a new threshold reopens nothing."""
    from engine.dumps.cost import open_seconds
    from engine.dumps.dump import open_dump
    from engine.dumps.report import reading_spec

    reading = reading_spec(spec)

    def run(report, should_stop):
        return open_dump(source.opened, reading, should_stop)

    label = t("dumps.opening", file=literal(source.name))
    seconds = open_seconds(*_size(source.opened))
    return _dump_job("dumps.open", source, reading, run, label, seconds)


def _size(opened) -> tuple[str, int, bool]:
    """(suffix, bytes, held in memory) of what a ``ChosenDump`` opens."""
    from engine.dumps.sources import DumpFile, Upload

    if isinstance(opened, Upload):
        return Path(opened.name).suffix.lower(), len(opened.data), True
    if isinstance(opened, DumpFile):
        return opened.suffix, opened.size, opened.data is not None
    path = Path(opened)
    return path.suffix.lower(), path.stat().st_size if path.is_file() else 0, False


def dump_report(source, dump, spec) -> Job:
    """Every statistic of the dump: one streaming pass, with a progress bar when it is long.
    Keyed and computed without the thresholds (``dump_judged`` applies them)."""
    from engine.dumps.cost import report_seconds
    from engine.dumps.report import reading_spec, report

    reading = reading_spec(spec)

    def run(progress, should_stop):
        return report(dump, reading, progress, should_stop, fit_norms=source.fit_norms)

    label = t("dumps.reducing", file=literal(source.name))
    seconds = report_seconds(dump.layout, source.fit_norms)
    return _dump_job("dumps.report", source, reading, run, label, seconds, max_entries=3)


def dump_judged(source, rep, spec) -> Job:
    """The report with the thresholds of ``spec``: outliers and massive activations picked
    from the computed statistics, no data read (inline)."""
    from engine.dumps.report import judged

    def run(report, should_stop):
        return judged(rep, spec)

    return _dump_job("dumps.judged", source, spec, run, max_entries=3)


def dump_tables(source, rep) -> Job:
    """The report's tables, for the page's tables and downloads (milliseconds: inline)."""
    from engine.dumps.tables import report_tables

    def run(report, should_stop):
        return report_tables(rep)

    return _dump_job("dumps.tables", source, rep.spec, run)


def dump_token_norms(source, dump, spec, layer: int, row: int) -> Job:
    """LayerNorm and RMSNorm of one token of the dump (one row read: inline)."""
    from engine.dumps.dump import open_dump
    from engine.dumps.norm_views import compare_norms
    from engine.dumps.report import reading_spec

    reading = reading_spec(spec)

    def run(report, should_stop):  # ``dump`` re-laid out with the override, not re-scanned
        return compare_norms(open_dump(dump, reading), layer, [row], spec.norm_eps)

    return _dump_job("dumps.token", source, (reading, layer, row), run, max_entries=16)


def dump_row(source, dump, layer: int, batch: int, token: int) -> Job:
    """One token's d numbers at one point of the stream (for a Vector Lab link: inline)."""
    from engine.dumps.dump import read_tokens

    row = batch * dump.layout.tokens + token

    def run(report, should_stop):
        return read_tokens(dump, [layer], [row])[0, 0].double().numpy()  # [d]

    return _dump_job("dumps.row", source, (dump.spec, layer, row), run, max_entries=4)


def dump_story(source, rep, batch: int) -> Job:
    """The first token's jump, ordinary tokens' growth, the largest entry (inline)."""
    from engine.dumps.story import stream_story

    def run(report, should_stop):
        return stream_story(rep, batch)

    return _dump_job("dumps.story", source, (rep.spec, batch), run, max_entries=4)


def dump_norm_step(source, rep, norm: str, batch: int, token: int) -> Job:
    """One token through one captured norm, and the reference formula on it (inline)."""
    from engine.dumps.live import read_norm_io
    from engine.dumps.norm_step import norm_step

    def run(report, should_stop):
        return norm_step(read_norm_io(rep, norm, batch, token))

    return _dump_job("dumps.norm_step", source, (rep.spec, norm, batch, token), run, max_entries=8)


DYT_FIT_S = 0.5  # one norm pair's DyT fit on this machine (benchmarks/RESULTS.md, live model)


def dump_dyt_fit(source, pair) -> Job:
    """The DyT curve of one norm pair, for a report made without fits (the live model)."""
    from engine.dumps.norm_views import fit_dyt

    def run(report, should_stop):
        return fit_dyt(pair)

    label = t("dumps.fitting", norm=literal(pair.label))
    return _dump_job("dumps.dyt_fit", source, pair.label, run, label, DYT_FIT_S, max_entries=8)


def live_capture(live, spec, shared: bool) -> Job:
    """A prompt through the live model, as an in-memory dump (``engine.dumps.live``)."""
    from engine.dumps.cost import live_seconds
    from engine.dumps.live import capture_live

    def run(report, should_stop):
        return capture_live(live, spec, threads=1)

    label = t("dumps.live_running", model=live.name)
    seconds = live_seconds(live.prompt_tokens(spec.prompt))
    kept = 16 if shared else 2  # a capture holds its activations: a session keeps two
    return Job("dumps.live", (live.name, spec), run, label, seconds, shared, kept)


def live_precision(live, prompt: str, shared: bool) -> Job:
    """The prompt in float32, bfloat16 and float16, and which norms overflow in float16."""
    from engine.dumps.cost import precision_seconds
    from engine.dumps.live_precision import compare_precisions

    def run(progress, should_stop):
        return compare_precisions(live, prompt, progress, should_stop, threads=1)

    label = t("dumps.precision_running")
    seconds = precision_seconds(len(prompt))
    return Job("dumps.precision", (live.name, prompt), run, label, seconds, shared, 8)
