"""Benchmark: the depth simulator (``engine.simulate_depth``) and the training lab on the CPU.

Targets: L = 1000, d = 256, T = 64 Pre-LN forward + backward <= 5 s; the default
page configuration (``DepthSpec()``, L = 48) <= 500 ms; training-lab defaults <= 30 s.
Each case is timed ``--reps`` times after one warm-up run and the median is reported, with
torch's own thread count and with one thread (``threads=1``): on a busy 2-core machine
OpenMP's workers wait on each other and one thread is often much faster.

Run:  .venv/bin/python benchmarks/bench_depth.py [--reps 5] [--training] [--write]
``--write`` replaces the "## Depth simulator (CPU)" section of benchmarks/RESULTS.md.
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

from engine import DepthSpec, simulate_depth  # noqa: E402
from engine.config import TrainSpec  # noqa: E402
from engine.depth.sweep import sweep_last_layer_grad  # noqa: E402
from engine.training.loop import train  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADING = "## Depth simulator (CPU)"


def median_seconds(fn: Callable[[], object], reps: int) -> tuple[float, float]:
    """(median, max) wall seconds of ``fn`` over ``reps`` runs after one warm-up run."""
    fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), max(times)


def cases(training: bool) -> list[tuple[str, float, Callable[[int | None], object], int]]:
    """(name, target seconds, run(threads), reps divisor) for every timed case."""
    big = DepthSpec(placement="pre", layers=1000, d=256, tokens=64, sublayer="linear")
    default = DepthSpec()
    out = [
        ("L=1000 d=256 T=64 Pre-LN fwd+bwd", 5.0, lambda t: simulate_depth(big, threads=t), 1),
        ("L=48 default (DepthSpec())", 0.5, lambda t: simulate_depth(default, threads=t), 1),
        (
            "L=48 transformer (attn+MLP) Pre-LN",
            0.5,
            lambda t: simulate_depth(DepthSpec(sublayer="transformer"), threads=t),
            1,
        ),
        (
            "sweep L=6..96, Pre-LN, 1 seed",
            2.0,
            lambda t: sweep_last_layer_grad(DepthSpec(), threads=t),
            1,
        ),
    ]
    if training:
        for placement in ("post", "pre"):
            spec = TrainSpec(placement=placement)
            out.append(
                (f"training defaults, {placement} ({spec.steps} steps)", 30.0,
                 lambda t, s=spec: train(s, threads=t), 5)
            )  # fmt: skip
    return out


def run(reps: int, training: bool) -> list[tuple[str, float, str, str]]:
    rows = []
    for name, target, fn, divisor in cases(training):
        n = max(1, reps // divisor)
        cells = []
        for threads in (None, 1):
            median, worst = median_seconds(lambda fn=fn, t=threads: fn(t), n)
            cells.append(f"{median:.3f} (max {worst:.3f})")
        rows.append((name, target, *cells))
        print(f"| {name} | <= {target:g} | {cells[0]} | {cells[1]} |", flush=True)
    return rows


def section(rows, reps: int) -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        HEADING,
        "",
        f"`benchmarks/bench_depth.py --reps {reps}` · {time.strftime('%Y-%m-%d')} · "
        f"{os.cpu_count()}-core {platform.machine()} CPU · torch {torch.__version__} "
        f"(default {torch.get_num_threads()} threads) · 1-minute load average {load:.1f} at the "
        "end.",
        "Median wall seconds of the timed runs after one warm-up run (max in brackets);",
        f"simulator cases {reps} timed runs, training cases {max(1, reps // 5)}.",
        "",
        "| case | target s | torch's threads | threads=1 |",
        "|---|---|---|---|",
        *(f"| {name} | <= {target:g} | {a} | {b} |" for name, target, a, b in rows),
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
    parser.add_argument("--reps", type=int, default=5, help="timed runs per case (after warm-up)")
    parser.add_argument("--training", action="store_true", help="also time training defaults")
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    args = parser.parse_args()
    print("| case | target s | torch's threads | threads=1 |\n|---|---|---|---|")
    rows = run(args.reps, args.training)
    text = section(rows, args.reps)
    if args.write:
        write_section(text)
        print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
