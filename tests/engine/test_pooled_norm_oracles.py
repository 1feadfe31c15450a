"""``engine.normalize`` (backend="torch") for the pooling norms against independent oracles.

GroupNorm, InstanceNorm and BatchNorm pool their statistics over positions or rows; this
file also holds ``normalize``'s and ``NormSpec``'s input checks.  Nothing here calls
``engine/norms/reference.py``: every expected value comes from PyTorch's own functional ops and
modules (``F.group_norm``, ``F.instance_norm``, ``F.batch_norm``, ``nn.BatchNorm1d``), from
float64 arithmetic, or from the arithmetic itself.  Layout: ours is channels-last
``[B, T, d]``; torch's GroupNorm/InstanceNorm want ``[B, C, L]``, so the oracles transpose.
LayerNorm, RMSNorm and DyT are in ``test_row_norm_oracles.py``; the tolerances and random
inputs both files use are in ``norm_oracle_inputs.py``.

References:
- Ioffe, Szegedy 2015, "Batch Normalization", arXiv:1502.03167
- Ulyanov, Vedaldi, Lempitsky 2016, "Instance Normalization", arXiv:1607.08022
- Wu, He 2018, "Group Normalization", arXiv:1803.08494
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

from engine import NormSpec, normalize
from tests.engine.norm_oracle_inputs import DTYPE_TOLERANCES, affine_params, randn

# [B, T, d] for the norms that pool over positions; T >= 2 so torch's oracles accept them
SEQUENCE_SHAPES = [
    pytest.param((2, 5), id="2d-T2-d5"),
    pytest.param((3, 7), id="2d-T3-d7"),
    pytest.param((2, 4, 6), id="3d-d6"),
    pytest.param((2, 3, 1023), id="3d-d1023"),
]


def _as_btd(x: torch.Tensor) -> torch.Tensor:
    """1-D is one token, 2-D one sequence; deeper inputs flatten their leading batch axes."""
    if x.dim() == 1:
        return x.reshape(1, 1, -1)
    if x.dim() == 2:
        return x.unsqueeze(0)
    return x.reshape(-1, *x.shape[-2:])


# --- GroupNorm / InstanceNorm / BatchNorm: channels-last against torch's [B, C, L] ---------


@pytest.mark.parametrize("dtype, atol, rtol", DTYPE_TOLERANCES)
@pytest.mark.parametrize(
    "shape, groups",
    [
        pytest.param((3, 7), 7, id="2d-d7-G7"),
        pytest.param((2, 1), 1, id="2d-d1-G1"),
        pytest.param((2, 4, 6), 1, id="d6-G1"),
        pytest.param((2, 4, 6), 3, id="d6-G3"),
        pytest.param((2, 4, 6), 6, id="d6-G6"),
        pytest.param((2, 3, 1023), 11, id="d1023-G11"),
        pytest.param((2, 3, 1023), 31, id="d1023-G31"),
    ],
)
def test_groupnorm_matches_torch_group_norm(shape, groups, dtype, atol, rtol):
    x = randn(shape, dtype, shift=0.3)
    d = shape[-1]
    weight, bias = affine_params(d, dtype)
    r = normalize(x, NormSpec(kind="groupnorm", groups=groups), weight, bias, backend="torch")
    x_bcl = _as_btd(x).transpose(1, 2)  # [B, d, T]
    expected = F.group_norm(x_bcl, groups, weight, bias, eps=1e-5).transpose(1, 2)  # [B, T, d]
    assert_close(r.y, expected.reshape(shape), atol=atol, rtol=rtol)
    assert r.mean.shape == (*shape[:-2], groups)
    # statistics: one per (sequence, group), pooled over T and the group's d/G channels
    cells = _as_btd(x).double().reshape(x_bcl.shape[0], -1, groups, d // groups)
    cells = cells.transpose(1, 2).reshape(x_bcl.shape[0], groups, -1)  # [B, G, T*d/G]
    mean64, var64 = cells.mean(-1), cells.var(-1, correction=0)
    assert_close(r.mean.double().reshape(mean64.shape), mean64, atol=1e-6, rtol=1e-5)
    assert_close(r.var.double().reshape(var64.shape), var64, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("dtype, atol, rtol", DTYPE_TOLERANCES)
@pytest.mark.parametrize("shape", SEQUENCE_SHAPES)
def test_instancenorm_matches_torch_instance_norm(shape, dtype, atol, rtol):
    x = randn(shape, dtype, shift=0.3)
    d = shape[-1]
    weight, bias = affine_params(d, dtype)
    r = normalize(x, NormSpec(kind="instancenorm"), weight, bias, backend="torch")
    # oracle in float32, then rounded once: torch's own half-precision instance_norm keeps
    # half intermediates and errs by ~6e-3 against float64 at d=1023, 10x the output's ulp
    x_bcl = _as_btd(x).float().transpose(1, 2)  # [B, d, T]
    expected = F.instance_norm(x_bcl, weight=weight.float(), bias=bias.float(), eps=1e-5)
    expected = expected.transpose(1, 2).reshape(shape).to(dtype)  # [..., T, d]
    assert_close(r.y, expected, atol=atol, rtol=rtol)
    # statistics: one per (sequence, channel), pooled over the T positions
    assert r.mean.shape == (*shape[:-2], d)
    x64 = _as_btd(x).double()
    assert_close(r.mean.double().reshape(-1, d), x64.mean(1), atol=1e-6, rtol=1e-5)
    assert_close(r.var.double().reshape(-1, d), x64.var(1, correction=0), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("dtype, atol, rtol", DTYPE_TOLERANCES)
@pytest.mark.parametrize("shape", [*SEQUENCE_SHAPES, pytest.param((3, 2, 3, 7), id="4d-d7")])
def test_batchnorm_matches_batchnorm1d_in_training_mode(shape, dtype, atol, rtol):
    x = randn(shape, dtype, shift=0.3)
    d = shape[-1]
    weight, bias = affine_params(d, dtype)
    r = normalize(x, NormSpec(kind="batchnorm", eps=1e-5), weight, bias, backend="torch")
    # momentum=1: the running statistics become exactly this batch's (variance unbiased)
    bn = torch.nn.BatchNorm1d(d, eps=1e-5, momentum=1.0).to(dtype).train()
    with torch.no_grad():
        bn.weight.copy_(weight)
        bn.bias.copy_(bias)
        expected = bn(x.reshape(-1, d)).reshape(shape)  # [N, d], N = every row
    assert_close(r.y, expected, atol=atol, rtol=rtol)
    n = x.numel() // d
    assert r.mean.shape == r.var.shape == (d,)
    assert_close(r.mean.double(), bn.running_mean.double(), atol=atol, rtol=rtol)
    assert_close(r.var.double() * n / (n - 1), bn.running_var.double(), atol=atol, rtol=rtol)


@pytest.mark.parametrize("kind", ["batchnorm", "instancenorm"])
def test_single_row_pooling_norms_give_bias_not_nan(kind):
    # One token: BatchNorm pools over one row and InstanceNorm over one position, so the
    # variance is 0; with eps > 0 the output is beta, not a division by zero (torch refuses
    # this input in training mode, so the oracle is the arithmetic itself).
    x = torch.tensor([3.0, -1.0, 2.0])
    bias = torch.tensor([0.5, -0.25, 2.0])
    r = normalize(x, NormSpec(kind=kind, eps=1e-5), bias=bias, backend="torch")
    assert_close(r.y, bias)
    assert torch.all(r.var == 0)


@pytest.mark.parametrize("d, groups", [(7, 1), (1023, 1), (6, 2)])
def test_groupnorm_of_one_token_matches_layer_norm_of_its_groups(d, groups):
    # torch's group_norm refuses a single position; one token's groups are then just
    # LayerNorm over each group's d/G channels
    x = randn((d,), shift=0.3)
    r = normalize(x, NormSpec(kind="groupnorm", groups=groups), backend="torch")
    expected = F.layer_norm(x.reshape(groups, d // groups), [d // groups], eps=1e-5)
    assert_close(r.y, expected.reshape(d))
    assert r.mean.shape == (groups,)


# --- statistics --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["batchnorm", "instancenorm", "groupnorm"])
def test_pooling_norms_survive_mean_cancellation(kind):
    # the same 1e4 + N(0,1) trap for the norms that pool over positions / rows
    x = randn((4, 16, 8), shift=1e4)  # fp32 [B, T, d]
    x_bcl = x.double().transpose(1, 2)  # [B, d, T]
    if kind == "batchnorm":
        expected = F.batch_norm(x.double().reshape(-1, 8), None, None, training=True)
    elif kind == "instancenorm":
        expected = F.instance_norm(x_bcl).transpose(1, 2)
    else:
        expected = F.group_norm(x_bcl, 2).transpose(1, 2)
    r = normalize(x, NormSpec(kind=kind, groups=2), backend="torch")
    # pooled variance ~1, so the output may err by a few ulp(1e4) ~ 1e-3, not by O(1)
    assert_close(r.y.double(), expected.reshape(x.shape), atol=5e-3, rtol=0)


# --- input validation ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "x, spec, kwargs, error, match",
    [
        pytest.param(
            torch.ones(2, 4), NormSpec(), {"weight": torch.ones(5)}, ValueError,
            r"weight must have shape \(4,\)", id="weight-shape",
        ),
        pytest.param(
            torch.ones(2, 4), NormSpec(), {"bias": torch.ones(1, 4)}, ValueError,
            r"bias must have shape \(4,\)", id="bias-shape",
        ),
        pytest.param(
            torch.ones(2, 8), NormSpec(kind="groupnorm", groups=3), {}, ValueError,
            "groups=3 must divide d=8", id="groups-not-dividing",
        ),
        pytest.param(
            torch.arange(4), NormSpec(), {}, TypeError, "floating-point", id="integer-tensor",
        ),
        pytest.param(
            torch.ones(4, dtype=torch.bool), NormSpec(), {}, TypeError, "floating-point",
            id="bool-tensor",
        ),
        pytest.param(
            torch.empty(3, 0), NormSpec(), {}, ValueError, "non-empty last axis",
            id="empty-last-axis",
        ),
        pytest.param(
            torch.tensor(1.0), NormSpec(), {}, ValueError, "non-empty last axis", id="scalar",
        ),
        pytest.param([1.0, 2.0], NormSpec(), {}, TypeError, "torch.Tensor", id="list"),
        pytest.param(
            torch.ones(4), NormSpec(), {"backend": "cuda"}, ValueError, "unknown backend",
            id="backend",
        ),
    ],
)  # fmt: skip
def test_bad_inputs_raise_clear_errors(x, spec, kwargs, error, match):
    with pytest.raises(error, match=match):
        normalize(x, spec, **kwargs)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"kind": "batch_norm"}, "kind = batch_norm is not accepted"),
        ({"eps": -1e-5}, "eps = -1e-05 is too small: it must be at least 0"),
        ({"eps": float("nan")}, "eps = nan is too small: it must be at least 0"),
        ({"groups": 0}, "groups = 0 is too small: it must be at least 1"),
        ({"compute_dtype": "int8"}, "compute_dtype = int8 is not accepted"),
    ],
    ids=["kind", "negative-eps", "nan-eps", "groups", "compute-dtype"],
)
def test_bad_specs_raise_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        NormSpec(**kwargs)
