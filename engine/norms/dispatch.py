"""``normalize`` and ``fused_add_norm``: the entry points for every normalization in NormScope.

They validate their inputs, pick a backend (``engine.backend``), and return the output with
the statistics it used (``engine.norms.reference.NormResult``).  The formulas themselves live
in ``engine/norms/reference.py``; this module only dispatches:

- "triton": the kernels in ``engine/kernels/`` (CUDA, or the interpreter on CPU).  This module
  is their only importer, and imports them lazily, because importing Triton is slow;
- "torch":  for float32 LayerNorm/RMSNorm computed in float32, PyTorch's fused native ops
  (``aten.native_layer_norm``, ``aten._fused_rms_norm``), which return the output and the
  per-row statistics from one pass; everything else runs the reference formulas.
"""

from __future__ import annotations

from dataclasses import replace

import torch

from engine.backend import resolve_backend
from engine.config import NormSpec
from engine.norms import reference
from engine.norms.kinds import ROW_KINDS
from engine.norms.reference import NormResult, affine

KERNEL_KINDS = (*ROW_KINDS, "batchnorm")  # batchnorm: statistics by channel_stats
KERNEL_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _check_inputs(x, spec: NormSpec, weight, bias) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"x must be a floating-point tensor, got {x.dtype}")
    if x.dim() == 0 or x.shape[-1] == 0:
        raise ValueError(f"x must have a non-empty last axis (d >= 1), got shape {tuple(x.shape)}")
    d = x.shape[-1]
    for name, param in (("weight", weight), ("bias", bias)):
        if param is not None and tuple(param.shape) != (d,):
            raise ValueError(f"{name} must have shape ({d},), got {tuple(param.shape)}")
    if spec.kind == "groupnorm" and d % spec.groups:
        raise ValueError(f"groups={spec.groups} must divide d={d}")


def normalize(
    x: torch.Tensor,
    spec: NormSpec,
    weight: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    backend: str = "auto",
) -> NormResult:
    """Normalize ``x`` ([..., T, d]) as ``spec`` says; see ``NormResult`` for the fields.

    ``backend`` is "auto" (Triton for CUDA tensors, else torch), "torch" or "triton";
    ``result.backend`` names the path that actually ran.
    """
    _check_inputs(x, spec, weight, bias)
    if _on_triton(x, spec, x.dtype, backend):
        if spec.kind == "batchnorm":
            return _triton_batch_norm(x, spec, weight, bias)
        return _triton_rows(x, None, spec, weight, bias)[0]
    if native_op(spec, x.dtype) is not None:
        return _native_row_norm(x, spec, weight, bias)
    compute_dtype = spec.torch_compute_dtype(x.dtype)
    return replace(_reference_norm(x, spec, weight, bias, compute_dtype), backend="torch")


def native_op(spec: NormSpec, dtype: torch.dtype) -> str | None:
    """The PyTorch fused op the torch backend runs for ``spec`` on ``dtype`` inputs, or None
    where it runs the reference formulas."""
    if spec.kind not in ROW_KINDS or dtype != torch.float32:
        return None
    if spec.torch_compute_dtype(dtype) != torch.float32:
        return None
    return "aten.native_layer_norm" if spec.kind == "layernorm" else "aten._fused_rms_norm"


def _reference_norm(x, spec: NormSpec, weight, bias, compute_dtype) -> NormResult:
    constants = {
        "groupnorm": {"groups": spec.groups, "eps": spec.eps},
        "dyt": {"alpha": spec.alpha},
    }
    return reference.FORMULAS[spec.kind](
        x,
        **constants.get(spec.kind, {"eps": spec.eps}),
        weight=weight,
        bias=bias,
        offset=spec.offset,
        compute_dtype=compute_dtype,
    )


def variance_from_rstd(rstd: torch.Tensor, eps: float) -> torch.Tensor:
    """Recover var (or the mean square) from rstd = 1/sqrt(var + eps), in float64."""
    return (rstd.double().pow(-2) - eps).clamp_min(0.0)


def _native_row_norm(x, spec: NormSpec, weight, bias) -> NormResult:
    """float32 LayerNorm/RMSNorm through PyTorch's fused CPU/GPU ops.

    The native ops return rstd but not var; var = rstd^-2 - eps is exact to ~1e-7 relative
    while var >= 10 eps.  Rows below that (constant rows, tiny variances) are recomputed
    with the reference formula so no digit is lost, where the reference agrees that the
    variance is that small: for a constant row of 1e17s, d = 7, the reference's rounded mean
    leaves a variance of 7e19, while the op's rstd says 0.
    """
    d = x.shape[-1]
    scale = weight if weight is None or spec.offset == 0.0 else spec.offset + weight.double()
    scale = None if scale is None else scale.to(x.dtype)
    bias = None if bias is None else bias.to(x.dtype)
    if spec.kind == "layernorm":
        y, mean, rstd = torch.native_layer_norm(x, [d], scale, bias, spec.eps)
    else:
        y, rstd = torch.ops.aten._fused_rms_norm(x, [d], scale, spec.eps)
        if bias is not None:
            y = y + bias
        mean = torch.zeros_like(rstd)
    mean, rstd = mean[..., 0].float(), rstd[..., 0].float()  # [...]
    var = variance_from_rstd(rstd, spec.eps)
    imprecise = var < 10 * spec.eps
    if imprecise.any():
        rows = x[imprecise]  # [k, d]
        exact = (reference.layer_norm if spec.kind == "layernorm" else reference.rms_norm)(
            rows, spec.eps
        )
        exact_var = exact.var.double()
        var[imprecise] = torch.where(exact_var < 10 * spec.eps, exact_var, var[imprecise])
    rms = reference.rms_from_moments(var, mean.double())
    return NormResult(y=y, mean=mean, var=var.float(), rms=rms.float(), rstd=rstd, backend="torch")


# --- the Triton path -------------------------------------------------------------------------


def supports(spec: NormSpec, dtype: torch.dtype) -> bool:
    """Whether the kernels compute ``spec`` for inputs of ``dtype`` exactly as the reference
    (``_check_supported`` says why not)."""
    try:
        _check_supported(spec, dtype)
    except NotImplementedError:
        return False
    return True


def _on_triton(x: torch.Tensor, spec: NormSpec, dtype: torch.dtype, backend: str) -> bool:
    """Whether the kernels compute ``spec`` on ``x``: "auto" leaves what they do not cover
    (other kinds, reduced-precision statistics) to the torch path; a forced "triton" raises
    NotImplementedError there."""
    if resolve_backend(x, backend) != "triton":
        return False
    if backend == "triton":
        _check_supported(spec, dtype)
        return True
    return supports(spec, dtype)


def _check_supported(spec: NormSpec, dtype: torch.dtype) -> None:
    """The kernels always take statistics in float32, so a spec whose ``compute_dtype``
    resolves to anything else (e.g. float16, to show overflow) is left to the torch path."""
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


def _triton_rows(x, residual, spec: NormSpec, weight, bias) -> tuple[NormResult, torch.Tensor]:
    """LayerNorm/RMSNorm of ``x`` (+ ``residual``, fused) in the row kernels: (result, h)."""
    from engine.kernels.row_norm_function import row_norm

    is_rms = spec.kind == "rmsnorm"
    y, h, mean, var, rstd = row_norm(x, residual, weight, bias, spec.eps, spec.offset, is_rms)
    rms = torch.sqrt(var) if is_rms else reference.rms_from_moments(var, mean)
    return NormResult(y=y, mean=mean, var=var, rms=rms, rstd=rstd, backend="triton"), h


def _triton_batch_norm(x, spec: NormSpec, weight, bias, mask=None) -> NormResult:
    """BatchNorm (training mode): statistics from the channel-stats kernel, then the
    elementwise normalize in torch (differentiable through ``ChannelStatsFunction``).
    ``mask`` (bool ``x.shape[:-1]``) leaves the False positions out of the statistics."""
    from engine.kernels.channel_stats import channel_stats_autograd

    count, mean, m2 = channel_stats_autograd(x, mask)  # [d] each, float32
    var = m2 / count  # [d], biased
    rstd = torch.rsqrt(var + spec.eps)  # [d]
    y = affine((x.float() - mean) * rstd, weight, bias, spec.offset)  # [..., d]
    rms = reference.rms_from_moments(var, mean).detach()
    return NormResult(
        y=y.to(x.dtype),
        mean=mean.detach(),
        var=var.detach(),
        rms=rms,
        rstd=rstd.detach(),
        backend="triton",
    )


def masked_batch_norm(
    x: torch.Tensor,
    spec: NormSpec,
    mask: torch.Tensor | None = None,
    weight: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    backend: str = "auto",
) -> NormResult:
    """BatchNorm (training mode) whose per-channel statistics count only the real tokens.

    ``mask`` is bool ``x.shape[:-1]`` (``[B, T]`` for ``[B, T, d]``), True for a real token;
    padding positions are left out of mean, var and rms, and are still normalized with
    them.  ``mask=None`` is ``normalize(x, spec)``.  On the Triton backend the statistics
    come from the ``channel_stats`` kernel, which takes the mask; on torch from
    ``reference.batch_norm(..., mask=mask)``.
    """
    if spec.kind != "batchnorm":
        raise ValueError(f"masked_batch_norm needs kind='batchnorm', got {spec.kind!r}")
    _check_inputs(x, spec, weight, bias)
    if mask is not None:
        if mask.dtype != torch.bool or tuple(mask.shape) != tuple(x.shape[:-1]):
            raise ValueError(
                f"mask must be bool of shape {tuple(x.shape[:-1])}, got {mask.dtype} "
                f"{tuple(mask.shape)}"
            )
        mask = mask.to(x.device)
    if _on_triton(x, spec, x.dtype, backend):
        return _triton_batch_norm(x, spec, weight, bias, mask)
    compute_dtype = spec.torch_compute_dtype(x.dtype)
    common = dict(weight=weight, bias=bias, offset=spec.offset, compute_dtype=compute_dtype)
    result = reference.batch_norm(x, spec.eps, mask=mask, **common)
    return replace(result, backend="torch")


def triton_row_norm(x, weight, bias, eps: float, rms: bool) -> torch.Tensor:
    """y of the Triton row-norm kernels alone (no statistics kept): what timing measures."""
    from engine.kernels.row_norm_function import row_norm

    return row_norm(x, None, weight, bias, eps, 0.0, rms)[0]


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
    if residual.shape != x.shape:
        raise ValueError(f"residual shape {tuple(residual.shape)} != x shape {tuple(x.shape)}")
    dtype = torch.promote_types(x.dtype, residual.dtype)
    if spec.kind in ROW_KINDS and _on_triton(x, spec, dtype, backend):
        return _triton_rows(x, residual, spec, weight, bias)
    h = x + residual  # [..., d]
    return normalize(h, spec, weight, bias, backend=backend), h
