"""engine.training.loop: the live training lab (tiny GPT, toy tasks, Pre-LN vs Post-LN)."""

from __future__ import annotations

import dataclasses
from itertools import islice

import numpy as np
import pytest
import torch

from engine.config import TrainSpec
from engine.errors import EngineError
from engine.threads import Cancelled, torch_threads
from engine.training.loop import (
    PARTIAL_EVERY,
    TrainResult,
    chance_loss,
    classify_outcome,
    iter_training,
    learning_rate,
    make_batch,
    summarize,
    train,
)

TINY = TrainSpec(
    task="copy", placement="pre", layers=2, d=64, lr=3e-3, steps=80, batch=16, length=4
)


def test_loss_decreases_on_tiny_settings():
    result = train(TINY, threads=1)
    assert len(result.loss) == 80
    assert result.loss[-10:].mean() < 0.6 * result.loss[:5].mean()
    assert result.loss[0] == pytest.approx(chance_loss(TINY), rel=0.15)


def _first_steps(spec: TrainSpec, count: int) -> list:
    """The first ``count`` steps of a run (a run takes at least 50)."""
    return list(islice(iter_training(spec, threads=1), count))


def test_same_seed_same_losses_other_seed_other_losses():
    a, b = (np.array([s.loss for s in _first_steps(TINY, 10)]) for _ in range(2))
    np.testing.assert_array_equal(a, b)
    c = np.array([s.loss for s in _first_steps(dataclasses.replace(TINY, seed=1), 10)])
    assert not np.array_equal(a, c)


def test_training_leaves_global_rng_and_threads_alone():
    before_rng, before_threads = torch.get_rng_state(), torch.get_num_threads()
    _first_steps(TINY, 3)
    assert torch.equal(torch.get_rng_state(), before_rng)
    assert torch.get_num_threads() == before_threads


def test_iter_training_streams_every_step_and_can_be_stopped():
    steps = _first_steps(TINY, 5)
    assert [s.step for s in steps] == [1, 2, 3, 4, 5]
    assert all(np.isfinite(s.loss) and s.grad_norm > 0 for s in steps)
    checks = []

    def stop_after_two_steps() -> bool:
        checks.append(1)
        return len(checks) > 2

    stopped = list(iter_training(TINY, should_stop=stop_after_two_steps))
    assert len(stopped) == 2
    partial = summarize(TINY, stopped)
    assert list(partial.steps) == [1, 2]


def test_train_hands_its_progress_the_run_so_far_and_a_stopped_run_is_no_result():
    seen = []
    result = train(TINY, progress=lambda f, partial: seen.append((f, len(partial.loss))), threads=1)
    every = PARTIAL_EVERY
    assert seen == [(n / 80, n) for n in range(every, 81, every)] and len(result.loss) == 80
    with pytest.raises(Cancelled):
        train(
            TINY, should_stop=lambda: len(seen) > 3, progress=lambda *_: seen.append(1), threads=1
        )


def test_warmup_ramps_linearly_then_holds():
    spec = dataclasses.replace(TINY, warmup=True, warmup_steps=10, lr=1e-3)
    assert learning_rate(spec, 1) == pytest.approx(1e-4)
    assert learning_rate(spec, 10) == pytest.approx(1e-3)
    assert learning_rate(spec, 50) == pytest.approx(1e-3)
    assert learning_rate(dataclasses.replace(spec, warmup=False), 1) == pytest.approx(1e-3)


@pytest.mark.parametrize("task", ["copy", "reverse", "modadd"])
def test_batches_pose_the_task_and_mask_everything_but_the_answer(task):
    spec = dataclasses.replace(TINY, task=task, batch=5)
    inputs, targets = make_batch(spec, torch.Generator().manual_seed(0))
    assert inputs.shape == targets.shape
    full = torch.cat([inputs, targets[:, -1:]], dim=1)  # the whole sequence, BOS first
    answers = targets[targets != -100].view(5, -1)
    if task == "modadd":
        a, b = inputs[:, 1], inputs[:, 3]
        assert torch.equal(answers[:, 0], (a + b) % spec.modulus)
    else:
        n = spec.length
        given = full[:, 1 : n + 1]
        expected = given if task == "copy" else given.flip(1)
        assert torch.equal(answers, expected)
        assert answers.shape == (5, n)


def test_outcomes_are_classified():
    chance = 2.3
    assert classify_outcome(np.array([2.3, 1.0, 0.1]), chance, False) == "trained"
    assert classify_outcome(np.array([2.3, 2.3, 2.29]), chance, False) == "stalled"
    assert classify_outcome(np.array([2.3, np.nan]), chance, True) == "diverged"
    # a run at 1.2 against a chance loss of 2.30 is "stalled" by the rule (above half of it),
    # and its label says that rule, not "near chance"
    assert classify_outcome(np.array([2.3, 1.2, 1.2]), chance, False) == "stalled"
    from ui.i18n import translate

    assert "near" not in translate("depth.outcome_stalled", "en")
    assert "half the chance level" in translate("depth.outcome_stalled", "en")


def test_sizes_over_the_lab_limits_are_refused():
    with pytest.raises(EngineError, match="from 2 to 8") as refused:
        dataclasses.replace(TINY, layers=9)
    assert refused.value.key == "axes.out_of_range"
    assert refused.value.params == {"name": "layers", "value": "9", "low": 2, "high": 8}
    with pytest.raises(ValueError, match="heads"):
        TrainSpec(d=64, heads=5)


@pytest.mark.slow  # 14.3 s measured: two full default training runs
def test_defaults_show_the_lesson_post_ln_without_warmup_fails_where_pre_ln_trains():
    """The measured defaults (see engine/training/loop.py): same lr, same seed, same data."""
    with torch_threads(1):
        post = train(TrainSpec())
        pre = train(dataclasses.replace(TrainSpec(), placement="pre"))
    assert TrainSpec().placement == "post" and not TrainSpec().warmup
    assert pre.outcome == "trained", pre.loss[-10:]
    assert post.outcome in ("stalled", "diverged"), post.loss[-10:]


def _finished(loss, accuracy) -> TrainResult:
    steps = np.arange(1, len(loss) + 1)
    return TrainResult(
        TrainSpec(), steps, np.asarray(loss, float), np.asarray(accuracy, float),
        np.ones(len(loss)), np.ones(len(loss)), 2.30, "trained", 1.0,
    )  # fmt: skip


def test_the_final_loss_and_accuracy_are_means_over_the_last_30_steps_or_all_of_a_short_run():
    """A loss still falling: its last step (0.5) is not what the outcome line reports."""
    loss = np.linspace(2.0, 0.5, 100)
    result = _finished(loss, np.linspace(0.0, 1.0, 100))
    assert result.final_window == 30
    assert result.final_loss == pytest.approx(loss[70:].sum() / 30) and result.final_loss > 0.7
    assert result.final_accuracy == pytest.approx(100 * np.linspace(0.0, 1.0, 100)[70:].mean())
    short = _finished([3.0, 1.0], [0.0, 0.5])
    assert (short.final_window, short.final_loss, short.final_accuracy) == (2, 2.0, 25.0)
