"""DepthSpec: a residual stack at initialisation (engine/depth/)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.config.checks import above_zero, at_least, refuse_choice
from engine.depth.placements import PLACEMENT_IDS
from engine.norms.kinds import PER_TOKEN_KINDS

DEPTH_PLACEMENTS = PLACEMENT_IDS  # what each one is: engine/depth/placements.py
DEPTH_NORMS = PER_TOKEN_KINDS  # one sequence (B = 1) at a time: no statistic over B or T
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
                refuse_choice(name, getattr(self, name), allowed)
        for name in ("layers", "d", "tokens"):
            at_least(name, getattr(self, name), 1)
        if self.init_std is not None:
            above_zero("init_std", self.init_std)
        above_zero("dyt_alpha", self.dyt_alpha)
        at_least("eps", self.eps, 0.0)
