"""The L-sweep: the last layer's weight-gradient norm against depth, with its log-log slope.

Runs ``simulate_depth`` at each depth of a list (several seeds each, averaged) and fits
log(grad) = slope * log(L) + intercept.  Xiong et al. Theorem 1 predicts slope 0
for Post-LN and -1/2 for Pre-LN with its final norm.

References:
- Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture", arXiv:2002.04745
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np

from engine.config import DepthSpec
from engine.depth.limits import SWEEP_LAYERS
from engine.depth.simulator import simulate_depth
from engine.depth.theory import fit_loglog_slope
from engine.threads import Progress, StopCheck


@dataclass(frozen=True, eq=False)
class SweepResult:
    """The last layer's weight-gradient norm against depth, with its log-log fit."""

    spec: DepthSpec  # the template; ``layers`` is replaced by each entry of ``layers``
    layers: np.ndarray  # [n]
    last_grad_norm: np.ndarray  # [n] mean over seeds
    slope: float  # d log(grad) / d log(L): about 0 for Post-LN, about -1/2 for Pre-LN
    intercept: float  # natural-log intercept of the fit
    seconds: float


def sweep_last_layer_grad(
    spec: DepthSpec,
    layers=SWEEP_LAYERS,
    seeds: int = 1,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
    threads: int | None = None,
) -> SweepResult:
    """Run ``spec`` at each depth in ``layers`` (seeds spec.seed .. +seeds-1) and fit a slope.

    Xiong et al. Theorem 1 predicts slope 0 (Post-LN) and -1/2 (Pre-LN with its final norm).
    """
    start = time.perf_counter()
    depths = np.array(sorted(int(n) for n in layers))
    runs = [(n, spec.seed + s) for n in depths for s in range(seeds)]
    cost = np.array([n for n, _ in runs], dtype=np.float64)
    done, values = 0.0, []
    for (n, seed), work in zip(runs, cost):
        sub = dataclasses.replace(spec, layers=int(n), seed=seed)

        def part_progress(f: float, base=done, work=work) -> None:
            if progress is not None:
                progress((base + f * work) / cost.sum())

        result = simulate_depth(sub, part_progress, should_stop, threads=threads)
        values.append(result.grad_norm[-1])
        done += work
    last = np.array(values).reshape(len(depths), seeds).mean(axis=1)
    slope, intercept = fit_loglog_slope(depths, last)
    return SweepResult(spec, depths, last, slope, intercept, time.perf_counter() - start)
