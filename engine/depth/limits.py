"""Size limits of the depth simulator: what it refuses, and why, before any work is done.

The simulator's cost is dominated by drawing every layer's weights (L·d²·k numbers) and by
keeping the residual stream of every layer for the backward pass ((L+1)·T·d numbers); both
are capped, and so is the predicted peak memory of the whole run (``peak_bytes``) against a
per-job budget, so that no configuration a page accepts can exhaust a shared server.  Every
refusal is an ``EngineError`` whose key names the limit (``depth.<limit>``).

The budget is ``JOB_MEMORY_BYTES``: 1.5 GiB unless the environment variable
``NORMSCOPE_JOB_MEMORY_MB`` says otherwise (a server with more memory per core may raise it).

Memory, counted from the spec (graphs kept or layers re-run: ``engine/depth/simulator.py``).
Over the stream come the kept graphs (``graph_elements``: weights and saved activations),
and one layer's weights several times over while it runs (the draw, its scaled copy, its
gradient, allocator slack: ``LAYER_WEIGHT_COPIES``); ``BASE_BYTES`` is what a simulation's
first call costs the process (autograd's own buffers).  ``peak_bytes`` bounds the peak
resident memory the process grows by (a slow test measures it).
"""

from __future__ import annotations

import dataclasses
import os

import torch

from engine.config import DepthSpec
from engine.config.depth import MAX_DEPTH_TOKENS, MAX_DEPTH_WIDTH, MAX_LAYERS
from engine.errors import EngineError

MAX_STREAM_ELEMENTS = 2**28  # (L+1) * T * d floats kept for the backward pass: 1 GiB
MAX_WEIGHT_ELEMENTS = 2**28  # weights drawn over all layers: 1 GiB of normal numbers
SWEEP_LAYERS = (6, 12, 24, 48, 96)  # depths of the last-layer gradient sweep
JOB_MEMORY_BYTES = int(float(os.environ.get("NORMSCOPE_JOB_MEMORY_MB", 1536)) * 2**20)

# per branch: d*d weight matrices, and [T, d]-sized tensors its autograd graph saves
WEIGHTS_PER_D2 = {"linear": 1, "mlp": 8, "attention": 2}
SAVED_PER_TD = {"linear": 4, "mlp": 12, "attention": 6}
KEEP_GRAPH_ELEMENTS = 2**26  # graphs up to ~256 MiB of float32 are kept: no re-run
LAYER_WEIGHT_COPIES = 8  # one layer's weights alive at once while it runs, with slack
BASE_BYTES = 64 * 2**20
FLOAT_BYTES = 4


def branch_parts(spec: DepthSpec) -> tuple[str, ...]:
    """The residual branches of one layer: a transformer block has two."""
    return ("attention", "mlp") if spec.sublayer == "transformer" else (spec.sublayer,)


def weight_elements(spec: DepthSpec) -> int:
    """How many weights the stack draws over all layers: the simulation's main cost."""
    return spec.layers * spec.d * spec.d * sum(WEIGHTS_PER_D2[p] for p in branch_parts(spec))


def graph_elements(spec: DepthSpec) -> int:
    """About how many float32 values all layers' autograd graphs hold: weights + activations."""
    saved = spec.layers * spec.tokens * spec.d * sum(SAVED_PER_TD[p] for p in branch_parts(spec))
    return weight_elements(spec) + saved


def keeps_graphs(spec: DepthSpec) -> bool:
    """Whether the simulator keeps every layer's graph (else it re-runs layers going down)."""
    return graph_elements(spec) <= KEEP_GRAPH_ELEMENTS


def peak_bytes(spec: DepthSpec) -> int:
    """The most memory ``simulate_depth(spec)`` adds to the process, predicted from the spec."""
    stream = (spec.layers + 1) * spec.tokens * spec.d
    layer_weights = weight_elements(spec) // spec.layers
    graphs = graph_elements(spec) if keeps_graphs(spec) else 2 * graph_elements(spec) // spec.layers
    alive = stream + graphs + LAYER_WEIGHT_COPIES * layer_weights
    return BASE_BYTES + FLOAT_BYTES * alive


def simulation_work(spec: DepthSpec) -> tuple[int, int]:
    """What ``simulate_depth(spec)`` computes, counted from the spec in two units that are not
    converted into each other (their costs differ by machine): random draws, one per weight
    (two when layers are re-run going down), and multiply-adds, three per weight and token
    (forward, and the backward pass into the input and into the weight; four when re-run).
    With one token the draws are nearly all of the time: L = 16, d = 4096, T = 1 makes 171
    times the default's draws (85 times its weights, each drawn twice) and 1.8 times its
    multiply-adds."""
    keep = keeps_graphs(spec)
    weights = weight_elements(spec)
    return weights * (1 if keep else 2), weights * spec.tokens * (3 if keep else 4)


def sweep_work(spec: DepthSpec, layers=SWEEP_LAYERS) -> tuple[int, int]:
    """What ``sweep_last_layer_grad(spec, layers)`` computes, in ``simulation_work``'s units:
    at most one simulation per depth (it runs only the last layer's backward pass)."""
    each = [simulation_work(dataclasses.replace(spec, layers=int(n))) for n in layers]
    return sum(draws for draws, _ in each), sum(products for _, products in each)


def check_limits(spec: DepthSpec, device: str = "cpu") -> None:
    """Raise ``EngineError`` naming the limit when ``spec`` is too big to simulate."""
    kind = torch.device(device).type
    widest = MAX_DEPTH_WIDTH.get(kind, MAX_DEPTH_WIDTH["cpu"])
    for name, value, limit in (
        ("layers", spec.layers, MAX_LAYERS),
        ("d", spec.d, widest),
        ("tokens", spec.tokens, MAX_DEPTH_TOKENS),
    ):
        if value > limit:
            raise EngineError(
                f"depth.too_large_{name}",
                {"value": value, "limit": limit, "device": kind.upper()},
            )
    weights = weight_elements(spec)
    if weights > MAX_WEIGHT_ELEMENTS:
        raise EngineError(
            "depth.too_many_weights",
            {
                "values": f"{weights:,}",
                "limit": f"{MAX_WEIGHT_ELEMENTS:,}",
                "per_layer": sum(WEIGHTS_PER_D2[p] for p in branch_parts(spec)),
            },
        )
    stream = (spec.layers + 1) * spec.tokens * spec.d
    if stream > MAX_STREAM_ELEMENTS:
        raise EngineError(
            "depth.stream_too_large",
            {"values": f"{stream:,}", "limit": f"{MAX_STREAM_ELEMENTS:,}"},
        )
    peak = peak_bytes(spec)
    if peak > JOB_MEMORY_BYTES:
        raise EngineError(
            "depth.over_memory_budget",
            {"peak": f"{peak / 2**30:.2f}", "budget": f"{JOB_MEMORY_BYTES / 2**30:.2f}"},
        )


def sweep_depths(spec: DepthSpec, layers=SWEEP_LAYERS, device: str = "cpu") -> tuple[int, ...]:
    """The depths of ``layers`` at which ``spec`` (its ``layers`` replaced) is within limits."""
    allowed = []
    for n in layers:
        try:
            check_limits(dataclasses.replace(spec, layers=int(n)), device)
        except EngineError:
            continue
        allowed.append(int(n))
    return tuple(allowed)


# Refusals whose advice names L: in a sweep, whose depths are fixed, their "_sweep" wording
# names the depth and leaves L out of what to lower.
DEPTH_ADVISED = ("depth.too_many_weights", "depth.stream_too_large", "depth.over_memory_budget")


def check_sweep(spec: DepthSpec, layers=SWEEP_LAYERS, device: str = "cpu") -> None:
    """Raise the refusal of the shallowest of ``layers`` over the limits: the one a sweep with
    too few depths left is stopped by, so the page names the limit, not only that one is hit."""
    for n in layers:
        try:
            check_limits(dataclasses.replace(spec, layers=int(n)), device)
        except EngineError as error:
            if error.key not in DEPTH_ADVISED:
                raise
            raise EngineError(f"{error.key}_sweep", {**error.params, "layers": int(n)}) from None
