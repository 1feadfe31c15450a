"""Frozen configuration dataclasses shared by the engine, the pages and share links.

Every config is ``frozen=True``: hashable (so ``st.cache_data`` can key on it) and made of
plain scalars (so ``ui/share.py`` can write it to a URL and read it back).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

NORM_KINDS = ("layernorm", "rmsnorm", "batchnorm", "instancenorm", "groupnorm", "dyt")
COMPUTE_DTYPES = ("float32", "float16", "bfloat16", "float64", "input")
DTYPES = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float64": torch.float64,
}


@dataclass(frozen=True)
class NormSpec:
    """Which normalization to apply and with which constants.

    Layout convention for every kind: ``x`` is ``[..., T, d]`` — the last axis holds the
    ``d`` channels (features), the second-to-last the ``T`` positions, anything before it
    the batch.  A 1-D ``x`` is one token.
    """

    kind: str = "layernorm"  # one of NORM_KINDS
    eps: float = 1e-5  # added to the variance (or mean square) before the square root
    offset: float = 0.0  # scale is (offset + weight); Gemma's RMSNorm uses offset=1
    groups: int = 1  # GroupNorm: number of channel groups, must divide d
    alpha: float = 0.5  # DyT: y = weight * tanh(alpha * x) + bias (Zhu et al. 2025 init)
    compute_dtype: str = "float32"  # precision of the statistics; "input" = x's own dtype

    def __post_init__(self) -> None:
        if self.kind not in NORM_KINDS:
            raise ValueError(f"unknown norm kind {self.kind!r}; expected one of {NORM_KINDS}")
        if self.compute_dtype not in COMPUTE_DTYPES:
            raise ValueError(
                f"unknown compute_dtype {self.compute_dtype!r}; expected one of {COMPUTE_DTYPES}"
            )
        if not self.eps >= 0.0:
            raise ValueError(f"eps must be >= 0, got {self.eps}")
        if self.groups < 1:
            raise ValueError(f"groups must be >= 1, got {self.groups}")

    def torch_compute_dtype(self, input_dtype: torch.dtype) -> torch.dtype:
        """The dtype the statistics are computed in for an input of ``input_dtype``."""
        if self.compute_dtype == "input":
            return input_dtype
        return DTYPES[self.compute_dtype]


@dataclass(frozen=True)
class DepthSpec:
    """A residual stack at initialisation, for ``engine.simulate_depth``."""

    placement: str = "pre"  # post, pre, peri, olmo2, deepnorm, pre_scaled, none
    norm: str = "layernorm"  # layernorm, rmsnorm, dyt
    layers: int = 48
    d: int = 256
    tokens: int = 64
    sublayer: str = "linear"  # linear, mlp, attention
    init_std: float | None = 0.0625  # None means 1/sqrt(d)
    final_norm: bool = True  # Pre-Norm's ln_f / model.norm at the top
    seed: int = 0
