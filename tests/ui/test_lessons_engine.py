"""Every lesson's "predict" answer and every number its text states, computed with the engine.

A lesson cannot claim what the engine does not show: each test computes the lesson's fact at
the lesson's own settings (the state its link opens) and checks the catalog's answer and
numbers against it.  Where a check has an independent oracle (PyTorch's F.layer_norm, float64
by hand), it is used too.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from engine import DepthSpec, NormSpec, normalize, simulate_depth
from engine.axes.batch_of_one import batch_of_one
from engine.axes.sharing import axes_statistics
from engine.config import DTYPES, AxesSpec, DumpSpec, PrecisionSpec
from engine.config.depth import INIT_STDS
from engine.depth.coincidence import coinciding
from engine.depth.simulator import layer_weights
from engine.depth.theory import deepnorm_constants, deepnorm_layers
from engine.norms.kinds import statistics_count
from engine.norms.precision import precision_story
from engine.perf.roofline import FUSED_PASSES, GPU_NAME, UNFUSED_PASSES, norm_traffic
from ui.i18n import catalog
from ui.lessons.catalog import LESSONS, lesson
from ui.lessons.targets import TARGETS
from ui.url.pages import KERNELS

X = torch.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=torch.float64)  # [T=1, d=4]
EXAMPLE = (
    Path(__file__).resolve().parents[2]
    / "engine"
    / "dumps"
    / "examples"
    / "smollm2_prompts.safetensors"
)


def _fact(lesson_id: str, name: str) -> float:
    return lesson(lesson_id).facts[name].value


def _shown(lesson_id: str, name: str) -> float:
    """The number a fact's text shows ("−1.3416", "2,048", "2.5×10¹⁴" -> floats); of a
    vector ("0.3651, 0.7303, ..."), its first entry."""
    text = lesson(lesson_id).facts[name].text.split(", ")[0]
    text = text.replace("−", "-").replace(",", "")
    if "×10" in text:
        mantissa, power = text.split("×10")
        digits = power.translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789"))
        return float(mantissa) * 10 ** int(digits)
    return float(text)


@pytest.mark.parametrize(
    "item, name",
    [(item, name) for item in LESSONS for name in item.facts],
    ids=[f"{item.id}-{name}" for item in LESSONS for name in item.facts],
)
def test_each_fact_shows_its_value(item, name):
    """The text a page shows is the value the tests below check, to the digits shown."""
    shown, value = _shown(item.id, name), item.facts[name].value
    assert shown == pytest.approx(value, rel=0.02, abs=0.006), (item.id, name)


def _depth(placement: str, **settings) -> object:
    return simulate_depth(DepthSpec(placement=placement, **settings))


@pytest.mark.slow  # a 48-layer simulation
def test_why_normalize_without_a_norm_the_mean_square_doubles_every_layer():
    assert dict(TARGETS["why_normalize"].values)["dp_placements"] == ("none",)  # no spoiler
    none = _depth("none")
    layers = none.spec.layers
    assert layers == _fact("why_normalize", "layers")
    final = float(none.residual_ms[-1])
    assert math.isfinite(final)  # (d) is wrong: float32 holds it
    assert final == pytest.approx(_fact("why_normalize", "none_final"), rel=0.1)
    steps = none.residual_ms[1:] / none.residual_ms[:-1]
    assert np.median(steps) == pytest.approx(2.0, rel=0.05)  # doubling, not linear (a)
    assert _fact("why_normalize", "doubling") == 2.0**layers  # the law the reveal compares
    assert lesson("why_normalize").answer == "b"


def test_which_axis_batchnorm_has_d_statistics_and_layernorm_b_times_t():
    spec = AxesSpec(kind="batchnorm")  # the Axes page's defaults, as the link opens it
    b, t, d = spec.batch, spec.tokens, spec.d
    facts = {n: _fact("which_axis", n) for n in ("batch", "tokens", "d", "ln_pairs", "bn_pairs")}
    assert (b, t, d) == (facts["batch"], facts["tokens"], facts["d"])
    assert statistics_count("layernorm", b, t, d) == facts["ln_pairs"]
    assert statistics_count("batchnorm", b, t, d) == facts["bn_pairs"]
    stats = axes_statistics(spec)  # what the page draws: BatchNorm's per-channel mean
    x = torch.as_tensor(stats.x, dtype=torch.float64)  # [B, T, d]
    bn = torch.nn.BatchNorm1d(d, affine=False, dtype=torch.float64).train()
    bn(x.transpose(1, 2))
    assert bn.running_mean.numel() == facts["bn_pairs"]  # PyTorch: one mean per channel
    assert x[..., 0].numel() == facts["ln_pairs"] == b * t
    assert _fact("which_axis", "cells") == b * t * d
    assert lesson("which_axis").answer == "a"


def test_worked_example_first_entry_against_torch_layer_norm():
    y = normalize(X, NormSpec(kind="layernorm", eps=0.0, compute_dtype="float64")).y
    oracle = torch.nn.functional.layer_norm(X, (4,), eps=0.0)
    assert y[0, 0].item() == pytest.approx(oracle[0, 0].item(), abs=1e-12)
    assert y[0, 0].item() == pytest.approx(_fact("worked_example", "first"), abs=5e-5)
    assert lesson("worked_example").answer == "b"
    unbiased = (X - X.mean()) / X.std(unbiased=True)  # the d - 1 distractor
    assert unbiased[0, 0].item() == pytest.approx(
        _fact("worked_example", "wrong_unbiased"), abs=5e-5
    )
    assert (X - X.mean())[0, 0].item() == _fact("worked_example", "wrong_centered")
    rms = normalize(X, NormSpec(kind="rmsnorm", eps=0.0, compute_dtype="float64")).y
    assert rms[0, 0].item() == pytest.approx(_fact("worked_example", "rms_first"), abs=5e-5)
    r = normalize(X, NormSpec(kind="layernorm", eps=0.0, compute_dtype="float64"))
    assert r.mean.item() == _fact("worked_example", "mean")
    assert r.var.item() == pytest.approx(_fact("worked_example", "var"))
    assert math.sqrt(r.var.item()) == pytest.approx(_fact("worked_example", "std"), abs=5e-5)


def test_rmsnorm_rms_squared_is_variance_plus_mean_squared():
    ln = normalize(X, NormSpec(kind="layernorm", eps=0.0, compute_dtype="float64"))
    rms = normalize(X, NormSpec(kind="rmsnorm", eps=0.0, compute_dtype="float64"))
    by_hand = (X**2).mean().item()  # float64: (1 + 4 + 9 + 16) / 4
    assert rms.rms.item() ** 2 == pytest.approx(by_hand) == _fact("rmsnorm", "ms")
    assert ln.var.item() + ln.mean.item() ** 2 == pytest.approx(_fact("rmsnorm", "ms"))
    assert lesson("rmsnorm").answer == "c"
    assert rms.rms.item() == pytest.approx(_fact("rmsnorm", "rms"), abs=5e-5)
    assert rms.rms.item() / math.sqrt(ln.var.item()) == pytest.approx(
        _fact("rmsnorm", "ratio"), abs=5e-3
    )
    assert (X**2).sum().item() == _fact("rmsnorm", "sumsq")
    shown = [float(v) for v in lesson("rmsnorm").facts["rms_out"].text.split(", ")]
    np.testing.assert_allclose(rms.y[0].numpy(), shown, atol=5e-5)
    ratios = rms.y[0] / rms.y[0, 0]  # the direction is kept: 1 : 2 : 3 : 4
    np.testing.assert_allclose(ratios.numpy(), [1, 2, 3, 4])


def test_geometry_layernorm_outputs_lie_on_the_circle_in_d_3():
    x = torch.randn(500, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    y = normalize(x, NormSpec(kind="layernorm", eps=0.0, compute_dtype="float64")).y  # [500, 3]
    np.testing.assert_allclose(y.norm(dim=-1).numpy(), math.sqrt(3), rtol=1e-12)
    np.testing.assert_allclose(y.sum(dim=-1).numpy(), 0.0, atol=1e-12)  # on the plane ⟂ 1
    assert math.sqrt(3) == pytest.approx(_fact("geometry", "sqrt3"), abs=5e-5)
    rms = normalize(x, NormSpec(kind="rmsnorm", eps=0.0, compute_dtype="float64")).y
    np.testing.assert_allclose(rms.norm(dim=-1).numpy(), math.sqrt(3), rtol=1e-12)
    assert rms.sum(dim=-1).abs().max() > 1.0  # RMSNorm leaves the plane: not (c) for it
    assert lesson("geometry").answer == "b"


def test_batchnorm_of_one_token_is_beta_not_an_error():
    assert TARGETS["batchnorm_sequences"].as_dict() == {"ax_section": "batchnorm"}
    result = batch_of_one(AxesSpec())
    assert result.max_abs_y_minus_beta == 0.0  # (c): beta, whatever the input
    assert not result.claim_holds  # (a): no ZeroDivisionError anywhere
    assert result.nan_count_eps0 > 0  # NaN only with eps = 0, not the lesson's eps > 0
    assert result.torch_train_error_type == "ValueError"  # nn.BatchNorm1d refuses, on purpose
    assert result.torch_sequence_trains and result.sequence_min_var > 0
    # "at ε = 0 ... (PyTorch's torch.batch_norm returns β there)": one value per channel
    x, gamma, beta = torch.randn(1, 4, dtype=torch.float64), torch.rand(4) + 0.5, torch.randn(4)
    y = torch.batch_norm(x, gamma.double(), beta.double(), None, None, True, 0.1, 0.0, False)
    assert torch.equal(y, beta.double()[None])
    assert lesson("batchnorm_sequences").answer == "c"


@pytest.mark.slow  # two 48-layer simulations
def test_pre_post_post_stays_at_one_and_pre_grows_linearly():
    post, pre = _depth("post"), _depth("pre")
    assert float(post.residual_ms[-1]) == pytest.approx(_fact("pre_post", "post_final"), abs=0.05)
    assert float(pre.residual_ms[-1]) == pytest.approx(_fact("pre_post", "pre_final"), rel=0.1)
    assert float(pre.update_ratio[-1]) == pytest.approx(_fact("pre_post", "pre_update"), abs=0.02)
    half = float(pre.residual_ms[pre.spec.layers // 2])  # linear: half-way, about half
    assert half / float(pre.residual_ms[-1]) == pytest.approx(0.5, abs=0.06)
    assert lesson("pre_post").answer == "b"


@pytest.mark.slow  # three 48-layer simulations
def test_peri_and_olmo2_fix_the_size_of_each_write_whatever_the_init():
    values = TARGETS["peri_olmo2"].as_dict()
    std = INIT_STDS[values["dp_init"]]  # the Depth page's fixed init
    settings = dict(init_std=std)
    pre, peri, olmo2 = (_depth(p, **settings) for p in values["dp_placements"])
    assert float(pre.residual_ms[-1]) == pytest.approx(_fact("peri_olmo2", "pre_final"), rel=0.05)
    for result in (peri, olmo2):
        assert float(result.residual_ms[-1]) == pytest.approx(
            _fact("peri_olmo2", "peri_final"), rel=0.05
        )
    gain = pre.spec.d * std**2  # E||F||^2 / E||x||^2 of a linear branch: d * std^2
    assert gain == pytest.approx(_fact("peri_olmo2", "gain"))
    assert lesson("peri_olmo2").answer == "b"
    # the reveal says the page shows two lines, not three: Peri-Norm's and OLMo 2's coincide
    (group,) = coinciding([pre, peri, olmo2])
    assert group.placements == ("peri", "olmo2") and group.all_branch_outputs_normed


@pytest.mark.slow  # four 48-layer simulations
def test_deepnorm_updates_are_a_tenth_of_the_stream():
    post, deep = _depth("post"), _depth("deepnorm")
    assert float(np.median(post.update_ratio)) == pytest.approx(
        _fact("deepnorm", "post_update"), abs=0.001
    )
    assert float(np.median(deep.update_ratio)) == pytest.approx(
        _fact("deepnorm", "deep_update"), abs=0.001
    )
    for sublayer in ("mlp", "transformer"):  # a branch of two scaled matrices: smaller still
        real = _depth("deepnorm", sublayer=sublayer)
        assert float(np.median(real.update_ratio)) == pytest.approx(
            _fact("deepnorm", f"{sublayer}_update"), abs=0.0002
        )
    alpha, beta = deepnorm_constants(deepnorm_layers(deep.spec))
    assert alpha == pytest.approx(_fact("deepnorm", "alpha"), abs=5e-5)
    assert beta == pytest.approx(_fact("deepnorm", "beta"), abs=5e-5)
    assert lesson("deepnorm").answer == "b"


def test_deepnorm_states_the_n_its_constants_use_and_which_weights_beta_scales():
    """α and β are DeepNet's for N blocks of two branches; the Depth page's 48 layers are
    single branches, so N = 24 (the lesson says so, and what N = 48 would give)."""
    spec = DepthSpec(placement="deepnorm")  # the Depth page's default stack, as linked
    assert spec.layers == _fact("deepnorm", "layers")
    assert deepnorm_layers(spec) == _fact("deepnorm", "blocks") == spec.layers / 2
    alpha, beta = deepnorm_constants(_fact("deepnorm", "blocks"))
    assert (alpha, beta) == (pytest.approx(_fact("deepnorm", "alpha"), abs=5e-5),
                             pytest.approx(_fact("deepnorm", "beta"), abs=5e-5))  # fmt: skip
    alpha48, beta48 = deepnorm_constants(spec.layers)  # the "transformer" sublayer's N = 48
    transformer = dataclasses.replace(spec, sublayer="transformer")
    assert deepnorm_layers(transformer) == spec.layers  # two branches a layer: N = L
    assert alpha48 == pytest.approx(_fact("deepnorm", "alpha_layers"), abs=5e-5)
    assert beta48 == pytest.approx(_fact("deepnorm", "beta_layers"), abs=5e-5)
    for lang in ("en", "zh"):
        reveal = catalog(lang)["lessons.deepnorm.reveal"]
        assert "{blocks}" in reveal and "{alpha_layers}" in reveal, lang
    # β scales the FFN and the value and output projections; q and k are not scaled (the
    # engine's attention has none: W_Q = W_K = 0, a uniform causal mixer)
    block = dataclasses.replace(spec, sublayer="transformer", init_std=0.02)
    names = {name for branch in layer_weights(block, 1) for name in branch}
    assert names == {"w_v", "w_o", "w_in", "w_out"}
    attention, mlp = layer_weights(block, 1)
    _, beta_block = deepnorm_constants(deepnorm_layers(block))
    for weight in (*attention.values(), mlp["w_in"]):
        assert weight.std().item() == pytest.approx(0.02 * beta_block, rel=0.05)
    assert "query and key" in catalog("en")["lessons.deepnorm.idea"]
    assert "查询投影和键投影" in catalog("zh")["lessons.deepnorm.idea"]


def test_cost_the_dtype_changes_the_flops_per_byte_and_d_does_not():
    values = TARGETS["cost"].as_dict()
    tokens, d = values["kn_tokens"], values["kn_d"]
    bf16 = norm_traffic(tokens, d, DTYPES["bfloat16"].itemsize, "layernorm")
    f32 = norm_traffic(tokens, d, DTYPES["float32"].itemsize, "layernorm")
    assert "float32" in KERNELS["kn_rdtype"].choices  # the page's own dtype selector
    assert bf16.intensity == _fact("cost", "ln_intensity")
    assert f32.intensity == _fact("cost", "ln_intensity_float32") != bf16.intensity
    assert norm_traffic(tokens, 4 * d, 2).intensity == bf16.intensity  # d: no change
    for lang in ("en", "zh"):
        assert "{ln_intensity_float32}" in catalog(lang)["lessons.cost.next"], lang


def test_precision_the_squared_deviation_overflows_and_float32_statistics_fix_it():
    values = TARGETS["precision"].as_dict()
    row = [float(v) for v in values["vl_text"].split(",")]
    story = precision_story([row], PrecisionSpec(kind="layernorm", eps=1e-5, dtype="float16"))
    half = story.path("sum_then_divide_half").rows[0]  # the Vector Lab's float16 steps
    assert half.diagnosis.quantity == "squared_deviation" and half.diagnosis.failure == "overflow"
    assert half.outcome == "silent_zero"  # every output 0, no NaN: option (c)
    assert half.diagnosis.exact == _fact("precision", "square")
    assert half.diagnosis.dtype_max == _fact("precision", "f16_max")
    upcast = story.path("upcast").rows[0]  # statistics in float32
    assert upcast.diagnosis is None and upcast.outcome == "ok"
    np.testing.assert_allclose(story.path("upcast").y[0], [-1, 1, -1, 1], atol=1e-3)
    assert np.isfinite(story.x).all() and story.exact.mean[0] == 0.0  # not (b), not (d)
    assert lesson("precision").answer == "c"


def test_gemma_offset_with_zero_weight_is_plain_rmsnorm():
    values = TARGETS["gemma_offset"].as_dict()
    assert (values["vl_offset"], values["vl_gamma"]) == (1.0, "0")
    spec = NormSpec(kind="rmsnorm", eps=0.0, offset=values["vl_offset"], compute_dtype="float64")
    gemma = normalize(X, spec, weight=torch.zeros(4, dtype=torch.float64)).y
    plain = normalize(X, NormSpec(kind="rmsnorm", eps=0.0, compute_dtype="float64")).y
    torch.testing.assert_close(gemma, plain)
    shown = [float(v) for v in lesson("gemma_offset").facts["rms_out"].text.split(", ")]
    np.testing.assert_allclose(gemma[0].numpy(), shown, atol=5e-5)
    lost = normalize(
        X, NormSpec(kind="rmsnorm", eps=0.0, compute_dtype="float64"), weight=torch.zeros(4)
    ).y  # the same w = 0 in a norm without the offset
    assert lost.abs().max().item() == 0.0
    assert lesson("gemma_offset").answer == "b"


def test_cost_fusion_saves_one_pass_of_five():
    values = TARGETS["cost"].as_dict()
    ln = norm_traffic(values["kn_tokens"], values["kn_d"], 2, "layernorm")  # bfloat16: 2 bytes
    rms = norm_traffic(values["kn_tokens"], values["kn_d"], 2, "rmsnorm")
    assert ln.intensity == _fact("cost", "ln_intensity") and ln.intensity < ln.ridge
    assert ln.ridge == pytest.approx(_fact("cost", "ridge"), abs=0.01) and GPU_NAME == "H200"
    assert ln.flops / (values["kn_tokens"] * values["kn_d"]) == _fact("cost", "ln_flops")
    assert rms.flops / (values["kn_tokens"] * values["kn_d"]) == _fact("cost", "rms_flops")
    assert (UNFUSED_PASSES, FUSED_PASSES) == (
        _fact("cost", "unfused"),
        _fact("cost", "fused"),
    )
    assert ln.fusion_saving == _fact("cost", "fusion")  # (b), not 2x
    assert lesson("cost").answer == "b"


@pytest.mark.skipif(not EXAMPLE.exists(), reason="the shipped example dump is missing")
def test_real_models_the_first_token_jumps_at_block_12():
    from engine.dumps.report import report

    rep = report(EXAMPLE, DumpSpec(), fit_norms=False)
    rms = rep.residual.rms  # [L, B, T]
    labels = list(rep.labels)
    before = labels.index("model.layers.11.input")
    after = labels.index("model.layers.12.input")
    first = rms[:, 0, 0]  # the first prompt's first token, as the page shows by default
    assert first[before] == pytest.approx(_fact("real_models", "before_jump"), abs=0.05)
    assert first[after] == pytest.approx(_fact("real_models", "after_jump"), abs=0.5)
    assert first[after] / first[before] > 100  # (c): over a hundred times
    others = np.median(rms[:, 0, 1:], axis=1)  # ordinary tokens of the same prompt
    assert others[0] == pytest.approx(_fact("real_models", "typical_embed"), abs=0.005)
    assert others[1] == pytest.approx(_fact("real_models", "typical_first"), abs=0.05)
    assert others[-1] == pytest.approx(_fact("real_models", "typical_last"), abs=0.5)
    biggest = float(np.nanmax(np.abs(rep.massive.top3)))
    assert biggest == _fact("real_models", "max_entry")
    # the idea's counts: every massive activation, the channels they sit in, the runner-up
    assert len(labels) - 1 == _fact("real_models", "blocks")  # block inputs + the last output
    massive = rep.massive
    assert len(massive.value) == _fact("real_models", "massive_count")
    channels = np.unique(massive.channel)
    assert len(channels) == _fact("real_models", "massive_channels")
    assert channels[0] == _fact("real_models", "channel")
    assert set(massive.token.tolist()) == {0}  # the first token ...
    assert set(massive.batch.tolist()) == set(range(rms.shape[1]))  # ... of every prompt
    per_channel = np.nanmax(rep.channels.maxabs, axis=0)  # [d] largest |a| of each channel
    assert per_channel.shape[0] == _fact("real_models", "width")
    assert float(np.sort(per_channel)[-2]) == _fact("real_models", "next_channel")
    f16_max = torch.finfo(torch.float16).max
    assert biggest < f16_max == _fact("real_models", "f16_max") < biggest**2  # fits; square doesn't
    assert lesson("real_models").answer == "c"
    # "before γ, most of the token's length lies along channel {channel}": each token holding
    # a massive activation, read from the file with safetensors alone, in float64
    from safetensors import safe_open

    with safe_open(EXAMPLE, "pt") as dump:
        for layer, batch, token in zip(massive.layer, massive.batch, massive.token, strict=True):
            x = dump.get_tensor(labels[layer])[batch, token].double()
            share = x[int(_fact("real_models", "channel"))] ** 2 / (x**2).sum()
            assert share > 0.5, (labels[layer], batch, token, float(share))
