"""GeometrySpec: a cloud of input vectors and the norms' settings (engine/geometry/)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.config.fields import MAX_SEED, check_fields, param
from engine.config.norms import EPS_MENU
from engine.errors import EngineError
from engine.norms.random_inputs import DISTRIBUTIONS as GEOMETRY_DISTRIBUTIONS

GEOMETRY_MAX_COUNT = 2_000  # input vectors in one cloud
GEOMETRY_MAX_D = 8_192  # widest vectors (the high-dimension histograms)
GEOMETRY_SCENE_MAX_D = 3  # the scene, meshes and the per-axis gamma/beta: d in {1, 2, 3}
GEOMETRY_MAX_SPREAD = 1e4  # |spread|, |shift|: float32 squares stay far below its max 3.4e38
GEOMETRY_MAX_EPS = 1.0
GEOMETRY_MAX_AFFINE = 100.0  # |gamma_*|, |beta_*|
GEOMETRY_MAX_ALPHA = 100.0  # DyT alpha in (0, 100]
GEOMETRY_AXES = ("x", "y", "z")
# What a page offers: the high-dimension widths; input scales and α on log-spaced steps.
GEOMETRY_WIDE_D = (4, 16, 64, 256, 768, 2048, 4096, GEOMETRY_MAX_D)
GEOMETRY_WIDE_OPENING_D = 768  # the width the high-dimension section opens on (GPT-2 small's)
GEOMETRY_SPREADS = (0.0, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0, 3.0, 10.0, 100.0)
GEOMETRY_ALPHAS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0)
# The sliders' spans (links too), narrower than what the spec takes
GEOMETRY_SLIDER_AFFINE = (-3.0, 3.0)
GEOMETRY_SLIDER_SHIFT = (-10.0, 10.0)


def _affine(default: float):
    return param(
        default,
        low=-GEOMETRY_MAX_AFFINE,
        high=GEOMETRY_MAX_AFFINE,
        offered_range=GEOMETRY_SLIDER_AFFINE,
    )


@dataclass(frozen=True)
class GeometrySpec:
    """A cloud of random input vectors and the norms' settings, for ``engine.geometry``.

    Inputs are ``shift + spread * z`` with ``z`` drawn by ``distribution`` (unit variance;
    "constant" makes z = 0, so every input is the constant vector ``shift * 1``).  ``d`` may
    be up to ``GEOMETRY_MAX_D`` for the high-dimension histograms; the 3-D/2-D scene and its
    meshes take d <= 3.  ``gamma_*`` / ``beta_*`` are the per-axis scale and shift of the
    first d axes; they apply only when d <= 3 (wider vectors use gamma = 1, beta = 0).
    """

    distribution: str = param("normal", choices=GEOMETRY_DISTRIBUTIONS)
    # scale of the random part (its standard deviation)
    spread: float = param(1.0, low=0.0, high=GEOMETRY_MAX_SPREAD, offered=GEOMETRY_SPREADS)
    # added to every entry: moves the cloud along the all-ones axis
    shift: float = param(
        0.0,
        low=-GEOMETRY_MAX_SPREAD,
        high=GEOMETRY_MAX_SPREAD,
        offered_range=GEOMETRY_SLIDER_SHIFT,
    )
    count: int = param(500, low=1, high=GEOMETRY_MAX_COUNT)  # number of input vectors
    d: int = param(3, low=1, high=GEOMETRY_MAX_D, offered=GEOMETRY_WIDE_D)  # dimension
    seed: int = param(0, low=0, high=MAX_SEED)
    # LayerNorm / RMSNorm epsilon
    eps: float = param(1e-5, low=0.0, high=GEOMETRY_MAX_EPS, offered=EPS_MENU)
    gamma_x: float = _affine(1.0)  # per-axis scale gamma (the sphere becomes an ellipsoid)
    gamma_y: float = _affine(1.0)
    gamma_z: float = _affine(1.0)
    beta_x: float = _affine(0.0)  # per-axis shift beta (the ellipsoid's centre)
    beta_y: float = _affine(0.0)
    beta_z: float = _affine(0.0)
    # DyT: y = gamma * tanh(alpha * x) + beta
    dyt_alpha: float = param(0.5, positive=True, high=GEOMETRY_MAX_ALPHA, offered=GEOMETRY_ALPHAS)

    def __post_init__(self) -> None:
        if self.dyt_alpha == 0:  # said in words: tanh(0·x) = 0 for every input
            raise EngineError("geometry.alpha_zero", {"limit": GEOMETRY_MAX_ALPHA})
        check_fields(self)
