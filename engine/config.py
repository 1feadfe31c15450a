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


DEPTH_PLACEMENTS = ("post", "pre", "peri", "olmo2", "deepnorm", "pre_scaled", "none")
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
                raise ValueError(
                    f"unknown {name} {getattr(self, name)!r}; expected one of {allowed}"
                )
        for name in ("layers", "d", "tokens"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.init_std is not None and not self.init_std > 0.0:
            raise ValueError(f"init_std must be > 0 or None, got {self.init_std}")
        if not self.dyt_alpha > 0.0:
            raise ValueError(f"dyt_alpha must be > 0, got {self.dyt_alpha}")
        if not self.eps >= 0.0:
            raise ValueError(f"eps must be >= 0, got {self.eps}")


TRAIN_TASKS = ("copy", "reverse", "modadd")


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
            raise ValueError(f"unknown task {self.task!r}; expected one of {TRAIN_TASKS}")
        if self.placement not in ("pre", "post"):
            raise ValueError(f"placement must be 'pre' or 'post', got {self.placement!r}")
        for name in ("layers", "d", "heads", "steps", "batch", "length", "warmup_steps"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.symbols < 2 or self.modulus < 2:
            raise ValueError("symbols and modulus must be >= 2")
        if self.d % self.heads:
            raise ValueError(f"heads={self.heads} must divide d={self.d}")
        if not self.lr > 0.0:
            raise ValueError(f"lr must be > 0, got {self.lr}")


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
