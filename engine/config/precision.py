"""PrecisionSpec: one row norm evaluated as real code does (engine/norms/precision.py)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.config.fields import Checked, param
from engine.norms.kinds import ROW_KINDS

PRECISION_KINDS = ROW_KINDS  # the story is about one row's statistic
HALF_DTYPES = ("float16", "bfloat16")
# A token of a half-precision run has diverged where its residual's relative distance to the
# float32 run, ‖x_half − x_float32‖ / ‖x_float32‖, exceeds this.
HALF_DIVERGENCE = 0.1


@dataclass(frozen=True)
class PrecisionSpec(Checked):
    """Which norm the precision story evaluates, with which epsilon, stored in which dtype.

    The inputs are stored in ``dtype`` and every path of ``engine.norms.precision`` runs on
    them; gamma = 1 and beta = 0 (the story is about the statistics, not the affine step).
    """

    kind: str = param("rmsnorm", choices=PRECISION_KINDS)
    eps: float = param(1e-5, low=0.0, high=1.0)  # added to the variance (or mean square)
    dtype: str = param("float16", choices=HALF_DTYPES)  # the storage dtype of x
