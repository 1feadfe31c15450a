"""Where DyT sends the cloud as alpha changes: on no sphere, inside the cube.

DyT(x) = gamma * tanh(alpha * x) + beta acts on each entry alone, with no statistic of the
vector.  With gamma = 1, beta = 0 its outputs lie inside the cube (-1, 1)^d:

- small alpha: tanh(alpha x) ~ alpha x, a shrunken copy of the inputs (norms ~ alpha ||x||);
- large alpha: tanh(alpha x) -> sign(x), the cube's corners, which do lie on the sqrt(d)
  sphere; in between, lengths depend on the input, unlike LayerNorm/RMSNorm.

References:
- Zhu, Chen, He, LeCun, Liu 2025, "Transformers without Normalization", arXiv:2503.10622
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import torch

from engine.config import GEOMETRY_MAX_ALPHA, GeometrySpec
from engine.geometry.arrays import readonly
from engine.geometry.cloud import input_vectors, norm_spec, require_scene_dimension, sorted_values
from engine.geometry.measures import l2_norm
from engine.norms.dispatch import normalize
from engine.threads import torch_threads

DEFAULT_ALPHAS = tuple(float(a) for a in np.geomspace(0.05, 20.0, 17))  # 1/20 .. 20
SATURATED = 0.99  # |tanh(alpha x)| above this: the entry sits at the cube's face
MAX_ALPHAS = 64


@dataclass(frozen=True)
class DytSweep:
    """DyT outputs of the spec's cloud for each alpha (d <= 3)."""

    alphas: np.ndarray  # [A], ascending
    norm: np.ndarray  # [A, N] ||tanh(alpha x)||
    saturated_fraction: np.ndarray  # [A] share of entries with |tanh(alpha x)| > SATURATED
    sqrt_d: float  # the sphere the corners sign(x) lie on


def dyt_sweep(
    spec: GeometrySpec, alphas: tuple[float, ...] = DEFAULT_ALPHAS, threads: int | None = 1
) -> DytSweep:
    """The spec's cloud through DyT at each alpha, gamma = 1 and beta = 0 (``spec.dyt_alpha``
    is not used)."""
    require_scene_dimension(spec.d)
    values = sorted_values(alphas, MAX_ALPHAS, GEOMETRY_MAX_ALPHA, "geometry.alphas_invalid", True)
    with torch_threads(threads):
        x = input_vectors(spec)  # [N, d]
        plain_outputs = torch.stack(
            [normalize(x, norm_spec("dyt", replace(spec, dyt_alpha=alpha))).y for alpha in values]
        )  # [A, N, d] tanh(alpha x): gamma = 1, beta = 0
        saturated = (plain_outputs.abs() > SATURATED).double().mean(dim=(1, 2))  # [A]
        return DytSweep(
            alphas=readonly(values),
            norm=readonly(l2_norm(plain_outputs)),
            saturated_fraction=readonly(saturated),
            sqrt_d=math.sqrt(spec.d),
        )
