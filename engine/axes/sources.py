"""Tensors for the Axes page: ``[B, T, d]`` activations and a padding mask ``[B, T]``.

Two sources.  *Synthetic*: every cell ``offset[c] + scale[c] * z`` with ``z ~ N(0, 1)``, and
four presets of the per-channel profile — plain Gaussian; per-channel offsets and scales
(real activations have them, which is what BatchNorm's per-channel statistics remove); one
outlier channel (the "massive activations" of large models, Sun et al. 2024); a mean-shifted
token (one token whose every channel sits ``TOKEN_SHIFT`` higher, as a first/sink token
does).  *Sentences with padding*: the same real tokens, each sequence its own length, the
positions past it PAD cells holding ``pad_value`` (zeros or a constant).  *Example*: a
``[B, T, d]`` slice of a real model's residual stream, the shipped SmolLM2 dump
(``engine/dumps/example.py``) at point ``spec.layer``: its first B prompts, first T tokens,
and the d channels of largest RMS there, in channel order (all 576 when d = 576), so a
narrow slice still holds the massive-activation channel.

Every random number comes from one ``torch.Generator`` seeded with ``spec.seed``, in a fixed
order (the channel profile first, then the cells), so changing the preset keeps the same
underlying ``z``: the page can switch presets and the learner sees only the preset change.

References:
- Sun, Chen, Kolter, Liu 2024, "Massive Activations in Large Language Models", arXiv:2402.17762
- Xiao, Tian, Chen, Han, Lewis 2023, "Efficient Streaming Language Models with Attention
  Sinks", arXiv:2309.17453 (the first token as a sink)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from engine.config import DTYPES, AxesSpec

OFFSET_STD = 2.0  # channel_offsets: per-channel means ~ N(0, OFFSET_STD^2)
SCALE_RANGE = 3.0  # channel_offsets: per-channel stds log-uniform in [1/3, 3]
OUTLIER_OFFSET = 12.0  # outlier_channel: that channel's mean, in units of the others' std
OUTLIER_SCALE = 3.0  # outlier_channel: that channel's std
TOKEN_SHIFT = 6.0  # shifted_token: added to every channel of one token
SHIFTED_TOKEN = (0, 0)  # shifted_token: (sample, position) of that token


@dataclass(frozen=True)
class ChannelProfile:
    """The population each channel's real cells are drawn from: N(offset[c], scale[c]^2)."""

    offset: np.ndarray  # [d]
    scale: np.ndarray  # [d]


@dataclass(frozen=True)
class AxesTensor:
    """A ``[B, T, d]`` tensor with its padding mask; what the Axes page shows and normalizes."""

    x: torch.Tensor  # [B, T, d], float32 or float64 (spec.dtype), on the CPU
    real: torch.Tensor  # [B, T] bool: True = a real token, False = PAD
    lengths: tuple[int, ...]  # real tokens per sequence (T each for the synthetic source)
    profile: ChannelProfile  # the real tokens' population
    channels: tuple[int, ...] | None = None  # example: the dump's channel of each column

    @property
    def pad_count(self) -> int:
        """Number of PAD positions (rows of d cells)."""
        return int((~self.real).sum())


def default_lengths(batch: int, tokens: int) -> tuple[int, ...]:
    """A staircase of lengths from T (the longest sets T) down to about T/4.

    One sequence alone has no padding: a batch is padded to its longest sequence.
    """
    if batch == 1:
        return (tokens,)
    shortest = max(1, math.ceil(tokens / 4))
    return tuple(tokens - round(b * (tokens - shortest) / (batch - 1)) for b in range(batch))


def channel_profile(preset: str, d: int, generator: torch.Generator) -> ChannelProfile:
    """The per-channel population of ``preset``; draws the same numbers for every preset."""
    offsets = OFFSET_STD * torch.randn(d, generator=generator, dtype=torch.float64)  # [d]
    log_range = math.log(SCALE_RANGE)
    uniform = torch.rand(d, generator=generator, dtype=torch.float64)  # [d]
    scales = torch.exp((2.0 * uniform - 1.0) * log_range)  # [d], in [1/3, 3]
    outlier = int(torch.randint(d, (1,), generator=generator))
    offset, scale = np.zeros(d), np.ones(d)
    if preset == "channel_offsets":
        offset, scale = offsets.numpy(), scales.numpy()
    if preset == "outlier_channel":
        offset[outlier], scale[outlier] = OUTLIER_OFFSET, OUTLIER_SCALE
    return ChannelProfile(offset, scale)


def draw_tokens(
    profile: ChannelProfile, shape, generator: torch.Generator, dtype=torch.float64
) -> torch.Tensor:
    """``shape`` (ending in d) of cells drawn from ``profile``'s channels, in ``dtype``."""
    z = torch.randn(shape, generator=generator, dtype=dtype)  # [..., d]
    offset = torch.from_numpy(profile.offset).to(dtype)  # [d]
    return z.mul_(torch.from_numpy(profile.scale).to(dtype)).add_(offset)  # [..., d], in place


def example_tensor(spec: AxesSpec) -> AxesTensor:
    """The example dump's slice ``spec`` names (``spec.layer``, B, T, d; no padding)."""
    from engine.dumps.example import example_slice, largest_channels

    channels = largest_channels(spec.layer, spec.batch, spec.tokens, spec.d)
    x = example_slice(spec.layer, spec.batch, spec.tokens, channels)  # [B, T, d] float64
    real = torch.ones(spec.batch, spec.tokens, dtype=torch.bool)  # [B, T]
    spread = x.reshape(-1, spec.d)  # [B*T, d]
    profile = ChannelProfile(spread.mean(0).numpy(), spread.std(0, correction=0).numpy())
    lengths = (spec.tokens,) * spec.batch
    return AxesTensor(x.to(DTYPES[spec.dtype]), real, lengths, profile, tuple(channels))


def make_tensor(spec: AxesSpec) -> AxesTensor:
    """The tensor ``spec`` describes (its source, preset, sizes, seed, padding, dtype)."""
    if spec.source == "example":
        return example_tensor(spec)
    generator = torch.Generator().manual_seed(spec.seed)
    profile = channel_profile(spec.preset, spec.d, generator)
    shape = (spec.batch, spec.tokens, spec.d)
    x = draw_tokens(profile, shape, generator)  # [B, T, d] float64
    if spec.preset == "shifted_token":
        x[SHIFTED_TOKEN] += TOKEN_SHIFT
    if spec.source == "padded":
        lengths = spec.lengths or default_lengths(spec.batch, spec.tokens)
    else:
        lengths = (spec.tokens,) * spec.batch
    positions = torch.arange(spec.tokens)  # [T]
    real = positions[None, :] < torch.tensor(lengths)[:, None]  # [B, T]
    x[~real] = spec.pad_value
    return AxesTensor(x.to(DTYPES[spec.dtype]), real, lengths, profile)
