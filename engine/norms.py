"""``normalize``: the one public entry point for every normalization in NormScope.

It validates its inputs, picks a backend (``engine.backend``), and returns the output with
the statistics it used (``engine.reference.NormResult``).  The formulas themselves live in
``engine/reference.py``; this module only dispatches:

- "triton": the kernels in ``engine/kernels/`` (CUDA, or the interpreter on CPU);
- "torch":  for float32 LayerNorm/RMSNorm computed in float32, PyTorch's fused native ops
  (``aten.native_layer_norm``, ``aten._fused_rms_norm``), which return the output and the
  per-row statistics from one pass; everything else runs the reference formulas.
"""

from __future__ import annotations

from dataclasses import replace

import torch

from engine import reference
from engine.backend import resolve_backend
from engine.config import NormSpec
from engine.reference import NormResult

_ROW_KINDS = ("layernorm", "rmsnorm")


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
    chosen = resolve_backend(x, backend)
    if chosen == "triton":
        from engine.kernels import supports, triton_normalize

        # "auto" leaves what the kernels do not cover (other kinds, reduced-precision
        # statistics) to the torch path; a forced "triton" raises NotImplementedError.
        if backend == "triton" or supports(spec, x.dtype):
            return triton_normalize(x, spec, weight, bias)
    compute_dtype = spec.torch_compute_dtype(x.dtype)
    if spec.kind in _ROW_KINDS and x.dtype == torch.float32 and compute_dtype == torch.float32:
        return _native_row_norm(x, spec, weight, bias)
    return replace(_reference_norm(x, spec, weight, bias, compute_dtype), backend="torch")


def _reference_norm(x, spec: NormSpec, weight, bias, compute_dtype) -> NormResult:
    common = dict(weight=weight, bias=bias, offset=spec.offset, compute_dtype=compute_dtype)
    if spec.kind == "layernorm":
        return reference.layer_norm(x, spec.eps, **common)
    if spec.kind == "rmsnorm":
        return reference.rms_norm(x, spec.eps, **common)
    if spec.kind == "batchnorm":
        return reference.batch_norm(x, spec.eps, **common)
    if spec.kind == "instancenorm":
        return reference.instance_norm(x, spec.eps, **common)
    if spec.kind == "groupnorm":
        return reference.group_norm(x, spec.groups, spec.eps, **common)
    return reference.dyt(x, spec.alpha, **common)


def _variance_from_rstd(rstd: torch.Tensor, eps: float) -> torch.Tensor:
    """Recover var (or the mean square) from rstd = 1/sqrt(var + eps), in float64."""
    return (rstd.double().pow(-2) - eps).clamp_min(0.0)


def _native_row_norm(x, spec: NormSpec, weight, bias) -> NormResult:
    """float32 LayerNorm/RMSNorm through PyTorch's fused CPU/GPU ops.

    The native ops return rstd but not var; var = rstd^-2 - eps is exact to ~1e-7 relative
    while var >= 10 eps.  Rows below that (constant rows, tiny variances) are recomputed
    with the reference formula so no digit is lost.
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
    var = _variance_from_rstd(rstd, spec.eps)
    imprecise = var < 10 * spec.eps
    if imprecise.any():
        rows = x[imprecise]  # [k, d]
        exact = (reference.layer_norm if spec.kind == "layernorm" else reference.rms_norm)(
            rows, spec.eps
        )
        var[imprecise] = exact.var.double()
    rms = torch.sqrt(var + mean.double() ** 2)
    return NormResult(y=y, mean=mean, var=var.float(), rms=rms.float(), rstd=rstd, backend="torch")
