"""Benchmark: a chunk's per-channel mean and M2, two passes (``engine.dumps.chunks``) against
``torch.var_mean(x, dim=0, correction=0)``, on the chunk shapes the reduction uses.

A chunk is ``limits.CHUNK_VALUES`` float32 values, ``[CHUNK_VALUES // d, d]``.  Both ways are
timed on one torch thread (as the reduction runs) over the same chunk, and their error is
measured against float64: the two passes keep the reduction's speed, var_mean is more
accurate (float64 accumulators) and slower.  Figures go to benchmarks/RESULTS.md.

Run:  .venv/bin/python benchmarks/bench_chunk_moments.py [--reps 20]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.dumps.limits import CHUNK_VALUES  # noqa: E402

WIDTHS = (16, 64, 576, 1024, 8192)


def two_passes(x: torch.Tensor, scratch: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """What ``chunks._finite_chunk`` does: the mean, then the centred squares summed."""
    mean = x.sum(0) / x.shape[0]  # [d]
    centred = torch.sub(x, mean, out=scratch)  # [n, d]
    return mean, centred.mul_(centred).sum(0)


def var_mean(x: torch.Tensor, scratch: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    var, mean = torch.var_mean(x, dim=0, correction=0)
    return mean, var * x.shape[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(1)
    load = Path("/proc/loadavg").read_text().split()[0]
    print(f"{time.strftime('%Y-%m-%d')} · {platform.machine()} · torch {torch.__version__}")
    print(f"one thread · load average {load} · median of {args.reps}")
    print("| chunk [n, d] | two passes | var_mean | ratio | M2 rel. error: two passes / var_mean |")
    print("|---|--:|--:|--:|--:|")
    for d in WIDTHS:
        generator = torch.Generator().manual_seed(0)
        x = torch.randn(CHUNK_VALUES // d, d, generator=generator) * 3 + 100  # a large mean
        scratch = torch.empty_like(x)
        exact = ((x.double() - x.double().mean(0)) ** 2).sum(0)
        times, errors = {}, {}
        for way in (two_passes, var_mean):
            way(x, scratch)
            runs = []
            for _ in range(args.reps):
                start = time.perf_counter()
                _, m2 = way(x, scratch)
                runs.append(time.perf_counter() - start)
            times[way] = sorted(runs)[len(runs) // 2]
            errors[way] = float(((m2.double() - exact).abs() / exact).max())
        print(
            f"| [{x.shape[0]}, {d}] | {times[two_passes] * 1e3:.2f} ms "
            f"| {times[var_mean] * 1e3:.2f} ms | {times[var_mean] / times[two_passes]:.1f}x "
            f"| {errors[two_passes]:.1e} / {errors[var_mean]:.1e} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
