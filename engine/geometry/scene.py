"""Everything the 3-D/2-D scene draws for one spec, in one result (d <= 3).

The cloud (inputs and the three norms' outputs), the fixed shapes sized to reach the cloud,
the ellipsoid of the spec's gamma and beta, and at d = 2 LayerNorm's two points.  A page
caches this one call per spec; each part can also be computed alone (cloud.py, meshes.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.config import GeometrySpec
from engine.geometry.cloud import Cloud, normalized_cloud
from engine.geometry.meshes import RESOLUTION, Ellipsoids, SceneMeshes, ellipsoids, scene_meshes
from engine.geometry.two_dimensions import TwoDimensionalLayerNorm, two_dimensional_layernorm


@dataclass(frozen=True)
class Scene:
    """The cloud, the fixed shapes, and the gamma/beta ellipsoid of one spec."""

    cloud: Cloud
    meshes: SceneMeshes
    ellipsoids: Ellipsoids
    two_d: TwoDimensionalLayerNorm | None  # d = 2 only: LayerNorm's two points, counted


def _reach(cloud: Cloud) -> float:
    """Half-size that holds the sphere, every finite input and output, and some margin."""
    arrays = (cloud.inputs, cloud.layernorm.y_affine, cloud.rmsnorm.y_affine, cloud.dyt.y_affine)
    finite = [np.abs(a[np.isfinite(a)]) for a in arrays]
    largest = max((float(a.max()) for a in finite if a.size), default=0.0)
    return max(1.5 * math.sqrt(cloud.inputs.shape[-1]), 1.1 * largest)


def build_scene(spec: GeometrySpec, resolution: int = RESOLUTION, threads: int | None = 1) -> Scene:
    """The whole scene of ``spec`` (d in {1, 2, 3}); see cloud.py for ``threads``."""
    cloud = normalized_cloud(spec, threads)
    shapes = ellipsoids(spec, resolution)
    return Scene(
        cloud=cloud,
        meshes=scene_meshes(spec.d, _reach(cloud), resolution),
        ellipsoids=shapes,
        two_d=two_dimensional_layernorm(cloud, shapes) if spec.d == 2 else None,
    )
