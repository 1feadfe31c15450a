"""Every Axes computation at the defaults (B=4, T=16, d=32) takes under 0.1 s.

Best of five warm runs on one thread: the minimum is what the code costs, and stays put
while other processes share the CPU (a median would measure them).
"""

from __future__ import annotations

import time

import pytest

from engine.axes.batch_of_one import batch_of_one
from engine.axes.causal_leak import causal_leak
from engine.axes.padding import padding_pollution
from engine.axes.sharing import axes_statistics, select_cell
from engine.axes.small_batch import small_batch_noise
from engine.axes.train_eval import train_eval_gap
from engine.config import AxesSpec
from engine.jobs import torch_threads

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


@pytest.mark.parametrize("name", list(COMPUTATIONS))
def test_each_computation_takes_under_a_tenth_of_a_second(name):
    run = COMPUTATIONS[name]
    with torch_threads(1):
        run()  # warm: first-call imports and allocations
        times = []
        for _ in range(5):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
    assert min(times) < BUDGET_S, f"{name}: best of 5 took {min(times):.3f} s"
