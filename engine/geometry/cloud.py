"""A cloud of input vectors and where LayerNorm, RMSNorm and DyT send it (d <= 3).

Where the outputs land, and why, is in measures.py (the sqrt(d) sphere, the plane
<v, 1> = 0), eps_curve.py (how far inside it eps leaves them) and dyt_sweep.py (DyT lands on
no sphere).  Every output here comes from ``engine.normalize``; this module only arranges
the results for drawing, and the spec's inputs for every other module of the package.

References:
- Ba, Kiros, Hinton 2016, "Layer Normalization", arXiv:1607.06450
- Zhang, Sennrich 2019, "Root Mean Square Layer Normalization", arXiv:1910.07467
- Zhu, Chen, He, LeCun, Liu 2025, "Transformers without Normalization", arXiv:2503.10622
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from engine.config import GEOMETRY_SCENE_MAX_D, GeometrySpec, NormSpec
from engine.errors import EngineError
from engine.geometry.arrays import readonly
from engine.geometry.degenerate import degeneracy_flags
from engine.geometry.measures import cosine, cosine_gap, l2_norm, ones_component
from engine.norms.dispatch import normalize
from engine.norms.random_inputs import random_vectors
from engine.threads import torch_threads

# Cells (rows x d) one call draws at most: 2**22 float32 cells are 16 MiB per array, so at
# d = 8192 a computation sees 512 random inputs, at d <= 2048 all 2,000 the spec allows.
MAX_CLOUD_CELLS = 2**22


def require_scene_dimension(d: int) -> None:
    """Refuse d > 3: the scene, its meshes and the per-axis gamma/beta are 1-, 2- or 3-D."""
    if d > GEOMETRY_SCENE_MAX_D:
        raise EngineError(
            "geometry.scene_dimension",
            {"d": d, "limit": GEOMETRY_SCENE_MAX_D},
        )


def sorted_values(values, limit: int, high: float, key: str, positive: bool = False):
    """``values`` as sorted floats, or ``EngineError(key)`` unless there are 1 to ``limit``
    of them, each in [0, high] (``positive``: in (0, high]); NaN is refused."""
    values = tuple(sorted(float(v) for v in values))
    in_range = all((v > 0 if positive else v >= 0) and v <= high for v in values)
    if not (1 <= len(values) <= limit and in_range):
        raise EngineError(key, {"count": len(values), "limit": limit, "high": high})
    return values


def affine_parameters(spec: GeometrySpec, d: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(gamma, beta) for vectors of width d: the spec's first d axes when d <= 3, else
    gamma = 1, beta = 0 (the per-axis settings exist only for the drawable axes).

    float64, exactly the spec's numbers; ``normalize`` rounds them to the input's dtype.
    """
    f64 = torch.float64
    if d > GEOMETRY_SCENE_MAX_D:
        return torch.ones(d, dtype=f64), torch.zeros(d, dtype=f64)  # [d], [d]
    gamma = torch.tensor((spec.gamma_x, spec.gamma_y, spec.gamma_z)[:d], dtype=f64)  # [d]
    beta = torch.tensor((spec.beta_x, spec.beta_y, spec.beta_z)[:d], dtype=f64)  # [d]
    return gamma, beta


def norm_spec(kind: str, spec: GeometrySpec, eps: float | None = None) -> NormSpec:
    """The ``NormSpec`` of one cloud kind under ``spec`` (``eps`` overrides the spec's)."""
    return NormSpec(kind=kind, eps=spec.eps if eps is None else eps, alpha=spec.dyt_alpha)


def input_vectors(spec: GeometrySpec, rows: int | None = None) -> torch.Tensor:
    """The spec's inputs as float32, ``[rows, d]`` (default ``spec.count`` rows).

    Drawn in float64 by ``engine.norms.random_inputs`` and rounded once to float32, the
    dtype the norms compute in.  The first k rows do not depend on ``rows``.
    """
    n = spec.count if rows is None else rows
    x = random_vectors(n, spec.d, spec.distribution, spec.shift, spec.spread, spec.seed)
    return x.float()  # [N, d]


def bounded_rows(spec: GeometrySpec, copies: int = 1) -> int:
    """How many of the spec's inputs fit ``copies`` times in ``MAX_CLOUD_CELLS`` (at least 1)."""
    return max(1, min(spec.count, MAX_CLOUD_CELLS // (spec.d * copies)))


def cloud_work(spec: GeometrySpec, *view) -> int:
    """The values one pass over the spec's (bounded) inputs touches: the unit of work of the
    high-dimension report and of the plane view, whose passes do not depend on the rest of
    their arguments (``view``: a plane view's method and axes)."""
    return bounded_rows(spec) * spec.d


@dataclass(frozen=True)
class NormedCloud:
    """One norm's outputs for every input of the cloud."""

    y: np.ndarray  # [N, d] gamma = 1, beta = 0: on the sqrt(d) sphere (up to eps)
    y_affine: np.ndarray  # [N, d] with the spec's gamma and beta: on the ellipsoid
    norm: np.ndarray  # [N] ||y||
    ones: np.ndarray  # [N] <y, 1>
    cos_input: np.ndarray  # [N] cos(x, y); NaN where x or y is the zero vector
    cos_gap: np.ndarray  # [N] 1 − cos(x, y) to its own digits (measures.cosine_gap)


@dataclass(frozen=True)
class Cloud:
    """Inputs and the three norms' outputs (d <= 3)."""

    inputs: np.ndarray  # [N, d] the float32 values the norms saw
    layernorm: NormedCloud
    rmsnorm: NormedCloud
    dyt: NormedCloud
    sqrt_d: float  # the radius outputs reach at eps = 0
    dyt_alpha: float
    flags: tuple[str, ...]  # engine.geometry.degenerate.FLAGS

    @property
    def sigma_over_rms(self) -> np.ndarray:
        """[N] each input's σ/rms in float64: cos(x, LayerNorm(x)) exactly (γ = 1, β = 0,
        any ε), which the float32 outputs' cosines show only to their rounding of x − μ."""
        x = self.inputs.astype(np.float64)  # [N, d]
        centred = x - x.mean(axis=-1, keepdims=True)  # [N, d]
        with np.errstate(invalid="ignore", divide="ignore"):  # a zero input: 0/0
            return np.sqrt((centred**2).mean(axis=-1) / (x**2).mean(axis=-1))

    @property
    def sigma_over_rms_gap(self) -> np.ndarray:
        """[N] 1 − σ/rms to its own digits: with u = μ²/rms² (and σ²/rms² = 1 − u), it is
        1 − √(1 − u) = u / (1 + √(1 − u)); ``1 - sigma_over_rms`` keeps only float64's
        steps of 1.1e-16 near 1."""
        x = self.inputs.astype(np.float64)  # [N, d]
        with np.errstate(invalid="ignore", divide="ignore"):  # a zero input: 0/0
            share = x.mean(axis=-1) ** 2 / (x**2).mean(axis=-1)  # [N] u
            return share / (1 + self.sigma_over_rms)


def normed(x: torch.Tensor, kind: str, spec: GeometrySpec) -> NormedCloud:
    """``x`` ([N, d]) through one norm, with and without the spec's gamma and beta."""
    gamma, beta = affine_parameters(spec, x.shape[-1])
    plain = normalize(x, norm_spec(kind, spec)).y  # [N, d]
    scaled = normalize(x, norm_spec(kind, spec), weight=gamma, bias=beta).y  # [N, d]
    return NormedCloud(
        y=readonly(plain),
        y_affine=readonly(scaled),
        norm=readonly(l2_norm(plain)),
        ones=readonly(ones_component(plain)),
        cos_input=readonly(cosine(x, plain)),
        cos_gap=readonly(cosine_gap(x, plain)),
    )


def normalized_cloud(spec: GeometrySpec, threads: int | None = 1) -> Cloud:
    """The spec's cloud of inputs and its LayerNorm, RMSNorm and DyT outputs (d <= 3).

    ``threads`` caps torch's intra-op threads for this call (``engine.threads``): arrays of a
    few thousand numbers gain nothing from threads, and on a busy CPU OpenMP's spin-waiting
    makes them many times slower (benchmarks/RESULTS.md, "Geometry (CPU)").
    """
    require_scene_dimension(spec.d)
    with torch_threads(threads):
        x = input_vectors(spec)  # [N, d]
        return Cloud(
            inputs=readonly(x),
            layernorm=normed(x, "layernorm", spec),
            rmsnorm=normed(x, "rmsnorm", spec),
            dyt=normed(x, "dyt", spec),
            sqrt_d=math.sqrt(spec.d),
            dyt_alpha=spec.dyt_alpha,
            flags=degeneracy_flags(x, spec.eps),
        )
