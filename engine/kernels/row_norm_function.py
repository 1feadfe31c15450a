"""Row norm as a differentiable op: the autograd.Function over the forward and backward ops.

``RowNormFunction`` calls ``torch.ops.normscope.row_norm_forward`` and
``torch.ops.normscope.row_norm_backward`` (registered in ``row_norm_forward.py`` and
``row_norm_backward.py`` with fake implementations) under ``torch.compile``, and their
launchers directly when eager: the same kernels either way.  The statistics it returns are
not differentiable (they are records of the pass, as in ``NormResult``); y and the fused
residual sum h are.

See ``row_norm_forward.py`` and ``row_norm_backward.py`` for the formulas.
"""

import torch

from engine.kernels.row_norm_backward import row_norm_backward
from engine.kernels.row_norm_forward import row_norm_forward


def _forward(*args):
    # Under torch.compile: the registered op, opaque to the tracer (its fake gives shapes).
    # Eagerly: the launcher itself, sparing the custom-op dispatch (~tens of µs a call,
    # as long as a whole small-norm kernel on a GPU).
    if torch.compiler.is_compiling():
        return torch.ops.normscope.row_norm_forward(*args)
    return row_norm_forward(*args)


def _backward(*args):
    if torch.compiler.is_compiling():
        return torch.ops.normscope.row_norm_backward(*args)
    return row_norm_backward(*args)


class RowNormFunction(torch.autograd.Function):
    """LayerNorm / RMSNorm over the last axis with an optional fused residual add."""

    @staticmethod
    def forward(ctx, x, residual, weight, bias, eps, offset, is_rms):
        y, h, mean, var, rstd = _forward(x, residual, weight, bias, eps, offset, is_rms)
        normalized = h if residual is not None else x  # [..., N], what the stats describe
        ctx.save_for_backward(normalized, weight, mean, rstd)
        ctx.offset, ctx.is_rms = offset, is_rms
        ctx.has_residual = residual is not None
        ctx.x_dtype = x.dtype
        ctx.residual_dtype = residual.dtype if residual is not None else None
        ctx.bias_dtype = bias.dtype if bias is not None else None
        ctx.mark_non_differentiable(mean, var, rstd)
        if residual is None:
            ctx.mark_non_differentiable(h)
        ctx.set_materialize_grads(False)
        return y, h, mean, var, rstd

    @staticmethod
    def backward(ctx, dy, dh, _dmean, _dvar, _drstd):
        normalized, weight, mean, rstd = ctx.saved_tensors
        need_x, need_res, need_w, need_b = ctx.needs_input_grad[:4]
        if dy is None:  # only h was used downstream
            dy = torch.zeros_like(normalized)
        if not ctx.has_residual:
            dh = None
        need_dres = need_x and need_res  # both want a copy of dL/dh
        dx, dres, dw, db = _backward(
            dy,
            dh,
            normalized,
            weight,
            mean,
            rstd,
            ctx.offset,
            ctx.is_rms,
            need_w,
            need_b,
            need_dres,
        )
        grad_x = dx.to(ctx.x_dtype) if need_x else None
        grad_res = None
        if need_res:
            grad_res = (dres if need_dres else dx).to(ctx.residual_dtype)
        grad_w = dw.to(weight.dtype) if need_w else None
        grad_b = db.to(ctx.bias_dtype) if need_b else None
        return grad_x, grad_res, grad_w, grad_b, None, None, None


def row_norm(
    x: torch.Tensor,
    residual: torch.Tensor | None = None,
    weight: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    eps: float = 1e-5,
    offset: float = 0.0,
    is_rms: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(y, h, mean, var, rstd)`` from the Triton kernels, differentiable in x, residual,
    weight and bias.  ``h`` is ``x + residual`` (an empty tensor without a residual)."""
    return RowNormFunction.apply(x, residual, weight, bias, float(eps), float(offset), is_rms)
