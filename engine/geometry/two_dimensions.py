"""LayerNorm at d = 2: only two outputs, +(1, -1) and -(1, -1), shown numerically (why:
degenerate.py).  It surprises: a 2-D LayerNorm throws away everything but one bit, which
entry is larger.

References:
- Ba, Kiros, Hinton 2016, "Layer Normalization", arXiv:1607.06450
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.geometry.arrays import readonly
from engine.geometry.cloud import Cloud
from engine.geometry.meshes import Ellipsoids

# float32 rounding of x - mu 1 moves outputs of nearly equal entries (x1 - x2 ~ 1e-3) by
# up to ~2e-4 off (1, -1): three decimals group them with the point they belong to.
DECIMALS = 3


@dataclass(frozen=True)
class TwoDimensionalLayerNorm:
    """LayerNorm at d = 2, shown numerically: every output is beta + t * gamma * (1, -1).

    At eps = 0, t is +1 or -1 for every non-constant input (two points, whatever the
    cloud); eps > 0 gives |t| = |a| / sqrt(a^2 + eps) with a = (x1 - x2) / 2, still on the
    same line; a constant input gives t = 0 (beta), or NaN at eps = 0.
    """

    coefficient: np.ndarray  # [N] t: outputs = beta + t * gamma * (1, -1)
    off_line: float  # max |y1 + y2| of the gamma = 1, beta = 0 outputs (rounding only)
    endpoints: np.ndarray  # [2, 2] beta + gamma * (1, -1) and beta - gamma * (1, -1)


def two_dimensional_layernorm(cloud: Cloud, ellipsoids: Ellipsoids) -> TwoDimensionalLayerNorm:
    """The LayerNorm outputs of a d = 2 cloud (gamma = 1, beta = 0) as coefficients t, and
    the two points the spec's gamma and beta make of +-(1, -1)."""
    y = cloud.layernorm.y  # [N, 2]
    direction = ellipsoids.gamma * np.array([1.0, -1.0])  # [2]
    beta = ellipsoids.beta  # [2]
    return TwoDimensionalLayerNorm(
        coefficient=readonly((y[:, 0] - y[:, 1]) / 2),
        off_line=float(np.nan_to_num(np.abs(cloud.layernorm.ones), nan=0.0).max(initial=0.0)),
        endpoints=readonly(np.stack([beta + direction, beta - direction])),
    )
