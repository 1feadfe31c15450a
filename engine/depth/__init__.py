"""A residual stack at initialisation: where the norm sits, and what depth does to it.

- ``simulator.py`` forward and backward through L layers (``simulate_depth``)
- ``sweep.py``     the last layer's gradient against depth (``sweep_last_layer_grad``)
- ``theory.py``    closed-form predictions (Xiong et al. Lemma 2 / Theorem 1, DeepNorm)
- ``limits.py``    what the simulator refuses, before any work is done
"""

from engine.depth.limits import (
    MAX_LAYERS,
    MAX_STREAM_ELEMENTS,
    MAX_TOKENS,
    MAX_WEIGHT_ELEMENTS,
    MAX_WIDTH,
    SWEEP_LAYERS,
    check_limits,
    sweep_depths,
    weight_elements,
)
from engine.depth.simulator import DepthCancelled, DepthResult, simulate_depth
from engine.depth.sweep import SweepResult, sweep_last_layer_grad

__all__ = [
    "MAX_LAYERS",
    "MAX_STREAM_ELEMENTS",
    "MAX_TOKENS",
    "MAX_WEIGHT_ELEMENTS",
    "MAX_WIDTH",
    "SWEEP_LAYERS",
    "DepthCancelled",
    "DepthResult",
    "SweepResult",
    "check_limits",
    "simulate_depth",
    "sweep_depths",
    "sweep_last_layer_grad",
    "weight_elements",
]
