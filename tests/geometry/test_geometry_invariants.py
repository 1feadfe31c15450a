"""Where the norms put their outputs: the sqrt(d) sphere, the plane <y, 1> = 0, x's direction.

Each invariant is checked on our outputs over random inputs (d from 1 to 8192, several
distributions and mean shifts), and the outputs themselves are compared with PyTorch's
``F.layer_norm`` / ``F.rms_norm`` in float64: the independent oracle.

"To float32 precision" is made precise per input: LayerNorm subtracts mu in float32, so an
entry of x carries an error of about one ulp of max|x_i|, which is max|x_i| / sigma ulps of
the output.  Tolerances scale with that condition number, kappa = 1 + max|x_i| / sigma.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from engine.config import GeometrySpec
from engine.geometry.cloud import input_vectors, normalized_cloud
from engine.geometry.high_dimension import high_dimension_report
from engine.geometry.measures import split_along_ones

ULP = 2.0**-24  # float32 unit roundoff
INPUTS = [
    pytest.param("normal", 0.0, 1.0, id="normal"),
    pytest.param("uniform", 3.0, 1.0, id="uniform-shift3"),
    pytest.param("normal", -2.0, 0.5, id="normal-shift-2"),
    pytest.param("normal", 0.0, 100.0, id="normal-wide"),
]
WIDTHS = [1, 2, 3, 5, 64, 1024, 8192]


def _kappa(x: torch.Tensor) -> np.ndarray:
    """1 + max|x_i| / sigma per row, float64 (inf for constant rows)."""
    x64 = x.double()
    sigma = x64.std(dim=-1, correction=0)
    return (1 + x64.abs().amax(dim=-1) / sigma).numpy()


def _spec(d, distribution, shift, spread, eps=0.0, count=300):
    return GeometrySpec(
        d=d, count=count, eps=eps, distribution=distribution, shift=shift, spread=spread
    )


@pytest.mark.parametrize("d", WIDTHS)
@pytest.mark.parametrize("distribution, shift, spread", INPUTS)
def test_rmsnorm_output_lies_on_the_sqrt_d_sphere_and_keeps_the_direction(
    d, distribution, shift, spread
):
    spec = _spec(d, distribution, shift, spread)
    found = high_dimension_report(spec, (0.0,), threads=1).histograms
    np.testing.assert_allclose(found.rmsnorm.norm, math.sqrt(d), rtol=4 * ULP)
    np.testing.assert_allclose(found.rmsnorm.cos_input, 1.0, atol=1e-12)


@pytest.mark.parametrize("d", [w for w in WIDTHS if w > 1])
@pytest.mark.parametrize("distribution, shift, spread", INPUTS)
def test_layernorm_output_lies_on_the_sphere_inside_the_plane_perpendicular_to_ones(
    d, distribution, shift, spread
):
    spec = _spec(d, distribution, shift, spread)
    kappa = _kappa(input_vectors(spec, 300))
    found = high_dimension_report(spec, (0.0,), threads=1).histograms
    norm_error = np.abs(found.layernorm.norm / math.sqrt(d) - 1)
    assert (norm_error <= 8 * ULP * kappa).all(), (norm_error / kappa).max()
    # <y, 1> = 0: a mean off by one ulp of |mu| moves every entry alike, so the sum by d of it
    ones_error = np.abs(found.layernorm.ones)
    assert (ones_error <= 16 * ULP * d * kappa).all(), (ones_error / (d * kappa)).max()


@pytest.mark.parametrize("d", [2, 3, 64, 1024])
def test_layernorm_turns_x_by_the_angle_its_mean_makes(d):
    """cos(x, LN(x)) = sigma / rms: 1 only when mu = 0 (float64 hand computation)."""
    spec = _spec(d, "normal", 1.5, 1.0)
    x = input_vectors(spec, 300).double()
    expected = (x.std(dim=-1, correction=0) / x.pow(2).mean(dim=-1).sqrt()).numpy()
    found = high_dimension_report(spec, (0.0,), threads=1).histograms
    error = np.abs(found.layernorm.cos_input - expected)
    assert (error <= 8 * ULP * _kappa(x)).all()
    assert np.median(found.layernorm.cos_input) < 0.9  # mu = 1.5, sigma = 1: far below 1


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("eps", [0.0, 1e-5, 0.3])
@pytest.mark.parametrize("distribution, shift, spread", INPUTS[:3])
def test_cloud_outputs_match_torch_functional_in_float64(d, eps, distribution, shift, spread):
    spec = GeometrySpec(
        d=d,
        count=400,
        eps=eps,
        distribution=distribution,
        shift=shift,
        spread=spread,
        gamma_x=1.5,
        gamma_y=-0.5,
        gamma_z=2.0,
        beta_x=0.25,
        beta_y=-1.0,
        beta_z=0.5,
        dyt_alpha=0.8,
    )
    cloud = normalized_cloud(spec)
    x = torch.from_numpy(np.array(cloud.inputs))  # the float32 values, held as float64
    gamma = torch.tensor([1.5, -0.5, 2.0], dtype=torch.float64)[:d]
    beta = torch.tensor([0.25, -1.0, 0.5], dtype=torch.float64)[:d]
    layer = F.layer_norm(x, [d], eps=eps)  # [N, d]
    rms = F.rms_norm(x, [d], eps=eps)  # [N, d]
    dyt = torch.tanh(0.8 * x)  # [N, d] Zhu et al. 2025, eq. 1 with gamma = 1, beta = 0
    kappa = torch.from_numpy(_kappa(x))[:, None]
    for ours, oracle in (
        (cloud.layernorm.y, layer),
        (cloud.layernorm.y_affine, layer * gamma + beta),
    ):
        ours = torch.from_numpy(np.array(ours))
        finite = torch.isfinite(oracle).all(dim=-1)  # constant rows at eps = 0: 0/0
        error = (ours - oracle).abs()[finite]
        assert (error <= 16 * ULP * kappa[finite] * (1 + gamma.abs().max())).all()
    np.testing.assert_allclose(cloud.rmsnorm.y, rms, rtol=4 * ULP, atol=4 * ULP)
    np.testing.assert_allclose(cloud.rmsnorm.y_affine, rms * gamma + beta, atol=16 * ULP)
    np.testing.assert_allclose(cloud.dyt.y, dyt, atol=4 * ULP)
    np.testing.assert_allclose(cloud.dyt.y_affine, dyt * gamma + beta, atol=16 * ULP)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_the_split_along_ones_adds_back_up_to_the_input(d):
    cloud = normalized_cloud(GeometrySpec(d=d, count=300, shift=2.0, distribution="uniform"))
    x = np.array(cloud.inputs)
    mean, centered = (t.numpy() for t in split_along_ones(torch.from_numpy(x)))
    np.testing.assert_allclose(mean[:, None] + centered, x, atol=1e-12)
    np.testing.assert_allclose(centered.sum(axis=1), 0.0, atol=1e-12)  # in the plane
    np.testing.assert_allclose(mean, x.mean(axis=1))
    # LayerNorm is the rescaled drop onto the plane: same direction as x - mu 1
    if d > 1:
        cos = (cloud.layernorm.y * centered).sum(1) / (
            np.linalg.norm(cloud.layernorm.y, axis=1) * np.linalg.norm(centered, axis=1)
        )
        np.testing.assert_allclose(cos, 1.0, atol=1e-6)


def test_results_are_read_only():
    cloud = normalized_cloud(GeometrySpec(count=10))
    with pytest.raises(ValueError):
        cloud.layernorm.y[0, 0] = 5.0
    with pytest.raises(ValueError):
        cloud.inputs[0, 0] = 1.0
