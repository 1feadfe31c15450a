"""A residual stack at initialisation: where the norm sits, and what depth does to it.

- ``placements.py`` ONE table: what each placement does, its theory, the catalog families
                    whose module names label its wiring diagram
- ``simulator.py``  forward and backward through L layers (``simulate_depth``)
- ``sweep.py``      the last layer's gradient against depth (``sweep_last_layer_grad``)
- ``theory.py``     closed-form predictions (Xiong et al. Lemma 2 / Theorem 1, DeepNorm)
- ``limits.py``     what the simulator refuses, before any work is done: its peak memory
                    and the work a spec counts (multiply-adds), from the spec alone

The names below are loaded on first use: ``engine.config`` reads ``placements`` (pure data)
while this package's simulator needs ``engine.config``, so importing this package must not
import the simulator.
"""

import importlib

_EXPORTS = {
    "MAX_LAYERS": "limits",
    "MAX_STREAM_ELEMENTS": "limits",
    "MAX_TOKENS": "limits",
    "MAX_WEIGHT_ELEMENTS": "limits",
    "MAX_DEPTH_WIDTH": "limits",
    "SWEEP_LAYERS": "limits",
    "check_limits": "limits",
    "sweep_depths": "limits",
    "weight_elements": "limits",
    "simulation_cost": "cost",
    "DepthCancelled": "simulator",
    "DepthResult": "simulator",
    "simulate_depth": "simulator",
    "SweepResult": "sweep",
    "sweep_last_layer_grad": "sweep",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"engine.depth.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'engine.depth' has no attribute {name!r}")
