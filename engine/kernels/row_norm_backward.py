"""Row-norm backward: dx (and d-residual), dW, dB for LayerNorm / RMSNorm.

Derivation.  Per row, with x_hat = (h - mu) * rstd (LayerNorm) or h * rstd (RMSNorm) and
y = x_hat * (offset + w) + b, let g = dy * (offset + w) (g = dy without a weight).  Then::

    dL/dh = rstd * (g - mean(g) - x_hat * mean(g * x_hat))      (LayerNorm)
    dL/dh = rstd * (g - x_hat * mean(g * x_hat))                  (RMSNorm: no centring)
    dW    = sum over rows of dy * x_hat        dB = sum over rows of dy

(the two means are over the row's N values; ``offset`` does not enter dW because
d(offset + w)/dw = 1).  With a fused residual, h = x + residual, so dx = d_residual =
dL/dh + dh, where dh is the gradient flowing into the h output itself.  x_hat is recomputed
from the forward's saved mean and rstd, never stored.

Determinism.  dW and dB are sums over all M rows.  A persistent grid of P programs each owns
rows p, p + P, p + 2P, ... and accumulates its rows into float32 registers, then writes one
partial row of a ``[P, N]`` buffer; a second kernel (``column_sum.py``) sums the P partials
per column in a fixed order.  No atomics or locks: the result does not depend on scheduling,
two runs give bit-identical dW, and the interpreter (which runs programs one after another)
executes the very same code path.

Layouts.  Rows up to ``MAX_FUSED_N`` values are tiled ``[BLOCK_M, BLOCK_N]`` with the whole
row in registers (several narrow rows per tile).  Wider rows first get their two row means
from ``_row_norm_backward_row_sums_kernel`` (a chunked loop per row); then a 2-D grid of
(row programs x column blocks) computes dx and the dW/dB partials block by block.

References:
- Ba, Kiros, Hinton 2016, arXiv:1607.06450; Zhang, Sennrich 2019, arXiv:1910.07467
- Triton tutorial 05 "Layer Normalization" (backward structure, written anew here)
- Liger-Kernel ``ops/layer_norm.py`` (persistent-grid partials, argument comments)
"""

import torch
import triton
import triton.language as tl

from engine.kernels._launch import (
    as_rows,
    block_size,
    check_launchable,
    program_budget,
    record_launch,
    rows_per_program,
    warps_for,
)
from engine.kernels.column_sum import column_sum

MAX_FUSED_N = 16384  # widest row kept whole in registers (x, dy and two accumulators)
CHUNK_N = 4096  # column block of the wide-row path


@triton.jit
def _row_norm_backward_kernel(
    DX_ptr,  # pointer to output dL/dh (+ dh), shape (n_rows, n_cols), contiguous
    DR_ptr,  # pointer to output d-residual (a copy of dx), contiguous; unused without HAS_DR
    DY_ptr,  # pointer to upstream gradient dy, shape (n_rows, n_cols)
    DY_row_stride,  # elements between consecutive rows of dy
    DY_col_stride,  # elements between consecutive columns of dy (0 for an expanded dy)
    DH_ptr,  # pointer to upstream gradient of h, shape (n_rows, n_cols); unused without HAS_DH
    DH_row_stride,  # elements between consecutive rows of dh
    DH_col_stride,  # elements between consecutive columns of dh
    X_ptr,  # pointer to the normalized input (h when fused), shape (n_rows, n_cols)
    X_row_stride,  # elements between consecutive rows of x
    X_col_stride,  # elements between consecutive columns of x
    W_ptr,  # pointer to weight, shape (n_cols,); unused without HAS_WEIGHT
    Mean_ptr,  # pointer to forward row means, shape (n_rows,), float32 (LayerNorm only)
    Rstd_ptr,  # pointer to forward 1/sqrt(var + eps), shape (n_rows,), float32
    C1_ptr,  # pointer to per-row mean(g * x_hat), float32; read only with ROW_SUMS_GIVEN
    C2_ptr,  # pointer to per-row mean(g), float32; read only with ROW_SUMS_GIVEN
    DW_ptr,  # pointer to dW partials, shape (n_row_programs, n_cols), float32
    DB_ptr,  # pointer to dB partials, shape (n_row_programs, n_cols), float32
    n_rows,  # number of rows M
    n_cols,  # row width N
    offset,  # the scale is offset + weight
    IS_RMS: tl.constexpr,  # RMSNorm (no centring) instead of LayerNorm
    HAS_WEIGHT: tl.constexpr,  # the forward multiplied by (offset + weight)
    NEED_DW: tl.constexpr,  # write dW partials
    NEED_DB: tl.constexpr,  # write dB partials
    HAS_DH: tl.constexpr,  # add the gradient of the h output
    HAS_DR: tl.constexpr,  # also write d-residual
    ROW_SUMS_GIVEN: tl.constexpr,  # read c1, c2 (wide rows) instead of reducing the tile
    BLOCK_M: tl.constexpr,  # rows per tile
    BLOCK_N: tl.constexpr,  # columns per tile (the whole row unless ROW_SUMS_GIVEN)
):
    # Program (pid_m, pid_n) owns column block pid_n of rows tiles pid_m, pid_m + P, ...
    pid_m = tl.program_id(0)
    n_row_programs = tl.num_programs(0)
    pid_n = tl.program_id(1)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)  # [BLOCK_N]
    col_mask = cols < n_cols
    if HAS_WEIGHT:
        scale = offset + tl.load(W_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    dw_acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    db_acc = tl.zeros([BLOCK_N], dtype=tl.float32)

    n_tiles = tl.cdiv(n_rows, BLOCK_M)
    for tile in range(pid_m, n_tiles, n_row_programs):
        rows = tile * BLOCK_M + tl.arange(0, BLOCK_M)  # [BLOCK_M]
        row_mask = rows < n_rows
        rows64 = rows.to(tl.int64)
        mask = row_mask[:, None] & col_mask[None, :]  # [BLOCK_M, BLOCK_N]
        x = tl.load(
            X_ptr + rows64[:, None] * X_row_stride + cols[None, :] * X_col_stride,
            mask=mask,
            other=0.0,
        ).to(tl.float32)
        dy = tl.load(
            DY_ptr + rows64[:, None] * DY_row_stride + cols[None, :] * DY_col_stride,
            mask=mask,
            other=0.0,
        ).to(tl.float32)
        rstd = tl.load(Rstd_ptr + rows, mask=row_mask, other=0.0)  # [BLOCK_M]
        # Recompute x_hat from the saved statistics.
        if IS_RMS:
            x_hat = x * rstd[:, None]
        else:
            mean = tl.load(Mean_ptr + rows, mask=row_mask, other=0.0)
            x_hat = tl.where(mask, (x - mean[:, None]) * rstd[:, None], 0.0)
        if HAS_WEIGHT:
            g = dy * scale[None, :]
        else:
            g = dy
        # The two row means of the derivation: over the tile, or precomputed (wide rows).
        if ROW_SUMS_GIVEN:
            c1 = tl.load(C1_ptr + rows, mask=row_mask, other=0.0)
        else:
            c1 = tl.sum(g * x_hat, axis=1) / n_cols  # [BLOCK_M] mean(g * x_hat)
        if IS_RMS:
            dx = (g - x_hat * c1[:, None]) * rstd[:, None]
        else:
            if ROW_SUMS_GIVEN:
                c2 = tl.load(C2_ptr + rows, mask=row_mask, other=0.0)
            else:
                c2 = tl.sum(g, axis=1) / n_cols  # [BLOCK_M] mean(g)
            dx = (g - c2[:, None] - x_hat * c1[:, None]) * rstd[:, None]
        if HAS_DH:
            dh = tl.load(
                DH_ptr + rows64[:, None] * DH_row_stride + cols[None, :] * DH_col_stride,
                mask=mask,
                other=0.0,
            )
            dx += dh.to(tl.float32)
        out_offsets = rows64[:, None] * n_cols + cols[None, :]
        tl.store(DX_ptr + out_offsets, dx.to(DX_ptr.dtype.element_ty), mask=mask)
        if HAS_DR:
            tl.store(DR_ptr + out_offsets, dx.to(DR_ptr.dtype.element_ty), mask=mask)
        if NEED_DW:
            dw_acc += tl.sum(dy * x_hat, axis=0)
        if NEED_DB:
            db_acc += tl.sum(dy, axis=0)

    # One partial row per row-program; summed in a fixed order by column_sum.
    partial_offsets = pid_m.to(tl.int64) * n_cols + cols
    if NEED_DW:
        tl.store(DW_ptr + partial_offsets, dw_acc, mask=col_mask)
    if NEED_DB:
        tl.store(DB_ptr + partial_offsets, db_acc, mask=col_mask)


@triton.jit
def _row_norm_backward_row_sums_kernel(
    C1_ptr,  # pointer to output mean(g * x_hat) per row, shape (n_rows,), float32
    C2_ptr,  # pointer to output mean(g) per row, shape (n_rows,), float32
    DY_ptr,  # pointer to upstream gradient dy, shape (n_rows, n_cols)
    DY_row_stride,  # elements between consecutive rows of dy
    DY_col_stride,  # elements between consecutive columns of dy
    X_ptr,  # pointer to the normalized input, shape (n_rows, n_cols)
    X_row_stride,  # elements between consecutive rows of x
    X_col_stride,  # elements between consecutive columns of x
    W_ptr,  # pointer to weight, shape (n_cols,); unused without HAS_WEIGHT
    Mean_ptr,  # pointer to forward row means, float32 (LayerNorm only)
    Rstd_ptr,  # pointer to forward 1/sqrt(var + eps), float32
    n_cols,  # row width N
    offset,  # the scale is offset + weight
    IS_RMS: tl.constexpr,  # RMSNorm instead of LayerNorm
    HAS_WEIGHT: tl.constexpr,  # g = dy * (offset + weight) instead of dy
    BLOCK_N: tl.constexpr,  # chunk width
):
    # One program per row: loop over the row in chunks, accumulating per lane.
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    rstd = tl.load(Rstd_ptr + row)
    if IS_RMS:
        mean = 0.0
    else:
        mean = tl.load(Mean_ptr + row)
    acc1 = tl.zeros([BLOCK_N], dtype=tl.float32)  # sum of g * x_hat
    acc2 = tl.zeros([BLOCK_N], dtype=tl.float32)  # sum of g
    for start in range(0, n_cols, BLOCK_N):
        c = start + cols
        mask = c < n_cols
        x = tl.load(X_ptr + row * X_row_stride + c * X_col_stride, mask=mask, other=0.0)
        dy = tl.load(DY_ptr + row * DY_row_stride + c * DY_col_stride, mask=mask, other=0.0)
        x_hat = tl.where(mask, (x.to(tl.float32) - mean) * rstd, 0.0)
        g = dy.to(tl.float32)
        if HAS_WEIGHT:
            g = g * (offset + tl.load(W_ptr + c, mask=mask, other=0.0).to(tl.float32))
        acc1 += g * x_hat
        acc2 += g
    tl.store(C1_ptr + row, tl.sum(acc1, axis=0) / n_cols)
    tl.store(C2_ptr + row, tl.sum(acc2, axis=0) / n_cols)


def _nothing(device: torch.device) -> torch.Tensor:
    """A fresh empty output (custom-op outputs must not alias each other)."""
    return torch.empty(0, dtype=torch.float32, device=device)


def row_norm_backward(
    dy: torch.Tensor,
    dh: torch.Tensor | None,
    x: torch.Tensor,
    weight: torch.Tensor | None,
    mean: torch.Tensor,
    rstd: torch.Tensor,
    offset: float,
    is_rms: bool,
    need_dw: bool,
    need_db: bool,
    need_dres: bool,
    max_fused_n: int = MAX_FUSED_N,
    chunk_n: int = CHUNK_N,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Launch the backward kernels.

    Args:
        dy: gradient of y, ``[..., N]``, any strides (an expanded ``ones`` is fine).
        dh: optional gradient of the fused h output, ``[..., N]``, any strides.
        x: the tensor that was normalized (h when the residual was fused), ``[..., N]``.
        weight: the forward's weight ``[N]`` or None.  mean, rstd: the forward's ``[...]``
            float32 statistics.  offset, is_rms: as in the forward.
        need_dw, need_db, need_dres: which optional gradients to produce.
        max_fused_n, chunk_n: widest row kept in registers and the wide path's column block.

    Returns:
        ``(dx, dres, dw, db)``: dx is ``dL/dh`` (+ dh) in x's dtype, contiguous ``[..., N]``;
        dres is a second copy of it (empty unless need_dres); dw and db are float32 ``[N]``
        (empty unless asked for).
    """
    check_launchable(dy, dh, x, weight)
    shape = x.shape
    n_cols = shape[-1]
    device = x.device
    x2, dy2 = as_rows(x), as_rows(dy)  # [M, N]
    dh2 = as_rows(dh) if dh is not None else dy2
    n_rows = x2.shape[0]
    dx = torch.empty(shape, dtype=x.dtype, device=device)  # [..., N]
    dres = torch.empty(shape if need_dres else (0,), dtype=x.dtype, device=device)
    if n_rows == 0:
        dw = (
            torch.zeros(n_cols, dtype=torch.float32, device=device) if need_dw else _nothing(device)
        )
        db = (
            torch.zeros(n_cols, dtype=torch.float32, device=device) if need_db else _nothing(device)
        )
        return dx, dres, dw, db
    mean_c, rstd_c = mean.reshape(-1).contiguous(), rstd.reshape(-1).contiguous()  # [M]
    w = weight.contiguous() if weight is not None else x2

    full_block = block_size(n_cols)
    wide = full_block > max_fused_n
    if wide:
        block_n = min(chunk_n, full_block)
        block_m = 1
        c1 = torch.empty(n_rows, dtype=torch.float32, device=device)  # [M]
        c2 = torch.empty(n_rows, dtype=torch.float32, device=device)
        record_launch(_row_norm_backward_row_sums_kernel)
        _row_norm_backward_row_sums_kernel[(n_rows,)](
            c1,
            c2,
            dy2,
            dy2.stride(0),
            dy2.stride(1),
            x2,
            x2.stride(0),
            x2.stride(1),
            w,
            mean_c,
            rstd_c,
            n_cols,
            offset,
            IS_RMS=is_rms,
            HAS_WEIGHT=weight is not None,
            BLOCK_N=block_n,
            num_warps=warps_for(block_n),
        )
    else:
        block_n = full_block
        block_m = min(rows_per_program(block_n), triton.next_power_of_2(n_rows))
        c1 = c2 = rstd_c  # never read
    n_col_blocks = triton.cdiv(n_cols, block_n)
    n_tiles = triton.cdiv(n_rows, block_m)
    n_row_programs = max(1, min(n_tiles, program_budget(device) // n_col_blocks))
    dw_partial = (
        torch.empty((n_row_programs, n_cols), dtype=torch.float32, device=device) if need_dw else dx
    )
    db_partial = (
        torch.empty((n_row_programs, n_cols), dtype=torch.float32, device=device) if need_db else dx
    )
    record_launch(_row_norm_backward_kernel)
    _row_norm_backward_kernel[(n_row_programs, n_col_blocks)](
        dx,
        dres if need_dres else dx,
        dy2,
        dy2.stride(0),
        dy2.stride(1),
        dh2,
        dh2.stride(0),
        dh2.stride(1),
        x2,
        x2.stride(0),
        x2.stride(1),
        w,
        mean_c,
        rstd_c,
        c1,
        c2,
        dw_partial,
        db_partial,
        n_rows,
        n_cols,
        offset,
        IS_RMS=is_rms,
        HAS_WEIGHT=weight is not None,
        NEED_DW=need_dw,
        NEED_DB=need_db,
        HAS_DH=dh is not None,
        HAS_DR=need_dres,
        ROW_SUMS_GIVEN=wide,
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        num_warps=warps_for(block_m * block_n),
    )
    dw = column_sum(dw_partial) if need_dw else _nothing(device)
    db = column_sum(db_partial) if need_db else _nothing(device)
    return dx, dres, dw, db


_BACKWARD_SCHEMA = (
    "(Tensor dy, Tensor? dh, Tensor x, Tensor? weight, Tensor mean, Tensor rstd, float offset, "
    "bool is_rms, bool need_dw, bool need_db, bool need_dres) -> (Tensor, Tensor, Tensor, Tensor)"
)


@torch.library.custom_op("normscope::row_norm_backward", mutates_args=(), schema=_BACKWARD_SCHEMA)
def row_norm_backward_op(
    dy, dh, x, weight, mean, rstd, offset, is_rms, need_dw, need_db, need_dres
):
    """``torch.ops.normscope.row_norm_backward``: see ``row_norm_backward``."""
    return row_norm_backward(
        dy, dh, x, weight, mean, rstd, offset, is_rms, need_dw, need_db, need_dres
    )


@row_norm_backward_op.register_fake
def _(dy, dh, x, weight, mean, rstd, offset, is_rms, need_dw, need_db, need_dres):
    n_cols = x.shape[-1]
    dx = x.new_empty(x.shape)
    dres = x.new_empty(x.shape if need_dres else (0,))
    dw = x.new_empty((n_cols,) if need_dw else (0,), dtype=torch.float32)
    db = x.new_empty((n_cols,) if need_db else (0,), dtype=torch.float32)
    return dx, dres, dw, db
