"""Frozen configuration dataclasses shared by the engine, the pages and share links.

Every config is ``frozen=True``: hashable (so ``st.cache_data`` can key on it) and made of
plain scalars (so ``ui/share.py`` can write it to a URL and read it back).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import torch

from engine.depth.placements import PLACEMENT_IDS
from engine.errors import EngineError

NORM_KINDS = ("layernorm", "rmsnorm", "batchnorm", "instancenorm", "groupnorm", "dyt")
COMPUTE_DTYPES = ("float32", "float16", "bfloat16", "float64", "input")
DTYPES = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float64": torch.float64,
}
_DTYPE_NAMES = {dtype: name for name, dtype in DTYPES.items()}


def _refuse(name: str, value, allowed) -> None:
    raise EngineError(
        "config.unknown_value",
        {"name": name, "value": str(value), "allowed": ", ".join(map(str, allowed))},
        f"unknown {name} {value!r}; expected one of {tuple(allowed)}",
    )


def _at_least(name: str, value, minimum) -> None:
    if not value >= minimum:  # also refuses NaN
        raise EngineError(
            "config.below_minimum",
            {"name": name, "value": value, "minimum": minimum},
            f"{name} must be >= {minimum}, got {value}",
        )


def _above_zero(name: str, value) -> None:
    if not value > 0.0:
        raise EngineError(
            "config.not_positive",
            {"name": name, "value": value},
            f"{name} must be > 0, got {value}",
        )


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
            name = _DTYPE_NAMES.get(self.compute_dtype)
            if name is None:
                _refuse("compute_dtype", str(self.compute_dtype), COMPUTE_DTYPES)
            object.__setattr__(self, "compute_dtype", name)
        if self.kind not in NORM_KINDS:
            _refuse("kind", self.kind, NORM_KINDS)
        if self.compute_dtype not in COMPUTE_DTYPES:
            _refuse("compute_dtype", self.compute_dtype, COMPUTE_DTYPES)
        _at_least("eps", self.eps, 0.0)
        _at_least("groups", self.groups, 1)

    def torch_compute_dtype(self, input_dtype: torch.dtype) -> torch.dtype:
        """The dtype the statistics are computed in for an input of ``input_dtype``."""
        if self.compute_dtype == "input":
            return input_dtype
        return DTYPES[self.compute_dtype]


DEPTH_PLACEMENTS = PLACEMENT_IDS  # what each one is: engine/depth/placements.py
DEPTH_NORMS = ("layernorm", "rmsnorm", "dyt")
DEPTH_SUBLAYERS = ("linear", "mlp", "attention", "transformer")
ACTIVATIONS = ("gelu", "relu")


@dataclass(frozen=True)
class DepthSpec:
    """A residual stack at initialisation, for ``engine.simulate_depth``.

    Only the vocabulary is checked here; the size limits (``engine.depth.check_limits``)
    depend on the device and are enforced by the simulator.
    """

    placement: str = "pre"  # one of DEPTH_PLACEMENTS
    norm: str = "layernorm"  # one of DEPTH_NORMS
    layers: int = 48  # L
    d: int = 256  # width of the residual stream
    tokens: int = 64  # T positions of one sequence (B = 1)
    # linear: F(h) = h W;  mlp: d -> 4d -> d;  attention: causal uniform mixer over T;
    # transformer: attention then mlp, two residual branches per layer (GPT-2, Llama)
    sublayer: str = "linear"
    init_std: float | None = 0.0625  # std of every weight; None means 1/sqrt(fan_in)
    residual_scaling: bool = False  # GPT-2: output projections' std / sqrt(2L) (see depth.py)
    final_norm: bool = True  # Pre-Norm's ln_f / model.norm at the top
    activation: str = "gelu"  # MLP nonlinearity; "relu" is Xiong et al.'s assumption
    dyt_alpha: float = 0.5  # DyT: tanh(alpha * x)
    eps: float = 1e-5  # LayerNorm / RMSNorm epsilon
    seed: int = 0

    def __post_init__(self) -> None:
        for name, allowed in (
            ("placement", DEPTH_PLACEMENTS),
            ("norm", DEPTH_NORMS),
            ("sublayer", DEPTH_SUBLAYERS),
            ("activation", ACTIVATIONS),
        ):
            if getattr(self, name) not in allowed:
                _refuse(name, getattr(self, name), allowed)
        for name in ("layers", "d", "tokens"):
            _at_least(name, getattr(self, name), 1)
        if self.init_std is not None:
            _above_zero("init_std", self.init_std)
        _above_zero("dyt_alpha", self.dyt_alpha)
        _at_least("eps", self.eps, 0.0)


TRAIN_TASKS = ("copy", "reverse", "modadd")
TRAIN_PLACEMENTS = ("pre", "post")  # the tiny GPT is built either way (engine/training/model.py)


@dataclass(frozen=True)
class TrainSpec:
    """One run of the training lab (``engine.training.train``): a tiny GPT on a toy task.

    The defaults were measured (engine/training/loop.py, "Defaults") to show the lesson: at this
    learning rate Pre-LN trains with or without warm-up, Post-LN without warm-up does not.
    """

    task: str = "reverse"  # one of TRAIN_TASKS
    placement: str = "post"  # "pre" or "post"
    layers: int = 6  # 2..8
    d: int = 64  # 64..128, residual width
    heads: int = 4
    lr: float = 3e-3  # peak learning rate of Adam
    warmup: bool = False  # linear warm-up over warmup_steps, then constant
    warmup_steps: int = 100
    steps: int = 300
    batch: int = 32
    length: int = 8  # copy/reverse: symbols per sequence
    symbols: int = 10  # copy/reverse: alphabet size
    modulus: int = 23  # modadd: (a + b) mod p
    seed: int = 0

    def __post_init__(self) -> None:
        if self.task not in TRAIN_TASKS:
            _refuse("task", self.task, TRAIN_TASKS)
        if self.placement not in TRAIN_PLACEMENTS:
            _refuse("placement", self.placement, TRAIN_PLACEMENTS)
        for name in ("layers", "d", "heads", "steps", "batch", "length", "warmup_steps"):
            _at_least(name, getattr(self, name), 1)
        _at_least("symbols", self.symbols, 2)
        _at_least("modulus", self.modulus, 2)
        if self.d % self.heads:
            raise EngineError(
                "config.heads_not_dividing",
                {"heads": self.heads, "d": self.d},
                f"heads={self.heads} must divide d={self.d}",
            )
        _above_zero("lr", self.lr)


# --- geometry: where normalized vectors land (engine/geometry) -------------------------------

GEOMETRY_DISTRIBUTIONS = ("normal", "uniform", "constant")  # = norms.random_inputs.DISTRIBUTIONS
GEOMETRY_MAX_COUNT = 2_000  # input vectors in one cloud
GEOMETRY_MAX_D = 8_192  # widest vectors (the high-dimension histograms)
GEOMETRY_SCENE_MAX_D = 3  # the scene, meshes and the per-axis gamma/beta: d in {1, 2, 3}
GEOMETRY_MAX_SPREAD = 1e4  # |spread|, |shift|: float32 squares stay far below its max 3.4e38
GEOMETRY_MAX_EPS = 1.0
GEOMETRY_MAX_AFFINE = 100.0  # |gamma_*|, |beta_*|
GEOMETRY_MAX_ALPHA = 100.0  # DyT alpha in (0, 100]
GEOMETRY_AXES = ("x", "y", "z")


def _refuse_geometry(key: str, message: str, **params) -> None:
    raise EngineError(f"geometry.{key}", params, message)


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value) -> bool:
    real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    return real and math.isfinite(value)


@dataclass(frozen=True)
class GeometrySpec:
    """A cloud of random input vectors and the norms' settings, for ``engine.geometry``.

    Inputs are ``shift + spread * z`` with ``z`` drawn by ``distribution`` (unit variance;
    "constant" makes z = 0, so every input is the constant vector ``shift * 1``).  ``d`` may
    be up to ``GEOMETRY_MAX_D`` for the high-dimension histograms; the 3-D/2-D scene and its
    meshes take d <= 3.  ``gamma_*`` / ``beta_*`` are the per-axis scale and shift of the
    first d axes; they apply only when d <= 3 (wider vectors use gamma = 1, beta = 0).
    """

    distribution: str = "normal"  # one of GEOMETRY_DISTRIBUTIONS
    spread: float = 1.0  # scale of the random part (its standard deviation), >= 0
    shift: float = 0.0  # added to every entry: moves the cloud along the all-ones axis
    count: int = 500  # number of input vectors, 1..GEOMETRY_MAX_COUNT
    d: int = 3  # dimension, 1..GEOMETRY_MAX_D
    seed: int = 0
    eps: float = 1e-5  # LayerNorm / RMSNorm epsilon, 0..GEOMETRY_MAX_EPS
    gamma_x: float = 1.0  # per-axis scale gamma (the sphere becomes an ellipsoid)
    gamma_y: float = 1.0
    gamma_z: float = 1.0
    beta_x: float = 0.0  # per-axis shift beta (the ellipsoid's centre)
    beta_y: float = 0.0
    beta_z: float = 0.0
    dyt_alpha: float = 0.5  # DyT: y = gamma * tanh(alpha * x) + beta

    def __post_init__(self) -> None:
        if self.distribution not in GEOMETRY_DISTRIBUTIONS:
            _refuse_geometry(
                "unknown_distribution",
                f"distribution {self.distribution!r} is not one of {GEOMETRY_DISTRIBUTIONS}",
                value=str(self.distribution),
                accepted=", ".join(GEOMETRY_DISTRIBUTIONS),
            )
        for name, limit in (("count", GEOMETRY_MAX_COUNT), ("d", GEOMETRY_MAX_D)):
            value = getattr(self, name)
            if not _is_int(value) or not 1 <= value <= limit:
                _refuse_geometry(
                    f"{name}_out_of_range",
                    f"{name} = {value!r} is not accepted: give a whole number from 1 to {limit}",
                    value=str(value),
                    limit=limit,
                )
        if not _is_int(self.seed) or self.seed < 0:
            _refuse_geometry(
                "seed_invalid",
                f"seed = {self.seed!r} is not accepted: give a whole number >= 0",
                value=str(self.seed),
            )
        self._check_range("spread", 0.0, GEOMETRY_MAX_SPREAD)
        self._check_range("shift", -GEOMETRY_MAX_SPREAD, GEOMETRY_MAX_SPREAD)
        self._check_range("eps", 0.0, GEOMETRY_MAX_EPS)
        for axis in GEOMETRY_AXES:
            self._check_range(f"gamma_{axis}", -GEOMETRY_MAX_AFFINE, GEOMETRY_MAX_AFFINE)
            self._check_range(f"beta_{axis}", -GEOMETRY_MAX_AFFINE, GEOMETRY_MAX_AFFINE)
        self._check_range("dyt_alpha", 0.0, GEOMETRY_MAX_ALPHA)
        if self.dyt_alpha == 0.0:
            _refuse_geometry(
                "alpha_zero",
                "dyt_alpha = 0 is not accepted: tanh(0 * x) = 0 for every input; give a value "
                f"in (0, {GEOMETRY_MAX_ALPHA:g}]",
                limit=GEOMETRY_MAX_ALPHA,
            )

    def _check_range(self, name: str, low: float, high: float) -> None:
        value = getattr(self, name)
        if not _is_real(value) or not low <= value <= high:
            _refuse_geometry(
                "value_out_of_range",
                f"{name} = {value!r} is not accepted: give a finite number from {low:g} to "
                f"{high:g}",
                name=name,
                value=str(value),
                low=low,
                high=high,
            )
