"""What a depth simulation holds and costs, predicted from its spec before any work is done.

Time.  Three things dominate ``simulate_depth`` on a CPU, one thread:
  - drawing the weights: normal numbers, twice when the graphs are not kept;
  - the matmuls: forward and backward, 3 x 2 x T x (weights) FLOPs, plus a forward again
    when layers are re-run (8 instead of 6);
  - per-branch overhead (small graphs, Python).
``seconds = DRAW_S * draws + FLOP_S * flops + BRANCH_S * branches``.

Sizes and memory are counted in ``engine/depth/limits.py``.

The constants were fitted by least squares to measured runs (``benchmarks/bench_cost.py``,
figures in ``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from engine.config import DepthSpec
from engine.depth.limits import branch_parts, keeps_graphs, peak_bytes, weight_elements

# Fitted on the project's 2-core CPU, torch 2.13, one thread (benchmarks/bench_cost.py).
DRAW_S = 5.6e-9  # seconds per normal number drawn
FLOP_S = 1.34e-11  # seconds per matmul FLOP
BRANCH_S = 5.7e-4  # seconds per residual branch (per layer)


@dataclass(frozen=True)
class Cost:
    """Predicted wall time (one thread) and peak bytes the process grows by."""

    seconds: float
    peak_bytes: int


def simulation_cost(spec: DepthSpec) -> Cost:
    """The predicted cost of ``simulate_depth(spec, threads=1)`` on this machine's CPU."""
    weights = weight_elements(spec)
    keep = keeps_graphs(spec)
    draws = weights * (1 if keep else 2)
    flops = spec.tokens * weights * (6 if keep else 8)
    branches = spec.layers * len(branch_parts(spec))
    seconds = DRAW_S * draws + FLOP_S * flops + BRANCH_S * branches
    return Cost(seconds, peak_bytes(spec))


def sweep_cost(spec: DepthSpec, depths) -> Cost:
    """The cost of the L-sweep: one simulation per depth, run one after another."""
    costs = [simulation_cost(replace(spec, layers=int(n))) for n in depths]
    return Cost(sum(c.seconds for c in costs), max((c.peak_bytes for c in costs), default=0))
