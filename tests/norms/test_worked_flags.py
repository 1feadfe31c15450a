"""What a worked explanation flags beside its outputs, against PyTorch's own modules: each
statistic over one value (BatchNorm, InstanceNorm, GroupNorm over one row), γ or β that the
statistics' dtype turns into 0 or ±∞, and a pooled kind's distance from float64 in half
precision."""

import math

import pytest
import torch
import torch.nn.functional as F

from engine import NormSpec
from engine.norms.worked import explain_vectors

EPS = 1e-5


def test_batchnorm_over_one_row_is_flagged_outputs_beta_and_pytorch_refuses_it():
    """One row: one value per channel, variance 0, every output β; torch's own BatchNorm in
    training mode refuses the batch, which is what the page's note says."""
    row = (1.0, 2.0, 3.0)
    ex = explain_vectors((row,), NormSpec(kind="batchnorm"), bias=(0.5, -1.0, 2.0))
    assert ex.one_value_per_channel and ex.outputs == ((0.5, -1.0, 2.0),)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        torch.nn.BatchNorm1d(3)(torch.tensor([row]))
    two = explain_vectors((row, (2.0, 2.0, 2.0)), NormSpec(kind="batchnorm"))
    layer = explain_vectors((row,), NormSpec(kind="layernorm"))
    assert not two.one_value_per_channel and not layer.one_value_per_channel


def test_a_gamma_or_beta_the_statistics_dtype_rounds_to_zero_is_named_and_acts_as_zero():
    """γ and β scale and shift in the normalized values' dtype: a typed 1e-320 is 0 in
    float32 and 1e-8 is 0 in float16, as in PyTorch's own ops on parameters of that dtype."""
    row = ((1.0, 2.0, 3.0, 4.0),)
    single = explain_vectors(row, NormSpec("layernorm"), weight=(1e-320,), bias=(1.0, 0, 1e-46, 2))
    assert single.parameters_lost == (("weight", 1e-320, 1), ("bias", 1e-46, 1))
    weight = torch.tensor([1e-320] * 4, dtype=torch.float32)  # 0: float32 holds no 1e-320
    bias = torch.tensor([1.0, 0, 1e-46, 2], dtype=torch.float32)
    expected = F.layer_norm(torch.tensor(row), (4,), weight, bias, eps=1e-5)
    assert single.outputs == tuple(tuple(r) for r in expected.double().tolist())
    assert single.outputs == ((1.0, 0.0, 0.0, 2.0),)
    half = explain_vectors(
        row, NormSpec("rmsnorm", compute_dtype="float16"), "float16", weight=(1e-8, 1, 1e-9, 1)
    )
    assert half.statistics_dtype == "float16"
    assert half.parameters_lost == (("weight", 1e-8, 2),)
    assert half.outputs[0][0] == 0 and half.outputs[0][2] == 0
    kept = explain_vectors(row, NormSpec("layernorm"), weight=(1e-30,), bias=(0.0,))
    assert kept.parameters_lost == ()  # float32 holds 1e-30, and a typed 0 is no loss


def test_instancenorm_and_groupnorm_over_one_value_each_are_flagged_as_pytorch_refuses_them():
    """One row: InstanceNorm's channel statistics and GroupNorm's with as many groups as
    channels pool one value each; F.instance_norm and F.group_norm refuse such an input, and
    the page said nothing beside its outputs of β."""
    x = torch.tensor([[1.0, 2.0, 3.0, 4.0]])  # [T = 1, d = 4]
    with pytest.raises(ValueError, match="more than 1 spatial element"):
        F.instance_norm(x.T.unsqueeze(0))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.group_norm(x.T.unsqueeze(0), 4)
    rows = ((1.0, 2.0, 3.0, 4.0),)
    assert explain_vectors(rows, NormSpec("instancenorm")).one_value_per_channel
    assert explain_vectors(rows, NormSpec("groupnorm", groups=4)).one_value_per_channel
    assert not explain_vectors(rows, NormSpec("groupnorm", groups=2)).one_value_per_channel
    two = ((1.0, 2.0, 3.0, 4.0), (2.0, 1.0, 0.0, 5.0))
    assert not explain_vectors(two, NormSpec("instancenorm")).one_value_per_channel


def test_a_pooled_kind_in_half_precision_says_how_far_its_outputs_are_from_float64():
    """BatchNorm of two float16 rows with float16 statistics: μ = 1000 for 999.75, and an
    output of 0.6323 where nn.BatchNorm1d in float64 on the stored numbers gives 1.0; the page
    said only "computed as the steps show"."""
    rows = ((1000.0, 1000.5, 1001.0, 1001.5), (1002.0, 999.0, 1000.0, 1003.0))
    stored = torch.tensor(rows, dtype=torch.float16).double()
    with torch.no_grad():  # training mode: batch statistics
        exact = torch.nn.BatchNorm1d(4, eps=EPS).double()(stored)
    ex = explain_vectors(rows, NormSpec("batchnorm", compute_dtype="float16"), "float16")
    error = float((torch.tensor(ex.outputs) - exact).abs().max())
    assert ex.float64_error == pytest.approx(error, rel=1e-6) and error > 0.3
    assert math.isnan(explain_vectors(rows, NormSpec("batchnorm")).float64_error)  # float32


def test_a_gamma_or_beta_past_the_statistics_dtype_is_named_as_infinite():
    """β = 70,000 in float16 is +∞ (largest finite 65,504): the outputs it shifts are +∞, and
    the page gave only the generic "outputs are inf or NaN"."""
    assert math.isinf(float(torch.tensor(70000.0, dtype=torch.float16)))
    spec = NormSpec("layernorm", compute_dtype="float16")
    ex = explain_vectors(((1.0, 2.0, 3.0, 4.0),), spec, "float16", bias=(70000.0, 0, 0, 0))
    assert ex.parameters_overflowed == (("bias", 70000.0, 1),) and ex.parameters_lost == ()
    assert math.isinf(ex.outputs[0][0])
    assert (
        explain_vectors(((1.0, 2.0),), NormSpec("layernorm"), bias=(7e4, 0)).parameters_overflowed
        == ()
    )


@pytest.mark.parametrize("kind, op", [("layernorm", F.layer_norm), ("rmsnorm", F.rms_norm)])
def test_a_statistic_whose_squares_all_round_to_zero_is_flagged_with_pytorchs_outputs(kind, op):
    """ε = 0 and entries of about 1e-30, not all equal: every square is below float32's
    smallest positive number, σ² (RMS²) is 0, and PyTorch's own op gives ±∞; the page
    showed them with no word beyond "3 outputs are inf or NaN"."""
    row = (1e-30, 2e-30, 4e-30)
    ex = explain_vectors((row,), NormSpec(kind=kind, eps=0.0))
    expected = op(torch.tensor([row]), (3,), eps=0.0)
    assert ex.outputs == tuple(tuple(r) for r in expected.double().tolist())
    assert not ex.zero_variance and ex.nonfinite_outputs == 3
    largest = max(abs(v - (sum(row) / 3 if kind == "layernorm" else 0.0)) for v in row)
    deviation, smallest = ex.underflowed
    assert deviation == pytest.approx(largest, rel=1e-6) and smallest == 2.0**-149
    for fine in (((1e-30, 2e-30, 4e-30),), ((1.0, 2.0, 3.0),)):  # ε > 0, or squares that hold
        assert (
            explain_vectors(
                fine, NormSpec(kind=kind, eps=1e-5 if fine[0][0] < 1 else 0.0)
            ).underflowed
            is None
        )
    constant = explain_vectors(((5.0, 5.0, 5.0),), NormSpec(kind="layernorm", eps=0.0))
    assert constant.zero_variance and constant.underflowed is None  # said as 0/0, not this
