"""Size limits of the depth simulator: what it refuses, and why, before any work is done.

The simulator's cost is dominated by drawing every layer's weights (L·d²·k numbers) and by
keeping the residual stream of every layer for the backward pass ((L+1)·T·d numbers); both
are capped so that no configuration a page accepts can tie up a 2-core server for long.
"""

from __future__ import annotations

import dataclasses

import torch

from engine.config import DepthSpec

MAX_LAYERS = 1000
MAX_WIDTH = {"cpu": 4096, "cuda": 16384}
MAX_TOKENS = 1024
MAX_STREAM_ELEMENTS = 2**28  # (L+1) * T * d floats kept for the backward pass: 1 GiB
MAX_WEIGHT_ELEMENTS = 2**28  # weights drawn over all layers: 1 GiB, ~10 s on a 2-core CPU
WEIGHTS_PER_D2 = {"linear": 1, "mlp": 8, "attention": 2, "transformer": 10}  # per layer / d^2
SWEEP_LAYERS = (6, 12, 24, 48, 96)  # depths of the last-layer gradient sweep


def check_limits(spec: DepthSpec, device: str = "cpu") -> None:
    """Raise ValueError, with the limit in the message, when ``spec`` is too big to simulate."""
    kind = torch.device(device).type
    max_width = MAX_WIDTH.get(kind, MAX_WIDTH["cpu"])
    if spec.layers > MAX_LAYERS:
        raise ValueError(f"layers={spec.layers} is over the limit of {MAX_LAYERS} layers")
    if spec.d > max_width:
        raise ValueError(f"d={spec.d} is over the limit of d <= {max_width} on {kind.upper()}")
    if spec.tokens > MAX_TOKENS:
        raise ValueError(f"tokens={spec.tokens} is over the limit of {MAX_TOKENS} tokens")
    weights = weight_elements(spec)
    if weights > MAX_WEIGHT_ELEMENTS:
        raise ValueError(
            f"L * d^2 * {WEIGHTS_PER_D2[spec.sublayer]} = {weights:,} weights is over the limit "
            f"of {MAX_WEIGHT_ELEMENTS:,} drawn per simulation; lower layers or d"
        )
    stream = (spec.layers + 1) * spec.tokens * spec.d
    if stream > MAX_STREAM_ELEMENTS:
        raise ValueError(
            f"(layers+1) * tokens * d = {stream:,} values is over the limit of "
            f"{MAX_STREAM_ELEMENTS:,} (1 GiB of float32 kept for the backward pass); "
            "lower layers, tokens or d"
        )


def weight_elements(spec: DepthSpec) -> int:
    """How many weights the stack draws (see ``layer_weights``): the simulation's main cost."""
    return spec.layers * spec.d * spec.d * WEIGHTS_PER_D2[spec.sublayer]


def sweep_depths(spec: DepthSpec, layers=SWEEP_LAYERS, device: str = "cpu") -> tuple[int, ...]:
    """The depths of ``layers`` at which ``spec`` (its ``layers`` replaced) is within limits."""
    allowed = []
    for n in layers:
        try:
            check_limits(dataclasses.replace(spec, layers=int(n)), device)
        except ValueError:
            continue
        allowed.append(int(n))
    return tuple(allowed)
