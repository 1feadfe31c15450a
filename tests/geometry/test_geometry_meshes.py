"""The scene's shapes: sphere, plane, axis, LayerNorm set, and the gamma/beta ellipsoid
written as gamma and as Gemma's 1 + w (one shape, drawn by two parameterisations)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from engine.config import GeometrySpec, NormSpec
from engine.geometry.cloud import input_vectors
from engine.geometry.meshes import ellipsoids, scene_meshes
from engine.geometry.scene import build_scene
from engine.norms.dispatch import normalize


@pytest.mark.parametrize("d", [1, 2, 3])
def test_sphere_and_layernorm_set_have_radius_sqrt_d(d):
    meshes = scene_meshes(d)
    for mesh in (meshes.sphere, meshes.layernorm_set):
        points = mesh.reshape(-1, d)
        if d == 1 and mesh is meshes.layernorm_set:
            np.testing.assert_array_equal(points, [[0.0]])  # the plane of R^1 is the point 0
            continue
        np.testing.assert_allclose(np.linalg.norm(points, axis=1), math.sqrt(d), rtol=1e-12)
    assert (meshes.sphere.shape[0] > 1) == (d == 3)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_plane_and_layernorm_set_are_perpendicular_to_ones_and_the_axis_is_along_it(d):
    meshes = scene_meshes(d, extent=4.0)
    for mesh in (meshes.ones_plane, meshes.layernorm_set):
        np.testing.assert_allclose(mesh.sum(axis=-1), 0.0, atol=1e-12)
    axis = meshes.ones_axis[0]  # [2, d]
    np.testing.assert_allclose(axis[1], np.full(d, 4.0 / math.sqrt(d)))
    np.testing.assert_allclose(axis[0], -axis[1])
    if d == 3:
        assert meshes.ones_plane.shape[0] > 1
        # a square of half-width 4 in the plane: its corners are 4 sqrt(2) from the origin
        lengths = np.linalg.norm(meshes.ones_plane, axis=-1)
        assert lengths.max() == pytest.approx(4.0 * math.sqrt(2))


def test_layernorm_set_is_where_layernorm_outputs_land_in_3d():
    """Every LayerNorm output (eps = 0) is on the circle: within the mesh's chord error."""
    spec = GeometrySpec(count=500, eps=0.0, shift=1.0)
    scene = build_scene(spec, resolution=360)
    circle = scene.meshes.layernorm_set[0]  # [C, 3]
    outputs = F.layer_norm(input_vectors(spec).double(), [3], eps=0.0).numpy()  # oracle
    distance = np.linalg.norm(outputs[:, None, :] - circle[None, :, :], axis=-1).min(axis=1)
    chord = math.sqrt(3) * 2 * math.pi / 360
    assert distance.max() < chord


GAMMAS = [
    dict(gamma_x=2.0, gamma_y=0.5, gamma_z=1.0, beta_x=0.0, beta_y=1.0, beta_z=-0.5),
    dict(gamma_x=-1.0, gamma_y=3.0, gamma_z=0.25, beta_x=2.0, beta_y=0.0, beta_z=0.0),
    dict(gamma_x=0.0, gamma_y=1.0, gamma_z=1.0),
]


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("affine", GAMMAS)
def test_gamma_and_gemma_one_plus_w_give_one_ellipsoid(d, affine):
    spec = GeometrySpec(d=d, **affine)
    shapes = ellipsoids(spec)
    gamma = np.array([affine.get(f"gamma_{a}", 1.0) for a in "xyz"])[:d]
    beta = np.array([affine.get(f"beta_{a}", 0.0) for a in "xyz"])[:d]
    np.testing.assert_allclose(shapes.gemma_weight, gamma - 1.0)
    assert shapes.max_abs_difference < 1e-14
    np.testing.assert_allclose(shapes.gemma, shapes.standard, atol=1e-14)
    # semi-axes |gamma_i| sqrt(d) about beta: the shape the norm draws, by hand
    sphere = scene_meshes(d).sphere
    np.testing.assert_allclose(shapes.standard, sphere * gamma + beta, atol=1e-14)
    reach = np.abs(shapes.standard - beta).reshape(-1, d).max(axis=0)
    np.testing.assert_allclose(reach, np.abs(gamma) * math.sqrt(d), rtol=1e-9)


@pytest.mark.parametrize("affine", GAMMAS[:2])
def test_the_ellipsoid_is_where_the_norm_with_gamma_puts_outputs(affine):
    """RMSNorm with weight gamma (F.rms_norm) and Gemma's offset 1 with w = gamma - 1 (our
    normalize) send the same inputs to the same points, on the ellipsoid."""
    spec = GeometrySpec(count=300, eps=0.0, **affine)
    x = input_vectors(spec)  # [N, 3]
    gamma = torch.tensor([affine[f"gamma_{a}"] for a in "xyz"])
    beta = torch.tensor([affine[f"beta_{a}"] for a in "xyz"])
    oracle = F.rms_norm(x.double(), [3], weight=gamma.double(), eps=spec.eps) + beta
    gemma = normalize(x, NormSpec(kind="rmsnorm", eps=spec.eps, offset=1.0), gamma - 1, beta).y
    np.testing.assert_allclose(gemma.double().numpy(), oracle.numpy(), atol=1e-5)
    # on the ellipsoid: sum(((y - beta) / gamma)^2) = d
    radius2 = (((oracle - beta) / gamma) ** 2).sum(dim=-1)
    np.testing.assert_allclose(radius2.numpy(), 3.0, rtol=1e-12)


def test_scene_extent_reaches_the_cloud():
    scene = build_scene(GeometrySpec(count=200, shift=10.0))
    assert scene.meshes.extent >= np.abs(scene.cloud.inputs).max()
    assert scene.meshes.ones_axis[0, 1, 0] * math.sqrt(3) == pytest.approx(scene.meshes.extent)
