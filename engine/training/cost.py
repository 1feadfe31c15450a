"""What a training-lab run will cost, predicted from its spec: seconds on this CPU, one thread.

One Adam step of the tiny GPT costs a fixed overhead, a per-layer overhead (small kernels,
Python), and work proportional to layers x d² x batch x T (the matmuls, forward and
backward).  ``seconds = steps * (STEP_S + LAYER_S * L + WORK_S * L d² B T)``; the constants
were fitted to measured runs (``benchmarks/bench_cost.py``, figures in RESULTS.md).
"""

from __future__ import annotations

from engine.config import TrainSpec
from engine.training.loop import sequence_length

STEP_S = 5e-3  # seconds per step, whatever the size
LAYER_S = 3e-3  # seconds per layer per step
WORK_S = 1.2e-9  # seconds per unit of L * d^2 * batch * T per step


def training_seconds(spec: TrainSpec) -> float:
    """Predicted wall time of ``train(spec, threads=1)``."""
    work = spec.layers * spec.d * spec.d * spec.batch * sequence_length(spec)
    return spec.steps * (STEP_S + LAYER_S * spec.layers + WORK_S * work)
