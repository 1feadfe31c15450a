"""Benchmark: ``report`` on a 1 GiB float16 safetensors dump against one plain ``torch.sum``.

Targets: the report's time <= 2x the time of one plain ``torch.sum`` pass over
the same memory-mapped data, measured in the same run; its peak RSS <= 1.5 GiB above the
interpreter's.

The dump ([L, B, T, d] float16, ``hidden_states``, a massive activation on token 0 from
layer 2 on, like real models) is written to a temporary directory a layer at a time, so
writing it never holds more than one layer; it is deleted at the end.  Each measurement
runs in a fresh child interpreter, so that one's mapped pages and peak RSS do not count in
the other's: the child notes its RSS after imports (the interpreter's), runs, and reports
the wall time and ``ru_maxrss``.  The two children alternate, ``--reps`` times each; the
figures are medians.  ``--cold`` also drops the file's pages from the page cache before each
child (``posix_fadvise(DONTNEED)`` on this file only), so both read from disk.

Run:  .venv/bin/python benchmarks/bench_dumps.py [--gib 1] [--reps 3] [--cold] [--workers N]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_RATIO = 2.0
TARGET_RSS_GIB = 1.5
D, TOKENS, BATCH = 4096, 1024, 4  # one layer = 32 MiB of float16


def write_dump(path: Path, gib: float) -> tuple[int, ...]:
    """A float16 [L, B, T, d] safetensors file of about ``gib`` GiB, written layer by layer."""
    import torch

    layer_bytes = BATCH * TOKENS * D * 2
    layers = max(2, round(gib * 2**30 / layer_bytes))
    shape = (layers, BATCH, TOKENS, D)
    header = {"hidden_states": {"dtype": "F16", "shape": list(shape), "data_offsets": [0, 0]}}
    header["hidden_states"]["data_offsets"][1] = layers * layer_bytes
    header["__metadata__"] = {"made_by": "benchmarks/bench_dumps.py"}
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned
    generator = torch.Generator().manual_seed(0)
    with open(path, "wb") as handle:
        handle.write(len(text).to_bytes(8, "little") + text)
        for layer in range(layers):
            x = torch.randn(BATCH, TOKENS, D, generator=generator) * (1 + 0.1 * layer)
            if layer >= 2:
                x[:, 0, 7] = 2000.0  # a massive activation on the first token (Sun et al.)
            handle.write(x.half().numpy().tobytes())
    return shape


def _rss_mib() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def child(mode: str, path: str, workers: int = 1) -> None:
    """Run one measurement and print it as JSON (called in a fresh interpreter)."""
    import resource

    import torch
    from safetensors import safe_open

    from engine.dumps.report import report

    torch.set_num_threads(torch.get_num_threads())
    before = _rss_mib()
    start = time.perf_counter()
    if mode == "sum":
        with safe_open(path, framework="pt") as handle:
            x = handle.get_tensor("hidden_states")  # [L, B, T, d], a view of the mapped file
        total = float(torch.sum(x))
        del x
    else:
        rep = report(path, workers=workers)
        total = float(rep.residual.rms_layer[-1])
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB → MiB
    print(json.dumps({"seconds": seconds, "rss_before": before, "rss_peak": peak, "v": total}))


def _drop_cache(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def _run_child(mode: str, path: Path, cold: bool, workers: int) -> dict:
    if cold:
        _drop_cache(path)
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(path), "--workers", str(workers)],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(path: Path, reps: int, cold: bool, workers: int) -> dict[str, list[dict]]:
    runs: dict[str, list[dict]] = {"sum": [], "report": []}
    for rep in range(reps):
        order = ("sum", "report") if rep % 2 == 0 else ("report", "sum")
        for mode in order:
            runs[mode].append(_run_child(mode, path, cold, workers))
    return runs


def _row(label: str, runs: dict[str, list[dict]]) -> str:
    sum_s = statistics.median(r["seconds"] for r in runs["sum"])
    report_s = statistics.median(r["seconds"] for r in runs["report"])
    extra = max(r["rss_peak"] - r["rss_before"] for r in runs["report"]) / 1024
    sum_extra = max(r["rss_peak"] - r["rss_before"] for r in runs["sum"]) / 1024
    ratio = report_s / sum_s
    verdict_time = "met" if ratio <= TARGET_RATIO else "missed"
    verdict_rss = "met" if extra <= TARGET_RSS_GIB else "missed"
    return (
        f"| {label} | {sum_s:.3f} s | {report_s:.3f} s | {ratio:.1f}x ({verdict_time}) "
        f"| {sum_extra:.2f} GiB | {extra:.2f} GiB ({verdict_rss}) |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gib", type=float, default=1.0)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="also measure from a cold cache")
    parser.add_argument("--dir", default=None, help="where to write the temporary dump")
    parser.add_argument("--workers", type=int, default=1, help="report(..., workers=N)")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child, workers=args.workers)
        return
    import torch

    workdir = Path(tempfile.mkdtemp(prefix="bench_dumps_", dir=args.dir))
    try:
        path = workdir / "dump.safetensors"
        start = time.perf_counter()
        shape = write_dump(path, args.gib)
        written = time.perf_counter() - start
        size = path.stat().st_size / 2**30
        rows = [_row("page cache warm", measure(path, args.reps, False, args.workers))]
        if args.cold:
            rows.append(_row("page cache dropped", measure(path, args.reps, True, args.workers)))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    load = os.getloadavg()[0]
    print(
        f"`benchmarks/bench_dumps.py --gib {args.gib:g} --reps {args.reps} "
        f"--workers {args.workers}{' --cold' if args.cold else ''}` · "
        f"{time.strftime('%Y-%m-%d')} · "
        f"{os.cpu_count()}-core {platform.machine()} CPU · torch {torch.__version__} "
        f"({torch.get_num_threads()} threads) · 1-minute load average {load:.1f} at the end.\n"
        f"Dump: float16 `hidden_states` {list(shape)} ({size:.2f} GiB, written in {written:.1f} s, "
        f"deleted after). Medians of {args.reps} alternating runs, each in a fresh interpreter; "
        f"RSS: the largest peak above the interpreter's own.\n"
    )
    print(
        "| cache | plain torch.sum | report | report / sum (≤ 2x) | sum: RSS "
        "| report: RSS (≤ 1.5 GiB) |"
    )
    print("|---|--:|--:|--:|--:|--:|")
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
