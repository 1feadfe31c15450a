"""NormSpec: which normalization to apply, with which constants and in which precision; and
RandomSpec, the random vectors it may be applied to."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from engine.config.fields import MAX_SEED, Checked, check_fields, param
from engine.norms.kinds import KIND_AXES
from engine.norms.random_inputs import DISTRIBUTIONS

NORM_KINDS = tuple(KIND_AXES)
COMPUTE_DTYPES = ("float32", "float16", "bfloat16", "float64", "input")
STORAGE_DTYPES = ("float32", "float16", "bfloat16")  # what a page stores a tensor in
DTYPES = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float64": torch.float64,
}
DTYPE_NAMES = {dtype: name for name, dtype in DTYPES.items()}
# The Vector Lab's input, typed or drawn: at most this many rows of at most this width
MAX_ROWS = 64
MAX_VECTOR_WIDTH = 8192
GROUPNORM_OPENING_GROUPS = 2  # GroupNorm as a page first shows it (one group is LayerNorm)
# The ε a page offers on a slider (Axes, Geometry): what ε does shows near sqrt(ε).
EPS_MENU = (0.0, 1e-8, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0)


@dataclass(frozen=True)
class NormSpec:
    """Which normalization to apply and with which constants.

    Layout convention for every kind: ``x`` is ``[..., T, d]`` — the last axis holds the
    ``d`` channels (features), the second-to-last the ``T`` positions, anything before it
    the batch.  A 1-D ``x`` is one token.
    """

    kind: str = param("layernorm", choices=NORM_KINDS)
    eps: float = param(1e-5, low=0.0)  # added to the variance (or mean square) before the root
    offset: float = param(0.0, low=-10.0, high=10.0)  # scale is (offset + weight); Gemma: 1
    groups: int = param(1, low=1)  # GroupNorm: number of channel groups, must divide d
    # DyT: y = weight * tanh(alpha * x) + bias (Zhu et al. 2025 init 0.5)
    alpha: float = param(0.5, low=0.0, high=100.0)
    # precision of the statistics; "input" = x's own dtype; a torch.dtype is stored as its name
    compute_dtype: str = param("float32", choices=COMPUTE_DTYPES, offered=STORAGE_DTYPES)

    def __post_init__(self) -> None:
        if isinstance(self.compute_dtype, torch.dtype):  # what a Python user writes
            name = DTYPE_NAMES.get(self.compute_dtype, str(self.compute_dtype))
            object.__setattr__(self, "compute_dtype", name)
        check_fields(self)

    def torch_compute_dtype(self, input_dtype: torch.dtype) -> torch.dtype:
        """The dtype the statistics are computed in for an input of ``input_dtype``."""
        if self.compute_dtype == "input":
            return input_dtype
        return DTYPES[self.compute_dtype]


@dataclass(frozen=True)
class RandomSpec(Checked):
    """Random input vectors (``engine.norms.random_inputs.random_vectors``): ``[rows, d]``
    values ``shift + scale * z``, ``z`` of ``distribution``, drawn from ``seed``."""

    rows: int = param(1, low=1, high=MAX_ROWS)
    d: int = param(8, low=1, high=MAX_VECTOR_WIDTH)
    distribution: str = param("normal", choices=DISTRIBUTIONS)
    shift: float = param(0.0, low=-1e6, high=1e6)
    scale: float = param(1.0, low=0.0, high=1e6)
    seed: int = param(0, low=0, high=MAX_SEED)
