"""NormScope's computation engine: pure torch, no UI.  See docs/architecture.md, "Engine API"."""

from engine.backend import describe_backend, resolve_backend
from engine.config import DepthSpec, NormSpec
from engine.depth.simulator import simulate_depth
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
