"""What a depth simulation holds and costs, predicted from its spec before any work is done.

Sizes.  ``weight_elements``: the weights drawn over all layers (L·d²·k); ``graph_elements``:
what all layers' autograd graphs hold (weights and saved activations).  While the graphs fit
in ``KEEP_GRAPH_ELEMENTS`` the simulator keeps them from the forward pass; beyond, it keeps
only the stream and re-runs each layer going down.

Time.  Three things dominate ``simulate_depth`` on a CPU, one thread:
  - drawing the weights: normal numbers, twice when the graphs are not kept;
  - the matmuls: forward and backward, 3 x 2 x T x (weights) FLOPs, plus a forward again
    when layers are re-run (8 instead of 6);
  - per-branch overhead (small graphs, Python).
``seconds = DRAW_S * draws + FLOP_S * flops + BRANCH_S * branches``.

Memory.  The stream x_0..x_L is kept for the backward pass ((L+1)·T·d float32); the kept
graphs come on top, and one layer's weights several times over while it runs (the draw, its
scaled copy, its gradient, allocator slack); ``BASE_BYTES`` is what a simulation's first
call costs the process (autograd's own buffers).  The prediction bounds the peak resident
memory the process grows by.

The constants were fitted by least squares to measured runs (``benchmarks/bench_cost.py``,
figures in ``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from engine.config import DepthSpec

WEIGHTS_PER_D2 = {"linear": 1, "mlp": 8, "attention": 2, "transformer": 10}  # per layer / d^2
KEEP_GRAPH_ELEMENTS = 2**26  # graphs up to ~256 MiB of float32 are kept: no re-run

# Fitted on the project's 2-core CPU, torch 2.13, one thread (benchmarks/bench_cost.py).
DRAW_S = 5.6e-9  # seconds per normal number drawn
FLOP_S = 1.34e-11  # seconds per matmul FLOP
BRANCH_S = 5.7e-4  # seconds per residual branch (per layer)
LAYER_WEIGHT_COPIES = 8  # one layer's weights alive at once while it runs, with slack
BASE_BYTES = 64 * 2**20
FLOAT_BYTES = 4


@dataclass(frozen=True)
class Cost:
    """Predicted wall time (one thread) and peak bytes the process grows by."""

    seconds: float
    peak_bytes: int


def _parts(spec: DepthSpec) -> tuple[str, ...]:
    return ("attention", "mlp") if spec.sublayer == "transformer" else (spec.sublayer,)


def weight_elements(spec: DepthSpec) -> int:
    """How many weights the stack draws over all layers: the simulation's main cost."""
    return spec.layers * spec.d * spec.d * WEIGHTS_PER_D2[spec.sublayer]


def graph_elements(spec: DepthSpec) -> int:
    """About how many float32 values all layers' autograd graphs hold: weights + activations."""
    weights = {"linear": 1, "mlp": 8, "attention": 2}  # d*d matrices per branch
    saved = {"linear": 4, "mlp": 12, "attention": 6}  # [T, d]-sized tensors saved per branch
    parts = _parts(spec)
    per_layer = spec.d * (
        spec.d * sum(weights[p] for p in parts) + spec.tokens * sum(saved[p] for p in parts)
    )
    return spec.layers * per_layer


def keeps_graphs(spec: DepthSpec) -> bool:
    """Whether the simulator keeps every layer's graph (else it re-runs layers going down)."""
    return graph_elements(spec) <= KEEP_GRAPH_ELEMENTS


def simulation_cost(spec: DepthSpec) -> Cost:
    """The predicted cost of ``simulate_depth(spec, threads=1)`` on this machine's CPU."""
    weights = weight_elements(spec)
    keep = keeps_graphs(spec)
    draws = weights * (1 if keep else 2)
    flops = spec.tokens * weights * (6 if keep else 8)
    branches = spec.layers * len(_parts(spec))
    seconds = DRAW_S * draws + FLOP_S * flops + BRANCH_S * branches
    stream = (spec.layers + 1) * spec.tokens * spec.d
    layer_weights = weights // spec.layers
    graphs = graph_elements(spec) if keep else 2 * graph_elements(spec) // spec.layers
    alive = stream + graphs + LAYER_WEIGHT_COPIES * layer_weights
    return Cost(seconds, BASE_BYTES + FLOAT_BYTES * alive)


def sweep_cost(spec: DepthSpec, depths) -> Cost:
    """The cost of the L-sweep: one simulation per depth, run one after another."""
    costs = [simulation_cost(replace(spec, layers=int(n))) for n in depths]
    return Cost(sum(c.seconds for c in costs), max((c.peak_bytes for c in costs), default=0))
