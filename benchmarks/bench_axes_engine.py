"""Benchmark: every Axes computation at the defaults (B=4, T=16, d=32), target under 0.1 s.

Best of five warm runs on one thread: the minimum is what the code costs, and stays put
while other processes share the CPU (a median would measure them).  A benchmark, not a
test: timings on a shared machine belong in benchmarks/RESULTS.md, never in an assertion.

Run:  .venv/bin/python benchmarks/bench_axes_engine.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.axes.batch_of_one import batch_of_one
from engine.axes.causal_leak import causal_leak
from engine.axes.padding import padding_pollution
from engine.axes.sharing import axes_statistics, select_cell
from engine.axes.small_batch import small_batch_noise
from engine.axes.train_eval import train_eval_gap
from engine.config import AxesSpec
from engine.threads import torch_threads

BUDGET_S = 0.1
SPEC = AxesSpec(source="padded", preset="channel_offsets", kind="batchnorm", mask_padding=True)

COMPUTATIONS = {
    "axes_statistics": lambda: select_cell(axes_statistics(SPEC), (1, 2, 3)),
    "padding_pollution": lambda: padding_pollution(SPEC),
    "small_batch_noise": lambda: small_batch_noise(SPEC),
    "train_eval_gap": lambda: train_eval_gap(SPEC),
    "batch_of_one": lambda: batch_of_one(SPEC),
    "causal_leak": lambda: causal_leak(SPEC),
}


def best_of_five(run) -> float:
    with torch_threads(1):
        run()  # warm: first-call imports and allocations
        times = []
        for _ in range(5):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    print("| computation | best of 5, ms | target ms |")
    print("|---|--:|--:|")
    for name, run in COMPUTATIONS.items():
        print(f"| {name} | {1000 * best_of_five(run):.1f} | {1000 * BUDGET_S:.0f} |")


if __name__ == "__main__":
    main()
