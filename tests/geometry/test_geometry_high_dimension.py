"""High dimension: histograms, their spread over eps, LN = RMSNorm(x - mu 1), 2-D views."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from engine.config import GeometrySpec
from engine.geometry.cloud import MAX_CLOUD_CELLS, bounded_rows, input_vectors
from engine.geometry.high_dimension import high_dimension_report
from engine.geometry.views import plane_view, principal_directions
from engine.threads import Cancelled


@pytest.mark.parametrize("d, rows", [(8192, 512), (4096, 1024), (2048, 2000), (3, 2000)])
def test_rows_are_bounded_by_the_cell_budget(d, rows):
    spec = GeometrySpec(d=d, count=2000)
    assert bounded_rows(spec) == rows
    assert rows * d <= max(MAX_CLOUD_CELLS, d)


def test_histograms_match_torch_layer_norm_and_rms_norm():
    spec = GeometrySpec(d=1024, count=300, shift=0.7, eps=1e-3)
    found = high_dimension_report(spec, (0.0,), threads=1).histograms
    x = input_vectors(spec).double()
    layer = F.layer_norm(x, [1024], eps=1e-3)
    rms = F.rms_norm(x, [1024], eps=1e-3)
    for ours, oracle in ((found.layernorm, layer), (found.rmsnorm, rms)):
        np.testing.assert_allclose(ours.norm, torch.linalg.vector_norm(oracle, dim=-1), rtol=1e-6)
        np.testing.assert_allclose(ours.ones, oracle.sum(dim=-1), atol=1e-3)
        np.testing.assert_allclose(
            ours.cos_input, F.cosine_similarity(x, oracle, dim=-1), atol=1e-6
        )
    assert found.rows == 300 and found.sqrt_d == 32.0


def test_spread_over_eps_pulls_norms_in_and_leaves_directions_alone():
    spec = GeometrySpec(d=256, count=400, shift=0.5)
    eps_values = (0.0, 1e-4, 1e-2, 1.0)
    spread = high_dimension_report(spec, eps_values, threads=1).spread
    assert spread.layernorm.norm_mean.shape == (4,)
    for kind in (spread.layernorm, spread.rmsnorm):
        assert (np.diff(kind.norm_mean) < 0).all()  # every eps step shrinks ||y||
        assert kind.norm_std[0] < 1e-5  # a spike at eps = 0 ...
        assert kind.norm_std[-1] > 100 * kind.norm_std[0]  # ... spread out by eps = 1
    # eps = 1 with sigma ~ 1: ||y|| ~ sqrt(d / 2)
    assert spread.layernorm.norm_mean[-1] == pytest.approx(math.sqrt(128), rel=0.02)
    # the direction never depends on eps: cos(x, RMSNorm(x)) = 1 throughout
    np.testing.assert_allclose(spread.rmsnorm.cos_mean, 1.0, atol=1e-12)
    np.testing.assert_allclose(spread.rmsnorm.cos_std, 0.0, atol=1e-12)
    np.testing.assert_allclose(spread.layernorm.cos_std, spread.layernorm.cos_std[0], rtol=1e-3)


def test_spread_reports_progress_and_stops_when_asked():
    spec = GeometrySpec(d=64, count=50)
    seen = []
    high_dimension_report(spec, (0.0, 0.1, 1.0), progress=seen.append)
    assert seen == pytest.approx([0.2, 0.2 + 0.7 / 3, 0.2 + 1.4 / 3, 0.9, 1.0])
    calls = iter([False, True])
    with pytest.raises(Cancelled):
        high_dimension_report(spec, (0.0, 0.1, 1.0), should_stop=lambda: next(calls))


@pytest.mark.parametrize("d", [2, 3, 512, 8192])
@pytest.mark.parametrize("shift", [0.0, 3.0])
def test_layernorm_is_rmsnorm_of_the_centred_input(d, shift):
    spec = GeometrySpec(d=d, count=200, shift=shift, eps=1e-5)
    check = high_dimension_report(spec, (0.0,), threads=1).identity
    x = input_vectors(spec).double()
    # float32 subtracts mu with an error of ~1 ulp of max|x_i|: kappa = max|x_i| / sigma ulps
    kappa = float((1 + x.abs().amax(dim=-1) / x.std(dim=-1, correction=0)).max())
    assert check.max_abs_difference < 16 * 2**-24 * kappa * check.max_abs_output
    assert check.max_abs_output > 0.9
    # the float64 figure is PyTorch's own ops' difference: a few ulps of 1 where the two
    # ops sum in different orders (d >= 3), none at d = 2 (outputs of +-1 only)
    left = F.layer_norm(x, [d], eps=1e-5)
    right = F.rms_norm(x - x.mean(dim=-1, keepdim=True), [d], eps=1e-5)
    expected = float((left - right).abs().max())
    assert check.max_abs_difference_float64 == pytest.approx(expected, abs=2**-51)
    assert (expected == 0) if d == 2 else (0 < expected < 2**-46)


def test_report_measures_one_set_of_inputs():
    spec = GeometrySpec(d=300, count=100, shift=1.0, eps=0.5)
    report = high_dimension_report(spec, (0.0, 0.5), threads=1)
    rmsnorm = report.histograms.rmsnorm.norm
    assert report.spread.rmsnorm.norm_mean[1] == np.nanmean(rmsnorm)
    assert report.spread.rmsnorm.norm_std[1] == np.nanstd(rmsnorm)


def test_axes_view_shows_the_chosen_coordinates():
    spec = GeometrySpec(d=16, count=100)
    view = plane_view(spec, "axes", (3, 11))
    x = input_vectors(spec).numpy()
    np.testing.assert_allclose(view.inputs, x[:, [3, 11]], rtol=1e-7)
    assert view.axes == (3, 11)


def test_pca_is_exact_in_three_dimensions():
    spec = GeometrySpec(count=500, gamma_x=1.0)
    x = input_vectors(spec).double().numpy() * np.array([3.0, 1.0, 0.2])  # anisotropic
    _, singular, vt = np.linalg.svd(x - x.mean(axis=0), full_matrices=False)
    ours = principal_directions(torch.from_numpy(x), 2).numpy()
    np.testing.assert_allclose(np.abs(ours), np.abs(vt[:2]), atol=1e-10)
    view = plane_view(spec, "pca")
    np.testing.assert_allclose(np.linalg.norm(view.basis, axis=1), 1.0)
    assert view.explained.sum() <= 1.0 + 1e-12


def test_pca_finds_a_planted_plane_in_high_dimension():
    generator = torch.Generator().manual_seed(1)
    d = 2000
    u, v = torch.linalg.qr(torch.randn(d, 2, generator=generator, dtype=torch.float64))[0].T
    a, b = torch.randn(2, 300, 1, generator=generator, dtype=torch.float64)
    noise = 0.1 * torch.randn(300, d, generator=generator, dtype=torch.float64)
    data = 10 * a * u + 6 * b * v + noise  # [300, d]
    found = principal_directions(data, 2)
    assert abs(float(found[0] @ u)) > 0.99
    assert abs(float(found[1] @ v)) > 0.99


@pytest.mark.parametrize("d", [3, 1000])
def test_ones_view_puts_layernorm_on_the_zero_line_and_inputs_at_their_mean(d):
    spec = GeometrySpec(d=d, count=300, shift=2.0)
    view = plane_view(spec, "ones")
    x = input_vectors(spec).double()
    np.testing.assert_allclose(view.basis[0], np.full(d, 1 / math.sqrt(d)))
    assert abs(view.basis[0] @ view.basis[1]) < 1e-12
    np.testing.assert_allclose(view.inputs[:, 0], x.mean(dim=-1) * math.sqrt(d), rtol=1e-6)
    assert np.abs(view.layernorm[:, 0]).max() < 1e-3  # <y, 1> / sqrt(d) = 0
    assert view.rmsnorm[:, 0].min() > 0.5 * math.sqrt(d)  # the shift tilts RMSNorm along 1
