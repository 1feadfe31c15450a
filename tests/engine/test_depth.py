"""engine.depth.simulator: the residual-stack simulator against theory and against plain autograd."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from engine import DepthSpec, simulate_depth
from engine.depth.coincidence import coinciding
from engine.depth.limits import check_limits, check_sweep, keeps_graphs, sweep_depths
from engine.depth.placements import PLACEMENTS
from engine.depth.simulator import cosines, layer_weights, readout, stack_input
from engine.depth.sweep import last_layer_grad_norm, sweep_last_layer_grad
from engine.depth.theory import (
    branch_gain,
    deepnorm_constants,
    fit_loglog_slope,
    lemma2_violations,
    pre_ln_band,
    x0_weight_expected,
)
from engine.errors import EngineError
from engine.threads import Cancelled, torch_threads


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """One intra-op thread: same numbers, and no OpenMP stalls on a busy 2-core machine."""
    with torch_threads(1):
        yield


XIONG = dict(sublayer="transformer", activation="relu", init_std=None, norm="layernorm")


# --- an independent stack: every layer written out with torch.nn.functional -------------


def _norm(x: torch.Tensor, spec: DepthSpec) -> torch.Tensor:
    if spec.norm == "layernorm":
        return F.layer_norm(x, (x.shape[-1],), eps=spec.eps)
    if spec.norm == "rmsnorm":
        return F.rms_norm(x, (x.shape[-1],), eps=spec.eps)
    return torch.tanh(spec.dyt_alpha * x)


def _branch(part: str, h: torch.Tensor, w: dict, spec: DepthSpec) -> torch.Tensor:
    if part == "linear":
        return h @ w["w"]
    if part == "mlp":
        act = F.relu if spec.activation == "relu" else F.gelu
        return act(h @ w["w_in"]) @ w["w_out"]
    T = h.shape[-2]
    mix = torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1)[:, None]  # causal average
    return mix @ (h @ w["w_v"]) @ w["w_o"]


def _autograd_stack(spec: DepthSpec):
    """(residual mean squares [L+1], per-layer weight-gradient norms [L])."""
    alpha = deepnorm_constants(spec.layers * (2 if spec.sublayer == "transformer" else 1) / 2)[0]
    parts = ("attention", "mlp") if spec.sublayer == "transformer" else (spec.sublayer,)
    x = stack_input(spec)
    ms, layers = [x.pow(2).mean().item()], []
    for layer in range(1, spec.layers + 1):
        weights = [
            {k: v.requires_grad_(True) for k, v in b.items()} for b in layer_weights(spec, layer)
        ]
        layers.append(weights)
        for part, w in zip(parts, weights):
            p = spec.placement
            if p == "post":
                x = _norm(x + _branch(part, x, w, spec), spec)
            elif p == "deepnorm":
                x = _norm(alpha * x + _branch(part, x, w, spec), spec)
            elif p == "pre":
                x = x + _branch(part, _norm(x, spec), w, spec)
            elif p == "pre_scaled":
                x = x + _branch(part, _norm(x, spec) / math.sqrt(layer), w, spec)
            elif p == "peri":
                x = x + _norm(_branch(part, _norm(x, spec), w, spec), spec)
            elif p == "olmo2":
                x = x + _norm(_branch(part, x, w, spec), spec)
            else:
                x = x + _branch(part, x, w, spec)
        ms.append(x.pow(2).mean().item())
    y = (
        _norm(x, spec)
        if spec.final_norm and spec.placement not in ("post", "deepnorm", "none")
        else x
    )
    loss = (y * readout(spec)).sum() / math.sqrt(spec.tokens)
    loss.backward()
    grads = [
        math.sqrt(sum(float(t.grad.pow(2).sum()) for b in weights for t in b.values()))
        for weights in layers
    ]
    return np.array(ms), np.array(grads)


CASES = [
    dict(placement=p) for p in ("post", "pre", "peri", "olmo2", "deepnorm", "pre_scaled", "none")
] + [
    dict(placement="pre", sublayer="mlp"),
    dict(placement="post", sublayer="attention"),
    dict(placement="deepnorm", sublayer="transformer", residual_scaling=True),
    dict(placement="peri", norm="rmsnorm", sublayer="transformer"),
    dict(placement="pre", norm="dyt", sublayer="mlp", activation="relu", final_norm=False),
    dict(placement="olmo2", norm="rmsnorm", init_std=0.02),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_simulator_matches_plain_autograd_on_a_small_stack(case):
    case = dict(case)
    spec = DepthSpec(layers=5, d=32, tokens=6, init_std=case.pop("init_std", 0.15), **case)
    result = simulate_depth(spec)
    ms, grads = _autograd_stack(spec)
    np.testing.assert_allclose(result.residual_ms, ms, rtol=1e-4)
    np.testing.assert_allclose(result.grad_norm, grads, rtol=1e-3)


def test_pre_ln_mean_square_lies_inside_xiong_lemma2_band():
    spec = DepthSpec(placement="pre", layers=24, d=256, tokens=16, **XIONG)
    assert lemma2_violations(spec) == ()
    ms = np.mean(
        [simulate_depth(dataclasses.replace(spec, seed=s)).residual_ms for s in range(3)], 0
    )
    lo, hi = pre_ln_band(np.arange(25))
    assert np.all(ms[1:] >= lo[1:] * 0.98), (ms, lo)
    assert np.all(ms[1:] <= hi[1:] * 1.02), (ms, hi)
    assert ms[-1] > 2 * ms[6]  # grows linearly with depth


def test_post_ln_stream_is_flat_and_its_last_sum_is_three_halves():
    spec = DepthSpec(placement="post", layers=24, d=256, tokens=16, **XIONG)
    result = simulate_depth(spec)
    np.testing.assert_allclose(result.residual_ms[1:], 1.0, atol=1e-3)
    assert np.mean(result.pre_norm_ms) == pytest.approx(1.5, abs=0.08)


def test_simulation_leaving_the_assumptions_leaves_the_band():
    spec = DepthSpec(placement="pre", layers=24, d=256, tokens=16, sublayer="mlp", init_std=0.02)
    assert set(lemma2_violations(spec)) == {"sublayer", "activation", "init"}
    lo, _ = pre_ln_band(24)
    result = simulate_depth(spec)
    assert result.residual_ms[-1] < lo
    # the result carries what theory says of its spec, for the page to read
    assert result.lemma2_broken == lemma2_violations(spec)
    assert result.branch_gain == pytest.approx(branch_gain(spec))
    assert result.deepnorm_layers == 12.0  # 24 single branches count as 12 Transformer layers


@pytest.mark.parametrize(
    "sublayer,activation", [("linear", "gelu"), ("mlp", "gelu"), ("mlp", "relu")]
)
def test_pre_norm_growth_matches_branch_gain(sublayer, activation):
    spec = DepthSpec(
        placement="pre", layers=24, sublayer=sublayer, activation=activation, init_std=None
    )
    # Pre-Norm hands every branch a unit-mean-square input: each adds branch_gain (no cross terms)
    expected = 1.0 + np.arange(25) * branch_gain(spec)
    np.testing.assert_allclose(simulate_depth(spec).residual_ms, expected, rtol=0.08)


def test_deepnorm_constants_follow_wang_et_al():
    alpha, beta = deepnorm_constants(100)
    assert alpha == pytest.approx(200**0.25) and beta == pytest.approx(800**-0.25)
    assert deepnorm_constants(1) == pytest.approx((2**0.25, 8**-0.25))
    # a Transformer layer has two branches: N = L; a stack of single branches counts L/2
    full = simulate_depth(
        DepthSpec(placement="deepnorm", layers=8, d=32, tokens=4, sublayer="transformer")
    )
    assert (full.alpha, full.beta) == pytest.approx(deepnorm_constants(8))
    single = simulate_depth(DepthSpec(placement="deepnorm", layers=8, d=32, tokens=4))
    assert (single.alpha, single.beta) == pytest.approx(deepnorm_constants(4))


def test_deepnorm_scales_branch_weights_by_beta_and_keeps_the_draws():
    pre = layer_weights(DepthSpec(placement="pre", layers=8, d=16), 3)
    deep = layer_weights(DepthSpec(placement="deepnorm", layers=8, d=16), 3)
    beta = deepnorm_constants(4)[1]
    torch.testing.assert_close(deep[0]["w"], beta * pre[0]["w"])


def test_gpt2_residual_scaling_divides_output_projections_by_sqrt_2L():
    spec = DepthSpec(layers=12, d=64, sublayer="transformer", init_std=0.02)
    plain = layer_weights(spec, 1)
    scaled = layer_weights(dataclasses.replace(spec, residual_scaling=True), 1)
    torch.testing.assert_close(scaled[1]["w_out"], plain[1]["w_out"] / math.sqrt(24))
    torch.testing.assert_close(scaled[0]["w_o"], plain[0]["w_o"] / math.sqrt(24))
    torch.testing.assert_close(scaled[1]["w_in"], plain[1]["w_in"])


def test_post_norm_weight_on_x0_halves_every_two_layers():
    result = simulate_depth(DepthSpec(placement="post", layers=24, init_std=None))
    ell = np.arange(25)
    assert np.all(np.abs(np.log2(result.x0_weight) + ell / 2) <= 0.05 * ell + 0.1)
    np.testing.assert_allclose(x0_weight_expected(ell), 2.0 ** (-ell / 2))
    pre = simulate_depth(DepthSpec(placement="pre", layers=6, d=32, tokens=4))
    np.testing.assert_array_equal(pre.x0_weight, 1.0)


def test_pre_ln_updates_shrink_and_consecutive_layers_align():
    result = simulate_depth(DepthSpec(placement="pre", layers=48, init_std=None))
    assert result.update_ratio[0] == pytest.approx(1.0, abs=0.1)
    assert result.update_ratio[-1] == pytest.approx(1 / math.sqrt(48), rel=0.15)
    assert result.cosine[-1] > 0.98 > 0.8 > result.cosine[0]


def test_statistics_of_a_stream_past_float32s_squares_match_float64():
    """No norm: the stream doubles its mean square every layer.  Past ~1e19 per entry its
    squared norms leave float32's range while the stream itself is still finite; the
    cosine and the relative update read 0 and NaN there unless computed in float64."""
    spec = DepthSpec(placement="none", layers=160, d=64, tokens=8)
    result = simulate_depth(spec)
    assert result.nonfinite is None
    x = stack_input(spec).double()  # the oracle: the same stack in float64
    cosines, ratios = [], []
    for layer in range(1, spec.layers + 1):
        write = x @ layer_weights(spec, layer)[0]["w"].double()
        ratios.append(float(write.norm() / x.norm()))
        cosines.append(float(F.cosine_similarity(x, x + write, dim=-1).mean()))
        x = x + write
    assert float(x.abs().max()) > 1e21  # its squares are past float32's 3.4e38
    np.testing.assert_allclose(result.cosine, cosines, atol=1e-3)
    np.testing.assert_allclose(result.update_ratio, ratios, rtol=1e-3)
    assert np.isfinite(result.grad_norm).all()


def test_the_cosine_of_a_shrinking_stream_is_its_cosine_at_any_scale():
    """DyT in Post-Norm's place does not renormalise: with an MLP branch at 1/fan-in the
    stream's mean square falls below 1e-20.  ``F.cosine_similarity`` clamps each norm at 1e-8
    and read 0 there; the cosine is scale-free, so it is torch's own at unit scale."""
    a, b = torch.randn(3, 5, 64), torch.randn(3, 5, 64)
    for scale in (1.0, 1e-12, 1e-30, 1e18):
        torch.testing.assert_close(
            cosines(a * scale, a * scale + b * scale),
            F.cosine_similarity(a.double(), a.double() + b.double(), dim=-1),
        )
    result = simulate_depth(DepthSpec(placement="post", sublayer="mlp", norm="dyt", init_std=None))
    assert result.residual_ms[-1] < 1e-20 and result.nonfinite is None
    assert (result.cosine > 0.8).all(), result.cosine


def test_sweep_slope_is_flat_for_post_ln_and_minus_half_for_pre_ln():
    post = sweep_last_layer_grad(DepthSpec(placement="post", d=128, tokens=16))
    pre = sweep_last_layer_grad(DepthSpec(placement="pre", d=128, tokens=16))
    no_final = sweep_last_layer_grad(DepthSpec(placement="pre", d=128, tokens=16, final_norm=False))
    assert abs(post.slope) < 0.1
    assert -0.6 < pre.slope < -0.38
    assert abs(no_final.slope) < 0.1  # the 1/sqrt(L) comes from ln_f dividing by ||x_L||
    assert list(pre.layers) == [6, 12, 24, 48, 96]


@pytest.mark.parametrize("placement", sorted(PLACEMENTS))
@pytest.mark.parametrize("sublayer, norm", [("linear", "layernorm"), ("transformer", "dyt")])
def test_the_sweeps_last_layer_gradient_is_the_whole_simulations_to_the_bit(
    placement, sublayer, norm, monkeypatch
):
    """The sweep runs the last layer's backward pass alone: its value is the whole
    simulation's last entry, bit for bit, for every placement (DeepNorm's and GPT-2's
    depth-dependent scales included) and where the stack drops its graphs."""
    spec = DepthSpec(placement=placement, sublayer=sublayer, norm=norm, layers=12, d=32, tokens=8)
    assert last_layer_grad_norm(spec) == simulate_depth(spec).grad_norm[-1]
    monkeypatch.setattr("engine.depth.limits.KEEP_GRAPH_ELEMENTS", 0)  # a stack too big to
    assert not keeps_graphs(spec)  # keep its graphs: the simulation re-runs layers going down
    assert last_layer_grad_norm(spec) == simulate_depth(spec).grad_norm[-1]


def test_the_sweeps_last_layer_gradient_is_nan_past_float32_and_stops_when_asked():
    spec = DepthSpec(placement="none", init_std=10.0, layers=24, d=64, tokens=8)
    whole = simulate_depth(spec)
    assert whole.nonfinite is not None and math.isnan(whole.grad_norm[-1])
    assert math.isnan(last_layer_grad_norm(spec))
    with pytest.raises(Cancelled):
        last_layer_grad_norm(DepthSpec(), should_stop=lambda: True)


def test_the_sweeps_last_layer_gradient_is_nan_where_the_layers_input_gradient_is():
    """RMSNorm's mean square overflows float32 at x ~ 1e20 (rstd 0, the norm's output 0):
    the weights' gradient is a finite 0, the gradient of the layer's input is not, and the
    whole simulation gives up on that layer.  The sweep's value is the same NaN, not 0."""
    spec = DepthSpec(norm="rmsnorm", init_std=1e20, final_norm=False, layers=2, d=4, tokens=4)
    whole = simulate_depth(spec)
    assert whole.nonfinite is not None and whole.nonfinite.quantity == "gradient"
    assert math.isnan(whole.grad_norm[-1])
    assert math.isnan(last_layer_grad_norm(spec))


def test_theory_helpers():
    lo, hi = pre_ln_band([0, 2, 10])
    np.testing.assert_allclose(lo, [1, 2, 6])
    np.testing.assert_allclose(hi, [1, 4, 16])
    slope, intercept = fit_loglog_slope([6, 96], [3.0 / np.sqrt(6), 3.0 / np.sqrt(96)])
    assert slope == pytest.approx(-0.5)
    assert intercept == pytest.approx(np.log(3.0))
    assert branch_gain(
        DepthSpec(sublayer="mlp", activation="relu", init_std=None)
    ) == pytest.approx(0.5)
    assert branch_gain(DepthSpec(sublayer="attention")) is None


@pytest.mark.parametrize(
    "changes,message",
    [
        (dict(layers=1001), "limit of 1000 on the CPU"),
        (dict(d=4097), "d = 4097 is over the limit of 4096 on the CPU"),
        (dict(tokens=1025), "limit of 1024 on the CPU"),
        (dict(layers=1000, d=264, tokens=1024), "1 GiB"),
        (dict(layers=100, d=2048), "weights .* over the limit of 268,435,456 per simulation"),
    ],
)
def test_inputs_over_the_limits_are_refused_with_the_reason(changes, message):
    spec = DepthSpec(**changes)
    with pytest.raises(ValueError, match=message):
        check_limits(spec)
    with pytest.raises(ValueError, match=message):
        simulate_depth(spec)


def test_spec_rejects_unknown_words():
    with pytest.raises(ValueError, match="placement"):
        DepthSpec(placement="sideways")
    with pytest.raises(ValueError, match="sublayer"):
        DepthSpec(sublayer="conv")


def test_progress_reaches_one_and_should_stop_cancels():
    seen = []
    simulate_depth(DepthSpec(layers=200, d=16, tokens=4), progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == 1.0 and 50 <= len(seen) <= 101
    calls = []

    def stop() -> bool:
        calls.append(1)
        return len(calls) > 10

    with pytest.raises(Cancelled):
        simulate_depth(DepthSpec(layers=200, d=16, tokens=4), should_stop=stop)
    assert len(calls) == 11


def test_same_seed_same_numbers_and_default_shapes():
    a = simulate_depth(DepthSpec())
    b = simulate_depth(DepthSpec())
    np.testing.assert_array_equal(a.grad_norm, b.grad_norm)
    assert a.residual_ms.shape == (49,) and a.grad_norm.shape == (48,)
    assert a.update_ratio.shape == a.cosine.shape == a.pre_norm_ms.shape == (48,)
    assert a.x0_weight.shape == (49,)
    assert simulate_depth(DepthSpec(seed=1)).grad_norm[0] != a.grad_norm[0]


@pytest.mark.parametrize("placement", ["pre", "post"])
def test_rerunning_layers_gives_the_numbers_of_kept_graphs(monkeypatch, placement):
    spec = DepthSpec(placement=placement, layers=6, d=32, tokens=5, sublayer="transformer")
    kept = simulate_depth(spec)
    monkeypatch.setattr("engine.depth.limits.KEEP_GRAPH_ELEMENTS", 0)  # force the low-memory path
    rerun = simulate_depth(spec)
    np.testing.assert_allclose(rerun.grad_norm, kept.grad_norm, rtol=1e-6)
    np.testing.assert_array_equal(rerun.residual_ms, kept.residual_ms)


def _run(placement: str, residual_ms) -> object:
    """What ``coinciding`` reads of a result: its placement and one per-layer trace."""
    spec = dataclasses.replace(DepthSpec(), placement=placement)
    return type("Run", (), {"spec": spec, "residual_ms": np.asarray(residual_ms, float)})()


def test_coinciding_groups_runs_within_a_percent_at_every_layer_and_says_why():
    pre = _run("pre", [1.0, 1.1, 1.2, 1.3])
    peri = _run("peri", [1.0, 2.0, 3.0, 4.0])
    olmo2 = _run("olmo2", [1.0, 2.01, 2.99, 4.02])  # within 0.5 % of Peri-Norm everywhere
    found = coinciding([pre, peri, olmo2])
    assert [g.placements for g in found] == [("peri", "olmo2")]
    assert found[0].largest_difference == pytest.approx(0.02 / 4.02)
    assert found[0].all_branch_outputs_normed  # both norm F's output
    apart = _run("olmo2", [1.0, 2.0, 3.0, 4.1])  # 2.4 % apart at the last layer
    assert coinciding([pre, peri, apart]) == ()
    assert not coinciding([pre, _run("post", [1.0, 1.1, 1.2, 1.3])])[0].all_branch_outputs_normed
    shorter = _run("olmo2", [1.0, 2.0, 3.0])
    assert coinciding([peri, shorter]) == ()  # different depths never coincide
    broken = _run("olmo2", [1.0, 2.0, math.inf, math.nan])
    assert coinciding([peri, broken]) == ()


def test_check_sweep_raises_the_refusal_of_the_first_depth_the_sweep_leaves_out():
    spec = dataclasses.replace(DepthSpec(), sublayer="mlp", d=2048, tokens=1024)
    assert sweep_depths(spec) == ()
    with pytest.raises(EngineError) as refused:
        check_sweep(spec)
    # L = 6, the shallowest; worded for a sweep, whose depths are fixed (no "lower L")
    assert refused.value.key == "depth.over_memory_budget_sweep"
    assert refused.value.params["layers"] == 6
    check_sweep(DepthSpec())  # every depth of the sweep fits: nothing raised


def test_a_sweep_says_which_of_theorem_1s_assumptions_its_stack_leaves():
    """Theorem 1 (Xiong et al.) is stated under Lemma 2's setting: the default stack, a linear
    sublayer, leaves it, so its slopes are a reference; the Lemma 2 stack keeps it."""
    from engine.depth.sweep import SweepResult

    def result(spec):
        return SweepResult(spec, np.array([6, 12]), np.ones(2), 0.0, 0.0, 0.0)

    assert "sublayer" in result(DepthSpec(placement="pre")).theorem1_broken
    assert result(DepthSpec(placement="pre", **XIONG)).theorem1_broken == ()
    assert "placement" not in result(DepthSpec(placement="peri", **XIONG)).theorem1_broken
