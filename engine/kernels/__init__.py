"""Triton kernels for NormScope: one op per file, each kernel -> launcher -> torch op.

- ``row_norm_forward.py``  LayerNorm / RMSNorm forward (+ fused residual add), row stats
- ``row_norm_backward.py`` dx, d-residual, dW, dB (deterministic partials, no atomics)
- ``column_sum.py``        the fixed-order sum of those partials (dW, dB)
- ``row_norm_function.py`` the autograd.Function tying the two together
- ``channel_stats.py``     per-channel count / mean / M2 with a padding mask (BatchNorm)
- ``_launch.py``           launch counter, interpreter check, block-size heuristics

Every op is a ``torch.library`` custom op (``torch.ops.normscope.*``) with a fake
implementation, so it composes with ``torch.compile``.  The kernels run on CUDA tensors, or
on CPU tensors when ``TRITON_INTERPRET=1`` (the interpreter, used by ``tests/kernels``).

Public functions: ``triton_normalize`` (what ``engine.normalize`` calls for the "triton"
backend), ``fused_add_norm`` (the add-and-norm of every Pre-Norm block), ``supports``,
``launch_counts``.
"""

from __future__ import annotations

import torch

from engine.backend import resolve_backend
from engine.config import NormSpec
from engine.kernels import row_norm_backward, row_norm_forward  # noqa: F401  (register ops)
from engine.kernels._launch import launch_counts
from engine.kernels.channel_stats import channel_stats_autograd
from engine.kernels.row_norm_function import RowNormFunction, row_norm
from engine.reference import NormResult, affine

__all__ = [
    "KERNEL_KINDS",
    "RowNormFunction",
    "channel_stats_autograd",
    "fused_add_norm",
    "launch_counts",
    "row_norm",
    "supports",
    "triton_normalize",
]

ROW_KINDS = ("layernorm", "rmsnorm")
KERNEL_KINDS = (*ROW_KINDS, "batchnorm")  # batchnorm: statistics by channel_stats
KERNEL_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def supports(spec: NormSpec, dtype: torch.dtype) -> bool:
    """Whether the kernels compute ``spec`` for inputs of ``dtype`` exactly as the reference.

    The kernels always take statistics in float32, so a spec whose ``compute_dtype``
    resolves to anything else (e.g. float16, to show overflow) is left to the torch path.
    """
    return (
        spec.kind in KERNEL_KINDS
        and dtype in KERNEL_DTYPES
        and spec.torch_compute_dtype(dtype) == torch.float32
    )


def _check_supported(spec: NormSpec, dtype: torch.dtype) -> None:
    if spec.kind not in KERNEL_KINDS:
        raise NotImplementedError(
            f"the Triton kernels do not implement kind={spec.kind!r} (they cover "
            f"{', '.join(KERNEL_KINDS)}); use backend='torch' or 'auto'"
        )
    if dtype not in KERNEL_DTYPES:
        raise NotImplementedError(f"the Triton kernels do not take {dtype} inputs")
    compute = spec.torch_compute_dtype(dtype)
    if compute != torch.float32:
        raise NotImplementedError(
            f"the Triton kernels take statistics in float32, not compute_dtype={compute}; "
            "use backend='torch' to see reduced-precision statistics"
        )


def _row_result(y, mean, var, rstd, is_rms: bool) -> NormResult:
    rms = torch.sqrt(var) if is_rms else torch.sqrt(var + mean * mean)  # rms^2 = var + mu^2
    return NormResult(y=y, mean=mean, var=var, rms=rms, rstd=rstd, backend="triton")


def _batch_norm(x, spec: NormSpec, weight, bias) -> NormResult:
    """BatchNorm (training mode): statistics from the channel-stats kernel, then the
    elementwise normalize in torch (differentiable through ``ChannelStatsFunction``)."""
    count, mean, m2 = channel_stats_autograd(x)  # [d] each, float32
    var = m2 / count  # [d], biased
    rstd = torch.rsqrt(var + spec.eps)  # [d]
    y = affine((x.float() - mean) * rstd, weight, bias, spec.offset)  # [..., d]
    rms = torch.sqrt(var + mean * mean).detach()
    return NormResult(
        y=y.to(x.dtype),
        mean=mean.detach(),
        var=var.detach(),
        rms=rms,
        rstd=rstd.detach(),
        backend="triton",
    )


def triton_normalize(
    x: torch.Tensor,
    spec: NormSpec,
    weight: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
) -> NormResult:
    """``engine.normalize`` on the Triton kernels; ``result.backend == "triton"``.

    LayerNorm and RMSNorm run entirely in the row kernels; BatchNorm takes its per-channel
    statistics from the channel-stats kernel.  Other kinds, and ``compute_dtype`` other than
    float32, raise ``NotImplementedError``.
    """
    _check_supported(spec, x.dtype)
    if spec.kind == "batchnorm":
        return _batch_norm(x, spec, weight, bias)
    is_rms = spec.kind == "rmsnorm"
    y, _h, mean, var, rstd = row_norm(x, None, weight, bias, spec.eps, spec.offset, is_rms)
    return _row_result(y, mean, var, rstd, is_rms)


def fused_add_norm(
    x: torch.Tensor,
    residual: torch.Tensor,
    spec: NormSpec,
    weight: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    backend: str = "auto",
) -> tuple[NormResult, torch.Tensor]:
    """``h = x + residual`` and ``normalize(h)`` in one pass: returns ``(result, h)``.

    On the Triton backend (CUDA tensors, or ``backend="triton"`` under the interpreter) a
    LayerNorm/RMSNorm spec runs the fused kernel: one read of x and residual, one write of
    h and y.  Otherwise it is the unfused pair ``h = x + residual; normalize(h)`` — the
    same numbers, and ``result.backend`` says which path ran.  Differentiable in x,
    residual, weight and bias; h carries its own gradient (it is the next residual).
    """
    from engine.norms import normalize  # engine.norms imports this package lazily

    if residual.shape != x.shape:
        raise ValueError(f"residual shape {tuple(residual.shape)} != x shape {tuple(x.shape)}")
    dtype = torch.promote_types(x.dtype, residual.dtype)
    chosen = resolve_backend(x, backend)
    fused = spec.kind in ROW_KINDS and (backend == "triton" or supports(spec, dtype))
    if chosen == "triton" and fused:
        _check_supported(spec, dtype)
        is_rms = spec.kind == "rmsnorm"
        y, h, mean, var, rstd = row_norm(x, residual, weight, bias, spec.eps, spec.offset, is_rms)
        return _row_result(y, mean, var, rstd, is_rms), h
    h = x + residual  # [..., d]
    return normalize(h, spec, weight, bias, backend=backend), h
