"""Degenerate inputs get an explanation, never a crash: d = 1, d = 2, constant and zero vectors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from engine.config import GeometrySpec
from engine.geometry.cloud import input_vectors, normalized_cloud
from engine.geometry.degenerate import FLAGS
from engine.geometry.dyt_sweep import dyt_sweep
from engine.geometry.eps_curve import eps_curve
from engine.geometry.high_dimension import high_dimension_report
from engine.geometry.path import vector_path
from engine.geometry.scene import build_scene
from engine.geometry.views import plane_view

BETA = dict(beta_x=0.5, beta_y=-2.0, beta_z=1.25)


@pytest.mark.parametrize("d", [2, 3])
def test_layernorm_of_a_constant_vector_is_beta(d):
    spec = GeometrySpec(d=d, count=20, distribution="constant", shift=3.7, eps=1e-5, **BETA)
    cloud = normalized_cloud(spec)
    beta = np.array([0.5, -2.0, 1.25])[:d]
    np.testing.assert_array_equal(cloud.layernorm.y_affine, np.tile(beta, (20, 1)))
    assert "layernorm_constant_is_beta_all" in cloud.flags  # every input, not "some"
    # F.layer_norm agrees: 0 / sqrt(eps) * gamma + beta
    oracle = F.layer_norm(torch.full((d,), 3.7), [d], bias=torch.tensor(beta).float(), eps=1e-5)
    np.testing.assert_array_equal(oracle.numpy(), beta.astype(np.float32))


@pytest.mark.parametrize("d", [1, 2, 3])
def test_rmsnorm_of_the_zero_vector_is_beta(d):
    spec = GeometrySpec(d=d, count=5, distribution="constant", shift=0.0, eps=1e-6, **BETA)
    cloud = normalized_cloud(spec)
    np.testing.assert_array_equal(cloud.rmsnorm.y, np.zeros((5, d)))
    np.testing.assert_array_equal(cloud.rmsnorm.y_affine[0], [0.5, -2.0, 1.25][:d])
    assert "rmsnorm_zero_is_beta_all" in cloud.flags
    assert np.isnan(cloud.rmsnorm.cos_input).all()  # the angle of 0 is undefined


def test_at_eps_zero_constant_and_zero_vectors_are_nan_and_flagged_not_crashing():
    spec = GeometrySpec(d=3, count=4, distribution="constant", shift=0.0, eps=0.0)
    scene = build_scene(spec)
    assert np.isnan(scene.cloud.layernorm.y).all()
    assert np.isnan(scene.cloud.rmsnorm.y).all()
    every = {"layernorm_constant_undefined_all", "rmsnorm_zero_undefined_all"}
    assert every <= set(scene.cloud.flags)
    assert np.isfinite(scene.meshes.extent)


def test_d1_layernorm_is_beta_and_rmsnorm_is_the_sign():
    spec = GeometrySpec(d=1, count=200, eps=0.0, beta_x=0.75, gamma_x=2.0)
    cloud = normalized_cloud(spec)
    x = np.array(cloud.inputs)[:, 0]
    # x * rsqrt(x^2) in float32: the sign, within one rounding of rsqrt
    np.testing.assert_allclose(cloud.rmsnorm.y[:, 0], np.sign(x), rtol=2**-23)
    np.testing.assert_allclose(cloud.rmsnorm.y_affine[:, 0], 2.0 * np.sign(x) + 0.75, rtol=2**-22)
    assert np.isnan(cloud.layernorm.y).all()  # 0/0 at eps = 0 ...
    assert {"d1_rmsnorm_is_sign", "layernorm_constant_undefined_all"} <= set(cloud.flags)
    assert "d1_layernorm_is_beta" not in cloud.flags  # said beside the NaN it contradicted
    with_eps = normalized_cloud(GeometrySpec(d=1, count=200, eps=1e-5, beta_x=0.75))
    np.testing.assert_array_equal(with_eps.layernorm.y_affine, 0.75)  # ... beta with eps > 0
    assert "d1_layernorm_is_beta" in with_eps.flags
    assert not {"layernorm_constant_is_beta", "layernorm_constant_is_beta_all"} & set(
        with_eps.flags
    )  # d1 already says it


def test_d2_layernorm_has_only_two_outputs_at_eps_zero():
    spec = GeometrySpec(d=2, count=2000, eps=0.0, gamma_x=2.0, gamma_y=0.5, beta_x=1.0)
    found = build_scene(spec).two_d
    expected = np.array([[1.0 + 2.0, -0.5], [1.0 - 2.0, 0.5]])  # beta +- gamma * (1, -1)
    np.testing.assert_allclose(found.endpoints, expected)
    np.testing.assert_allclose(np.abs(found.coefficient), 1.0, atol=1e-3)
    assert found.off_line < 1e-3
    assert "d2_layernorm_two_points" in normalized_cloud(spec).flags
    # the oracle in float64 puts every input exactly on +-(1, -1)
    x = input_vectors(spec).double()
    oracle = F.layer_norm(x, [2], eps=0.0)
    np.testing.assert_allclose(oracle.abs().numpy(), 1.0, rtol=1e-9)
    np.testing.assert_array_equal(np.sign(found.coefficient), np.sign(oracle[:, 0].numpy()))


def test_d2_with_eps_stays_on_the_line_and_shrinks_towards_beta():
    spec = GeometrySpec(d=2, count=500, eps=0.5, spread=0.5)
    found = build_scene(spec).two_d
    assert (np.abs(found.coefficient) < 1).all()
    # not "only two outputs": that is eps = 0
    assert normalized_cloud(spec).flags == ("d2_layernorm_segment",)
    assert (np.abs(found.coefficient) < 0.5).any()  # near-equal pairs land well inside
    assert found.off_line < 1e-6
    inputs = input_vectors(spec).numpy()
    a = (inputs[:, 0] - inputs[:, 1]) / 2
    np.testing.assert_allclose(
        np.abs(found.coefficient), np.abs(a) / np.sqrt(a * a + 0.5), rtol=1e-5
    )


DEGENERATE_SPECS = [
    GeometrySpec(d=1, count=50, eps=0.0),
    GeometrySpec(d=1, count=50, distribution="constant", shift=0.0, eps=0.0),
    GeometrySpec(d=2, count=50, distribution="constant", shift=1.0, eps=0.0),
    GeometrySpec(d=3, count=50, spread=0.0, shift=0.0, eps=0.0),
    GeometrySpec(d=3, count=50, spread=0.0, shift=-2.0, eps=1e-5),
]


@pytest.mark.parametrize("spec", DEGENERATE_SPECS, ids=lambda s: f"d{s.d}-{s.distribution}")
def test_every_function_survives_degenerate_inputs(spec):
    build_scene(spec)
    dyt_sweep(spec)
    curve = eps_curve(spec)
    assert np.isfinite(curve.scale_grid).all()
    report = high_dimension_report(spec, eps_values=(0.0, 1e-3))
    assert set(report.histograms.flags) <= set(FLAGS)
    for method in ("pca", "axes", "ones"):
        view = plane_view(spec, method, axes=(0, spec.d - 1))  # d = 1: its one axis twice
        assert np.isfinite(view.basis).all()
    path = vector_path((2.0,) * spec.d, spec)
    assert set(path.flags) <= set(FLAGS)


def test_vector_path_of_zero_and_constant_vectors_is_flagged():
    zero = vector_path((0.0, 0.0, 0.0), GeometrySpec(eps=1e-5))
    assert zero.rmsnorm.tolist() == [0.0, 0.0, 0.0]
    assert "rmsnorm_zero_is_beta" in zero.flags
    assert math.isnan(zero.rmsnorm_cos_input)
    constant = vector_path((4.0, 4.0), GeometrySpec(eps=1e-5, beta_x=1.0))
    assert constant.layernorm.tolist() == [0.0, 0.0]
    assert constant.flags == ("d2_layernorm_segment", "layernorm_constant_is_beta")


def test_every_flag_is_a_distinct_key_that_a_case_can_raise():
    assert len(set(FLAGS)) == len(FLAGS)
    seen = set(vector_path((0.0, 0.0, 0.0), GeometrySpec(eps=0.0)).flags)
    seen |= set(vector_path((0.0, 0.0, 0.0), GeometrySpec(eps=1e-5)).flags)
    seen |= set(vector_path((3.0,), GeometrySpec(eps=0.0)).flags)
    seen |= set(vector_path((3.0,), GeometrySpec(eps=1e-5)).flags)
    seen |= set(vector_path((1.0, 2.0), GeometrySpec(eps=0.0)).flags)
    seen |= set(vector_path((1.0, 2.0), GeometrySpec(eps=1e-5)).flags)
    for eps in (0.0, 1e-5):  # a cloud of zero vectors only: every input is one
        zeros = GeometrySpec(d=3, count=4, distribution="constant", shift=0.0, eps=eps)
        seen |= set(normalized_cloud(zeros).flags)
    assert seen == set(FLAGS)
