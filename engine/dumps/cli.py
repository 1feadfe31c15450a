"""``python -m engine.dumps``: the dumps page's diagnostics from the command line.

    python -m engine.dumps report FILE_OR_DIR [--json OUT] [--csv DIR] [--dask ADDRESS|local]
    python -m engine.dumps capture --model PATH --prompt TEXT [--prompt TEXT ...] --out FILE

prints the tables the page shows (the same ``engine.dumps.tables``), with a progress bar
on stderr; ``--json`` and ``--csv`` write every table.  Each subcommand registers itself
in ``COMMANDS`` (name → (help, add_arguments, run)); ``capture`` lives in ``capture.py``
and is imported only when used (it needs transformers).
Exit status: 0 done, 2 refused (the message says why), 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

import pandas as pd

from engine.config import DUMP_AXES, DUMP_LAYER_ORDERS, DumpSpec
from engine.errors import EngineError

PRINTED_ROWS = 20  # rows of each table printed; --json / --csv hold them all


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
        "--workers", type=int, default=1, help="threads reducing each window (default 1)"
    )
    parser.add_argument("--axes", default="auto", choices=DUMP_AXES)
    parser.add_argument("--stream", default="auto", help="template of the stream's entries")
    parser.add_argument("--layer-order", default="names", choices=DUMP_LAYER_ORDERS)
    parser.add_argument("--massive-abs", type=float, default=DumpSpec.massive_abs)
    parser.add_argument("--massive-ratio", type=float, default=DumpSpec.massive_ratio)
    parser.add_argument("--outlier-ratio", type=float, default=DumpSpec.outlier_ratio)
    parser.add_argument("--top-k", type=int, default=DumpSpec.top_k)
    parser.add_argument("--rows", type=int, default=PRINTED_ROWS, help="rows printed per table")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _print_table(title: str, table: pd.DataFrame, rows: int, out) -> None:
    """A titled table, its first ``rows`` rows, numbers to 4 significant digits."""
    shown = table.head(rows)
    more = f" (first {rows} of {len(table)})" if len(table) > rows else ""
    out.write(f"\n{title}{more}\n")
    if shown.empty:
        out.write("  (none)\n")
        return
    out.write(shown.to_string(index=False, float_format=lambda v: f"{v:.4g}") + "\n")


def print_report(rep, rows: int = PRINTED_ROWS, out=None) -> None:
    """The report as text (on ``out``, default stdout): the layout read, then the tables."""
    out = out or sys.stdout
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
        out.write(f"Skipped: {'; '.join(f'{k} ({why})' for k, why in lay.skipped[:10])}\n")
    if rep.nonfinite.sum():
        nan, posinf, neginf = rep.nonfinite.sum(axis=0)
        out.write(
            f"Not finite: {nan} NaN, {posinf} +inf, {neginf} -inf "
            "(left out of every mean; listed below)\n"
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
    for name, title in titles.items():
        _print_table(title, tables[name], rows, out)
    out.write("\nPer-token and per-channel tables: --csv DIR or --json OUT.\n")


def _run_report(args: argparse.Namespace) -> int:
    from engine.dumps.report import report
    from engine.dumps.tables import write_csv, write_json

    if args.dask:
        from engine.dumps.cluster import _import_distributed

        _import_distributed()  # refuse at once, with the install command, if missing
    spec = DumpSpec(
        axes=args.axes,
        stream=args.stream,
        layer_order=args.layer_order,
        massive_abs=args.massive_abs,
        massive_ratio=args.massive_ratio,
        outlier_ratio=args.outlier_ratio,
        top_k=args.top_k,
    )
    bar = ProgressBar(enabled=not args.no_progress)
    rep = report(args.source, spec, progress=bar, dask=args.dask, workers=max(1, args.workers))
    print_report(rep, rows=args.rows)
    if args.json:
        sys.stdout.write(f"Wrote {write_json(rep, args.json)}\n")
    if args.csv:
        sys.stdout.write(f"Wrote {len(write_csv(rep, args.csv))} CSV files to {args.csv}\n")
    return 0


def _add_capture_arguments(parser: argparse.ArgumentParser) -> None:
    from engine.dumps.capture import add_arguments

    add_arguments(parser)


def _run_capture(args: argparse.Namespace) -> int:
    from engine.dumps.capture import run

    return run(args, progress=ProgressBar())


COMMANDS: dict[str, tuple[str, Callable, Callable]] = {
    "report": ("print a dump's diagnostics", _add_report_arguments, _run_report),
    "capture": (
        "run a Hugging Face model offline on prompts and save its residual stream and norms",
        _add_capture_arguments,
        _run_capture,
    ),
}


def build_parser() -> argparse.ArgumentParser:
    summary = "Diagnostics of activation dumps (see engine/dumps/cli.py)."
    parser = argparse.ArgumentParser(prog="python -m engine.dumps", description=summary)
    commands = parser.add_subparsers(dest="command", required=True)
    for name, (help_text, add_arguments, _) in COMMANDS.items():
        add_arguments(commands.add_parser(name, help=help_text))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command][2](args)
    except EngineError as error:
        sys.stderr.write(f"\nerror: {error}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        return 130
