"""What a depth simulation will cost, predicted from its spec before any work is done.

Time.  Three things dominate ``simulate_depth`` on a CPU, one thread:
  - drawing the weights: ``weight_elements`` normal numbers, twice when the graphs are not
    kept (the backward pass regenerates each layer's weights);
  - the matmuls: forward and backward, 3 x 2 x T x (weights) FLOPs, plus a forward again
    when layers are re-run (8 instead of 6);
  - per-branch overhead (small graphs, Python).
``seconds = DRAW_S * draws + FLOP_S * flops + BRANCH_S * branches``, with the three
constants fitted by least squares to measured runs (``benchmarks/bench_cost.py``, figures
in ``benchmarks/RESULTS.md``).

Memory.  The stream x_0..x_L is kept for the backward pass ((L+1)·T·d float32); while the
autograd graphs fit in ``KEEP_GRAPH_ELEMENTS`` they are all kept too, else one layer's at a
time; one layer's weights and a few [T, d] temporaries come on top.  The prediction is an
upper bound of the tensors alive at once, in bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.config import DepthSpec
from engine.depth.limits import weight_elements
from engine.depth.simulator import KEEP_GRAPH_ELEMENTS, graph_elements
from engine.depth.theory import branches_per_layer

# Fitted on the project's 2-core CPU, torch 2.13, one thread (benchmarks/bench_cost.py).
DRAW_S = 5.6e-9  # seconds per normal number drawn
FLOP_S = 1.34e-11  # seconds per matmul FLOP
BRANCH_S = 5.7e-4  # seconds per residual branch (per layer)
FLOAT_BYTES = 4


@dataclass(frozen=True)
class Cost:
    """Predicted wall time (one thread) and peak bytes of tensors alive at once."""

    seconds: float
    peak_bytes: int


def simulation_cost(spec: DepthSpec) -> Cost:
    """The predicted cost of ``simulate_depth(spec, threads=1)`` on this machine's CPU."""
    weights = weight_elements(spec)
    graphs = graph_elements(spec)
    keep = graphs <= KEEP_GRAPH_ELEMENTS
    draws = weights * (1 if keep else 2)
    flops = spec.tokens * weights * (6 if keep else 8)
    branches = spec.layers * branches_per_layer(spec)
    seconds = DRAW_S * draws + FLOP_S * flops + BRANCH_S * branches
    stream = (spec.layers + 1) * spec.tokens * spec.d
    per_layer_graph = graphs // max(spec.layers, 1)
    alive = stream + (graphs if keep else 2 * per_layer_graph) + 8 * spec.tokens * spec.d
    return Cost(seconds, FLOAT_BYTES * alive)


def sweep_cost(spec: DepthSpec, depths) -> Cost:
    """The cost of the L-sweep: one simulation per depth, run one after another."""
    from dataclasses import replace

    costs = [simulation_cost(replace(spec, layers=int(n))) for n in depths]
    return Cost(sum(c.seconds for c in costs), max((c.peak_bytes for c in costs), default=0))
