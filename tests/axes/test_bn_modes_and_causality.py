"""BatchNorm failures 3 (train vs eval), 4 (a batch of one) and 5 (leaking the future)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.axes import limits
from engine.axes.batch_of_one import batch_of_one
from engine.axes.causal_leak import causal_leak
from engine.axes.train_eval import SHIFT_GRID, train_eval_batches, train_eval_gap
from engine.config import NORM_KINDS, AxesSpec
from engine.errors import EngineError
from engine.norms.kinds import KIND_AXES
from tests.axes.test_axes_spec import assert_translatable

SPEC = AxesSpec(preset="channel_offsets", dtype="float64")


# --- failure 3: training vs inference --------------------------------------------------------


def run_batchnorm1d(spec: AxesSpec, steps: int, shift: float, momentum: float):
    """nn.BatchNorm1d trained on the experiment's batches, then both modes on the eval batch."""
    train, evaluation, _ = train_eval_batches(spec, steps, shift)
    bn = torch.nn.BatchNorm1d(spec.d, eps=spec.eps, momentum=momentum, affine=False)
    bn = bn.to(train.dtype).train()
    with torch.no_grad():
        for batch in train:
            bn(batch.reshape(-1, spec.d))  # [B*T, d]: one value per (sequence, position)
        rows = evaluation.reshape(-1, spec.d)
        frozen = (bn.running_mean.clone(), bn.running_var.clone())
        in_training = bn(rows)  # batch statistics (also updates the running ones)
        bn.running_mean.copy_(frozen[0])
        bn.running_var.copy_(frozen[1])
        in_eval = bn.eval()(rows)
    return frozen, (in_training - in_eval).abs()


@pytest.mark.parametrize("momentum, steps, shift", [(0.1, 100, 1.0), (0.3, 7, -2.0), (1.0, 3, 0.0)])
def test_running_statistics_and_gap_match_batchnorm1d(momentum, steps, shift):
    r = train_eval_gap(SPEC, shift=shift, momentum=momentum, steps=steps)
    (running_mean, _), gap = run_batchnorm1d(SPEC, steps, shift, momentum)
    np.testing.assert_allclose(r.running_mean_history[-1], running_mean, rtol=1e-6, atol=1e-7)
    assert r.gap_mean == pytest.approx(float(gap.mean()), rel=1e-5)
    assert r.gap_max == pytest.approx(float(gap.max()), rel=1e-5)
    assert r.running_mean_history.shape == (steps + 1, 32)
    assert np.all(r.running_mean_history[0] == 0)


def test_momentum_one_keeps_only_the_last_batch():
    r = train_eval_gap(SPEC, momentum=1.0, steps=4)
    np.testing.assert_allclose(r.running_mean_history[-1], r.batch_mean_history[-1], rtol=1e-6)


def test_the_gap_grows_with_the_shift_and_train_mode_ignores_it():
    r = train_eval_gap(SPEC, shift=1.0)
    # a shift of s sigma moves eval outputs by ~s; estimation error alone is ~1/sqrt(B*T)
    assert r.gap_by_shift[0] < 0.3
    assert r.gap_mean == pytest.approx(1.0, abs=0.2)
    slope = np.polyfit(SHIFT_GRID[4:], r.gap_by_shift[4:], 1)[0]
    assert slope == pytest.approx(1.0, abs=0.1)
    assert r.gap_by_shift[4] == pytest.approx(r.gap_mean, rel=1e-9)  # grid point 1.0
    # after 100 steps at momentum 0.1 the running mean sits near the population mean
    assert r.running_mean_error < 0.3


@pytest.mark.parametrize(
    "kwargs, key",
    [
        (dict(momentum=0.0), "momentum_zero"),
        (dict(momentum=1.5), "real_out_of_range"),
        (dict(steps=0), "out_of_range"),
        (dict(steps=limits.MAX_TRAIN_STEPS + 1), "out_of_range"),
        (dict(shift=limits.MAX_SHIFT + 1), "real_out_of_range"),
    ],
)
def test_train_eval_refusals(kwargs, key):
    with pytest.raises(EngineError) as caught:
        train_eval_gap(SPEC, **kwargs)
    assert_translatable(caught.value, key)


def test_one_value_per_channel_cannot_train_running_statistics():
    with pytest.raises(EngineError) as caught:
        train_eval_gap(AxesSpec(batch=1, tokens=1))
    assert_translatable(caught.value, "one_value_per_channel")


# --- failure 4: a batch of one ---------------------------------------------------------------


def test_batch_of_one_collapses_to_beta_and_nothing_divides_by_zero():
    r = batch_of_one(SPEC)
    assert not r.claim_holds
    assert np.all(r.variance == 0.0)
    assert r.max_abs_y_minus_beta == 0.0 and np.array_equal(r.y, r.beta)
    assert r.nan_count_eps0 == 32 and np.all(np.isnan(r.y_eps0))  # 0 * inf, no exception
    assert r.native_eps0_max_abs_minus_beta == 0.0
    assert r.torch_eval_finite
    # one sentence of T tokens is T values per channel: a real variance, and torch trains
    assert r.sequence_tokens == 16 and r.sequence_min_var > 0 and r.torch_sequence_trains


def test_batch_of_one_reports_the_exception_torch_really_raises():
    r = batch_of_one(SPEC)
    with pytest.raises(ValueError) as caught:
        torch.nn.BatchNorm1d(32).train()(torch.randn(1, 32))
    assert r.torch_train_error_type == "ValueError"
    assert r.torch_train_error == str(caught.value)
    assert "Expected more than 1 value per channel when training" in r.torch_train_error


def test_batch_of_one_with_eps_zero_uses_a_positive_eps_for_the_beta_case():
    r = batch_of_one(AxesSpec(eps=0.0))
    assert r.eps == 1e-5 and r.max_abs_y_minus_beta == 0.0


def test_a_one_token_sentence_is_also_one_value_per_channel():
    r = batch_of_one(AxesSpec(tokens=1))
    assert r.sequence_min_var == 0.0 and not r.torch_sequence_trains


# --- failure 5: causal leak ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_only_kinds_pooling_t_leak_the_future(dtype):
    r = causal_leak(AxesSpec(dtype=dtype))
    assert r.kinds == NORM_KINDS and r.position == 15
    k = {kind: i for i, kind in enumerate(r.kinds)}
    for kind in NORM_KINDS:
        leaks = r.leaks_future[k[kind]]
        assert leaks == KIND_AXES[kind].mixes_positions, kind
        if not leaks:  # exactly: not one bit of an earlier output moves
            assert r.earlier_max[k[kind]] == 0.0 and np.all(r.same_sample[k[kind], :15] == 0)
        assert r.same_sample[k[kind], 15] > 0  # the changed token itself always moves
    assert r.earlier_max[k["layernorm"]] == 0.0 and r.earlier_max[k["batchnorm"]] > 1e-3


def test_batchnorm_also_leaks_into_other_sequences_instance_and_group_norm_do_not():
    r = causal_leak(AxesSpec())
    other = dict(zip(r.kinds, r.other_samples.max(axis=1)))
    assert other["batchnorm"] > 0
    for kind in ("layernorm", "rmsnorm", "instancenorm", "groupnorm", "dyt"):
        assert other[kind] == 0.0, kind


def test_a_middle_position_leaks_backwards_too():
    r = causal_leak(AxesSpec(), position=5)
    bn = r.kinds.index("batchnorm")
    assert r.position == 5 and np.all(r.same_sample[bn, :5] > 0)


@pytest.mark.parametrize("position", [0, 16, -1])
def test_the_changed_position_must_have_an_earlier_one(position):
    with pytest.raises(EngineError) as caught:
        causal_leak(AxesSpec(), position=position)
    assert_translatable(caught.value, "out_of_range")


def test_one_position_cannot_leak():
    with pytest.raises(EngineError) as caught:
        causal_leak(AxesSpec(tokens=1))
    assert_translatable(caught.value, "needs_two_positions")


def test_groups_that_do_not_divide_d_fall_back_to_one_group():
    assert causal_leak(AxesSpec(groups=5)).groups == 1
    assert causal_leak(AxesSpec(groups=8)).groups == 8
