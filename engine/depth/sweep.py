"""The L-sweep: the last layer's weight-gradient norm against depth, with its log-log slope.

At each depth of a list (several seeds each, averaged) it runs the stack forward and the
last layer's backward pass alone (``last_layer_grad_norm``: ``simulate_depth``'s last
``grad_norm``, to the bit) and fits log(grad) = slope * log(L) + intercept.  Xiong et al.
Theorem 1 predicts slope 0 for Post-LN and -1/2 for Pre-LN with its final norm.

References:
- Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture", arXiv:2002.04745
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass

import numpy as np
import torch

from engine.config import DepthSpec
from engine.depth.limits import SWEEP_LAYERS, check_limits
from engine.depth.simulator import (
    Stack,
    layer_graph,
    layer_weights,
    readout,
    stack_input,
)
from engine.depth.theory import fit_loglog_slope, lemma2_violations
from engine.threads import Cancelled, Progress, StopCheck, torch_threads


@dataclass(frozen=True, eq=False)
class SweepResult:
    """The last layer's weight-gradient norm against depth, with its log-log fit."""

    spec: DepthSpec  # the template; ``layers`` is replaced by each entry of ``layers``
    layers: np.ndarray  # [n]
    last_grad_norm: np.ndarray  # [n] mean over seeds
    slope: float  # d log(grad) / d log(L): about 0 for Post-LN, about -1/2 for Pre-LN
    intercept: float  # natural-log intercept of the fit
    seconds: float

    @property
    def theorem1_broken(self) -> tuple[str, ...]:
        """The assumptions of Xiong et al.'s Theorem 1 (those of Lemma 2) the template
        breaks, placement aside: where any is, its slopes are a reference, not a prediction."""
        return tuple(key for key in lemma2_violations(self.spec) if key != "placement")


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

        with torch_threads(threads):
            values.append(last_layer_grad_norm(sub, part_progress, should_stop))
        done += work
    last = np.array(values).reshape(len(depths), seeds).mean(axis=1)
    slope, intercept = fit_loglog_slope(depths, last)
    return SweepResult(spec, depths, last, slope, intercept, time.perf_counter() - start)


def last_layer_grad_norm(
    spec: DepthSpec,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
    device: str = "cpu",
) -> float:
    """||d loss / d W||_F over the last layer's weights: ``simulate_depth(spec).grad_norm[-1]``,
    the one value the sweep reads, for about a third of the work.  The layers below the last
    run without autograd and their weights are drawn once; the backward pass goes through
    the final norm and the last layer only, as that gradient needs nothing below it.  NaN
    where float32 overflowed on the way (``simulate_depth`` says where)."""
    check_limits(spec, device)
    stack, layers = Stack(spec), spec.layers
    x = stack_input(spec, device)  # [B, T, d]
    for layer in range(1, layers):
        if should_stop is not None and should_stop():
            raise Cancelled(f"stopped after {layer - 1} of {layers} layers")
        if progress is not None:
            progress((layer - 1) / layers)
        with torch.no_grad():
            x, _ = stack.layer(x, layer_weights(spec, layer, device), layer)  # [B, T, d]
        if not bool(torch.isfinite(x).all()):
            return math.nan
    x_in, leaves, out, _ = layer_graph(stack, x, layers, device)
    if not bool(torch.isfinite(out).all()):
        return math.nan
    top = out.detach().requires_grad_(True)  # [B, T, d]
    with torch.enable_grad():
        y = stack.top(top)  # [B, T, d]
    upstream = readout(spec, device) / math.sqrt(spec.tokens)  # d loss / d y
    (delta,) = torch.autograd.grad(y, top, upstream)  # d loss / d x_L
    # d loss / d x_{L-1} too: simulate_depth gives up on the layer where it is not finite,
    # even where the weights' gradient is (a norm whose statistic overflowed: rstd 0)
    below, *grads = torch.autograd.grad(out, [x_in, *leaves], delta)
    if not all(bool(torch.isfinite(g).all()) for g in (below, *grads)):
        return math.nan
    if progress is not None:
        progress(1.0)
    return math.sqrt(sum(float(g.double().pow(2).sum()) for g in grads))
