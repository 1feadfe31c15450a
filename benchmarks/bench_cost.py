"""Benchmark: calibrate the cost models that guard the server (engine/*/cost.py).

Every heavy computation a page can start has a predicted time (and, for the depth
simulator, a predicted peak memory) that decides whether it starts at once or waits for a
click, and what estimate the button shows.  This script runs each kind of work at a grid
of sizes, one thread, fits the models' constants by least squares, and prints measured vs
predicted so the constants in the code can be checked and updated:

- depth: ``seconds = DRAW_S * draws + FLOP_S * flops + BRANCH_S * branches``
- training: ``seconds/step = STEP_S + LAYER_S * L + WORK_S * L d^2 B T``
- timing (Kernels page): seconds per value touched, forward and forward+backward

Run:  .venv/bin/python benchmarks/bench_cost.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.config import DepthSpec, TrainSpec  # noqa: E402
from engine.depth import cost as depth_cost  # noqa: E402
from engine.depth import simulate_depth  # noqa: E402
from engine.perf import timing  # noqa: E402
from engine.training import cost as training_cost  # noqa: E402
from engine.training.loop import iter_training, sequence_length  # noqa: E402

DEPTH_GRID = [
    ("linear", 48, 256, 64),
    ("linear", 200, 256, 64),
    ("linear", 48, 1024, 64),
    ("mlp", 48, 256, 64),
    ("mlp", 24, 512, 256),
    ("attention", 48, 256, 256),
    ("transformer", 24, 512, 128),
    ("transformer", 12, 1024, 64),
    ("linear", 500, 128, 512),
    ("mlp", 12, 1024, 512),
]
TRAIN_GRID = [(2, 64), (6, 64), (8, 64), (6, 128), (8, 128), (4, 96)]


def _best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def depth_rows(grid, repeats: int):
    rows = []
    simulate_depth(DepthSpec(layers=2, d=16, tokens=4), threads=1)  # warm-up
    for sublayer, layers, d, tokens in grid:
        spec = DepthSpec(placement="pre", sublayer=sublayer, layers=layers, d=d, tokens=tokens)
        seconds = _best_of(lambda s=spec: simulate_depth(s, threads=1), repeats)
        weights = depth_cost.weight_elements(spec)
        keep = depth_cost.keeps_graphs(spec)
        features = [
            weights * (1 if keep else 2),
            tokens * weights * (6 if keep else 8),
            layers * (2 if sublayer == "transformer" else 1),
        ]
        predicted = depth_cost.simulation_cost(spec).seconds
        rows.append((spec, features, seconds, predicted))
    return rows


def training_rows(grid, steps: int, repeats: int):
    rows = []
    for layers, d in grid:
        spec = TrainSpec(layers=layers, d=d, steps=steps)

        def run(s=spec):
            for _ in iter_training(s, threads=1):
                pass

        seconds = _best_of(run, repeats) / steps
        work = layers * d * d * spec.batch * sequence_length(spec)
        predicted = training_cost.training_seconds(spec) / steps
        rows.append((spec, [1.0, layers, work], seconds, predicted))
    return rows


def timing_rows(repeats: int):
    rows = []
    for width in (1024, 4096):
        for pass_ in timing.PASSES:
            measured = timing.time_norms(
                rows=1024, widths=(width,), passes=(pass_,), repeats=repeats
            ).rows
            per_value = min(r["median_us"] for r in measured) * 1e-6 / (1024 * width)
            rows.append((width, pass_, per_value))
    return rows


def _fit(rows):
    features = np.array([r[1] for r in rows], dtype=np.float64)
    measured = np.array([r[2] for r in rows])
    coefficients, *_ = np.linalg.lstsq(features, measured, rcond=None)
    return coefficients


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer sizes and repeats")
    args = parser.parse_args()
    torch.set_num_threads(1)
    repeats = 1 if args.quick else 2
    grid = DEPTH_GRID[:5] if args.quick else DEPTH_GRID
    print(f"torch {torch.__version__}, one thread, {time.strftime('%Y-%m-%d')}\n")

    depth = depth_rows(grid, repeats)
    print("| depth spec (sublayer L d T) | measured s | predicted s | predicted / measured |")
    print("|---|--:|--:|--:|")
    for spec, _, seconds, predicted in depth:
        name = f"{spec.sublayer} {spec.layers} {spec.d} {spec.tokens}"
        print(f"| {name} | {seconds:.3f} | {predicted:.3f} | {predicted / seconds:.2f} |")
    draw, flop, branch = _fit(depth)
    print(f"\nfitted: DRAW_S = {draw:.3g}, FLOP_S = {flop:.3g}, BRANCH_S = {branch:.3g}\n")

    # 50 steps: the fewest a training run takes (TrainSpec)
    train = training_rows(TRAIN_GRID[:3] if args.quick else TRAIN_GRID, 50, repeats)
    print("| training (L, d) | measured s/step | predicted s/step | predicted / measured |")
    print("|---|--:|--:|--:|")
    for spec, _, seconds, predicted in train:
        ratio = predicted / seconds
        print(f"| {spec.layers}, {spec.d} | {seconds:.4f} | {predicted:.4f} | {ratio:.2f} |")
    step, layer, work = _fit(train)
    print(f"\nfitted: STEP_S = {step:.3g}, LAYER_S = {layer:.3g}, WORK_S = {work:.3g}\n")

    print("| timing width | pass | seconds per value | model |")
    print("|--:|---|--:|--:|")
    for width, pass_, per_value in timing_rows(repeats=3):
        model = timing.CPU_SECONDS_PER_VALUE[pass_]
        print(f"| {width} | {pass_} | {per_value:.3g} | {model:.3g} |")
    memory = depth_cost.simulation_cost(replace(DepthSpec(), sublayer="mlp", layers=8, d=2048))
    print(f"\nheaviest weights accepted (mlp, L=8, d=2048): predicted peak {memory.peak_bytes:,} B")


if __name__ == "__main__":
    main()
