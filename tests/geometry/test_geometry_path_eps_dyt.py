"""One vector step by step; the eps curve against measured norms; DyT as alpha grows."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from engine.config import GeometrySpec
from engine.geometry.cloud import input_vectors
from engine.geometry.dyt_sweep import dyt_sweep
from engine.geometry.eps_curve import eps_curve, predicted_norm
from engine.geometry.path import vector_path


def test_vector_path_by_hand():
    """x = (1, 2, 6): mu = 3, x - mu 1 = (-2, -1, 3), sigma^2 = 14/3, rms^2 = 41/3."""
    path = vector_path((1.0, 2.0, 6.0), GeometrySpec(eps=0.0, gamma_x=2.0, beta_z=1.0))
    assert path.mean == 3.0
    np.testing.assert_array_equal(path.along_ones, [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(path.centered, [-2.0, -1.0, 3.0])
    assert path.sigma == pytest.approx(math.sqrt(14 / 3), rel=1e-7)
    assert path.rms == pytest.approx(math.sqrt(41 / 3), rel=1e-7)
    layer = np.array([-2.0, -1.0, 3.0]) / math.sqrt(14 / 3)
    np.testing.assert_allclose(path.layernorm, layer, rtol=1e-6)
    np.testing.assert_allclose(path.rmsnorm, np.array([1, 2, 6]) / math.sqrt(41 / 3), rtol=1e-6)
    np.testing.assert_allclose(path.dyt, np.tanh(0.5 * np.array([1.0, 2.0, 6.0])), rtol=1e-6)
    assert path.layernorm_norm == pytest.approx(math.sqrt(3), rel=1e-6)
    assert path.rmsnorm_norm == pytest.approx(math.sqrt(3), rel=1e-6)
    assert path.centered_ones == 0.0
    assert path.rmsnorm_cos_input == pytest.approx(1.0, abs=1e-12)
    assert path.layernorm_cos_input == pytest.approx(math.sqrt(14 / 41), rel=1e-6)
    assert path.flags == ()


def test_vector_path_of_a_wide_vector_matches_torch():
    vector = tuple(float(v) for v in np.linspace(-3, 7, 12))
    path = vector_path(vector, GeometrySpec(eps=1e-5))
    x = torch.tensor(vector, dtype=torch.float64)
    np.testing.assert_allclose(path.layernorm, F.layer_norm(x, [12], eps=1e-5), atol=1e-6)
    np.testing.assert_allclose(path.rmsnorm, F.rms_norm(x, [12], eps=1e-5), atol=1e-6)
    assert path.sqrt_d == math.sqrt(12)


@pytest.mark.parametrize("d", [1, 2, 3, 64, 8192])
@pytest.mark.parametrize("eps", [0.0, 1e-5, 0.1])
def test_eps_formula_against_torch_norms(d, eps):
    """||y|| = sqrt(d) sigma / sqrt(sigma^2 + eps): the closed form against F.layer_norm and
    F.rms_norm in float64, sigma and rms by hand, over inputs from 1/100 to 100 sqrt(eps)."""
    spec = GeometrySpec(d=d, count=64, eps=eps)
    scales = torch.logspace(-4, 2, 7, dtype=torch.float64)  # [K]
    x = scales[:, None, None] * input_vectors(spec, 16 if d > 64 else 64).double()  # [K, M, d]
    sigma = x.std(dim=-1, correction=0)  # [K, M]
    rms = x.pow(2).mean(dim=-1).sqrt()  # [K, M]
    layer = torch.linalg.vector_norm(F.layer_norm(x, [d], eps=eps), dim=-1)
    root = torch.linalg.vector_norm(F.rms_norm(x, [d], eps=eps), dim=-1)
    if d > 1:
        np.testing.assert_allclose(predicted_norm(sigma.numpy(), eps, d), layer, rtol=1e-9)
    np.testing.assert_allclose(predicted_norm(rms.numpy(), eps, d), root, rtol=1e-9)


@pytest.mark.parametrize("d", [2, 3, 768])
@pytest.mark.parametrize("eps", [0.0, 1e-5, 0.1])
def test_eps_curve_measurements_sit_on_the_formula(d, eps):
    curve = eps_curve(GeometrySpec(d=d, count=200, eps=eps, spread=0.01, shift=0.02))
    assert curve.max_relative_error < 1e-4
    assert curve.sweep_layernorm_norm.shape == (17, min(64, curve.sweep_layernorm_norm.shape[1]))
    # the measured cloud through the oracle: same norms
    x = input_vectors(GeometrySpec(d=d, count=200, spread=0.01, shift=0.02)).double()
    oracle = torch.linalg.vector_norm(F.layer_norm(x, [d], eps=eps), dim=-1)
    np.testing.assert_allclose(curve.layernorm_norm, oracle, rtol=1e-4)
    # the curve rises from ~0 to sqrt(d) (flat at eps = 0)
    assert curve.predicted.max() <= math.sqrt(d) * (1 + 1e-12)
    if eps > 0:
        assert curve.predicted[0] < 0.01 * math.sqrt(d)
        half = np.interp(math.sqrt(eps), curve.scale_grid, curve.predicted)
        assert half == pytest.approx(math.sqrt(d / 2), rel=1e-3)


def test_dyt_sweep_matches_tanh_and_heads_for_the_cube_corners():
    spec = GeometrySpec(count=300, gamma_x=2.0, beta_y=1.0)
    sweep = dyt_sweep(spec, alphas=(0.01, 0.5, 2.0, 100.0))
    x = input_vectors(spec).double()
    for index, alpha in enumerate(sweep.alphas):  # gamma = 1, beta = 0 whatever the spec's
        oracle = torch.linalg.vector_norm(torch.tanh(alpha * x), dim=-1)
        np.testing.assert_allclose(sweep.norm[index], oracle, atol=1e-6)
    # |tanh(alpha x)| grows with alpha for every entry: norms and saturation rise
    assert (np.diff(sweep.norm, axis=0) >= 0).all()
    assert (np.diff(sweep.saturated_fraction) >= 0).all()
    # small alpha: alpha * x; large alpha: sign(x), the cube's corners on the sqrt(d) sphere
    lengths = torch.linalg.vector_norm(x, dim=-1).numpy()
    np.testing.assert_allclose(sweep.norm[0], 0.01 * lengths, rtol=1e-3)
    corners = (np.abs(x.numpy()) > 0.1).all(axis=1)  # tanh(100 * 0.1) = 1 - 4e-9
    np.testing.assert_allclose(sweep.norm[-1][corners], math.sqrt(3), rtol=1e-6)
    # DyT lands on no sphere: at alpha = 0.5 the lengths spread widely
    assert sweep.norm[1].std() > 0.1


@pytest.mark.parametrize("eps", [1e-5, 0.0])
def test_a_vector_too_small_to_square_in_float32_keeps_its_exact_sigma(eps):
    """1e-30, 2e-30, 3e-30: float32's squares are 0, so PyTorch's LayerNorm and RMSNorm use
    σ² = rms² = 0; σ and rms as the page writes them (‖x − μ1‖/√d, ‖x‖/√d) are exact, so
    σ/rms equals cos(x, LN(x)) and √d·σ/√(σ² + ε) equals ‖LN(x)‖ (the step's sentence:
    tests/ui/test_text_geometry.py)."""
    row = (1e-30, 2e-30, 3e-30)
    path = vector_path(row, GeometrySpec(eps=eps))
    exact = torch.tensor(row, dtype=torch.float32).double()
    assert math.isclose(path.sigma, float(exact.std(unbiased=False)), rel_tol=1e-12)
    assert math.isclose(path.rms, float(exact.square().mean().sqrt()), rel_tol=1e-12)
    assert path.op_variance == 0 and path.op_mean_square == 0
    torch_ln = F.layer_norm(exact.float()[None], (3,), eps=eps)[0].double()
    torch.testing.assert_close(
        torch.tensor(path.layernorm), torch_ln, rtol=0, atol=0, equal_nan=True
    )
    if eps > 0:
        assert math.isclose(path.sigma / path.rms, path.layernorm_cos_input, rel_tol=1e-6)
        predicted = math.sqrt(3) * path.sigma / math.sqrt(path.sigma**2 + eps)
        assert math.isclose(predicted, path.layernorm_norm, rel_tol=1e-6)
