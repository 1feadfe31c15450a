"""Row-norm forward: LayerNorm / RMSNorm over the last axis, with an optional fused residual add.

Contract.  ``x`` is ``[..., N]`` viewed as ``M`` rows of ``N`` values (any leading shape,
any strides).  For each row, in float32 whatever the input dtype::

    h     = x + residual                      (only with a residual; written out, h's dtype)
    mu    = (1/N) sum_i h_i                   (LayerNorm; 0 for RMSNorm)
    var   = (1/N) sum_i (h_i - mu)^2          (LayerNorm: biased, two-pass)
          = (1/N) sum_i h_i^2                 (RMSNorm: the mean square)
    rstd  = 1 / sqrt(var + eps)               (tl.rsqrt)
    y_i   = (h_i - mu) * rstd * (offset + w_i) + b_i

``y`` has h's shape and dtype; ``mean``, ``var`` and ``rstd`` are ``[...]`` float32 buffers
kept for the backward pass (``row_norm_backward.py``), which recomputes x_hat from them.
The residual sum is rounded to h's dtype *before* the statistics are taken, so the result is
exactly ``normalize(x + residual)``: the fused pair computes what the unfused pair does and
saves the norm's read of h back from memory, one of five passes over ``[B, T, d]`` (norms are
memory-bound: ~7 FLOPs per value; ``engine/perf/roofline.py``).

Layouts.  Rows of up to ``MAX_FUSED_N`` (64 K) values are held in registers: one read of x,
the two-pass statistics in registers, one write of y.  Narrow rows are packed several to a
program (a ``[BLOCK_M, BLOCK_N]`` tile) so a program still moves a few thousand values.
Wider rows loop over ``BLOCK_N`` chunks twice: a statistics pass with *shifted* sums (the
shift K is the first chunk's mean, so sum (h-K)^2 / N - (sum (h-K) / N)^2 suffers no
catastrophic cancellation when |mu| >> sigma), then a normalize pass, which reads the row
again (h, written by the first pass, where there is a residual): 3 passes over the row, 5
with a residual, where a row held in registers takes 2 and 4.

References:
- Ba, Kiros, Hinton 2016, "Layer Normalization", arXiv:1607.06450
- Zhang, Sennrich 2019, "Root Mean Square Layer Normalization", arXiv:1910.07467
- Triton tutorial 05 "Layer Normalization" (kernel structure, written anew here)
- Liger-Kernel ``ops/layer_norm.py`` / ``ops/rms_norm.py`` (file layout, commented arguments)
- Chan, Golub, LeVeque 1983, "Algorithms for computing the sample variance" (shifted sums)
"""

import torch
import triton
import triton.language as tl

from engine.config.kernels import MAX_FUSED_N
from engine.kernels._launch import (
    as_rows,
    block_size,
    check_launchable,
    record_launch,
    rows_per_program,
    warps_for,
)

CHUNK_N = 4096  # chunk width of the looped path


@triton.jit
def _row_norm_forward_kernel(
    Y_ptr,  # pointer to output y, shape (n_rows, n_cols), contiguous
    H_ptr,  # pointer to output h = x + residual, shape (n_rows, n_cols), contiguous
    X_ptr,  # pointer to input x, shape (n_rows, n_cols)
    X_row_stride,  # elements between consecutive rows of x
    X_col_stride,  # elements between consecutive columns of x
    R_ptr,  # pointer to residual, shape (n_rows, n_cols); unused without HAS_RESIDUAL
    R_row_stride,  # elements between consecutive rows of residual
    R_col_stride,  # elements between consecutive columns of residual
    W_ptr,  # pointer to weight, shape (n_cols,); unused without HAS_WEIGHT
    B_ptr,  # pointer to bias, shape (n_cols,); unused without HAS_BIAS
    Mean_ptr,  # pointer to output row means, shape (n_rows,), float32 (LayerNorm only)
    Var_ptr,  # pointer to output row variances (mean squares for RMSNorm), float32
    Rstd_ptr,  # pointer to output 1/sqrt(var + eps), shape (n_rows,), float32
    n_rows,  # number of rows M
    n_cols,  # row width N
    eps,  # added to var before the square root
    offset,  # the scale is offset + weight (Gemma: 1)
    IS_RMS: tl.constexpr,  # RMSNorm (no centring) instead of LayerNorm
    HAS_RESIDUAL: tl.constexpr,  # add the residual first and write h out
    HAS_WEIGHT: tl.constexpr,  # multiply by (offset + weight)
    HAS_BIAS: tl.constexpr,  # add bias
    SINGLE_BLOCK: tl.constexpr,  # BLOCK_N >= n_cols: the whole row is in registers
    BLOCK_M: tl.constexpr,  # rows per program
    BLOCK_N: tl.constexpr,  # columns per tile (the whole row, or one chunk)
):
    # Map the program id to the BLOCK_M rows it normalizes.
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)  # [BLOCK_M]
    row_mask = rows < n_rows
    rows64 = rows.to(tl.int64)  # offsets of big tensors overflow int32
    cols = tl.arange(0, BLOCK_N)  # [BLOCK_N]
    x_rows = X_ptr + rows64[:, None] * X_row_stride  # [BLOCK_M, 1]
    r_rows = R_ptr + rows64[:, None] * R_row_stride
    h_rows = H_ptr + rows64[:, None] * n_cols
    y_rows = Y_ptr + rows64[:, None] * n_cols

    if SINGLE_BLOCK:
        # The whole row in registers: one read, exact two-pass statistics, one write.
        col_mask = cols < n_cols
        mask = row_mask[:, None] & col_mask[None, :]  # [BLOCK_M, BLOCK_N]
        h = tl.load(x_rows + cols[None, :] * X_col_stride, mask=mask, other=0.0).to(tl.float32)
        if HAS_RESIDUAL:
            r = tl.load(r_rows + cols[None, :] * R_col_stride, mask=mask, other=0.0)
            h_out = (h + r.to(tl.float32)).to(H_ptr.dtype.element_ty)  # rounded like x + r
            tl.store(h_rows + cols[None, :], h_out, mask=mask)
            h = h_out.to(tl.float32)
        if IS_RMS:
            var = tl.sum(h * h, axis=1) / n_cols  # [BLOCK_M] mean square
            centered = h
        else:
            mean = tl.sum(h, axis=1) / n_cols  # [BLOCK_M]
            centered = tl.where(mask, h - mean[:, None], 0.0)
            var = tl.sum(centered * centered, axis=1) / n_cols
        rstd = tl.rsqrt(var + eps)  # [BLOCK_M]
        y = centered * rstd[:, None]  # x_hat, [BLOCK_M, BLOCK_N]
        if HAS_WEIGHT:
            w = tl.load(W_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
            y = y * (offset + w)[None, :]
        if HAS_BIAS:
            b = tl.load(B_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
            y = y + b[None, :]
        tl.store(y_rows + cols[None, :], y.to(Y_ptr.dtype.element_ty), mask=mask)
    else:
        # Wide rows: a statistics pass over BLOCK_N chunks, then a normalize pass.
        # Shift K = mean of the first chunk keeps the one-pass variance well conditioned.
        first_mask = row_mask[:, None] & (cols[None, :] < n_cols)
        first = tl.load(x_rows + cols[None, :] * X_col_stride, mask=first_mask, other=0.0)
        first = first.to(tl.float32)
        if HAS_RESIDUAL:
            r = tl.load(r_rows + cols[None, :] * R_col_stride, mask=first_mask, other=0.0)
            first = (first + r.to(tl.float32)).to(H_ptr.dtype.element_ty).to(tl.float32)
        if IS_RMS:
            shift = tl.zeros([BLOCK_M], dtype=tl.float32)
        else:
            shift = tl.sum(first, axis=1) / tl.minimum(n_cols, BLOCK_N)  # [BLOCK_M]
        acc1 = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)  # per-lane sum of h - K
        acc2 = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)  # per-lane sum of (h - K)^2
        for start in range(0, n_cols, BLOCK_N):
            c = start + cols
            mask = row_mask[:, None] & (c[None, :] < n_cols)
            h = tl.load(x_rows + c[None, :] * X_col_stride, mask=mask, other=0.0)
            h = h.to(tl.float32)
            if HAS_RESIDUAL:
                r = tl.load(r_rows + c[None, :] * R_col_stride, mask=mask, other=0.0)
                h_out = (h + r.to(tl.float32)).to(H_ptr.dtype.element_ty)
                tl.store(h_rows + c[None, :], h_out, mask=mask)
                h = h_out.to(tl.float32)
            shifted = tl.where(mask, h - shift[:, None], 0.0)
            acc1 += shifted
            acc2 += shifted * shifted
        s1 = tl.sum(acc1, axis=1) / n_cols  # [BLOCK_M] mean of h - K
        if IS_RMS:
            var = tl.sum(acc2, axis=1) / n_cols
        else:
            mean = shift + s1
            var = tl.maximum(tl.sum(acc2, axis=1) / n_cols - s1 * s1, 0.0)
        rstd = tl.rsqrt(var + eps)
        # h was written by this program; make those writes visible to all its threads.
        tl.debug_barrier()
        for start in range(0, n_cols, BLOCK_N):
            c = start + cols
            c_mask = c < n_cols
            mask = row_mask[:, None] & c_mask[None, :]
            if HAS_RESIDUAL:
                h = tl.load(h_rows + c[None, :], mask=mask, other=0.0).to(tl.float32)
            else:
                h = tl.load(x_rows + c[None, :] * X_col_stride, mask=mask, other=0.0)
                h = h.to(tl.float32)
            if IS_RMS:
                y = h * rstd[:, None]
            else:
                y = (h - mean[:, None]) * rstd[:, None]
            if HAS_WEIGHT:
                w = tl.load(W_ptr + c, mask=c_mask, other=0.0).to(tl.float32)
                y = y * (offset + w)[None, :]
            if HAS_BIAS:
                b = tl.load(B_ptr + c, mask=c_mask, other=0.0).to(tl.float32)
                y = y + b[None, :]
            tl.store(y_rows + c[None, :], y.to(Y_ptr.dtype.element_ty), mask=mask)

    if not IS_RMS:
        tl.store(Mean_ptr + rows, mean, mask=row_mask)
    tl.store(Var_ptr + rows, var, mask=row_mask)
    tl.store(Rstd_ptr + rows, rstd, mask=row_mask)


def row_norm_forward(
    x: torch.Tensor,
    residual: torch.Tensor | None,
    weight: torch.Tensor | None,
    bias: torch.Tensor | None,
    eps: float,
    offset: float,
    is_rms: bool,
    max_fused_n: int = MAX_FUSED_N,
    chunk_n: int = CHUNK_N,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Launch the forward kernel.

    Args:
        x: input ``[..., N]``, any strides, float16/bfloat16/float32/float64.
        residual: optional ``[..., N]`` added to x first (same shape; dtypes promote).
        weight, bias: optional ``[N]``; the scale is ``offset + weight``.
        eps, offset: see the module docstring.  is_rms: RMSNorm instead of LayerNorm.
        max_fused_n, chunk_n: widest row kept in registers and the looped path's chunk
            (tests lower them to exercise the looped path at small widths).

    Returns:
        ``(y, h, mean, var, rstd)``: y and h are contiguous ``[..., N]`` in h's dtype
        (h is an empty tensor without a residual); mean, var, rstd are ``[...]`` float32
        (mean is zeros for RMSNorm).
    """
    check_launchable(x, residual, weight, bias)
    shape = x.shape
    n_cols = shape[-1]
    out_dtype = x.dtype if residual is None else torch.promote_types(x.dtype, residual.dtype)
    x2 = as_rows(x)  # [M, N], strided view when possible
    n_rows = x2.shape[0]
    y = torch.empty(shape, dtype=out_dtype, device=x.device)  # [..., N]
    mean = torch.zeros(shape[:-1], dtype=torch.float32, device=x.device)  # [...]
    var = torch.empty(shape[:-1], dtype=torch.float32, device=x.device)
    rstd = torch.empty(shape[:-1], dtype=torch.float32, device=x.device)
    if residual is not None:
        if residual.shape != shape:
            raise ValueError(f"residual shape {tuple(residual.shape)} != x shape {tuple(shape)}")
        r2 = as_rows(residual)
        h = torch.empty(shape, dtype=out_dtype, device=x.device)
    else:
        r2 = x2  # never read
        h = torch.empty(0, dtype=out_dtype, device=x.device)
    if n_rows == 0:
        return y, h, mean, var, rstd
    w = weight.contiguous() if weight is not None else x2
    b = bias.contiguous() if bias is not None else x2

    full_block = block_size(n_cols)
    single = full_block <= max_fused_n
    block_n = full_block if single else min(chunk_n, full_block)
    block_m = rows_per_program(block_n) if single else 1
    block_m = min(block_m, triton.next_power_of_2(n_rows))
    grid = (triton.cdiv(n_rows, block_m),)
    record_launch(_row_norm_forward_kernel)
    _row_norm_forward_kernel[grid](
        y,
        h if residual is not None else y,
        x2,
        x2.stride(0),
        x2.stride(1),
        r2,
        r2.stride(0),
        r2.stride(1),
        w,
        b,
        mean,
        var,
        rstd,
        n_rows,
        n_cols,
        eps,
        offset,
        IS_RMS=is_rms,
        HAS_RESIDUAL=residual is not None,
        HAS_WEIGHT=weight is not None,
        HAS_BIAS=bias is not None,
        SINGLE_BLOCK=single,
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        num_warps=warps_for(block_m * block_n),
    )
    return y, h, mean, var, rstd


# torch.library registration: an opaque op with a fake (meta) implementation, so that
# torch.compile traces through our kernels without graph breaks.
_FORWARD_SCHEMA = (
    "(Tensor x, Tensor? residual, Tensor? weight, Tensor? bias, float eps, float offset, "
    "bool is_rms) -> (Tensor, Tensor, Tensor, Tensor, Tensor)"
)


@torch.library.custom_op("normscope::row_norm_forward", mutates_args=(), schema=_FORWARD_SCHEMA)
def row_norm_forward_op(x, residual, weight, bias, eps, offset, is_rms):
    """``torch.ops.normscope.row_norm_forward``: see ``row_norm_forward``."""
    return row_norm_forward(x, residual, weight, bias, eps, offset, is_rms)


@row_norm_forward_op.register_fake
def _(x, residual, weight, bias, eps, offset, is_rms):
    out_dtype = x.dtype if residual is None else torch.promote_types(x.dtype, residual.dtype)
    y = x.new_empty(x.shape, dtype=out_dtype)
    h = x.new_empty(x.shape if residual is not None else (0,), dtype=out_dtype)
    stats = [x.new_empty(x.shape[:-1], dtype=torch.float32) for _ in range(3)]
    return (y, h, *stats)
