"""Closed-form predictions for a residual stack at initialisation, to overlay on the simulator.

Every function here is pure (numbers in, numbers out) and states the assumptions under
which its formula holds; ``engine.depth.simulator`` measures what happens when they do not.

Xiong et al. 2020, Lemma 2 — the assumptions (their Section 3.2, restated):
  (a) one layer is an attention sub-block then an FFN sub-block (``sublayer="transformer"``);
  (b) attention has W_Q = W_K = 0, so every token averages the values it attends to
      (our causal uniform mixer), W_V and the FFN's W_1, W_2 are i.i.d. N(0, 1/fan_in)
      (``init_std=None``), no biases, no residual scaling;
  (c) the FFN is ReLU(x W_1) W_2, and LayerNorm has unit gain and zero bias;
  (d) the input tokens have E||x_0||^2 = d.
Then Lemma 1 gives E||FFN(LN(x))||^2 = d/2, the attention sub-block adds between 0 (tokens
uncorrelated, many of them) and d (all tokens equal), and cross terms vanish in expectation:
  Post-LN:  E||x^{post,5}_l||^2 = 3d/2 (LN output d, plus d/2), the input of each layer's last LN;
  Pre-LN:   (1 + l/2) d <= E||x_l||^2 <= (1 + 3l/2) d.
Theorem 1 (same assumptions, loss with a bounded gradient at the output): the gradient of
the last FFN weight is O(d sqrt(ln d)) for Post-LN, independent of L, and
O(d sqrt(ln d / L)) for Pre-LN — the 1/sqrt(L) comes from ln_f dividing by ||x_L||.

References:
- Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture", arXiv:2002.04745
- Wang et al. 2022, "DeepNet: Scaling Transformers to 1,000 Layers", arXiv:2203.00555
- Radford et al. 2019, "Language Models are Unsupervised Multitask Learners" (GPT-2,
  output projections initialised with std / sqrt(2 * n_layer))
- Sun et al. 2025, "The Curse of Depth in Large Language Models" (LayerNorm scaling),
  arXiv:2502.05795
"""

from __future__ import annotations

import math

import numpy as np

from engine.config import DepthSpec
from engine.depth.placements import PLACEMENTS

POST_LN_LEVEL = 1.5  # Xiong Lemma 2: E||x^{post,5}||^2 / d = 3/2, entering each layer's last LN


def branches_per_layer(spec: DepthSpec) -> int:
    """Residual branches in one layer: 2 for ``transformer`` (attention + MLP), else 1."""
    return 2 if spec.sublayer == "transformer" else 1


def pre_ln_band(layers) -> tuple[np.ndarray, np.ndarray]:
    """Xiong Lemma 2 for Pre-LN, in units of d: (1 + l/2, 1 + 3l/2) for each l in ``layers``.

    Holds under assumptions (a)-(d) of the module docstring; ``l`` counts full layers
    (attention + FFN), and the quantity is E||x_l||^2 / d before the final norm.
    """
    ell = np.asarray(layers, dtype=np.float64)
    return 1.0 + ell / 2.0, 1.0 + 1.5 * ell


def lemma2_violations(spec: DepthSpec) -> tuple[str, ...]:
    """Which of Lemma 2's assumptions ``spec`` breaks, as short keys for the UI to translate.

    Empty means the band (Pre-LN) or the 3/2 level (Post-LN) applies.  Keys: "placement"
    (one Lemma 2 does not describe, per ``engine/depth/placements.py``), "norm" (not
    LayerNorm), "sublayer" (not attention + FFN), "activation"
    (not ReLU), "init" (not N(0, 1/fan_in)), "residual_scaling" (extra 1/sqrt(2L)).
    """
    broken = []
    if PLACEMENTS[spec.placement].lemma2 is None:
        broken.append("placement")
    if spec.norm != "layernorm":
        broken.append("norm")
    if spec.sublayer != "transformer":
        broken.append("sublayer")
    if spec.activation != "relu":
        broken.append("activation")
    if spec.init_std is not None:
        broken.append("init")
    if spec.residual_scaling:
        broken.append("residual_scaling")
    return tuple(broken)


def deepnorm_constants(n_layers: float) -> tuple[float, float]:
    """DeepNorm for an N-layer decoder-only (or encoder-only) Transformer.

    alpha = (2N)^(1/4) multiplies the identity path, beta = (8N)^(-1/4) the init of the FFN,
    value and output projections (Wang et al. 2022, Table 1).  2N counts residual branches.
    """
    if not n_layers > 0:
        raise ValueError(f"n_layers must be > 0, got {n_layers}")
    return (2.0 * n_layers) ** 0.25, (8.0 * n_layers) ** -0.25


def deepnorm_layers(spec: DepthSpec) -> float:
    """The N that ``spec`` uses in ``deepnorm_constants``: residual branches / 2.

    For ``sublayer="transformer"`` that is L, as in the paper; a stack of L single branches
    counts as L/2 Transformer layers, so alpha = L^(1/4) and beta = (4L)^(-1/4).
    """
    return spec.layers * branches_per_layer(spec) / 2.0


def identity_and_init_scales(spec: DepthSpec) -> tuple[float, float]:
    """(alpha, beta) that ``spec`` applies: DeepNorm's constants, else (1, 1)."""
    if spec.placement == "deepnorm":
        return deepnorm_constants(deepnorm_layers(spec))
    return 1.0, 1.0


def residual_scale(spec: DepthSpec) -> float:
    """GPT-2's factor on the output projections' std, 1/sqrt(number of residual branches).

    GPT-2 writes 1/sqrt(2 * n_layer) because each of its layers has two branches; that is
    this function for ``sublayer="transformer"``.  1 when ``residual_scaling`` is off.
    """
    if not spec.residual_scaling:
        return 1.0
    return 1.0 / math.sqrt(spec.layers * branches_per_layer(spec))


def weight_std(spec: DepthSpec, fan_in: int) -> float:
    """The base std of a weight matrix reading ``fan_in`` features (before any scaling)."""
    return spec.init_std if spec.init_std is not None else 1.0 / math.sqrt(fan_in)


def activation_second_moment(activation: str, scale: float) -> float:
    """E[act(z)^2] for z ~ N(0, scale^2), by 64-point Gauss-Hermite quadrature.

    ReLU gives scale^2 / 2 exactly (Xiong Lemma 1); GELU(z) = z Phi(z) about 0.425 at scale 1.
    """
    nodes, weights = np.polynomial.hermite_e.hermegauss(64)
    z = scale * nodes
    if activation == "relu":
        act = np.maximum(z, 0.0)
    elif activation == "gelu":
        act = z * 0.5 * (1.0 + np.array([math.erf(v / math.sqrt(2.0)) for v in z]))
    else:
        raise ValueError(f"unknown activation {activation!r}")
    return float(np.sum(weights * act * act) / math.sqrt(2.0 * math.pi))


def branch_gain(spec: DepthSpec, input_ms: float = 1.0) -> float | None:
    """Expected E||F(h)||^2 / d for a branch input h with mean square ``input_ms``.

    Assumes h independent of the weights (true at initialisation).  Includes DeepNorm's beta
    and GPT-2's residual scaling.  None for attention (its output depends on how correlated
    the tokens are: between 0 and the value path's gain) and for ``transformer``.
    """
    d = spec.d
    _, beta = identity_and_init_scales(spec)
    out = residual_scale(spec)
    if spec.sublayer == "linear":
        return input_ms * d * (beta * out * weight_std(spec, d)) ** 2
    if spec.sublayer == "mlp":
        pre_var = input_ms * d * (beta * weight_std(spec, d)) ** 2  # each of the 4d units
        hidden = 4 * d * activation_second_moment(spec.activation, math.sqrt(pre_var))
        return hidden * (beta * out * weight_std(spec, 4 * d)) ** 2
    return None


def x0_weight_expected(layers, gain: float = 1.0) -> np.ndarray:
    """Post-Norm's weight on x_0 after l layers: (1 + gain)^(-l/2).

    Each layer divides x + F(x) by its RMS, sqrt(1 + gain) when x has unit mean square and F
    adds ``gain`` uncorrelated with it; gain = 1 gives the familiar 2^(-l/2).
    """
    return (1.0 + gain) ** (-np.asarray(layers, dtype=np.float64) / 2.0)


def fit_loglog_slope(x, y) -> tuple[float, float]:
    """Least-squares (slope, intercept) of log y against log x (natural logs)."""
    lx = np.log(np.asarray(x, dtype=np.float64))
    ly = np.log(np.asarray(y, dtype=np.float64))
    if lx.size < 2:
        raise ValueError("need at least two points to fit a slope")
    slope, intercept = np.polyfit(lx, ly, 1)
    return float(slope), float(intercept)
