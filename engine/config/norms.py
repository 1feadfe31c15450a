"""NormSpec: which normalization to apply, with which constants and in which precision."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from engine.config.checks import at_least, refuse_choice

NORM_KINDS = ("layernorm", "rmsnorm", "batchnorm", "instancenorm", "groupnorm", "dyt")
COMPUTE_DTYPES = ("float32", "float16", "bfloat16", "float64", "input")
DTYPES = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float64": torch.float64,
}
DTYPE_NAMES = {dtype: name for name, dtype in DTYPES.items()}


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
    # precision of the statistics; "input" = x's own dtype; a torch.dtype is stored as its name
    compute_dtype: str = "float32"

    def __post_init__(self) -> None:
        if isinstance(self.compute_dtype, torch.dtype):  # what a Python user writes
            name = DTYPE_NAMES.get(self.compute_dtype)
            if name is None:
                refuse_choice("compute_dtype", str(self.compute_dtype), COMPUTE_DTYPES)
            object.__setattr__(self, "compute_dtype", name)
        if self.kind not in NORM_KINDS:
            refuse_choice("kind", self.kind, NORM_KINDS)
        if self.compute_dtype not in COMPUTE_DTYPES:
            refuse_choice("compute_dtype", self.compute_dtype, COMPUTE_DTYPES)
        at_least("eps", self.eps, 0.0)
        at_least("groups", self.groups, 1)

    def torch_compute_dtype(self, input_dtype: torch.dtype) -> torch.dtype:
        """The dtype the statistics are computed in for an input of ``input_dtype``."""
        if self.compute_dtype == "input":
            return input_dtype
        return DTYPES[self.compute_dtype]
