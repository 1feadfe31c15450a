"""The scene's fixed shapes as arrays: the sqrt(d) sphere, the plane perpendicular to 1,
the all-ones axis, the LayerNorm circle, and the ellipsoid gamma and beta make of the sphere.

Every shape is a grid of points ``[R, C, d]`` (read-only).  With R > 1 it is a surface
(plotly's ``go.Surface(x=points[..., 0], y=points[..., 1], z=points[..., 2])``); with R = 1
a curve or a few points (``go.Scatter`` / ``go.Scatter3d`` of ``points[0]``).  The same
shape changes kind with d:

    shape            d = 3                 d = 2                     d = 1
    sphere           sphere, radius sqrt3   circle, radius sqrt2       the points -1, +1
    ones_plane       plane x + y + z = 0   line x + y = 0             the point 0
    layernorm_set    circle: plane & sphere the points +-(1, -1)       the point 0

``layernorm_set`` is where LayerNorm outputs land at eps = 0 (gamma = 1, beta = 0): the
sphere of the plane, radius sqrt(d).

gamma and beta act on a normalized vector x_hat as ``y = x_hat * gamma + beta``: the sphere
becomes an axis-aligned ellipsoid with semi-axes |gamma_i| centred at beta.  Gemma writes
the scale as ``1 + w`` (weights stored around 0): ``w = gamma - 1`` gives the same
ellipsoid.  Both are drawn through ``engine.norms.reference.affine``, the step every norm
applies, so the picture is the formula the norms run, not a copy of it.

References:
- Ba, Kiros, Hinton 2016, "Layer Normalization", arXiv:1607.06450
- Gemma team 2024, "Gemma: Open Models Based on Gemini Research and Technology",
  arXiv:2403.08295 (RMSNorm scale 1 + weight)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from engine.config import GeometrySpec
from engine.geometry.arrays import readonly
from engine.geometry.cloud import affine_parameters, require_scene_dimension
from engine.norms.reference import affine

RESOLUTION = 48  # points around a circle (and latitude rows x 2 for the sphere)


def _plane_basis() -> torch.Tensor:
    """Two orthonormal vectors spanning the plane x + y + z = 0."""
    u = torch.tensor([1.0, -1.0, 0.0], dtype=torch.float64) / math.sqrt(2)
    v = torch.tensor([1.0, 1.0, -2.0], dtype=torch.float64) / math.sqrt(6)
    return torch.stack([u, v])  # [2, 3]


def _sphere_points(d: int, resolution: int) -> torch.Tensor:
    """Unit sphere of R^d as a grid ``[R, C, d]`` (float64)."""
    if d == 1:
        return torch.tensor([[[-1.0], [1.0]]], dtype=torch.float64)  # [1, 2, 1]
    azimuth = torch.linspace(0, 2 * math.pi, resolution + 1, dtype=torch.float64)  # [C]
    if d == 2:
        return torch.stack([azimuth.cos(), azimuth.sin()], dim=-1)[None]  # [1, C, 2]
    polar = torch.linspace(0, math.pi, resolution // 2 + 1, dtype=torch.float64)  # [R]
    polar, azimuth = torch.meshgrid(polar, azimuth, indexing="ij")  # [R, C] each
    sin_polar = polar.sin()
    return torch.stack(
        [sin_polar * azimuth.cos(), sin_polar * azimuth.sin(), polar.cos()], dim=-1
    )  # [R, C, 3]


def _layernorm_set_points(d: int, resolution: int) -> torch.Tensor:
    """Unit sphere of the plane <v, 1> = 0 as a grid ``[1, C, d]`` (float64)."""
    if d == 1:
        return torch.zeros(1, 1, 1, dtype=torch.float64)  # the plane is the point 0
    if d == 2:
        unit = torch.tensor([1.0, -1.0], dtype=torch.float64) / math.sqrt(2)
        return torch.stack([unit, -unit])[None]  # [1, 2, 2]
    angle = torch.linspace(0, 2 * math.pi, resolution + 1, dtype=torch.float64)  # [C]
    circle = torch.stack([angle.cos(), angle.sin()], dim=-1)  # [C, 2]
    return (circle @ _plane_basis())[None]  # [1, C, 3]


def _ones_plane(d: int, half_width: float, resolution: int = 2) -> np.ndarray:
    """A patch of the plane <v, 1> = 0 reaching ``half_width`` from the origin (a square
    patch at d = 3, a segment at d = 2, the origin at d = 1)."""
    if d == 1:
        return readonly(torch.zeros(1, 1, 1))
    steps = torch.linspace(-half_width, half_width, resolution, dtype=torch.float64)  # [n]
    if d == 2:
        unit = torch.tensor([1.0, -1.0], dtype=torch.float64) / math.sqrt(2)
        return readonly((steps[:, None] * unit)[None])  # [1, n, 2]
    s, t = torch.meshgrid(steps, steps, indexing="ij")  # [n, n] each
    basis = _plane_basis()  # [2, 3]
    return readonly(s[..., None] * basis[0] + t[..., None] * basis[1])  # [n, n, 3]


@dataclass(frozen=True)
class SceneMeshes:
    """The fixed shapes of the scene for one d (gamma = 1, beta = 0)."""

    d: int
    radius: float  # sqrt(d)
    extent: float  # half-size of the plane patch and the axis
    sphere: np.ndarray  # radius sqrt(d): where RMSNorm (eps = 0, gamma = 1) puts every input
    ones_plane: np.ndarray  # a patch of the plane <v, 1> = 0
    ones_axis: np.ndarray  # the all-ones axis through the origin, from -extent to +extent
    layernorm_set: np.ndarray  # the plane cuts the sphere: LayerNorm's outputs at eps = 0


def scene_meshes(d: int, extent: float | None = None, resolution: int = RESOLUTION) -> SceneMeshes:
    """Sphere, plane, axis and LayerNorm set for d <= 3; ``extent`` defaults to 1.5 sqrt(d)
    (pass the cloud's reach to make the plane and axis span the inputs too)."""
    require_scene_dimension(d)
    reach = 1.5 * math.sqrt(d) if extent is None else float(extent)
    radius = math.sqrt(d)
    unit = torch.ones(d, dtype=torch.float64) / radius  # [d] along the all-ones axis
    return SceneMeshes(
        d=d,
        radius=radius,
        extent=reach,
        sphere=readonly(radius * _sphere_points(d, resolution)),
        ones_plane=_ones_plane(d, reach),
        ones_axis=readonly(torch.stack([-reach * unit, reach * unit])[None]),
        layernorm_set=readonly(radius * _layernorm_set_points(d, resolution)),
    )


@dataclass(frozen=True)
class Ellipsoids:
    """The sphere and LayerNorm set after gamma and beta, written two ways.

    ``standard`` uses scale gamma (``affine(x_hat, gamma, beta, offset=0)``); ``gemma``
    uses Gemma's ``1 + w`` with ``w = gamma - 1`` (``affine(x_hat, w, beta, offset=1)``).
    ``max_abs_difference`` between the two is float64 rounding: one shape.
    """

    gamma: np.ndarray  # [d] the scale: the ellipsoid's semi-axes are |gamma_i| * sqrt(d)
    gemma_weight: np.ndarray  # [d] w = gamma - 1, what a Gemma checkpoint would store
    beta: np.ndarray  # [d] the ellipsoid's centre
    standard: np.ndarray  # the sqrt(d) sphere through gamma * x_hat + beta
    gemma: np.ndarray  # the same sphere through (1 + w) * x_hat + beta
    layernorm_standard: np.ndarray  # the LayerNorm set through gamma * x_hat + beta
    layernorm_gemma: np.ndarray
    max_abs_difference: float  # max |standard - gemma| over both shapes


def ellipsoids(spec: GeometrySpec, resolution: int = RESOLUTION) -> Ellipsoids:
    """The ellipsoid that the spec's gamma and beta make of the sqrt(d) sphere (d <= 3)."""
    require_scene_dimension(spec.d)
    gamma, beta = affine_parameters(spec, spec.d)  # [d], [d] float64
    weight = gamma - 1.0  # [d] Gemma stores the scale as 1 + weight
    radius = math.sqrt(spec.d)
    shapes = {}
    for name, unit in (
        ("", _sphere_points(spec.d, resolution)),
        ("layernorm_", _layernorm_set_points(spec.d, resolution)),
    ):
        x_hat = radius * unit  # [R, C, d] a normalized output at gamma = 1, beta = 0
        shapes[f"{name}standard"] = affine(x_hat, gamma, beta, offset=0.0)  # [R, C, d]
        shapes[f"{name}gemma"] = affine(x_hat, weight, beta, offset=1.0)  # [R, C, d]
    difference = max(
        float((shapes["standard"] - shapes["gemma"]).abs().max()),
        float((shapes["layernorm_standard"] - shapes["layernorm_gemma"]).abs().max()),
    )
    return Ellipsoids(
        gamma=readonly(gamma),
        gemma_weight=readonly(weight),
        beta=readonly(beta),
        **{name: readonly(points) for name, points in shapes.items()},
        max_abs_difference=difference,
    )
