"""GeometrySpec: a cloud of input vectors and the norms' settings (engine/geometry/)."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from engine.errors import EngineError

GEOMETRY_DISTRIBUTIONS = ("normal", "uniform", "constant")  # = norms.random_inputs.DISTRIBUTIONS
GEOMETRY_MAX_COUNT = 2_000  # input vectors in one cloud
GEOMETRY_MAX_D = 8_192  # widest vectors (the high-dimension histograms)
GEOMETRY_SCENE_MAX_D = 3  # the scene, meshes and the per-axis gamma/beta: d in {1, 2, 3}
GEOMETRY_MAX_SPREAD = 1e4  # |spread|, |shift|: float32 squares stay far below its max 3.4e38
GEOMETRY_MAX_EPS = 1.0
GEOMETRY_MAX_AFFINE = 100.0  # |gamma_*|, |beta_*|
GEOMETRY_MAX_ALPHA = 100.0  # DyT alpha in (0, 100]
GEOMETRY_AXES = ("x", "y", "z")


def _refuse_geometry(key: str, **params) -> None:
    raise EngineError(f"geometry.{key}", params)


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value) -> bool:
    real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    return real and math.isfinite(value)


@dataclass(frozen=True)
class GeometrySpec:
    """A cloud of random input vectors and the norms' settings, for ``engine.geometry``.

    Inputs are ``shift + spread * z`` with ``z`` drawn by ``distribution`` (unit variance;
    "constant" makes z = 0, so every input is the constant vector ``shift * 1``).  ``d`` may
    be up to ``GEOMETRY_MAX_D`` for the high-dimension histograms; the 3-D/2-D scene and its
    meshes take d <= 3.  ``gamma_*`` / ``beta_*`` are the per-axis scale and shift of the
    first d axes; they apply only when d <= 3 (wider vectors use gamma = 1, beta = 0).
    """

    distribution: str = "normal"  # one of GEOMETRY_DISTRIBUTIONS
    spread: float = 1.0  # scale of the random part (its standard deviation), >= 0
    shift: float = 0.0  # added to every entry: moves the cloud along the all-ones axis
    count: int = 500  # number of input vectors, 1..GEOMETRY_MAX_COUNT
    d: int = 3  # dimension, 1..GEOMETRY_MAX_D
    seed: int = 0
    eps: float = 1e-5  # LayerNorm / RMSNorm epsilon, 0..GEOMETRY_MAX_EPS
    gamma_x: float = 1.0  # per-axis scale gamma (the sphere becomes an ellipsoid)
    gamma_y: float = 1.0
    gamma_z: float = 1.0
    beta_x: float = 0.0  # per-axis shift beta (the ellipsoid's centre)
    beta_y: float = 0.0
    beta_z: float = 0.0
    dyt_alpha: float = 0.5  # DyT: y = gamma * tanh(alpha * x) + beta

    def __post_init__(self) -> None:
        if self.distribution not in GEOMETRY_DISTRIBUTIONS:
            _refuse_geometry(
                "unknown_distribution",
                value=str(self.distribution),
                accepted=", ".join(GEOMETRY_DISTRIBUTIONS),
            )
        for name, limit in (("count", GEOMETRY_MAX_COUNT), ("d", GEOMETRY_MAX_D)):
            value = getattr(self, name)
            if not _is_int(value) or not 1 <= value <= limit:
                _refuse_geometry(
                    f"{name}_out_of_range",
                    value=str(value),
                    limit=limit,
                )
        if not _is_int(self.seed) or self.seed < 0:
            _refuse_geometry(
                "seed_invalid",
                value=str(self.seed),
            )
        self._check_range("spread", 0.0, GEOMETRY_MAX_SPREAD)
        self._check_range("shift", -GEOMETRY_MAX_SPREAD, GEOMETRY_MAX_SPREAD)
        self._check_range("eps", 0.0, GEOMETRY_MAX_EPS)
        for axis in GEOMETRY_AXES:
            self._check_range(f"gamma_{axis}", -GEOMETRY_MAX_AFFINE, GEOMETRY_MAX_AFFINE)
            self._check_range(f"beta_{axis}", -GEOMETRY_MAX_AFFINE, GEOMETRY_MAX_AFFINE)
        self._check_range("dyt_alpha", 0.0, GEOMETRY_MAX_ALPHA)
        if self.dyt_alpha == 0.0:
            _refuse_geometry(
                "alpha_zero",
                limit=GEOMETRY_MAX_ALPHA,
            )

    def _check_range(self, name: str, low: float, high: float) -> None:
        value = getattr(self, name)
        if not _is_real(value) or not low <= value <= high:
            _refuse_geometry(
                "value_out_of_range",
                name=name,
                value=str(value),
                low=low,
                high=high,
            )
