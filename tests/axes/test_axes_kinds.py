"""``engine/norms/kinds.py`` against what PyTorch's own ops compute.

The count of statistics of each kind is read off the statistics tensors PyTorch's native ops
return (``native_layer_norm``, ``_fused_rms_norm``, ``native_batch_norm``,
``native_group_norm``), on torch's channels-first layout ``[B, d, T]`` where it has one.
"""

from __future__ import annotations

import pytest
import torch

from engine import NormSpec, normalize
from engine.config import NORM_KINDS
from engine.norms.kinds import (
    KIND_AXES,
    PER_TOKEN_KINDS,
    ROW_KINDS,
    groupnorm_layouts,
    statistics_count,
    statistics_shape,
)

B, T, D, G = 3, 5, 12, 4


def _torch_statistics_count(kind: str) -> int:
    """How many statistics PyTorch's op computes on a [B, T, d] activation (d channels)."""
    x = torch.randn(B, T, D)  # channels last, as a Transformer holds it
    x_bdt = x.transpose(1, 2).contiguous()  # [B, d, T], torch's layout for BN/IN/GN
    if kind == "layernorm":
        return torch.native_layer_norm(x, [D], None, None, 1e-5)[1].numel()
    if kind == "rmsnorm":
        return torch.ops.aten._fused_rms_norm(x, [D], None, 1e-5)[1].numel()
    if kind == "batchnorm":
        _, mean, _ = torch.native_batch_norm(x_bdt, None, None, None, None, True, 0.1, 1e-5)
        return mean.numel()
    if kind == "instancenorm":
        # F.instance_norm is batch_norm over [1, B*d, T]: one statistic per (sequence, channel)
        folded = x_bdt.reshape(1, B * D, T)
        _, mean, _ = torch.native_batch_norm(folded, None, None, None, None, True, 0.1, 1e-5)
        return mean.numel()
    if kind == "groupnorm":
        _, mean, _ = torch.native_group_norm(x_bdt, None, None, B, D, T, G, 1e-5)
        return mean.numel()
    return 0  # DyT: no statistic


def test_the_table_covers_every_norm_kind():
    assert tuple(KIND_AXES) == NORM_KINDS


@pytest.mark.parametrize("kind", NORM_KINDS)
def test_statistics_count_matches_pytorch(kind):
    assert statistics_count(kind, B, T, D, G) == _torch_statistics_count(kind)


@pytest.mark.parametrize(
    "kind, formula, count",
    [
        ("layernorm", "B·T", B * T),
        ("rmsnorm", "B·T", B * T),
        ("batchnorm", "d", D),
        ("instancenorm", "B·d", B * D),
        ("groupnorm", "B·G", B * G),  # not B·T·G: torch and the engine pool T as well
        ("dyt", "0", 0),
    ],
)
def test_count_formulas_by_hand(kind, formula, count):
    assert KIND_AXES[kind].count_formula == formula
    assert statistics_count(kind, B, T, D, G) == count


def test_groupnorm_counts_depend_on_the_layout_as_in_torch():
    """F.group_norm on [B, d, T] pools T as well: B·G; nn.GroupNorm on each token's [d]
    (the [B·T, d] rows, per-head GroupNorm in RetNet-style models): B·T·G."""
    layouts = groupnorm_layouts(B, T, D, G)
    x = torch.randn(B, T, D)
    rows = x.reshape(B * T, D)  # [B·T, d]: each token a sample of d channels
    _, mean, _ = torch.native_group_norm(rows, None, None, B * T, D, 1, G, 1e-5)
    assert layouts["per_token"] == ("B·T·G", mean.numel()) == ("B·T·G", B * T * G)
    assert layouts["sequence"] == ("B·G", _torch_statistics_count("groupnorm"))
    per_token = torch.nn.GroupNorm(G, D, affine=False)(rows).reshape(B, T, D)
    by_hand = (x.reshape(B, T, G, D // G) - x.reshape(B, T, G, D // G).mean(-1, keepdim=True)) / (
        x.reshape(B, T, G, D // G).var(-1, unbiased=False, keepdim=True) + 1e-5
    ).sqrt()
    torch.testing.assert_close(per_token, by_hand.reshape(B, T, D))  # one (μ, σ) per token, group


@pytest.mark.parametrize("kind", NORM_KINDS)
def test_statistics_shape_is_the_engines_statistics_shape(kind):
    x = torch.randn(B, T, D)
    result = normalize(x, NormSpec(kind=kind, groups=G if kind == "groupnorm" else 1))
    if kind == "dyt":
        assert statistics_shape(kind, B, T, D, G) == ()
    else:
        assert tuple(result.mean.shape) == statistics_shape(kind, B, T, D, G)


@pytest.mark.parametrize("kind", NORM_KINDS)
def test_gamma_and_beta_are_per_channel_as_in_torch_modules(kind):
    modules = {
        "layernorm": torch.nn.LayerNorm(D),
        "rmsnorm": torch.nn.RMSNorm(D),
        "batchnorm": torch.nn.BatchNorm1d(D),
        "instancenorm": torch.nn.InstanceNorm1d(D, affine=True),
        "groupnorm": torch.nn.GroupNorm(G, D),
    }
    if kind in modules:
        assert tuple(modules[kind].weight.shape) == (D,)
        has_bias = getattr(modules[kind], "bias", None) is not None
        assert ("beta" in KIND_AXES[kind].params) == has_bias  # nn.RMSNorm: weight only


def test_mixes_positions_exactly_for_the_kinds_pooling_t():
    mixing = {kind for kind, axes in KIND_AXES.items() if axes.mixes_positions}
    assert mixing == {"batchnorm", "instancenorm", "groupnorm"}
    assert not KIND_AXES["dyt"].indexed


def test_derived_kind_sets_are_the_ones_the_engine_listed_by_hand():
    assert ROW_KINDS == ("layernorm", "rmsnorm")
    assert PER_TOKEN_KINDS == ("layernorm", "rmsnorm", "dyt")
    assert ROW_KINDS == tuple(k for k in PER_TOKEN_KINDS if KIND_AXES[k].indexed)


@pytest.mark.parametrize("kind", NORM_KINDS)
def test_a_tokens_output_depends_on_that_token_alone_exactly_for_the_per_token_kinds(kind):
    torch.manual_seed(0)
    x = torch.randn(B, T, D)
    noise = torch.randn(B, T, D)
    noise[0, 0] = 0  # every token changes but sequence 0's first
    other = x + noise
    spec = NormSpec(kind=kind, groups=G) if kind == "groupnorm" else NormSpec(kind=kind)
    same = torch.equal(normalize(x, spec).y[0, 0], normalize(other, spec).y[0, 0])
    assert same == (kind in PER_TOKEN_KINDS)
