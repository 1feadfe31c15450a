"""NormScope's computation engine: pure torch, no UI.  See docs/architecture.md, "Engine API"."""

from engine.backend import describe_backend, resolve_backend
from engine.config import DepthSpec, NormSpec
from engine.norms.dispatch import normalize
from engine.norms.reference import NormResult

__all__ = [
    "DepthSpec",
    "NormResult",
    "NormSpec",
    "describe_backend",
    "normalize",
    "resolve_backend",
    "simulate_depth",
]


def __getattr__(name: str):
    # simulate_depth lives in engine/depth/simulator.py, imported on first use (it is heavier).
    if name == "simulate_depth":
        from engine.depth.simulator import simulate_depth

        return simulate_depth
    raise AttributeError(f"module 'engine' has no attribute {name!r}")
