"""Tensor sources: shapes, masks, padding, presets, seeds."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.axes import sources
from engine.axes.sources import default_lengths, make_tensor
from engine.config import AxesSpec
from engine.config.axes import AXES_PRESETS
from engine.errors import EngineError


def synthetic_tensor(batch, tokens, d, **fields):
    return make_tensor(AxesSpec(batch=batch, tokens=tokens, d=d, **fields))


def padded_sentences(batch, tokens, d, **fields):
    return synthetic_tensor(batch, tokens, d, source="padded", **fields)


@pytest.mark.parametrize(
    "dtype, torch_dtype", [("float32", torch.float32), ("float64", torch.float64)]
)
def test_synthetic_tensor_shape_dtype_and_all_real(dtype, torch_dtype):
    t = synthetic_tensor(3, 7, 5, seed=1, dtype=dtype)
    assert t.x.shape == (3, 7, 5) and t.x.dtype == torch_dtype
    assert t.real.shape == (3, 7) and t.real.dtype == torch.bool and bool(t.real.all())
    assert t.lengths == (7, 7, 7) and t.pad_count == 0


def test_float32_is_float64_rounded_once():
    t32 = synthetic_tensor(2, 4, 8, dtype="float32", preset="channel_offsets")
    t64 = synthetic_tensor(2, 4, 8, dtype="float64", preset="channel_offsets")
    assert torch.equal(t32.x, t64.x.float())


@pytest.mark.parametrize("pad_value", [0.0, -3.5])
def test_padded_sentences_mask_lengths_and_pad_cells(pad_value):
    t = padded_sentences(3, 6, 4, lengths=(6, 2, 1), pad_value=pad_value, seed=3)
    expected = torch.tensor(
        [[1, 1, 1, 1, 1, 1], [1, 1, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0]], dtype=torch.bool
    )
    assert torch.equal(t.real, expected)
    assert t.pad_count == 9
    assert bool((t.x[~t.real] == pad_value).all())
    assert bool((t.x[t.real] != pad_value).all())  # real cells are Gaussian draws


def test_real_tokens_do_not_depend_on_padding():
    # the same sentences padded two ways hold the same real cells
    a = padded_sentences(3, 6, 4, lengths=(6, 2, 1), pad_value=0.0)
    b = padded_sentences(3, 6, 4, lengths=(6, 2, 1), pad_value=9.0)
    assert torch.equal(a.x[a.real], b.x[b.real])


def test_default_lengths_staircase():
    assert default_lengths(4, 16) == (16, 12, 8, 4)
    assert default_lengths(1, 16) == (16,)  # a batch is padded to its longest sentence
    assert default_lengths(3, 1) == (1, 1, 1)
    lengths = default_lengths(7, 33)
    assert lengths[0] == 33 and min(lengths) >= 1 and list(lengths) == sorted(lengths)[::-1]
    assert make_tensor(AxesSpec(source="padded")).lengths == (16, 12, 8, 4)


def test_same_seed_same_tensor_other_seed_other_tensor():
    assert torch.equal(synthetic_tensor(2, 3, 4, seed=5).x, synthetic_tensor(2, 3, 4, seed=5).x)
    assert not torch.equal(synthetic_tensor(2, 3, 4, seed=5).x, synthetic_tensor(2, 3, 4, seed=6).x)


def test_presets_share_the_underlying_draws():
    plain = synthetic_tensor(2, 5, 8, preset="gaussian", dtype="float64").x
    shifted = synthetic_tensor(2, 5, 8, preset="shifted_token", dtype="float64")
    diff = shifted.x - plain  # [B, T, d]
    b, t = sources.SHIFTED_TOKEN
    assert torch.allclose(diff[b, t], torch.full((8,), sources.TOKEN_SHIFT, dtype=torch.float64))
    diff[b, t] = 0
    assert bool((diff == 0).all())


def test_outlier_channel_stands_out():
    t = synthetic_tensor(8, 64, 16, preset="outlier_channel", dtype="float64")
    means = t.x.mean(dim=(0, 1))  # [d]
    c = int(means.abs().argmax())
    assert abs(float(means[c]) - sources.OUTLIER_OFFSET) < 0.5
    others = torch.cat([means[:c], means[c + 1 :]])
    assert float(others.abs().max()) < 0.5


def test_channel_offsets_follow_the_profile():
    t = synthetic_tensor(16, 256, 6, preset="channel_offsets", dtype="float64")
    x = t.x.reshape(-1, 6).numpy()  # [N, d], N = 4096
    scale = t.profile.scale
    assert np.all((scale >= 1 / 3) & (scale <= 3))
    # 4 standard errors of a mean over 4096 draws
    assert np.all(np.abs(x.mean(0) - t.profile.offset) < 4 * scale / 64)
    np.testing.assert_allclose(x.std(0), scale, rtol=0.1)


@pytest.mark.parametrize("preset", AXES_PRESETS)
def test_every_preset_makes_finite_cells(preset):
    t = make_tensor(AxesSpec(preset=preset, source="padded"))
    assert bool(torch.isfinite(t.x).all())


def test_sources_check_their_arguments_as_a_spec():
    with pytest.raises(EngineError) as caught:
        padded_sentences(2, 4, 3, lengths=(4, 5))
    assert caught.value.key == "axes.length_out_of_range"
    with pytest.raises(EngineError):
        synthetic_tensor(1, 1, 0)
