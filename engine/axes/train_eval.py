"""BatchNorm failure 3: training and inference normalize with different statistics.

In training BatchNorm normalizes with the current batch's (mean, biased var) and keeps
running averages, updated after every batch as ``nn.BatchNorm1d`` does (from 0 and 1, over
n = B*T values per channel: ``engine.norms.reference.batch_norm_running_update``).  At
inference it normalizes with the running averages instead.  The two outputs differ by the
running averages' estimation error, and — when the inference data drift from the training
data — by the drift itself: a per-channel shift of s standard deviations moves every
inference output by about s, while the training-mode output, which re-centres on its own
batch, does not move at all.  ``shift`` is that drift; the sweep over ``SHIFT_GRID`` draws
the gap against it.  LayerNorm has no such gap: it uses the same per-token statistics in
both modes.

References:
- Ioffe, Szegedy 2015, "Batch Normalization", arXiv:1502.03167 (§3.1, inference)
- Ioffe 2017, "Batch Renormalization", arXiv:1702.03275 (train/inference mismatch)
- PyTorch ``torch.nn.BatchNorm1d`` documentation (momentum convention, unbiased running var)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from engine.axes import limits
from engine.axes.sources import ChannelProfile, channel_profile, draw_tokens
from engine.config import DTYPES, AxesSpec, NormSpec
from engine.norms import reference
from engine.norms.dispatch import normalize
from engine.threads import Cancelled, Progress, StopCheck, torch_threads

DEFAULT_STEPS = 100
DEFAULT_MOMENTUM = 0.1  # PyTorch's default; Keras writes the same rule with 0.9 (1 - this)
DEFAULT_SHIFT = 1.0
SHIFT_GRID = np.linspace(0.0, 3.0, 13)  # shifts of the gap-vs-shift curve, in σ


@dataclass(frozen=True)
class TrainEvalGap:
    """Running statistics against batch statistics, and the train/eval output difference."""

    steps: int
    momentum: float
    shift: float  # inference drift, per channel, in units of the channel's σ
    population_mean: np.ndarray  # [d] the training distribution's channel means
    batch_mean_history: np.ndarray  # [steps, d] each training batch's mean
    running_mean_history: np.ndarray  # [steps + 1, d] running mean, from 0
    eval_batch_mean: np.ndarray  # [d] the inference batch's own mean
    gap_mean: float  # mean |train-mode output - eval-mode output| over the inference batch
    gap_max: float  # its maximum
    running_mean_error: float  # max over channels |running - population mean| / σ
    shift_grid: np.ndarray  # [S] shifts (σ)
    gap_by_shift: np.ndarray  # [S] gap_mean at each shift (same batches, same running stats)


def train_eval_work(spec: AxesSpec, shift: float, momentum: float, steps: int) -> int:
    """The experiment's work: every cell of every training batch, normalized once."""
    return spec.batch * spec.tokens * spec.d * steps


def train_eval_batches(
    spec: AxesSpec, steps: int = DEFAULT_STEPS, shift: float = DEFAULT_SHIFT
) -> tuple[torch.Tensor, torch.Tensor, ChannelProfile]:
    """The experiment's data: ``steps`` training batches ``[steps, B, T, d]``, one inference
    batch ``[B, T, d]`` shifted by ``shift`` σ per channel, and the spec preset's profile."""
    generator = torch.Generator().manual_seed(spec.seed)
    profile = channel_profile(spec.preset, spec.d, generator)
    dtype = DTYPES[spec.dtype]
    shape = (spec.batch, spec.tokens, spec.d)
    train = draw_tokens(profile, (steps, *shape), generator, dtype)  # [steps, B, T, d]
    drift = torch.from_numpy(shift * profile.scale).to(dtype)  # [d]
    evaluation = draw_tokens(profile, shape, generator, dtype) + drift  # [B, T, d]
    return train, evaluation, profile


def train_eval_gap(
    spec: AxesSpec,
    shift: float = DEFAULT_SHIFT,
    momentum: float = DEFAULT_MOMENTUM,
    steps: int = DEFAULT_STEPS,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
    threads: int | None = None,
) -> TrainEvalGap:
    """Train ``steps`` batches' running statistics, then normalize a shifted batch both ways.

    ``should_stop`` is polled between training batches (``Cancelled``); ``progress`` gets the
    fraction of them done."""
    steps = limits.checked_int("steps", steps, limits.TRAIN_STEPS.low, limits.TRAIN_STEPS.high)
    momentum = limits.checked_real("momentum", momentum, limits.MOMENTUM.low, limits.MOMENTUM.high)
    if momentum == 0.0:  # nothing would ever be learned: the running stats stay 0 and 1
        raise limits.refusal(
            "momentum_zero",
        )
    shift = limits.checked_real("shift", shift, limits.SHIFT.low, limits.SHIFT.high)
    count = spec.batch * spec.tokens
    if count < 2:
        raise limits.refusal(
            "one_value_per_channel",
            batch=spec.batch,
            tokens=spec.tokens,
        )
    with torch_threads(threads):
        train, evaluation, profile = train_eval_batches(spec, steps, shift)
        bn = NormSpec(kind="batchnorm", eps=spec.eps, compute_dtype="input")
        dtype = DTYPES[spec.dtype]
        running_mean = torch.zeros(spec.d, dtype=dtype)  # nn.BatchNorm1d's initial values
        running_var = torch.ones(spec.d, dtype=dtype)
        means, history_mean = [], [running_mean]
        for done, batch in enumerate(train):
            if should_stop is not None and should_stop():
                raise Cancelled(f"stopped after {done} of {steps} batches")
            if progress is not None:
                progress(done / steps)
            stats = normalize(batch, bn, backend="torch")  # training mode: batch statistics
            batch_mean, batch_var = stats.mean.to(dtype), stats.var.to(dtype)  # [d] each
            running_mean, running_var = reference.batch_norm_running_update(
                running_mean, running_var, batch_mean, batch_var, count, momentum
            )
            means.append(batch_mean)
            history_mean.append(running_mean)
        in_training = normalize(evaluation, bn, backend="torch")  # its own batch statistics
        gaps = []
        scale = torch.from_numpy(profile.scale).to(dtype)  # [d]
        for grid_shift in SHIFT_GRID:
            shifted = evaluation + (grid_shift - shift) * scale  # [B, T, d]
            gaps.append(_gap(shifted, spec.eps, running_mean, running_var).mean())
        gap = _gap(evaluation, spec.eps, running_mean, running_var, in_training.y)  # [B, T, d]
    population_mean = profile.offset
    error = np.abs(running_mean.double().numpy() - population_mean) / profile.scale
    return TrainEvalGap(
        steps=steps,
        momentum=momentum,
        shift=shift,
        population_mean=population_mean,
        batch_mean_history=torch.stack(means).double().numpy(),
        running_mean_history=torch.stack(history_mean).double().numpy(),
        eval_batch_mean=in_training.mean.double().numpy(),
        gap_mean=float(gap.mean()),
        gap_max=float(gap.max()),
        running_mean_error=float(error.max()),
        shift_grid=SHIFT_GRID.copy(),
        gap_by_shift=np.array([float(g) for g in gaps]),
    )


def _gap(x, eps, running_mean, running_var, y_train=None) -> np.ndarray:
    """|training-mode output - inference-mode output| of batch ``x``, cell by cell."""
    if y_train is None:
        y_train = normalize(x, NormSpec(kind="batchnorm", eps=eps, compute_dtype="input")).y
    y_eval = reference.batch_norm(
        x, eps, compute_dtype=x.dtype, running_mean=running_mean, running_var=running_var
    ).y  # [B, T, d]: inference mode
    return (y_train - y_eval).abs().double().numpy()
