"""BatchNorm failures 1 (padding pollutes statistics) and 2 (small batches are noisy)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.axes import limits, small_batch
from engine.axes.padding import padding_pollution
from engine.axes.small_batch import CHANNELS, small_batch_noise
from engine.axes.sources import channel_profile, draw_tokens, make_tensor
from engine.config import AxesSpec
from engine.errors import EngineError
from tests.axes.test_axes_spec import assert_translatable

PADDED = dict(source="padded", preset="channel_offsets", dtype="float64")


def batchnorm1d_statistics(rows: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """(mean, biased var) per channel of ``rows`` [N, d], read from nn.BatchNorm1d."""
    bn = torch.nn.BatchNorm1d(rows.shape[1], momentum=1.0, dtype=rows.dtype).train()
    bn(rows)
    n = rows.shape[0]
    return bn.running_mean.numpy(), bn.running_var.numpy() * (n - 1) / n


# --- failure 1: padding ----------------------------------------------------------------------


@pytest.mark.parametrize("pad_value", [0.0, 5.0])
def test_padded_statistics_against_batchnorm1d_and_the_mixture_law(pad_value):
    spec = AxesSpec(**PADDED, pad_value=pad_value)
    r = padding_pollution(spec)
    tensor = make_tensor(spec)
    mean_all, var_all = batchnorm1d_statistics(tensor.x.reshape(-1, 32))
    mean_real, var_real = batchnorm1d_statistics(tensor.x[tensor.real])
    np.testing.assert_allclose(r.mean_with_pad, mean_all, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(r.std_with_pad**2, var_all, rtol=1e-6)
    np.testing.assert_allclose(r.mean_real, mean_real, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(r.std_real**2, var_real, rtol=1e-6)
    # a fraction f of PAD cells holding p: mean and variance of the two-part mixture
    f = r.pad_fraction
    assert f == (64 - (16 + 12 + 8 + 4)) / 64
    np.testing.assert_allclose(r.mean_with_pad, (1 - f) * mean_real + f * pad_value, rtol=1e-6)
    mixture_var = (1 - f) * var_real + f * (1 - f) * (mean_real - pad_value) ** 2
    np.testing.assert_allclose(r.std_with_pad**2, mixture_var, rtol=1e-6)
    assert r.max_mean_shift == pytest.approx(np.abs(mean_all - mean_real).max(), rel=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layernorm_of_real_tokens_ignores_padding_exactly(dtype):
    for pad_value in (0.0, -7.0):
        r = padding_pollution(AxesSpec(**{**PADDED, "dtype": dtype}, pad_value=pad_value))
        assert r.ln_real_token_max_diff == 0.0
        assert r.bn_real_token_max_diff > 0.1


def test_masked_statistics_do_not_depend_on_the_pad_value():
    zero = padding_pollution(AxesSpec(**PADDED, pad_value=0.0))
    five = padding_pollution(AxesSpec(**PADDED, pad_value=5.0))
    assert np.array_equal(zero.mean_real, five.mean_real)
    assert np.array_equal(zero.std_real, five.std_real)
    assert not np.allclose(zero.mean_with_pad, five.mean_with_pad)


def test_padding_shrinks_the_std_of_centred_channels():
    r = padding_pollution(AxesSpec(source="padded", dtype="float64"))  # Gaussian, mean ~ 0
    # zeros pad channels whose mean is ~0: variance scales by ~(1 - f) = 0.625
    assert r.std_ratio_max < 0.9 and r.std_ratio_min > 0.7
    assert r.lengths == (16, 12, 8, 4) and r.pad_value == 0.0


def test_synthetic_spec_is_made_padded_and_a_single_sentence_has_no_padding():
    assert padding_pollution(AxesSpec()).pad_fraction == 0.375
    alone = padding_pollution(AxesSpec(batch=1, dtype="float64"))
    assert alone.pad_fraction == 0.0 and alone.bn_real_token_max_diff == 0.0
    assert np.array_equal(alone.mean_with_pad, alone.mean_real)


# --- failure 2: small batches ----------------------------------------------------------------


def test_spread_of_the_batch_mean_follows_one_over_sqrt_bt():
    r = small_batch_noise(AxesSpec(preset="channel_offsets"))
    np.testing.assert_array_equal(r.batch_sizes, [1, 2, 4, 8, 16, 32])
    np.testing.assert_array_equal(r.values_per_channel, 16 * r.batch_sizes)
    np.testing.assert_allclose(r.mean_spread_theory, 1 / np.sqrt(16 * r.batch_sizes))
    # 200 draws x 8 channels: the std estimate is good to ~2 %; 15 % is far outside noise
    np.testing.assert_allclose(r.spread_ratio, 1.0, atol=0.15)
    np.testing.assert_allclose(r.var_spread / r.var_spread_theory, 1.0, atol=0.15)
    assert np.all(np.diff(r.mean_spread) < 0)
    assert r.example_means.shape == (6, 200)


@pytest.mark.parametrize("draws_per_call", [5, 2])  # all at once; in calls of 2, 2 and 1
def test_batch_means_are_batchnorm1d_means_of_each_drawn_batch(monkeypatch, draws_per_call):
    spec = AxesSpec(preset="outlier_channel", tokens=4, d=10)
    monkeypatch.setattr(small_batch, "STATISTICS_CHUNK_VALUES", draws_per_call * 3 * 4 * 8)
    r = small_batch_noise(spec, batch_sizes=(3,), draws=5)
    # redraw the same batches: same generator, same order as the experiment
    generator = torch.Generator().manual_seed(spec.seed)
    profile = channel_profile(spec.preset, spec.d, generator)
    channels = min(spec.d, CHANNELS)
    profile = type(profile)(profile.offset[:channels], profile.scale[:channels])
    x = draw_tokens(profile, (5, 3 * 4, channels), generator, torch.float32)  # [draws, b*T, c]
    for k in range(5):
        mean, _ = batchnorm1d_statistics(x[k])
        expected = (mean[0] - profile.offset[0]) / profile.scale[0]
        assert r.example_means[0, k] == pytest.approx(expected, rel=1e-5, abs=1e-6)


def test_the_largest_accepted_draw_is_normalized_a_bounded_part_at_a_time(monkeypatch):
    """2,000 draws of b = 64 (the most a link may ask for): no call holds them all."""
    sizes = []
    real = small_batch.normalize
    monkeypatch.setattr(
        small_batch, "normalize", lambda x, *a, **k: sizes.append(x.numel()) or real(x, *a, **k)
    )
    small_batch_noise(AxesSpec(tokens=16), batch_sizes=(64,), draws=limits.MAX_DRAWS)
    assert sum(sizes) == limits.MAX_DRAWS * 64 * 16 * CHANNELS
    assert max(sizes) <= small_batch.STATISTICS_CHUNK_VALUES


def test_one_value_per_channel_has_a_batch_variance_of_zero_every_time():
    r = small_batch_noise(AxesSpec(tokens=1), batch_sizes=(1, 2), draws=50)
    assert r.var_spread[0] == 0.0 and r.var_spread_theory[0] == 0.0
    assert r.var_spread[1] > 0


@pytest.mark.parametrize(
    "kwargs, key",
    [
        (dict(draws=1), "out_of_range"),
        (dict(draws=limits.MAX_DRAWS + 1), "out_of_range"),
        (dict(batch_sizes=()), "batch_sizes_count"),
        (dict(batch_sizes=tuple(range(1, 14))), "batch_sizes_count"),
        (dict(batch_sizes=(0, 2)), "out_of_range"),
        (dict(batch_sizes=(64,) * 12, draws=2000), "too_many_samples"),
    ],
)
def test_small_batch_refusals(kwargs, key):
    with pytest.raises(EngineError) as caught:
        small_batch_noise(AxesSpec(tokens=512, d=8), **kwargs)
    assert_translatable(caught.value, key)
