"""Residual-stack simulator: a random stack at initialisation, forward and backward.

One sequence x_0 ~ N(0, 1) of shape [B=1, T, d] runs through L layers; each layer is one
residual branch F (``linear``, ``mlp``, ``attention``) or two (``transformer``: attention then
MLP, as in GPT-2 and Llama).  The placement decides where the norm sits around each branch;
what each placement is (post, pre, pre_scaled, peri, olmo2, deepnorm, none) is read from the
one table in ``engine/depth/placements.py``.

The sublayers: ``linear`` F(h) = h W; ``mlp`` F(h) = act(h W_in) W_out (d -> 4d -> d);
``attention`` F(h) = A (h W_V) W_O with A the causal uniform average over positions — softmax
attention with W_Q = W_K = 0, Xiong et al.'s assumption and close to what random small Q, K
give.  W_O, W_out and the linear W are "output projections" (GPT-2's residual scaling).

The loss is a fixed random read-out of the top, loss = sum(y * g) / sqrt(T), g ~ N(0, 1):
at initialisation it stands for a cross-entropy gradient pointing in a random direction.
y is the final norm of x_L for the pre-like placements when ``final_norm`` is on, else x_L.

Memory and speed.  Each layer runs as its own small autograd graph from a detached input,
and the backward pass walks down the layers with one ``torch.autograd.grad`` per layer, so
the loop can report progress and stop between layers.  While the graphs fit in
``limits.KEEP_GRAPH_ELEMENTS`` they are kept from the forward pass; beyond that only the
stream x_0..x_L is kept (O(L T d)) and the backward pass regenerates each layer's weights
from its own seed and re-runs the layer.  Each layer's weights come from a seed of
(seed, layer, branch, matrix), so every placement sees the same draws.  Norms go through
``engine.normalize``: the formulas live in ``engine/norms/reference.py`` only.

The sweep over depth (``sweep_last_layer_grad``, ``SweepResult``) lives in
``engine/depth/sweep.py``.

References:
- Vaswani et al. 2017, "Attention Is All You Need" (Post-LN), arXiv:1706.03762
- Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture", arXiv:2002.04745
- Wang et al. 2022, "DeepNet: Scaling Transformers to 1,000 Layers", arXiv:2203.00555
- Team Gemma 2024, "Gemma 2: Improving Open Language Models at a Practical Size",
  arXiv:2408.00118 (sandwich norms)
- Kim et al. 2025, "Peri-LN: Revisiting Normalization Layer in the Transformer
  Architecture", arXiv:2502.02732
- Team OLMo 2024, "2 OLMo 2 Furious", arXiv:2501.00656
- Sun et al. 2025, "The Curse of Depth in Large Language Models", arXiv:2502.05795
- Zhu et al. 2025, "Transformers without Normalization" (DyT), arXiv:2503.10622
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from engine.config import DepthSpec, NormSpec
from engine.depth.limits import branch_parts, check_limits, keeps_graphs
from engine.depth.placements import PLACEMENTS
from engine.depth.theory import (
    branch_gain,
    branches_per_layer,
    deepnorm_layers,
    identity_and_init_scales,
    lemma2_violations,
    residual_scale,
    weight_std,
)
from engine.norms.dispatch import normalize
from engine.threads import Cancelled, Progress, StopCheck, torch_threads

FLOAT32_MAX = float(torch.finfo(torch.float32).max)


@dataclass(frozen=True)
class NonFinite:
    """Where a simulation left float32's range: values from there on are undefined.

    ``quantity`` is "residual" (the stream x_l of the forward pass) or "gradient" (the
    backward pass into layer ``layer``); ``largest`` is the largest magnitude seen just
    before (an entry of x_{l-1}, or the norm of the gradient above the layer).
    """

    quantity: str
    layer: int
    limit: float
    largest: float


@dataclass(frozen=True)
class LayerStats:
    """What one layer's forward pass measured."""

    update_ratio: float  # ||branch|| / ||identity-path term||, mean over branches
    gain: torch.Tensor | None  # [B, T] identity-path gain of the layer's norms; None if untouched
    pre_norm_ms: float  # mean square entering the layer's last stream norm; NaN if none


@dataclass(frozen=True, eq=False)
class DepthResult:
    """What ``simulate_depth`` measured; arrays are float64 numpy, indexed by layer.

    Index 0 of an [L+1] array is the input x_0; entry l of an [L] array is layer l+1.
    """

    spec: DepthSpec
    residual_ms: np.ndarray  # [L+1] E||x_l||^2 / d, before the final norm
    grad_norm: np.ndarray  # [L] ||d loss / d W||_F over all of layer l's weights
    update_ratio: np.ndarray  # [L] ||branch|| / ||identity-path term||, mean over branches
    cosine: np.ndarray  # [L] cos(x_{l-1}, x_l), mean over tokens
    x0_weight: np.ndarray  # [L+1] product of identity-path gains: 1 except post/deepnorm
    pre_norm_ms: np.ndarray  # [L] ms of alpha x + F entering the layer's last norm; NaN if none
    alpha: float  # identity-path multiplier (DeepNorm), else 1
    beta: float  # init multiplier on branch weights (DeepNorm), else 1
    branches_per_layer: int
    seconds: float  # wall time of the simulation
    # What theory (``engine/depth/theory.py``) says of this spec, for the page to read:
    lemma2_broken: tuple[str, ...]  # Lemma 2's assumptions it breaks (``lemma2_violations``)
    deepnorm_layers: float  # DeepNorm's N: residual branches / 2
    branch_gain: float | None  # E||F(h)||^2 / d at init for unit-mean-square h; None: unknown
    nonfinite: NonFinite | None = None  # where float32 overflowed; arrays are NaN from there


def _seed(spec: DepthSpec, *path: int) -> int:
    """An independent 63-bit seed for (spec.seed, *path): same draws for every placement.

    SplitMix64 (Steele, Lea, Flood 2014) folded over the path: a few integer operations.
    """
    mask, state = (1 << 64) - 1, 0x9E3779B97F4A7C15
    for value in (spec.seed, *path):
        z = (state + (value & mask) + 0x9E3779B97F4A7C15) & mask
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        state = z ^ (z >> 31)
    return state >> 1


def _randn(shape, seed: int, device) -> torch.Tensor:
    gen = torch.Generator(device="cpu").manual_seed(seed)
    return torch.randn(shape, generator=gen, dtype=torch.float32).to(device)


def layer_weights(spec: DepthSpec, layer: int, device="cpu") -> list[dict[str, torch.Tensor]]:
    """The weights of layer ``layer`` (1-based), one dict per residual branch.

    linear: {"w": [d, d]}; mlp: {"w_in": [d, 4d], "w_out": [4d, d]}; attention:
    {"w_v": [d, d], "w_o": [d, d]}.  std = init_std (or 1/sqrt(fan_in)), times DeepNorm's
    beta, and GPT-2's residual scale on the output projection (w, w_out, w_o).
    """
    d = spec.d
    _, beta = identity_and_init_scales(spec)
    out = residual_scale(spec)
    shapes = {
        "linear": (("w", d, d, out),),
        "mlp": (("w_in", d, 4 * d, 1.0), ("w_out", 4 * d, d, out)),
        "attention": (("w_v", d, d, 1.0), ("w_o", d, d, out)),
    }
    branches = []
    for p, part in enumerate(branch_parts(spec)):
        weights = {}
        for m, (name, fan_in, fan_out, scale) in enumerate(shapes[part]):
            std = weight_std(spec, fan_in) * beta * scale
            weights[name] = _randn((fan_in, fan_out), _seed(spec, 1, layer, p, m), device) * std
        branches.append(weights)
    return branches


def stack_input(spec: DepthSpec, device="cpu") -> torch.Tensor:
    """x_0 ~ N(0, 1), shape [B=1, T, d]."""
    return _randn((1, spec.tokens, spec.d), _seed(spec, 0), device)


def readout(spec: DepthSpec, device="cpu") -> torch.Tensor:
    """g of the loss sum(y * g) / sqrt(T), shape [B=1, T, d]."""
    return _randn((1, spec.tokens, spec.d), _seed(spec, 2), device)


def _norm64(v: torch.Tensor, dim: int | None = None) -> torch.Tensor:
    """The 2-norm of finite float32 ``v`` in float64: its square passes float32's range
    (3.4e38) once an entry passes about 1e19 / sqrt(size), long before ``v`` overflows."""
    return torch.linalg.vector_norm(v.detach().double(), dim=dim)


def cosines(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """cos(a, b) along the last axis of finite float32 ``a`` and ``b``, in float64: a·b over
    ‖a‖‖b‖, the same at any scale.  In float32 the norms overflow long before the stream does
    (cos -> 0); ``F.cosine_similarity`` clamps each norm at 1e-8, which sends the cosine of a
    shrinking stream to 0 once its norms pass below that.  NaN where a vector is 0."""
    a, b = a.detach().double(), b.detach().double()
    return torch.linalg.vecdot(a, b) / (_norm64(a, dim=-1) * _norm64(b, dim=-1))


def causal_mean(v: torch.Tensor) -> torch.Tensor:
    """Position t averages positions 0..t: uniform causal attention.  [B, T, d] -> [B, T, d]."""
    counts = torch.arange(1, v.shape[-2] + 1, device=v.device, dtype=v.dtype)  # [T]
    return v.cumsum(dim=-2) / counts[:, None]  # [B, T, d]


class Stack:
    """The pieces of one simulation that do not change from layer to layer."""

    def __init__(self, spec: DepthSpec):
        self.spec = spec
        self.placement = PLACEMENTS[spec.placement]
        self.norm_spec = NormSpec(kind=spec.norm, eps=spec.eps, alpha=spec.dyt_alpha)
        self.alpha, self.beta = identity_and_init_scales(spec)
        self.parts = branch_parts(spec)
        self.act = F.relu if spec.activation == "relu" else F.gelu

    def norm(self, x: torch.Tensor):
        """Norm(x) [B, T, d] and its identity-path gain per token [B, T]."""
        r = normalize(x, self.norm_spec, backend="torch")
        if self.spec.norm == "dyt":  # no statistic: the gain is the ratio of norms
            gain = _norm64(r.y, dim=-1) / _norm64(x, dim=-1).clamp_min(1e-30)
        else:
            gain = r.rstd.detach()  # LayerNorm passes x - mean, RMSNorm x, times rstd
        return r.y, gain

    def branch(self, part: str, h: torch.Tensor, w: dict[str, torch.Tensor]) -> torch.Tensor:
        """F(h) for one branch: [B, T, d] -> [B, T, d]."""
        if part == "linear":
            return h @ w["w"]  # [B, T, d]
        if part == "mlp":
            return self.act(h @ w["w_in"]) @ w["w_out"]  # [B, T, 4d] -> [B, T, d]
        return causal_mean(h @ w["w_v"]) @ w["w_o"]  # [B, T, d]

    def layer(self, x: torch.Tensor, weights, layer: int) -> tuple[torch.Tensor, LayerStats]:
        """Run layer ``layer`` (1-based) on x [B, T, d]: (x_out [B, T, d], its statistics)."""
        norms = self.placement.norms
        ratios, gain, pre_norm_ms = [], None, float("nan")
        for part, w in zip(self.parts, weights):
            identity = x
            if norms.on_stream:  # post, deepnorm: the sum is normed
                identity = self.alpha * x
                write = self.branch(part, x, w)  # [B, T, d]
                s = identity + write  # [B, T, d]
                x, g = self.norm(s)
                g = g * self.alpha
                gain = g if gain is None else gain * g
                pre_norm_ms = float(s.detach().double().pow(2).mean())
            else:
                h = self.norm(x)[0] if norms.before else x  # [B, T, d]
                if self.placement.scale_branch_input:
                    h = h / math.sqrt(layer)
                write = self.branch(part, h, w)  # [B, T, d]
                if norms.after:
                    write = self.norm(write)[0]
                x = x + write  # [B, T, d]
            ratios.append(float(_norm64(write) / _norm64(identity).clamp_min(1e-30)))
        return x, LayerStats(float(np.mean(ratios)), gain, pre_norm_ms)

    def top(self, x: torch.Tensor) -> torch.Tensor:
        """What the loss reads: the final norm of x_L (pre-like placements) or x_L."""
        if self.spec.final_norm and self.placement.final_norm:
            return self.norm(x)[0]
        return x


def simulate_depth(
    spec: DepthSpec,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
    device: str = "cpu",
    threads: int | None = None,
) -> DepthResult:
    """Simulate ``spec``'s stack forward and backward; see ``DepthResult`` for the fields.

    ``progress(fraction)`` is called as layers finish (at most about 100 times);
    ``should_stop()`` is checked between layers and raises ``Cancelled`` when True.
    ``threads`` sets torch's intra-op threads for this call only (``engine.threads``; 1 is
    the fast choice on a busy small machine); None leaves them alone.
    Raises ValueError for sizes over ``check_limits``.
    """
    check_limits(spec, device)
    with torch_threads(threads):
        return _simulate(spec, progress, should_stop, device)


def layer_graph(stack: Stack, x: torch.Tensor, layer: int, device):
    """(x_in, weight leaves, output, stats) of layer ``layer`` run with autograd from x."""
    weights = layer_weights(stack.spec, layer, device)
    leaves = [w.requires_grad_(True) for branch in weights for w in branch.values()]
    x_in = x.detach().requires_grad_(True)  # [B, T, d]
    with torch.enable_grad():
        out, stats = stack.layer(x_in, weights, layer)  # [B, T, d]
    return x_in, leaves, out, stats


def _simulate(spec, progress, should_stop, device) -> DepthResult:
    start = time.perf_counter()
    stack, L = Stack(spec), spec.layers
    total, last_pct = 2 * L + 1, [-1]

    def tick(done: int) -> None:
        if should_stop is not None and should_stop():
            raise Cancelled(f"stopped after {done} of {total} steps")
        pct = int(100 * done / total)
        if progress is not None and pct != last_pct[0]:
            last_pct[0] = pct
            progress(done / total)

    x = stack_input(spec, device)  # [B, T, d]
    stream = torch.empty((L + 1, *x.shape), device=device)  # [L+1, B, T, d]
    stream[0] = x
    path_gain = torch.ones(x.shape[:-1], device=device, dtype=torch.float64)  # [B, T]
    x0_weight, update_ratio = np.full(L + 1, np.nan), np.full(L, np.nan)
    x0_weight[0] = 1.0
    pre_norm_ms = np.full(L, np.nan)
    nonfinite = None
    # Small stacks keep every layer's autograd graph; big ones re-run layers going down.
    keep = keeps_graphs(spec)
    graphs: list = [None] * (L + 1)
    finite_layers = L  # x_0 .. x_{finite_layers} are finite float32
    for layer in range(1, L + 1):
        tick(layer - 1)
        if keep:
            graphs[layer] = layer_graph(stack, x, layer, device)
            x, stats = graphs[layer][2].detach(), graphs[layer][3]
        else:
            with torch.no_grad():
                x, stats = stack.layer(x, layer_weights(spec, layer, device), layer)
        if not bool(torch.isfinite(x).all()):
            # float32 overflowed: every later value is undefined, so the run stops here.
            largest = float(stream[layer - 1].abs().max())
            nonfinite = NonFinite("residual", layer, FLOAT32_MAX, largest)
            finite_layers = layer - 1
            break
        stream[layer] = x
        if stats.gain is not None:
            path_gain = path_gain * stats.gain.double()
        x0_weight[layer] = float(path_gain.mean())
        update_ratio[layer - 1] = stats.update_ratio
        pre_norm_ms[layer - 1] = stats.pre_norm_ms

    grad_norm = np.full(L, np.nan)
    if nonfinite is None:
        # Backward: d loss / d x_L through the final norm, then down the layers.
        x_top = stream[L].clone().requires_grad_(True)
        y = stack.top(x_top)  # [B, T, d]
        upstream = readout(spec, device) / math.sqrt(spec.tokens)  # [B, T, d] = d loss / d y
        (delta,) = torch.autograd.grad(y, x_top, upstream)  # [B, T, d]
        for layer in range(L, 0, -1):
            tick(2 * L + 1 - layer)
            x_in, leaves, out, _ = graphs[layer] or layer_graph(
                stack, stream[layer - 1], layer, device
            )
            graphs[layer] = None  # free this layer's graph as soon as it is used
            above = float(delta.double().norm())  # ||d loss / d x_layer||
            delta, *w_grads = torch.autograd.grad(out, [x_in, *leaves], delta)
            if not all(bool(torch.isfinite(g).all()) for g in (delta, *w_grads)):
                nonfinite = NonFinite("gradient", layer, FLOAT32_MAX, above)
                break
            grad_norm[layer - 1] = math.sqrt(sum(float(g.double().pow(2).sum()) for g in w_grads))
    graphs.clear()
    tick(total)

    # One layer at a time: a whole-stream expression would allocate several stream-sized
    # temporaries (the stream alone may be 1 GiB).
    residual_ms, cosine = np.full(L + 1, np.nan), np.full(L, np.nan)
    for layer in range(finite_layers + 1):
        residual_ms[layer] = float(stream[layer].double().pow(2).mean())
        if layer:
            cosine[layer - 1] = float(cosines(stream[layer - 1], stream[layer]).mean())
    return DepthResult(
        spec=spec,
        residual_ms=residual_ms,
        grad_norm=grad_norm,
        update_ratio=update_ratio,
        cosine=cosine,
        x0_weight=x0_weight,
        pre_norm_ms=pre_norm_ms,
        alpha=stack.alpha,
        beta=stack.beta,
        branches_per_layer=branches_per_layer(spec),
        seconds=time.perf_counter() - start,
        lemma2_broken=lemma2_violations(spec),
        deepnorm_layers=deepnorm_layers(spec),
        branch_gain=branch_gain(spec),
        nonfinite=nonfinite,
    )
