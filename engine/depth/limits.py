"""Size limits of the depth simulator: what it refuses, and why, before any work is done.

The simulator's cost is dominated by drawing every layer's weights (L·d²·k numbers) and by
keeping the residual stream of every layer for the backward pass ((L+1)·T·d numbers); both
are capped, and so is the predicted peak memory of the whole run (``engine/depth/cost.py``)
against a per-job budget, so that no configuration a page accepts can exhaust a shared
server.  Every refusal is an ``EngineError`` whose key names the limit (``depth.<limit>``).

The budget is ``JOB_MEMORY_BYTES``: 1.5 GiB unless the environment variable
``NORMSCOPE_JOB_MEMORY_MB`` says otherwise (a server with more memory per core may raise it).
"""

from __future__ import annotations

import dataclasses
import os

import torch

from engine.config import DepthSpec
from engine.config.depth import MAX_DEPTH_WIDTH, MAX_LAYERS, MAX_TOKENS
from engine.depth.cost import WEIGHTS_PER_D2, simulation_cost, weight_elements
from engine.errors import EngineError

MAX_STREAM_ELEMENTS = 2**28  # (L+1) * T * d floats kept for the backward pass: 1 GiB
MAX_WEIGHT_ELEMENTS = 2**28  # weights drawn over all layers: 1 GiB of normal numbers
SWEEP_LAYERS = (6, 12, 24, 48, 96)  # depths of the last-layer gradient sweep
JOB_MEMORY_BYTES = int(float(os.environ.get("NORMSCOPE_JOB_MEMORY_MB", 1536)) * 2**20)


def max_width(device: str = "cpu") -> int:
    """The widest residual stream the simulator takes on ``device``."""
    kind = torch.device(device).type
    return MAX_DEPTH_WIDTH.get(kind, MAX_DEPTH_WIDTH["cpu"])


def check_limits(spec: DepthSpec, device: str = "cpu") -> None:
    """Raise ``EngineError`` naming the limit when ``spec`` is too big to simulate."""
    kind = torch.device(device).type
    widest = max_width(device)
    for name, value, limit in (
        ("layers", spec.layers, MAX_LAYERS),
        ("d", spec.d, widest),
        ("tokens", spec.tokens, MAX_TOKENS),
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
                "per_layer": WEIGHTS_PER_D2[spec.sublayer],
            },
        )
    stream = (spec.layers + 1) * spec.tokens * spec.d
    if stream > MAX_STREAM_ELEMENTS:
        raise EngineError(
            "depth.stream_too_large",
            {"values": f"{stream:,}", "limit": f"{MAX_STREAM_ELEMENTS:,}"},
        )
    peak = simulation_cost(spec).peak_bytes
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
