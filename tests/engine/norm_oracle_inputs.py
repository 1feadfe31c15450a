"""Inputs shared by the norm oracle tests: dtype tolerances and seeded random tensors.

Used by ``test_row_norm_oracles.py`` (LayerNorm, RMSNorm, DyT) and
``test_pooled_norm_oracles.py`` (GroupNorm, InstanceNorm, BatchNorm).

Tolerances are ``(dtype, atol, rtol)`` tuples sized to the *output* dtype: about two units
in its last place, because the oracle and the engine may each round once at a different
step (Llama, for one, casts to the input dtype *before* multiplying by the weight).
``FLOAT64_ORACLE_TOLERANCES`` is for the cases where the oracle is exact (float64): there
float32 gets a tolerance of a few of its own ulps, not the 1e-5 that two float32
implementations need between them.
"""

from __future__ import annotations

import pytest
import torch

# (dtype, atol, rtol): about two ulps of the output dtype (fp16 eps 9.8e-4, bf16 eps 7.8e-3)
_FP16 = pytest.param(torch.float16, 2e-3, 2e-3, id="fp16")
_BF16 = pytest.param(torch.bfloat16, 2e-2, 2e-2, id="bf16")
DTYPE_TOLERANCES = [pytest.param(torch.float32, 1e-5, 1e-5, id="fp32"), _FP16, _BF16]
HALF_DTYPE_TOLERANCES = [_FP16, _BF16]

# float32 against an exact (float64) oracle: the engine rounds the mean, the variance (or
# mean square), rstd, the product and the affine map, each to half an ulp, and its sums
# are pairwise/vectorised, so their error grows like log2(d) ulps, not d.  Measured worst
# case on these inputs (d <= 4096, |y| < 5): 1.25 * EPS32 * (1 + |y|).  8 * EPS32 (9.5e-7,
# with rtol the same) leaves a 6x margin and is still 10x tighter than float32-vs-float32.
EPS32 = torch.finfo(torch.float32).eps  # 2^-23 = 1.19e-7
FLOAT32_VS_FLOAT64 = 8 * EPS32
# Half precision against float64 rounded once to the dtype: at most one ulp apart (the
# engine rounds float32 statistics' output once), so the two-ulp tolerances above hold.
FLOAT64_ORACLE_TOLERANCES = [
    pytest.param(torch.float32, FLOAT32_VS_FLOAT64, FLOAT32_VS_FLOAT64, id="fp32"),
    _FP16,
    _BF16,
]


def randn(shape, dtype=torch.float32, seed=0, shift=0.0, scale=1.0) -> torch.Tensor:
    """Seeded N(shift, scale^2) draws made in float64, then rounded once to ``dtype``."""
    gen = torch.Generator().manual_seed(seed)
    return (shift + scale * torch.randn(shape, generator=gen, dtype=torch.float64)).to(dtype)


def affine_params(d: int, dtype: torch.dtype, seed: int = 1):
    """gamma ~ 1 + 0.1 N(0,1), beta ~ 0.1 N(0,1), held in the model's dtype as HF does."""
    return randn((d,), dtype, seed, shift=1.0, scale=0.1), randn((d,), dtype, seed + 1, scale=0.1)
