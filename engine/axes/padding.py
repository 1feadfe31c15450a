"""BatchNorm failure 1: padding pollutes the per-channel statistics; LayerNorm does not care.

A padded batch holds ``B*T`` positions of which only ``sum(lengths)`` are real.  BatchNorm
pools every position of a channel, so with a fraction ``f`` of PAD cells holding ``p``::

    mean_with_pad = (1 - f) * mean_real + f * p

and the variance mixes in the PAD cells' distance from that mean: the statistics describe the
padding as much as the sentences, and change with how much padding the batch happens to
have.  Masked statistics (PAD left out, what a careful implementation does) are those of the
real tokens alone.  LayerNorm pools within one token, so a real token's output cannot depend
on any other position: the padded batch's real rows equal each sentence normalized alone,
exactly (not merely to rounding: the same arithmetic on the same row).

References:
- Ioffe, Szegedy 2015, "Batch Normalization", arXiv:1502.03167
- Ba, Kiros, Hinton 2016, "Layer Normalization", arXiv:1607.06450 (§3: LN for RNNs,
  where per-time-step batch statistics are a problem)
- Shen, Yao, Gholami, Mahoney, Keutzer 2020, "PowerNorm: Rethinking Batch Normalization in
  Transformers", arXiv:2003.07845 (batch statistics of NLP activations fluctuate)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from engine.axes.sources import make_tensor
from engine.config import AxesSpec, NormSpec
from engine.norms.dispatch import masked_batch_norm, normalize


@dataclass(frozen=True)
class PaddingPollution:
    """Per-channel BatchNorm statistics with PAD counted vs left out, and LayerNorm's check."""

    lengths: tuple[int, ...]  # real tokens per sequence
    pad_value: float  # what every PAD cell holds
    pad_fraction: float  # PAD positions / (B*T)
    mean_with_pad: np.ndarray  # [d] BatchNorm mean, PAD counted
    std_with_pad: np.ndarray  # [d] sqrt of the biased variance, PAD counted
    mean_real: np.ndarray  # [d] the same over the real tokens only (masked)
    std_real: np.ndarray  # [d]
    max_mean_shift: float  # max over channels of |mean_with_pad - mean_real|
    std_ratio_min: float  # min over channels of std_with_pad / std_real
    std_ratio_max: float  # max over channels of std_with_pad / std_real
    bn_real_token_max_diff: float  # max |BN output of a real token|, PAD counted vs masked
    ln_real_token_max_diff: float  # max |LN of a real token, padded batch vs sentence alone|


def padding_pollution(spec: AxesSpec) -> PaddingPollution:
    """Run failure 1 on ``spec``'s tensor, made padded (``source="padded"``) if it was not."""
    tensor = make_tensor(replace(spec, source="padded"))  # the experiment needs PAD cells
    x, real = tensor.x, tensor.real  # [B, T, d], [B, T]
    bn = NormSpec(kind="batchnorm", eps=spec.eps, compute_dtype="input")
    with_pad = masked_batch_norm(x, bn, None, backend="torch")
    masked = masked_batch_norm(x, bn, real, backend="torch")
    bn_diff = (with_pad.y - masked.y)[real].abs().max()  # over real tokens' cells

    ln = NormSpec(kind="layernorm", eps=spec.eps, compute_dtype="input")
    padded_rows = normalize(x, ln, backend="torch").y  # [B, T, d]
    ln_diff = torch.zeros((), dtype=torch.float64)
    for sample, length in enumerate(tensor.lengths):
        alone = normalize(x[sample, :length], ln, backend="torch").y  # [length, d]
        gap = (padded_rows[sample, :length] - alone).abs().max().double()
        ln_diff = torch.maximum(ln_diff, gap)

    def numpy(t: torch.Tensor) -> np.ndarray:
        return t.double().numpy()

    std_with_pad, std_real = np.sqrt(numpy(with_pad.var)), np.sqrt(numpy(masked.var))
    with np.errstate(divide="ignore", invalid="ignore"):  # one real token: σ = 0, ratio NaN
        ratio = std_with_pad / std_real
    mean_with_pad, mean_real = numpy(with_pad.mean), numpy(masked.mean)
    return PaddingPollution(
        lengths=tensor.lengths,
        pad_value=float(spec.pad_value),
        pad_fraction=tensor.pad_count / real.numel(),
        mean_with_pad=mean_with_pad,
        std_with_pad=std_with_pad,
        mean_real=mean_real,
        std_real=std_real,
        max_mean_shift=float(np.abs(mean_with_pad - mean_real).max()),
        std_ratio_min=float(ratio.min()),
        std_ratio_max=float(ratio.max()),
        bn_real_token_max_diff=float(bn_diff),
        ln_real_token_max_diff=float(ln_diff),
    )
