"""Frozen configuration dataclasses shared by the engine, the pages and share links.

Every config is ``frozen=True``: hashable (so ``st.cache_data`` can key on it) and made of
plain scalars (so ``ui/share.py`` can write it to a URL and read it back).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from engine.axes import limits as axes_limits
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


# --- precision (engine/norms/precision.py): one row norm evaluated as real code does -------------

PRECISION_KINDS = ("layernorm", "rmsnorm")
HALF_DTYPES = ("float16", "bfloat16")


@dataclass(frozen=True)
class PrecisionSpec:
    """Which norm the precision story evaluates, with which epsilon, stored in which dtype.

    The inputs are stored in ``dtype`` and every path of ``engine.norms.precision`` runs on
    them; gamma = 1 and beta = 0 (the story is about the statistics, not the affine step).
    """

    kind: str = "rmsnorm"  # one of PRECISION_KINDS
    eps: float = 1e-5  # added to the variance (or mean square) before the square root
    dtype: str = "float16"  # one of HALF_DTYPES: the storage dtype of x

    def __post_init__(self) -> None:
        if self.kind not in PRECISION_KINDS:
            raise EngineError(
                "precision.unknown_kind",
                {"kind": self.kind, "allowed": ", ".join(PRECISION_KINDS)},
                f"the precision story covers {', '.join(PRECISION_KINDS)}, not {self.kind!r}",
            )
        if self.dtype not in HALF_DTYPES:
            raise EngineError(
                "precision.unknown_dtype",
                {"dtype": self.dtype, "allowed": ", ".join(HALF_DTYPES)},
                f"the precision story stores x in {' or '.join(HALF_DTYPES)}, not {self.dtype!r}",
            )
        if not (self.eps >= 0.0 and self.eps < float("inf")):
            raise EngineError(
                "precision.bad_eps",
                {"eps": self.eps},
                f"eps must be a finite number >= 0, got {self.eps}",
            )


# --- Axes: which cells of [B, T, d] share statistics (engine/axes/) ----------------------------

AXES_SOURCES = ("synthetic", "padded")  # padded: "sentences with padding"
AXES_PRESETS = ("gaussian", "channel_offsets", "outlier_channel", "shifted_token")
AXES_DTYPES = ("float32", "float64")


@dataclass(frozen=True)
class AxesSpec:
    """A ``[B, T, d]`` tensor (its source) and the norm applied to it, for ``engine.axes``.

    ``lengths`` (padded source) is a tuple of ints, one per sequence; ``()`` means a
    staircase from T down to about T/4 (``engine.axes.sources.default_lengths``).  It is
    ignored by the synthetic source but, when given, always checked.  The size limits are
    in ``engine/axes/limits.py``; every refusal is an ``EngineError`` keyed ``axes.*``.
    """

    source: str = "synthetic"  # one of AXES_SOURCES
    preset: str = "gaussian"  # one of AXES_PRESETS: how the real tokens are drawn
    batch: int = 4  # B
    tokens: int = 16  # T
    d: int = 32  # channels
    seed: int = 0
    lengths: tuple[int, ...] = ()  # padded: real tokens per sequence, each 1..T
    pad_value: float = 0.0  # padded: the value of every PAD cell (0 = zero padding)
    kind: str = "layernorm"  # one of NORM_KINDS
    groups: int = 4  # GroupNorm: channel groups, must divide d (checked for groupnorm only)
    eps: float = 1e-5
    mask_padding: bool = False  # BatchNorm: leave PAD positions out of the statistics
    dtype: str = "float32"  # one of AXES_DTYPES; the statistics are computed in it

    def __post_init__(self) -> None:
        for name, allowed in (
            ("source", AXES_SOURCES),
            ("preset", AXES_PRESETS),
            ("kind", NORM_KINDS),
            ("dtype", AXES_DTYPES),
        ):
            value = getattr(self, name)
            if value not in allowed:
                raise axes_limits.refusal(
                    "unknown_choice",
                    f"{name} = {value!r} is not accepted; expected one of {', '.join(allowed)}",
                    name=name,
                    value=str(value),
                    allowed=", ".join(allowed),
                )
        for name, limit in (
            ("batch", axes_limits.MAX_BATCH),
            ("tokens", axes_limits.MAX_TOKENS),
            ("d", axes_limits.MAX_CHANNELS),
            ("seed", axes_limits.MAX_SEED),
        ):
            low = 0 if name == "seed" else 1  # sizes start at 1, seeds at 0
            object.__setattr__(
                self, name, axes_limits.checked_int(name, getattr(self, name), low, limit)
            )
        cells = self.batch * self.tokens * self.d
        if cells > axes_limits.MAX_CELLS:
            raise axes_limits.refusal(
                "too_many_cells",
                f"B*T*d = {self.batch}*{self.tokens}*{self.d} = {cells:,} cells is more than "
                f"the {axes_limits.MAX_CELLS:,} accepted; lower B, T or d",
                cells=cells,
                limit=axes_limits.MAX_CELLS,
                batch=self.batch,
                tokens=self.tokens,
                d=self.d,
            )
        object.__setattr__(self, "lengths", _checked_lengths(self.lengths, self.batch, self.tokens))
        if self.kind == "groupnorm":
            object.__setattr__(
                self, "groups", axes_limits.checked_int("groups", self.groups, 1, self.d)
            )
            if self.d % self.groups:
                divisors = ", ".join(str(k) for k in range(1, self.d + 1) if self.d % k == 0)
                raise axes_limits.refusal(
                    "groups_not_dividing",
                    f"GroupNorm needs the number of groups to divide d: {self.groups} does "
                    f"not divide {self.d}; accepted: {divisors}",
                    groups=self.groups,
                    d=self.d,
                    divisors=divisors,
                )
        object.__setattr__(
            self, "eps", axes_limits.checked_real("eps", self.eps, 0.0, axes_limits.MAX_EPS)
        )
        limit = axes_limits.MAX_ABS_PAD_VALUE
        pad_value = axes_limits.checked_real("pad_value", self.pad_value, -limit, limit)
        object.__setattr__(self, "pad_value", pad_value)


def _checked_lengths(lengths, batch: int, tokens: int) -> tuple[int, ...]:
    """``lengths`` as a tuple of ints, each 1..tokens, one per sequence (or empty)."""
    lengths = tuple(lengths)
    if not lengths:
        return ()
    if len(lengths) != batch:
        raise axes_limits.refusal(
            "lengths_count",
            f"{len(lengths)} lengths were given for B = {batch} sequences; give one per sequence",
            count=len(lengths),
            batch=batch,
        )
    for sample, length in enumerate(lengths):
        if not axes_limits.is_whole(length) or not 1 <= length <= tokens:
            raise axes_limits.refusal(
                "length_out_of_range",
                f"sequence {sample} has length {length!r}; each length must be from 1 to "
                f"T = {tokens}",
                sample=sample,
                length=str(length),
                tokens=tokens,
            )
    return tuple(int(length) for length in lengths)


# --- models: the catalog's calculator (engine/models/) ----------------------------------------


@dataclass(frozen=True)
class ModelShape:
    """The numbers of a model's config.json the norm calculator reads (``engine.models``).

    Field names are ours; ``engine/models/config_json.py`` maps Hugging Face's aliases
    (``hidden_size`` / ``n_embd`` / ``d_model``, ...) onto them.  None: not in the config and
    not needed for this family.
    """

    family: str  # a catalog id (engine/models/catalog.toml)
    hidden: int  # width of the residual stream d
    layers: int  # layers of the (first) stack; T5: encoder layers
    decoder_layers: int = 0  # T5: decoder layers; 0 where there is one stack
    heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    intermediate: int | None = None  # MLP width
    vocab: int | None = None
    positions: int | None = None  # learned position embeddings (GPT-2)
    tied_embeddings: bool = False  # the LM head reuses the token embedding
    attention_bias: bool = False  # q, k, v, o projections have biases
    mlp_bias: bool = False
    q_lora_rank: int | None = None  # DeepSeek MLA: compressed query width
    kv_lora_rank: int | None = None  # DeepSeek MLA: compressed key-value width
    eps: float | None = None  # the norms' ε as the config sets it
    dtype: str | None = None  # the config's torch_dtype, where it names one of DTYPES

    def __post_init__(self) -> None:
        _at_least("hidden", self.hidden, 1)
        _at_least("layers", self.layers, 1)
        _at_least("decoder_layers", self.decoder_layers, 0)
        for name in (
            "heads",
            "kv_heads",
            "head_dim",
            "intermediate",
            "vocab",
            "positions",
            "q_lora_rank",
            "kv_lora_rank",
        ):
            if getattr(self, name) is not None:
                _at_least(name, getattr(self, name), 1)
        if self.eps is not None:
            _at_least("eps", self.eps, 0.0)
        if self.dtype is not None and self.dtype not in DTYPES:
            _refuse("dtype", self.dtype, tuple(DTYPES))


# --- Activation dumps (engine/dumps) -----------------------------------------------------

DUMP_AXES = ("auto", "Td", "BTd", "LTd", "LBTd")  # the last axis is always d, the one before T
DUMP_LAYER_ORDERS = ("names", "file")


@dataclass(frozen=True)
class DumpSpec:
    """How to read an activation dump and which thresholds its diagnostics use.

    ``stream`` names the entries that form the residual stream: "auto", or one of the
    templates the layout inference lists (``Layout.streams``, e.g.
    ``"blocks.{i}.hook_resid_pre"``).  ``axes`` overrides which axes those entries have.
    """

    axes: str = "auto"  # one of DUMP_AXES
    stream: str = "auto"  # "auto" or a template from Layout.streams
    layer_order: str = "names"  # "names": by the layer number in the names; "file": as stored
    # Sun et al. 2024 (arXiv:2402.17762): an activation is massive when |a| > 100 and
    # about 1,000x the median magnitude of its layer's hidden states.
    massive_abs: float = 100.0
    massive_ratio: float = 1000.0
    outlier_ratio: float = 5.0  # a token (channel) is an outlier at > this x its layer's median
    top_k: int = 16  # largest entries kept per layer (the top-1/2/3 plot uses the first 3)
    norm_eps: float = 1e-5  # eps of the LayerNorm/RMSNorm comparison on chosen tokens

    def __post_init__(self) -> None:
        from engine.errors import EngineError

        def refuse(name: str, accepted: str) -> EngineError:
            params = {"name": name, "value": getattr(self, name), "accepted": accepted}
            return EngineError(
                "dumps.bad_spec",
                params,
                "{name} = {value} is not accepted. Accepted: {accepted}.".format(**params),
            )

        if self.axes not in DUMP_AXES:
            raise refuse("axes", ", ".join(DUMP_AXES))
        if self.layer_order not in DUMP_LAYER_ORDERS:
            raise refuse("layer_order", ", ".join(DUMP_LAYER_ORDERS))
        if not isinstance(self.stream, str) or not self.stream:
            raise refuse("stream", "auto or a template listed by the layout")
        for name in ("massive_abs", "massive_ratio", "outlier_ratio"):
            if not getattr(self, name) > 0.0:
                raise refuse(name, "a number > 0")
        if not 3 <= int(self.top_k) <= 1024:
            raise refuse("top_k", "3 to 1024")
        if not self.norm_eps >= 0.0:
            raise refuse("norm_eps", "a number >= 0")
