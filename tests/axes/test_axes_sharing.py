"""Which cells share statistics, and the statistics, against hand-built sets and torch.

Expected pooled sets are written out with slices; expected statistics are float64 numpy
over those cells; expected outputs come from PyTorch's own ops (``F.layer_norm``,
``F.rms_norm``, ``nn.BatchNorm1d``, ``F.instance_norm``, ``F.group_norm``) on its
channels-first ``[B, d, T]`` layout where it has one.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from engine.axes import limits
from engine.axes.sharing import axes_statistics, select_cell, statistic_labels
from engine.config import NORM_KINDS, AxesSpec
from engine.errors import EngineError
from tests.axes.test_axes_spec import assert_translatable

EPS = 1e-5
CELLS = [(0, 0, 0), (1, 5, 7), (3, 15, 31), (2, 9, 16)]  # (3, 15, ·) and (2, 9, ·) are PAD


def expected_pooled(kind, shape, cell, groups, real=None) -> np.ndarray:
    """The pooled set of ``cell``, by hand."""
    b, t, c = cell
    mask = np.zeros(shape, dtype=bool)
    if kind in ("layernorm", "rmsnorm"):
        mask[b, t, :] = True
    elif kind == "batchnorm":
        mask[:, :, c] = True
        if real is not None:
            mask &= real[:, :, None]
    elif kind == "instancenorm":
        mask[b, :, c] = True
    elif kind == "groupnorm":
        size = shape[2] // groups
        first = (c // size) * size
        mask[b, :, first : first + size] = True
    else:
        mask[b, t, c] = True
    return mask


def torch_output(kind, x: torch.Tensor, groups: int) -> torch.Tensor:
    """The normalized tensor from PyTorch's own ops (gamma = 1, beta = 0)."""
    d = x.shape[-1]
    x_bdt = x.transpose(1, 2)  # [B, d, T]
    if kind == "layernorm":
        return F.layer_norm(x, (d,), eps=EPS)
    if kind == "rmsnorm":
        return F.rms_norm(x, (d,), eps=EPS)
    if kind == "batchnorm":
        bn = torch.nn.BatchNorm1d(d, eps=EPS, affine=False, dtype=x.dtype).train()
        return bn(x_bdt).transpose(1, 2)
    if kind == "instancenorm":
        return F.instance_norm(x_bdt, eps=EPS).transpose(1, 2)
    if kind == "groupnorm":
        return F.group_norm(x_bdt, groups, eps=EPS).transpose(1, 2)
    return torch.tanh(0.5 * x)  # DyT, alpha = 0.5 (NormSpec's default)


def spec_for(kind, **fields) -> AxesSpec:
    base = dict(source="padded", preset="channel_offsets", dtype="float64", eps=EPS, groups=4)
    return AxesSpec(kind=kind, **{**base, **fields})


@pytest.mark.parametrize("kind", NORM_KINDS)
def test_pooled_sets_match_hand_built_sets(kind):
    stats = axes_statistics(spec_for(kind))
    for cell in CELLS:
        selection = select_cell(stats, cell)
        expected = expected_pooled(kind, stats.x.shape, cell, 4)
        assert np.array_equal(selection.pooled, expected), cell
        assert np.array_equal(selection.shared, expected), cell
        assert selection.count == expected.sum()


@pytest.mark.parametrize(
    "kind, per_statistic, n_statistics",
    [
        ("layernorm", 32, 4 * 16),
        ("rmsnorm", 32, 4 * 16),
        ("batchnorm", 4 * 16, 32),
        ("instancenorm", 16, 4 * 32),
        ("groupnorm", 16 * 32 // 4, 4 * 4),
    ],
)
def test_counts_of_statistics_and_of_cells_per_statistic(kind, per_statistic, n_statistics):
    stats = axes_statistics(spec_for(kind))
    assert stats.n_statistics == n_statistics == stats.count.size
    assert np.all(stats.count == per_statistic)
    assert stats.param_shape == (32,)
    assert set(np.unique(stats.labels)) == set(range(n_statistics))


def test_dyt_shares_nothing():
    stats = axes_statistics(spec_for("dyt"))
    assert stats.n_statistics == 0 and stats.count_formula == "0"
    assert np.all(stats.labels == -1)
    selection = select_cell(stats, (1, 2, 3))
    assert selection.count == 1 and np.isnan(selection.mean) and selection.label == -1


@pytest.mark.parametrize("kind", NORM_KINDS)
@pytest.mark.parametrize("dtype, atol", [("float64", 1e-10), ("float32", 2e-5)])
def test_normalized_tensor_matches_torch(kind, dtype, atol):
    stats = axes_statistics(spec_for(kind, dtype=dtype))
    x = torch.from_numpy(stats.x).to(getattr(torch, dtype))  # the same cells, same dtype
    expected = torch_output(kind, x, 4).double().detach().numpy()
    np.testing.assert_allclose(stats.y, expected, atol=atol, rtol=atol)


@pytest.mark.parametrize("kind", ["layernorm", "batchnorm", "instancenorm", "groupnorm"])
def test_selected_statistics_are_those_of_the_pooled_cells(kind):
    stats = axes_statistics(spec_for(kind))
    for cell in CELLS:
        selection = select_cell(stats, cell)
        values = stats.x[selection.pooled]  # float64 hand computation
        # NormResult stores statistics in float32: about 1e-7 relative
        assert selection.mean == pytest.approx(values.mean(), rel=1e-6, abs=1e-7)
        assert selection.var == pytest.approx(values.var(), rel=1e-6, abs=1e-7)
        assert selection.rstd == pytest.approx(1 / np.sqrt(values.var() + EPS), rel=1e-6)
        assert selection.x == stats.x[cell] and selection.y == stats.y[cell]


def test_rmsnorm_statistic_is_the_mean_square_of_the_row():
    stats = axes_statistics(spec_for("rmsnorm"))
    selection = select_cell(stats, (1, 5, 7))
    row = stats.x[1, 5]
    assert selection.mean == 0.0
    assert selection.var == pytest.approx(np.mean(row**2), rel=1e-6)


def test_masked_batchnorm_pools_only_real_tokens_and_normalizes_every_cell():
    stats = axes_statistics(spec_for("batchnorm", mask_padding=True))
    real = stats.real
    assert stats.masked and int(real.sum()) == 16 + 12 + 8 + 4
    assert np.all(stats.count == real.sum())
    rows = torch.from_numpy(stats.x[real])  # [n, d]: the real tokens only
    bn = torch.nn.BatchNorm1d(32, eps=EPS, momentum=1.0, affine=False, dtype=torch.float64)
    bn.train()(rows)  # momentum 1: running stats become this batch's (variance unbiased)
    n = rows.shape[0]
    # statistics are reported in float32 (NormResult); y is computed in float64
    np.testing.assert_allclose(stats.mean, bn.running_mean.numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(stats.var * n / (n - 1), bn.running_var.numpy(), rtol=1e-6)
    # PAD cells too are normalized with the real tokens' statistics
    unbiased = bn.running_var.numpy()
    expected_y = (stats.x - bn.running_mean.numpy()) / np.sqrt(unbiased * (n - 1) / n + EPS)
    np.testing.assert_allclose(stats.y, expected_y, rtol=1e-10, atol=1e-10)
    for cell in CELLS:
        selection = select_cell(stats, cell)
        expected = expected_pooled("batchnorm", stats.x.shape, cell, 4, real)
        assert np.array_equal(selection.pooled, expected)
        assert np.array_equal(
            selection.shared, expected_pooled("batchnorm", stats.x.shape, cell, 4)
        )
        assert selection.count == n


def test_padding_mask_is_only_for_batchnorm():
    assert not axes_statistics(spec_for("layernorm", mask_padding=True)).masked


def test_labels_index_the_statistics_arrays():
    stats = axes_statistics(spec_for("groupnorm"))
    b, t, c = 2, 3, 13  # group 13 // 8 = 1
    assert stats.labels[b, t, c] == b * 4 + 1
    assert stats.mean.reshape(-1)[stats.labels[b, t, c]] == stats.mean[b, 1]
    layer = statistic_labels("layernorm", 4, 16, 32)
    assert layer[b, t, c] == b * 16 + t


def test_large_tensors_are_flagged_for_summary():
    assert axes_statistics(AxesSpec()).drawn_cell_by_cell
    big = axes_statistics(AxesSpec(batch=8, tokens=64, d=32))
    assert 8 * 64 * 32 > limits.MAX_DRAWN_CELLS and not big.drawn_cell_by_cell


@pytest.mark.parametrize("cell", [(4, 0, 0), (0, 16, 0), (0, 0, -1), (0, 0), (0.5, 0, 0)])
def test_a_cell_outside_the_tensor_is_refused(cell):
    stats = axes_statistics(AxesSpec())
    with pytest.raises(EngineError, match="is not in a tensor of shape") as caught:
        select_cell(stats, cell)
    assert_translatable(caught.value, "cell_out_of_range")


@pytest.mark.parametrize(
    "kind, shape, module",
    [
        ("batchnorm", (1, 1), torch.nn.BatchNorm1d(32)),
        ("instancenorm", (4, 1), torch.nn.InstanceNorm1d(32)),
        ("groupnorm", (1, 1), torch.nn.GroupNorm(32, 32)),  # G = d: a group of one channel
    ],
)
def test_a_statistic_of_one_value_is_refused_as_pytorchs_module_refuses_it(kind, shape, module):
    """The modules refuse a statistic of one value in training mode; in eval mode BatchNorm
    takes its running statistics, InstanceNorm and GroupNorm (none kept) refuse again.  The
    page says which, from the module itself."""
    batch, tokens = shape
    spec = AxesSpec(kind=kind, batch=batch, tokens=tokens, groups=32)
    x = torch.zeros(batch, 32, tokens)
    with pytest.raises(ValueError) as raised:
        module.train()(x)
    try:
        module.eval()(x)
        refused_in_eval = False
    except ValueError:
        refused_in_eval = True
    found = axes_statistics(spec).module_refusal
    assert found == (f"nn.{type(module).__name__}", str(raised.value), refused_in_eval)
    assert refused_in_eval == (kind != "batchnorm")
    assert axes_statistics(AxesSpec(kind=kind, batch=2, tokens=2)).module_refusal is None
    if kind == "groupnorm":  # a group of 4 channels, or a batch of 2: PyTorch takes them
        assert axes_statistics(AxesSpec(kind=kind, batch=1, tokens=1)).module_refusal is None
        assert (
            axes_statistics(AxesSpec(kind=kind, batch=2, tokens=1, groups=32)).module_refusal
            is None
        )
