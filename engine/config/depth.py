"""DepthSpec: a residual stack at initialisation (engine/depth/)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.config.fields import MAX_SEED, Checked, param
from engine.depth.placements import PLACEMENT_IDS
from engine.norms.kinds import PER_TOKEN_KINDS

DEPTH_PLACEMENTS = PLACEMENT_IDS  # what each one is: engine/depth/placements.py
COMPARED_PLACEMENTS = ("post", "pre")  # the stack a page opens on: one spec each, side by side
DEPTH_NORMS = PER_TOKEN_KINDS  # one sequence (B = 1) at a time: no statistic over B or T
DEPTH_SUBLAYERS = ("linear", "mlp", "attention", "transformer")
ACTIVATIONS = ("gelu", "relu")
MAX_LAYERS = 1000
MAX_DEPTH_TOKENS = 1024
MAX_DEPTH_WIDTH = {"cpu": 4096, "cuda": 16384}  # the widest residual stream d, per device
DEPTH_WIDTHS = (64, 128, 256, 512, 1024, 2048, 4096)  # the widths a page offers
# The weights' std a page offers: 1/sqrt(fan-in) (None; Xiong et al.'s assumption, so the
# theory overlays apply) or one fixed std for every weight (GPT-2's 0.02).
INIT_STDS = {"fixed": 0.02, "fan_in": None}


@dataclass(frozen=True)
class DepthSpec(Checked):
    """A residual stack at initialisation, for ``engine.simulate_depth``.

    The size limits (``MAX_LAYERS``, ``MAX_DEPTH_TOKENS``, the width of one device, the weights
    drawn and memory: ``engine.depth.limits.check_limits``) are enforced by the simulator.
    """

    placement: str = param("pre", choices=DEPTH_PLACEMENTS)
    norm: str = param("layernorm", choices=DEPTH_NORMS)
    layers: int = param(48, low=1)  # L (at most MAX_LAYERS: the simulator's limits)
    # width of the residual stream
    d: int = param(256, low=1, high=MAX_DEPTH_WIDTH["cuda"], offered=DEPTH_WIDTHS)
    tokens: int = param(64, low=1)  # T positions of one sequence (B = 1; at most MAX_DEPTH_TOKENS)
    # linear: F(h) = h W;  mlp: d -> 4d -> d;  attention: causal uniform mixer over T;
    # transformer: attention then mlp, two residual branches per layer (GPT-2, Llama)
    sublayer: str = param("linear", choices=DEPTH_SUBLAYERS)
    init_std: float | None = param(None, positive=True)  # every weight's std; None: 1/sqrt(fan_in)
    residual_scaling: bool = param(False)  # GPT-2: output projections' std / sqrt(2L)
    final_norm: bool = param(True)  # Pre-Norm's ln_f / model.norm at the top
    # MLP nonlinearity; "relu" is Xiong et al.'s assumption
    activation: str = param("gelu", choices=ACTIVATIONS)
    dyt_alpha: float = param(0.5, low=0.01, high=10.0)  # DyT: tanh(alpha * x)
    eps: float = param(1e-5, low=0.0)  # LayerNorm / RMSNorm epsilon
    seed: int = param(0, low=0, high=MAX_SEED)
