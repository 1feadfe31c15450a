"""Plain-torch normalization formulas: the readable oracle for everything else.

Every kernel, fast path and page in NormScope is checked against these functions; the
Vector Lab quotes them.  They are written for clarity, not speed, and are differentiable
with torch autograd (the kernels' backward passes are checked against that).

Precision model.  ``compute_dtype`` is the dtype the statistics are stored in.  Means are
written as *sum, then divide* (``_mean_last``): ``t.sum(-1)``, then ``/ d``.  On a float16 or
bfloat16 tensor ``torch.sum`` (CPU, PyTorch 2.13, measured) accumulates in float32 and rounds
the total once to the tensor's dtype: [60000, 60000, -60000] in float16 sums to 60000 although
120000 is beyond float16's range, and [60000, 0.001, -60000] sums to 0, not 0.001.  So the sum
overflows only when it is stored: a 4096-wide row of 100s has a sum of squares of 4.1e7, far
above float16's maximum 65504, and it is stored as ``inf``.  The other ways real code computes
in half precision are ``engine/norms/precision_paths.py``'s.  HF's ``LlamaRMSNorm`` computes
its statistics in float32 (``compute_dtype="float32"``).

Layout: ``x`` is ``[..., T, d]`` (channels last, positions second-to-last, batch before).

References:
- Ba, Kiros, Hinton 2016, "Layer Normalization", arXiv:1607.06450
- Zhang, Sennrich 2019, "Root Mean Square Layer Normalization", arXiv:1910.07467
- Ioffe, Szegedy 2015, "Batch Normalization", arXiv:1502.03167
- Ulyanov, Vedaldi, Lempitsky 2016, "Instance Normalization", arXiv:1607.08022
- Wu, He 2018, "Group Normalization", arXiv:1803.08494
- Zhu, Chen, He, LeCun, Liu 2025, "Transformers without Normalization" (DyT), arXiv:2503.10622
- Gemma team 2024, Gemma RMSNorm scales by (1 + weight), arXiv:2403.08295
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class NormResult:
    """Output of one normalization and the statistics it used.

    ``y`` has the shape and dtype of the input.  The statistics are float32 and have one
    entry per group of cells that share them: ``x.shape[:-1]`` for LayerNorm/RMSNorm/DyT
    (one per token), ``[d]`` for BatchNorm (one per channel), ``[*batch, d]`` for
    InstanceNorm, ``[*batch, groups]`` for GroupNorm.

    ``mean`` is the centre that was subtracted (zeros for RMSNorm), ``var`` the mean square
    about that centre (so for RMSNorm ``var`` is the mean square), ``rms`` the root mean
    square of the input, and ``rstd = 1/sqrt(var + eps)``.  For LayerNorm-like kinds
    ``rms**2 == var + mean**2``.  DyT uses no statistic: its ``rstd`` is NaN and ``mean``,
    ``var``, ``rms`` describe the input row.
    """

    y: torch.Tensor
    mean: torch.Tensor
    var: torch.Tensor
    rms: torch.Tensor
    rstd: torch.Tensor
    backend: str = "reference"


def rms_from_moments(var: torch.Tensor, mean: torch.Tensor) -> torch.Tensor:
    """RMS = sqrt(sigma^2 + mu^2): the identity RMS^2 = var + mean^2, in their dtype."""
    return torch.sqrt(var + mean * mean)


def _mean_last(t: torch.Tensor) -> torch.Tensor:
    """Mean over the last axis as sum-then-divide: the sum stored in ``t.dtype``, then / d.

    For half-precision ``t``, ``torch.sum`` accumulates in float32 and rounds the total once.
    """
    return t.sum(dim=-1, keepdim=True) / t.shape[-1]


def affine(
    x_hat: torch.Tensor,
    weight: torch.Tensor | None,
    bias: torch.Tensor | None,
    offset: float,
) -> torch.Tensor:
    """y = x_hat * (offset + weight) + bias, in x_hat's (compute) dtype."""
    if weight is not None:
        x_hat = x_hat * (offset + weight.to(x_hat.dtype))
    if bias is not None:
        x_hat = x_hat + bias.to(x_hat.dtype)
    return x_hat


def _as_btd(x: torch.Tensor) -> torch.Tensor:
    """View ``[..., T, d]`` as ``[B, T, d]``: 1-D is one token, 2-D one sequence."""
    if x.dim() == 1:
        return x.reshape(1, 1, -1)
    if x.dim() == 2:
        return x.unsqueeze(0)
    return x.reshape(-1, x.shape[-2], x.shape[-1])


def _result(y, mean, var, rms, rstd, input_dtype, stat_shape=None) -> NormResult:
    """The result: y in the input's dtype, the statistics in float32 (shaped ``stat_shape``)."""
    stats = (s if stat_shape is None else s.reshape(stat_shape) for s in (mean, var, rms, rstd))
    return NormResult(y.to(input_dtype), *(s.to(torch.float32) for s in stats))


def layer_norm(
    x: torch.Tensor,
    eps: float = 1e-5,
    weight: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    offset: float = 0.0,
    compute_dtype: torch.dtype = torch.float32,
) -> NormResult:
    """LayerNorm over the last axis: y = (x - mu) / sqrt(sigma^2 + eps) * w + b.

    mu = (1/d) sum_i x_i;  sigma^2 = (1/d) sum_i (x_i - mu)^2  (biased, two-pass).
    """
    xc = x.to(compute_dtype)  # [..., d]
    mean = _mean_last(xc)  # [..., 1]
    centered = xc - mean  # [..., d]
    var = _mean_last(centered * centered)  # [..., 1]
    rstd = torch.rsqrt(var + eps)  # [..., 1]
    y = affine(centered * rstd, weight, bias, offset)  # [..., d]
    rms = torch.sqrt(_mean_last(xc * xc))  # [..., 1]
    return _result(y, mean[..., 0], var[..., 0], rms[..., 0], rstd[..., 0], x.dtype)


def rms_norm(
    x: torch.Tensor,
    eps: float = 1e-5,
    weight: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    offset: float = 0.0,
    compute_dtype: torch.dtype = torch.float32,
) -> NormResult:
    """RMSNorm over the last axis: y = x / sqrt(mean(x^2) + eps) * (offset + w) + b.

    No centring: the output keeps x's direction.  RMS^2 = sigma^2 + mu^2, so RMS >= sigma.
    """
    xc = x.to(compute_dtype)  # [..., d]
    mean_square = _mean_last(xc * xc)  # [..., 1]
    rstd = torch.rsqrt(mean_square + eps)  # [..., 1]
    y = affine(xc * rstd, weight, bias, offset)  # [..., d]
    zeros = torch.zeros_like(mean_square[..., 0])
    rms = torch.sqrt(mean_square[..., 0])
    return _result(y, zeros, mean_square[..., 0], rms, rstd[..., 0], x.dtype)


def batch_norm(
    x: torch.Tensor,
    eps: float = 1e-5,
    weight: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    offset: float = 0.0,
    compute_dtype: torch.dtype = torch.float32,
    running_mean: torch.Tensor | None = None,
    running_var: torch.Tensor | None = None,
    mask: torch.Tensor | None = None,
) -> NormResult:
    """BatchNorm: one (mean, var) per channel, pooled over every row (all of B and T).

    Training mode uses the biased batch variance.  With ``running_mean``/``running_var``
    given, it is inference mode: those stored statistics are used instead.

    ``mask`` (bool, ``x.shape[:-1]``; True = a real token) restricts the statistics to the
    counted rows: padding is left out of mean, var and rms but still normalized with them.
    With no counted row the statistics are 0/0 = NaN.
    """
    d = x.shape[-1]
    xc = x.to(compute_dtype)
    rows = xc.reshape(-1, d)  # [B*T, d]
    counted = rows if mask is None else rows[mask.reshape(-1)]  # [n, d]
    n = counted.shape[0]
    if running_mean is None or running_var is None:
        mean = counted.sum(dim=0) / n  # [d]
        deviation = counted - mean  # [n, d]
        var = (deviation * deviation).sum(dim=0) / n  # [d]
    else:
        mean = running_mean.to(compute_dtype)  # [d]
        var = running_var.to(compute_dtype)  # [d]
    centered = rows - mean  # [B*T, d]
    rstd = torch.rsqrt(var + eps)  # [d]
    y = affine(centered * rstd, weight, bias, offset).reshape(x.shape)
    rms = torch.sqrt((counted * counted).sum(dim=0) / n)  # [d]
    return _result(y, mean, var, rms, rstd, x.dtype)


def batch_norm_running_update(
    running_mean: torch.Tensor,
    running_var: torch.Tensor,
    batch_mean: torch.Tensor,
    batch_var: torch.Tensor,
    count: int,
    momentum: float = 0.1,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One training step's update of BatchNorm's running statistics (``[d]`` each).

    running = (1 - momentum) * running + momentum * batch, as ``nn.BatchNorm1d`` does
    (Keras' ``momentum`` is the other weight, 1 - this one).  ``batch_var`` is the biased
    variance the step normalized with; the running variance stores the unbiased one,
    ``batch_var * count / (count - 1)``, the estimate Ioffe & Szegedy use at inference
    (with count = 1 that is 0/0 = NaN; ``nn.BatchNorm1d`` refuses such a batch).
    """
    unbiased = batch_var * count / (count - 1) if count > 1 else batch_var * float("nan")
    new_mean = (1.0 - momentum) * running_mean + momentum * batch_mean  # [d]
    new_var = (1.0 - momentum) * running_var + momentum * unbiased  # [d]
    return new_mean, new_var


def instance_norm(
    x: torch.Tensor,
    eps: float = 1e-5,
    weight: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    offset: float = 0.0,
    compute_dtype: torch.dtype = torch.float32,
) -> NormResult:
    """InstanceNorm: one (mean, var) per (sequence, channel), pooled over the T positions."""
    xc = _as_btd(x.to(compute_dtype))  # [B, T, d]
    t = xc.shape[1]
    mean = xc.sum(dim=1, keepdim=True) / t  # [B, 1, d]
    centered = xc - mean  # [B, T, d]
    var = (centered * centered).sum(dim=1, keepdim=True) / t  # [B, 1, d]
    rstd = torch.rsqrt(var + eps)  # [B, 1, d]
    y = affine(centered * rstd, weight, bias, offset).reshape(x.shape)
    rms = torch.sqrt((xc * xc).sum(dim=1) / t)  # [B, d]
    stat_shape = (*x.shape[:-2], x.shape[-1])  # [*batch, d]
    return _result(y, mean[:, 0], var[:, 0], rms, rstd[:, 0], x.dtype, stat_shape)


def group_norm(
    x: torch.Tensor,
    groups: int,
    eps: float = 1e-5,
    weight: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    offset: float = 0.0,
    compute_dtype: torch.dtype = torch.float32,
) -> NormResult:
    """GroupNorm: one (mean, var) per (sequence, group of d/G channels), over all T."""
    d = x.shape[-1]
    if d % groups:
        raise ValueError(f"groups={groups} must divide d={d}")
    xc = _as_btd(x.to(compute_dtype))  # [B, T, d]
    b, t = xc.shape[:2]
    grouped = xc.reshape(b, t, groups, d // groups).transpose(1, 2)  # [B, G, T, d/G]
    cells = grouped.reshape(b, groups, -1)  # [B, G, T*d/G]
    mean = _mean_last(cells)  # [B, G, 1]
    centered = cells - mean  # [B, G, T*d/G]
    var = _mean_last(centered * centered)  # [B, G, 1]
    rstd = torch.rsqrt(var + eps)  # [B, G, 1]
    x_hat = (centered * rstd).reshape(b, groups, t, d // groups).transpose(1, 2)
    y = affine(x_hat.reshape(b, t, d), weight, bias, offset).reshape(x.shape)
    rms = torch.sqrt(_mean_last(cells * cells))  # [B, G, 1]
    return _result(y, mean, var, rms, rstd, x.dtype, (*x.shape[:-2], groups))  # [*batch, G]


# DyT's alpha_0: the paper's default for non-LLM models (Zhu et al. 2025, section 7); for its
# LLaMA runs it tunes alpha_0 per model width instead (smaller for wider models).
DYT_ALPHA0 = 0.5
DYT_SOURCE = (
    "Zhu, Chen, He, LeCun, Liu 2025, “Transformers without Normalization”, arXiv:2503.10622"
)


def dyt(
    x: torch.Tensor,
    alpha: float = DYT_ALPHA0,
    weight: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    offset: float = 0.0,
    compute_dtype: torch.dtype = torch.float32,
) -> NormResult:
    """Dynamic Tanh: y = weight * tanh(alpha * x) + bias; no statistics at all.

    The returned mean/var/rms describe each input row (for display); rstd is NaN.
    """
    xc = x.to(compute_dtype)  # [..., d]
    y = affine(torch.tanh(alpha * xc), weight, bias, offset)
    row = layer_norm(x, 0.0, compute_dtype=compute_dtype)  # its mean, var and rms only
    rstd = torch.full_like(row.var, float("nan"))
    return _result(y, row.mean, row.var, row.rms, rstd, x.dtype)


# kind -> its formula; the one table ``engine.normalize`` and the pages look formulas up in.
FORMULAS = {
    "layernorm": layer_norm,
    "rmsnorm": rms_norm,
    "batchnorm": batch_norm,
    "instancenorm": instance_norm,
    "groupnorm": group_norm,
    "dyt": dyt,
}
