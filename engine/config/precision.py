"""PrecisionSpec: one row norm evaluated as real code does (engine/norms/precision.py)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import EngineError
from engine.norms.kinds import ROW_KINDS

PRECISION_KINDS = ROW_KINDS  # the story is about one row's statistic
HALF_DTYPES = ("float16", "bfloat16")
# A token of a half-precision run has diverged where its residual's relative distance to the
# float32 run, ‖x_half − x_float32‖ / ‖x_float32‖, exceeds this.
HALF_DIVERGENCE = 0.1


@dataclass(frozen=True)
class PrecisionSpec:
    """Which norm the precision story evaluates, with which epsilon, stored in which dtype.

    The inputs are stored in ``dtype`` and every path of ``engine.norms.precision`` runs on
    them; gamma = 1 and beta = 0 (the story is about the statistics, not the affine step).
    """

    kind: str = "rmsnorm"  # one of PRECISION_KINDS
    eps: float = 1e-5  # added to the variance (or mean square) before the square root
    dtype: str = "float16"  # one of HALF_DTYPES: the storage dtype of x

    def __post_init__(self) -> None:
        if self.kind not in PRECISION_KINDS:
            raise EngineError(
                "precision.unknown_kind",
                {"kind": self.kind, "allowed": ", ".join(PRECISION_KINDS)},
            )
        if self.dtype not in HALF_DTYPES:
            raise EngineError(
                "precision.unknown_dtype",
                {"dtype": self.dtype, "allowed": ", ".join(HALF_DTYPES)},
            )
        if not (self.eps >= 0.0 and self.eps < float("inf")):
            raise EngineError(
                "precision.bad_eps",
                {"eps": self.eps},
            )
