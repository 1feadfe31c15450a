"""Deterministic column sum of a ``[P, N]`` float32 buffer of per-program partials.

The row-norm backward writes dW and dB as one partial row per persistent program; this
kernel sums the P partial rows of each column block in a fixed order, so the result does
not depend on scheduling and two runs are bit-identical (no atomics, no locks).
"""

import torch
import triton
import triton.language as tl

from engine.kernels._launch import record_launch

COLUMN_SUM_BLOCK_N = 256  # columns per program of the partial-sum kernel
COLUMN_SUM_BLOCK_P = 16  # partial rows summed per step of the partial-sum kernel


@triton.jit
def _column_sum_kernel(
    Out_ptr,  # pointer to output column sums, shape (n_cols,), float32
    Partial_ptr,  # pointer to partials, shape (n_partials, n_cols), float32, contiguous
    n_partials,  # number of partial rows P
    n_cols,  # number of columns N
    BLOCK_P: tl.constexpr,  # partial rows added per step
    BLOCK_N: tl.constexpr,  # columns per program
):
    # Each program sums one column block over all P partial rows, always in the same order.
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    acc = tl.zeros([BLOCK_P, BLOCK_N], dtype=tl.float32)
    for start in range(0, n_partials, BLOCK_P):
        p = start + tl.arange(0, BLOCK_P)  # [BLOCK_P]
        mask = (p[:, None] < n_partials) & col_mask[None, :]
        offsets = p.to(tl.int64)[:, None] * n_cols + cols[None, :]
        acc += tl.load(Partial_ptr + offsets, mask=mask, other=0.0)
    tl.store(Out_ptr + cols, tl.sum(acc, axis=0), mask=col_mask)


def column_sum(partials: torch.Tensor) -> torch.Tensor:
    """Deterministic sum over axis 0 of a contiguous float32 ``[P, N]`` buffer -> ``[N]``."""
    n_partials, n_cols = partials.shape
    out = torch.zeros(n_cols, dtype=torch.float32, device=partials.device)
    if n_partials == 0 or n_cols == 0:
        return out
    grid = (triton.cdiv(n_cols, COLUMN_SUM_BLOCK_N),)
    record_launch(_column_sum_kernel)
    _column_sum_kernel[grid](
        out,
        partials,
        n_partials,
        n_cols,
        BLOCK_P=COLUMN_SUM_BLOCK_P,
        BLOCK_N=COLUMN_SUM_BLOCK_N,
        num_warps=4,
    )
    return out
