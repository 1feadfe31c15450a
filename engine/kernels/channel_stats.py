"""Per-channel statistics over all B*T rows (what BatchNorm pools), with a padding mask.

Contract.  ``x`` is ``[..., N]`` viewed as ``M`` rows of ``N`` channels; ``mask`` (optional,
bool, shape ``x.shape[:-1]``) marks the positions that count — padding positions are
``False`` and excluded.  For each channel c the result is, in float32::

    count_c = number of counted rows
    mean_c  = (1/count_c) sum_rows x[row, c]
    M2_c    = sum_rows (x[row, c] - mean_c)^2          (so var_c = M2_c / count_c, biased)

Algorithm.  A persistent grid of P row-programs (times column blocks) walks its rows in
``[BLOCK_M, BLOCK_N]`` tiles.  Each tile's (n_b, mean_b, M2_b) is exact two-pass within the
tile (centred on the tile's own mean), and is merged into the program's running
(n_a, mean_a, M2_a) with Chan's parallel formula::

    n     = n_a + n_b
    delta = mean_b - mean_a
    mean  = mean_a + delta * n_b / n
    M2    = M2_a + M2_b + delta^2 * n_a * n_b / n

Each program writes one partial row of ``[P, N]`` count/mean/M2 buffers; a second kernel
merges the P partials per column with the same formula, in a fixed order (no atomics:
deterministic, and correct under the interpreter, which runs programs one after another).
Nothing is ever computed as E[x^2] - E[x]^2.  All of it runs on x - K, where the shift K is
the first counted row: a channel with |mean| >> std (a float32 mean of 1000 is only known to
6e-5) would otherwise feed the mean's rounding into every merge's delta.  M2 does not
depend on K, and mean = K + mean(x - K) is rounded once, at the end.

Backward (``ChannelStatsFunction``), for a counted row r (uncounted rows get zero)::

    d mean_c / d x[r, c] = 1 / count_c          d M2_c / d x[r, c] = 2 (x[r, c] - mean_c)

(the mean's own gradient contributes sum_r 2 (x - mean) * (-1/n) = 0 to M2), so
BatchNorm built on these statistics in torch gets exact gradients.

References:
- Chan, Golub, LeVeque 1979/1983, "Updating formulae and a pairwise algorithm for computing
  sample variances" / "Algorithms for computing the sample variance"
- Welford 1962, "Note on a method for calculating corrected sums of squares and products"
- Ioffe, Szegedy 2015, "Batch Normalization", arXiv:1502.03167
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
    warps_for,
)

BLOCK_N_MAX = 128  # channels per program
TILE = 4096  # values per tile (BLOCK_M * BLOCK_N)


@triton.jit
def _channel_stats_partial_kernel(
    Count_ptr,  # pointer to output partial counts, shape (n_row_programs, n_cols), float32
    Mean_ptr,  # pointer to output partial means, shape (n_row_programs, n_cols), float32
    M2_ptr,  # pointer to output partial M2, shape (n_row_programs, n_cols), float32
    X_ptr,  # pointer to input, shape (n_rows, n_cols)
    X_row_stride,  # elements between consecutive rows of x
    X_col_stride,  # elements between consecutive columns of x
    Valid_ptr,  # pointer to row mask, shape (n_rows,), uint8 (1 = counted); with HAS_MASK
    Shift_ptr,  # pointer to the per-channel shift K, shape (n_cols,), float32
    n_rows,  # number of rows M
    n_cols,  # number of channels N
    HAS_MASK: tl.constexpr,  # exclude rows whose Valid is 0
    BLOCK_M: tl.constexpr,  # rows per tile
    BLOCK_N: tl.constexpr,  # channels per program
):
    # Program (pid_m, pid_n): channel block pid_n of row tiles pid_m, pid_m + P, ...
    pid_m = tl.program_id(0)
    n_row_programs = tl.num_programs(0)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)  # [BLOCK_N]
    col_mask = cols < n_cols
    shift = tl.load(Shift_ptr + cols, mask=col_mask, other=0.0)  # [BLOCK_N]
    n_a = tl.zeros([BLOCK_N], dtype=tl.float32)
    mean_a = tl.zeros([BLOCK_N], dtype=tl.float32)  # mean of x - K
    m2_a = tl.zeros([BLOCK_N], dtype=tl.float32)
    n_tiles = tl.cdiv(n_rows, BLOCK_M)
    for tile in range(pid_m, n_tiles, n_row_programs):
        rows = tile * BLOCK_M + tl.arange(0, BLOCK_M)  # [BLOCK_M]
        valid = rows < n_rows
        if HAS_MASK:
            valid = valid & (tl.load(Valid_ptr + rows, mask=valid, other=0) != 0)
        mask = valid[:, None] & col_mask[None, :]  # [BLOCK_M, BLOCK_N]
        x = tl.load(
            X_ptr + rows.to(tl.int64)[:, None] * X_row_stride + cols[None, :] * X_col_stride,
            mask=mask,
            other=0.0,
        ).to(tl.float32)
        x = tl.where(mask, x - shift[None, :], 0.0)  # statistics of x - K: small numbers
        # This tile's exact two-pass statistics (every channel counts the same rows).
        n_b = tl.sum(valid.to(tl.float32), axis=0)  # scalar
        mean_b = tl.sum(x, axis=0) / tl.maximum(n_b, 1.0)  # [BLOCK_N]
        centered = tl.where(mask, x - mean_b[None, :], 0.0)
        m2_b = tl.sum(centered * centered, axis=0)  # [BLOCK_N]
        # Chan's merge into the running statistics.
        n = n_a + n_b
        frac_b = n_b / tl.maximum(n, 1.0)  # 0 while both are empty
        delta = mean_b - mean_a
        mean_a = mean_a + delta * frac_b
        m2_a = m2_a + m2_b + delta * delta * n_a * frac_b
        n_a = n
    offsets = pid_m.to(tl.int64) * n_cols + cols
    tl.store(Count_ptr + offsets, n_a, mask=col_mask)
    tl.store(Mean_ptr + offsets, mean_a, mask=col_mask)
    tl.store(M2_ptr + offsets, m2_a, mask=col_mask)


@triton.jit
def _channel_stats_merge_kernel(
    Count_ptr,  # pointer to output counts, shape (n_cols,), float32
    Mean_ptr,  # pointer to output means, shape (n_cols,), float32
    M2_ptr,  # pointer to output M2, shape (n_cols,), float32
    PCount_ptr,  # pointer to partial counts, shape (n_partials, n_cols), float32, contiguous
    PMean_ptr,  # pointer to partial means, same shape
    PM2_ptr,  # pointer to partial M2, same shape
    Shift_ptr,  # pointer to the per-channel shift K the partial means are relative to
    n_partials,  # number of partial rows P
    n_cols,  # number of channels N
    BLOCK_N: tl.constexpr,  # channels per program
):
    # Merge the P partials of one channel block in partial order 0, 1, ..., P-1.
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    n_a = tl.zeros([BLOCK_N], dtype=tl.float32)
    mean_a = tl.zeros([BLOCK_N], dtype=tl.float32)
    m2_a = tl.zeros([BLOCK_N], dtype=tl.float32)
    for p in range(0, n_partials):
        offsets = p * n_cols + cols
        n_b = tl.load(PCount_ptr + offsets, mask=col_mask, other=0.0)
        mean_b = tl.load(PMean_ptr + offsets, mask=col_mask, other=0.0)
        m2_b = tl.load(PM2_ptr + offsets, mask=col_mask, other=0.0)
        n = n_a + n_b
        frac_b = n_b / tl.maximum(n, 1.0)
        delta = mean_b - mean_a
        mean_a = mean_a + delta * frac_b
        m2_a = m2_a + m2_b + delta * delta * n_a * frac_b
        n_a = n
    shift = tl.load(Shift_ptr + cols, mask=col_mask, other=0.0)
    tl.store(Count_ptr + cols, n_a, mask=col_mask)
    tl.store(Mean_ptr + cols, tl.where(n_a > 0, shift + mean_a, 0.0), mask=col_mask)
    tl.store(M2_ptr + cols, m2_a, mask=col_mask)


def channel_stats(
    x: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Launch the per-channel statistics kernels.

    Args:
        x: ``[..., N]``, any strides, any float dtype (statistics in float32).
        mask: optional bool ``x.shape[:-1]``; False excludes a position (padding).

    Returns:
        ``(count, mean, m2)``, each float32 ``[N]``; ``var = m2 / count``.  Channels with
        no counted row have count 0, mean 0 and M2 0.
    """
    check_launchable(x, mask)
    n_cols = x.shape[-1]
    x2 = as_rows(x)  # [M, N]
    n_rows = x2.shape[0]
    device = x.device
    count = torch.zeros(n_cols, dtype=torch.float32, device=device)
    mean = torch.zeros(n_cols, dtype=torch.float32, device=device)
    m2 = torch.zeros(n_cols, dtype=torch.float32, device=device)
    if mask is not None:
        if tuple(mask.shape) != tuple(x.shape[:-1]):
            raise ValueError(
                f"mask shape {tuple(mask.shape)} must be x.shape[:-1] = {tuple(x.shape[:-1])}"
            )
        valid = mask.reshape(-1).to(torch.uint8).contiguous()  # [M]
    else:
        valid = x2
    if n_rows == 0:
        return count, mean, m2
    # Shift K: the first counted row (row 0 without a mask or with none counted).
    first = torch.argmax(valid) if mask is not None else 0  # no host sync
    shift = x2[first].float().contiguous()  # [N]

    block_n = min(BLOCK_N_MAX, block_size(n_cols))
    block_m = min(max(1, TILE // block_n), triton.next_power_of_2(n_rows))
    n_col_blocks = triton.cdiv(n_cols, block_n)
    n_tiles = triton.cdiv(n_rows, block_m)
    n_row_programs = max(1, min(n_tiles, program_budget(device) // n_col_blocks))
    partials = torch.empty((3, n_row_programs, n_cols), dtype=torch.float32, device=device)
    record_launch(_channel_stats_partial_kernel)
    _channel_stats_partial_kernel[(n_row_programs, n_col_blocks)](
        partials[0],
        partials[1],
        partials[2],
        x2,
        x2.stride(0),
        x2.stride(1),
        valid,
        shift,
        n_rows,
        n_cols,
        HAS_MASK=mask is not None,
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        num_warps=warps_for(block_m * block_n),
    )
    record_launch(_channel_stats_merge_kernel)
    _channel_stats_merge_kernel[(n_col_blocks,)](
        count,
        mean,
        m2,
        partials[0],
        partials[1],
        partials[2],
        shift,
        n_row_programs,
        n_cols,
        BLOCK_N=block_n,
        num_warps=warps_for(block_n),
    )
    return count, mean, m2


@torch.library.custom_op(
    "normscope::channel_stats",
    mutates_args=(),
    schema="(Tensor x, Tensor? mask) -> (Tensor, Tensor, Tensor)",
)
def channel_stats_op(x, mask):
    """``torch.ops.normscope.channel_stats``: see ``channel_stats``."""
    return channel_stats(x, mask)


@channel_stats_op.register_fake
def _(x, mask):
    n_cols = x.shape[-1]
    return tuple(x.new_empty((n_cols,), dtype=torch.float32) for _ in range(3))


class ChannelStatsFunction(torch.autograd.Function):
    """(count, mean, M2) per channel, differentiable in x (count is not)."""

    @staticmethod
    def forward(ctx, x, mask):
        count, mean, m2 = torch.ops.normscope.channel_stats(x, mask)
        ctx.save_for_backward(x, mask, mean, count)
        ctx.mark_non_differentiable(count)
        return count, mean, m2

    @staticmethod
    def backward(ctx, _grad_count, grad_mean, grad_m2):
        x, mask, mean, count = ctx.saved_tensors
        # Elementwise, in torch: see the module docstring for the two partial derivatives.
        grad = (grad_mean / count.clamp_min(1.0)).expand(x.shape)  # [..., N]
        grad = grad + 2.0 * grad_m2 * (x.float() - mean)  # [..., N]
        if mask is not None:
            grad = grad * mask.unsqueeze(-1)
        return grad.to(x.dtype), None


def channel_stats_autograd(
    x: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``channel_stats`` with gradients to x: ``(count, mean, m2)`` float32 ``[N]``."""
    return ChannelStatsFunction.apply(x, mask)
