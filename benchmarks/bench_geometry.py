"""Benchmark: the geometry engine (``engine/geometry``) on the CPU.

Targets: the 3-D scene of 2,000 points (cloud, its LN/RMSNorm/DyT outputs,
meshes, ellipsoid) well under 50 ms, so a slider change re-renders in <= 300 ms with room
for plotly; the d = 8192 histograms on a bounded sample (``MAX_CLOUD_CELLS`` = 2**22 numbers:
512 inputs) under a progress bar, <= 2 s.  Each case is timed ``--reps`` times after one
warm-up run and the median reported, with torch's own thread count and with ``threads=1``.

Run:  .venv/bin/python benchmarks/bench_geometry.py [--reps 7] [--write]
``--write`` replaces the "## Geometry (CPU)" section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root

from engine.config import GeometrySpec  # noqa: E402
from engine.geometry.cloud import bounded_rows, normalized_cloud  # noqa: E402
from engine.geometry.dyt_sweep import dyt_sweep  # noqa: E402
from engine.geometry.eps_curve import eps_curve  # noqa: E402
from engine.geometry.high_dimension import high_dimension_report  # noqa: E402
from engine.geometry.path import vector_path  # noqa: E402
from engine.geometry.scene import build_scene  # noqa: E402
from engine.geometry.views import plane_view  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADING = "## Geometry (CPU)"
SCENE = GeometrySpec(count=2000, d=3, shift=0.5, gamma_x=1.5, beta_z=0.5)
WIDE = GeometrySpec(count=2000, d=8192, shift=0.5)
MEDIUM = GeometrySpec(count=2000, d=768, shift=0.5)


def median_seconds(fn: Callable[[], object], reps: int) -> tuple[float, float, float]:
    """(median, max) wall seconds and median CPU seconds of this process for ``fn`` over
    ``reps`` runs after one warm-up run.  On a shared machine the wall time includes waiting
    for a core; with one thread, CPU time is the work itself."""
    fn()
    times, cpu = [], []
    for _ in range(reps):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(times), max(times), statistics.median(cpu)


def cases() -> list[tuple[str, float, Callable[[int | None], object]]]:
    """(name, target seconds, run(threads)) for every timed case."""
    rows_wide = bounded_rows(WIDE)
    return [
        ("scene d=3 N=2000 (build_scene)", 0.05, lambda t: build_scene(SCENE, threads=t)),
        ("cloud d=3 N=2000 (normalized_cloud)", 0.05, lambda t: normalized_cloud(SCENE, t)),
        ("DyT sweep d=3 N=2000, 17 alphas", 0.1, lambda t: dyt_sweep(SCENE, threads=t)),
        ("eps curve d=3 N=2000 + sweep 17x64", 0.1, lambda t: eps_curve(SCENE, threads=t)),
        ("vector path d=3", 0.01, lambda t: vector_path((1.0, 2.0, 6.0), SCENE, threads=t)),
        (
            "high-dim report d=768 N=2000, 8 eps",
            2.0,
            lambda t: high_dimension_report(MEDIUM, threads=t),
        ),
        (
            f"high-dim report d=8192 N={rows_wide}, 8 eps",
            2.0,
            lambda t: high_dimension_report(WIDE, threads=t),
        ),
        (f"PCA view d=8192 N={rows_wide}", 1.0, lambda t: plane_view(WIDE, "pca", threads=t)),
        (f"eps curve d=8192 N={rows_wide}", 1.0, lambda t: eps_curve(WIDE, threads=t)),
    ]


def run(reps: int) -> list[tuple[str, float, str, str, str]]:
    rows = []
    for name, target, fn in cases():
        cells = []
        for threads in (None, 1):
            median, worst, cpu = median_seconds(lambda fn=fn, t=threads: fn(t), reps)
            cells.append(f"{1e3 * median:.1f} (max {1e3 * worst:.1f})")
        cells.append(f"{1e3 * cpu:.1f}")  # CPU ms of the threads=1 runs
        rows.append((name, target, *cells))
        print(f"| {name} | <= {1e3 * target:g} | {' | '.join(cells)} |", flush=True)
    return rows


def section(rows, reps: int) -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        HEADING,
        "",
        f"`benchmarks/bench_geometry.py --reps {reps}` · {time.strftime('%Y-%m-%d')} · "
        f"{os.cpu_count()}-core {platform.machine()} CPU · torch {torch.__version__} "
        f"(default {torch.get_num_threads()} threads) · 1-minute load average {load:.1f} at the "
        "end.",
        f"Median wall milliseconds of {reps} timed runs after one warm-up run (max in brackets),",
        "and the median CPU milliseconds of the threads=1 runs (the work, without the waits).",
        "",
        "| case | target ms | torch's threads | threads=1 | threads=1 CPU ms |",
        "|---|---|---|---|---|",
        *(f"| {name} | <= {1e3 * goal:g} | {' | '.join(cells)} |" for name, goal, *cells in rows),
        "",
    ]
    return "\n".join(lines)


def write_section(text: str) -> None:
    """Replace this benchmark's section of RESULTS.md (up to the next "## "), or append it."""
    old = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    start = old.find(HEADING)
    if start < 0:
        new = old.rstrip("\n") + "\n\n" + text
    else:
        end = old.find("\n## ", start + len(HEADING))
        new = old[:start] + text + ("" if end < 0 else old[end + 1 :])
    RESULTS.write_text(new)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7, help="timed runs per case (after warm-up)")
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    args = parser.parse_args()
    print("| case | target ms | torch's threads | threads=1 | threads=1 CPU ms |")
    rows = run(args.reps)
    text = section(rows, args.reps)
    if args.write:
        write_section(text)
        print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
