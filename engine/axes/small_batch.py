"""BatchNorm failure 2: small batches give noisy statistics.

BatchNorm on ``[B, T, d]`` pools ``n = b*T`` values per channel.  For independent draws of a
channel with std σ the batch mean's spread (its standard deviation over many batches) is
σ/√n — the line this experiment draws — and the biased batch variance's spread, in units of
σ², is √(2(n-1))/n (Gaussian cells).  At n = 1 the batch variance is 0 every time.  Every
layer's output then depends on which other sequences share the batch, and that noise shrinks
only as 1/√b.  Tokens of a real sentence are correlated, so a real batch behaves as fewer
than ``b*T`` independent values and is noisier than the line; the synthetic cells here are
independent, which makes the line the best case.

The statistics of each drawn batch are BatchNorm's, computed by the engine: a batch of b
sequences flattened into one sequence of b*T rows has, per channel, exactly the statistics
InstanceNorm pools over T, so one ``normalize`` call with ``kind="instancenorm"`` gives all
draws' batch statistics at once (``[draws, d]``).

References:
- Ioffe, Szegedy 2015, "Batch Normalization", arXiv:1502.03167
- Ioffe 2017, "Batch Renormalization", arXiv:1702.03275 (small and non-i.i.d. minibatches)
- Wu, He 2018, "Group Normalization", arXiv:1803.08494 (BN's error grows as batches shrink)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from engine.axes import limits
from engine.axes.sources import ChannelProfile, channel_profile, draw_tokens
from engine.config import AxesSpec, NormSpec
from engine.norms.dispatch import normalize
from engine.threads import torch_threads

DEFAULT_BATCH_SIZES = (1, 2, 4, 8, 16, 32)
BATCH_SIZES_OFFERED = (*DEFAULT_BATCH_SIZES, 64)  # the page's menu
DEFAULT_DRAWS = 200
CHANNELS = 8  # channels drawn: every channel's spread is the same in units of its σ
STATISTICS_CHUNK_VALUES = 2**20  # drawn values normalized at once (float64: 8 MB a buffer)


@dataclass(frozen=True)
class SmallBatchNoise:
    """Spread of BatchNorm's batch statistics against the batch size b."""

    batch_sizes: np.ndarray  # [K] int: the b compared
    values_per_channel: np.ndarray  # [K] int: n = b*T values pooled per channel
    mean_spread: np.ndarray  # [K]: std over draws of the batch mean, units of σ, mean over c
    mean_spread_theory: np.ndarray  # [K]: 1/sqrt(b*T)
    var_spread: np.ndarray  # [K]: std over draws of the biased batch variance, units of σ²
    var_spread_theory: np.ndarray  # [K]: sqrt(2(n-1))/n
    example_means: np.ndarray  # [K, draws]: channel 0's batch mean in each draw, units of σ

    @property
    def spread_ratio(self) -> np.ndarray:
        """[K] measured / theoretical spread of the mean (≈ 1 for independent cells)."""
        return self.mean_spread / self.mean_spread_theory


def small_batch_noise(
    spec: AxesSpec,
    batch_sizes=DEFAULT_BATCH_SIZES,
    draws: int = DEFAULT_DRAWS,
    threads: int | None = None,
) -> SmallBatchNoise:
    """Draw ``draws`` batches of each size b (``[b, T, c]`` from ``spec``'s channel profile,
    its first ``c = min(d, CHANNELS)`` channels).  ``threads``: see ``engine.threads``."""
    sizes = _checked_batch_sizes(batch_sizes)
    draws = limits.checked_int("draws", draws, limits.DRAWS.low, limits.DRAWS.high)
    sampled = draws * sum(sizes) * spec.tokens * min(spec.d, CHANNELS)
    if sampled > limits.MAX_SAMPLED_VALUES:
        raise limits.refusal(
            "too_many_samples",
            values=f"{sampled:,}",  # counts, grouped as the pages write them
            limit=f"{limits.MAX_SAMPLED_VALUES:,}",
        )
    with torch_threads(threads):
        generator = torch.Generator().manual_seed(spec.seed)
        profile = channel_profile(spec.preset, spec.d, generator)
        channels = min(spec.d, CHANNELS)
        profile = ChannelProfile(profile.offset[:channels], profile.scale[:channels])
        offset, scale = profile.offset, profile.scale  # [c] each
        spec_norm = NormSpec(kind="instancenorm", eps=spec.eps, compute_dtype="float64")
        mean_spread, var_spread, examples = [], [], []
        for b in sizes:
            shape = (draws, b * spec.tokens, channels)
            x = draw_tokens(profile, shape, generator, torch.float32)  # [draws, b*T, c]
            mean, var = _batch_statistics(x, spec_norm)  # [draws, c] each
            means = (mean - offset) / scale  # [draws, c], units of σ
            variances = var / scale**2  # [draws, c], units of σ²
            mean_spread.append(means.std(axis=0, ddof=1).mean())
            var_spread.append(variances.std(axis=0, ddof=1).mean())
            examples.append(means[:, 0])
    sizes_array = np.array(sizes)
    n = sizes_array * spec.tokens
    return SmallBatchNoise(
        batch_sizes=sizes_array,
        values_per_channel=n,
        mean_spread=np.array(mean_spread),
        mean_spread_theory=1.0 / np.sqrt(n),
        var_spread=np.array(var_spread),
        var_spread_theory=np.sqrt(2.0 * (n - 1)) / n,
        example_means=np.stack(examples),
    )


def _batch_statistics(x: torch.Tensor, spec: NormSpec) -> tuple[np.ndarray, np.ndarray]:
    """Each draw's batch mean and variance ([draws, c] each), normalized a few draws at a
    time: the float64 output and intermediates of all the draws a share link may ask for,
    at once, held hundreds of MB for a moment (benchmarks/RESULTS.md, "Small batches at the
    largest accepted link")."""
    per_call = max(1, STATISTICS_CHUNK_VALUES // (x.shape[1] * x.shape[2]))
    means, variances = [], []
    for part in torch.split(x, per_call):  # [≤ per_call, b*T, c]
        stats = normalize(part, spec, backend="torch")  # one batch's BN statistics per draw
        means.append(stats.mean.double())
        variances.append(stats.var.double())
    return torch.cat(means).numpy(), torch.cat(variances).numpy()


def _checked_batch_sizes(batch_sizes) -> tuple[int, ...]:
    sizes = tuple(batch_sizes)
    if not 1 <= len(sizes) <= limits.MAX_BATCH_SIZES:
        raise limits.refusal(
            "batch_sizes_count",
            count=len(sizes),
            limit=limits.MAX_BATCH_SIZES,
        )
    return tuple(limits.checked_int("batch size", b, 1, limits.MAX_BATCH) for b in sizes)
