"""The unmodified run, the measures, and the guarantees every experiment relies on: edits
undone, the shared model unchanged, two sessions never seeing each other's edits."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
import torch

from engine.config import (
    FoldSpec,
    FreezeSpec,
    FreezeSweepSpec,
    HalfSpec,
    LensSpec,
    MassiveSpec,
    SwapSpec,
    TextSpec,
)
from engine.dumps.architectures import module_paths
from engine.dumps.live import load_live_model
from engine.errors import EngineError
from engine.experiments.fold import fold_norms
from engine.experiments.freeze import freeze_scale, freeze_sweep
from engine.experiments.half import float16_run
from engine.experiments.lens import logit_lens
from engine.experiments.massive import massive_activations
from engine.experiments.runs import Edits, kl_divergence, measure, modified_logits, reference
from engine.experiments.swap import swap_norms
from tests.dumps import tiny_models
from tests.experiments.conftest import CAUSAL, kl_of, nll_of, plain_logits

# Every experiment, with a setting that changes the model (low massive thresholds: a random
# model has no activation of 100).
EXPERIMENTS = {
    "massive": lambda live, ref: massive_activations(
        live, ref, MassiveSpec("zero", massive_abs=1e-3, massive_ratio=3.0)
    ),
    "massive_mean": lambda live, ref: massive_activations(
        live, ref, MassiveSpec("mean", massive_abs=1e-3, massive_ratio=3.0, window=8)
    ),
    "swap": lambda live, ref: swap_norms(live, ref, SwapSpec()),
    "freeze": lambda live, ref: freeze_scale(live, ref, FreezeSpec((1,), final=True)),
    "sweep": lambda live, ref: freeze_sweep(live, ref, FreezeSweepSpec()),
    "fold": lambda live, ref: fold_norms(live, ref, FoldSpec()),
    "lens": lambda live, ref: logit_lens(live, ref, LensSpec()),
    "half": lambda live, ref: float16_run(live, ref, HalfSpec()),
}


@pytest.mark.parametrize("name", CAUSAL)
def test_perplexity_is_hugging_faces_loss(tiny, tiny_reference, name):
    ref = tiny_reference(name)
    ids = torch.tensor([ref.tokens.ids])
    with torch.inference_mode():
        loss = tiny(name).loaded.model(ids, labels=ids, use_cache=False).loss
    assert ref.perplexity == pytest.approx(math.exp(float(loss)), rel=1e-5)
    assert len(ref.tokens.ids) == 24  # the tiny models' context


@pytest.mark.parametrize("name", CAUSAL)
def test_the_reference_stream_is_transformers_hidden_states(tiny, tiny_reference, name):
    ref = tiny_reference(name)
    with torch.inference_mode():
        hidden = (
            tiny(name)
            .loaded.model(
                torch.tensor([ref.tokens.ids]), output_hidden_states=True, use_cache=False
            )
            .hidden_states
        )
    for point in range(ref.layers):  # the last hidden state is after the final norm
        torch.testing.assert_close(ref.stream[point], hidden[point][0], rtol=0, atol=0)
    torch.testing.assert_close(ref.logits, plain_logits(tiny(name).loaded.model, ref.tokens.ids))


@pytest.mark.parametrize("name", ["llama", "gemma", "olmo2", "gpt2"])
def test_each_norms_scale_is_what_torchs_own_norm_divides_by(tiny, tiny_reference, name):
    """rstd = ‖F.rms_norm(x)‖ / ‖x‖ (‖F.layer_norm(x)‖ / ‖x − μ‖), read from torch's op on
    the norm's captured input."""
    live, ref = tiny(name), tiny_reference(name)
    from engine.dumps.hooks import run_with_capture

    with live.exclusive() as loaded:
        paths = module_paths(loaded.model, loaded.architecture)
        _, recorded = run_with_capture(
            loaded.model, paths, None, input_ids=torch.tensor([ref.tokens.ids]), use_cache=False
        )
    modules = dict(live.loaded.model.named_modules())
    for index, path in enumerate(ref.norms):
        x = recorded[f"{path}.input"][0].double()  # [T, d]
        eps = getattr(modules[path], "eps", None) or modules[path].variance_epsilon
        if live.loaded.architecture.norm_kind == "rmsnorm":
            y, base = torch.nn.functional.rms_norm(x, (x.shape[-1],), eps=eps), x
        else:
            y = torch.nn.functional.layer_norm(x, (x.shape[-1],), eps=eps)
            base = x - x.mean(-1, keepdim=True)
        expected = y.norm(dim=-1) / base.norm(dim=-1)  # [T]
        torch.testing.assert_close(ref.norm_rstd[index].double(), expected, rtol=2e-5, atol=0)


@pytest.mark.parametrize(
    "noise, shift",
    # a shift leaves every distribution as it is, but makes Σ p e^(−Δ) = e^-20: the
    # precise form of kl_divergence loses it to cancellation and must not be used
    [(1e-3, 0.0), (0.7, 0.0), (30.0, 0.0), (0.7, -20.0)],
)
def test_measure_against_torchs_kl_div_and_cross_entropy(tiny_reference, noise, shift):
    ref = tiny_reference("llama")
    generator = torch.Generator().manual_seed(0)
    logits = ref.logits + noise * torch.randn(ref.logits.shape, generator=generator) + shift
    effect = measure(ref, logits)
    expected = kl_of(ref.logits, logits).numpy()
    np.testing.assert_allclose(effect.kl, expected, rtol=1e-4, atol=1e-9)
    np.testing.assert_allclose(effect.nll, nll_of(logits, ref.tokens.ids).numpy(), rtol=1e-5)
    agree = (ref.logits.argmax(-1) == logits.argmax(-1)).numpy()
    np.testing.assert_array_equal(effect.top1, agree)
    assert effect.top1_agreement == agree[:-1].mean()  # the positions of a text token
    assert effect.mean_kl == pytest.approx(expected[:-1].mean(), rel=1e-4)
    assert effect.perplexity_ratio == pytest.approx(
        math.exp(nll_of(logits, ref.tokens.ids).mean()) / ref.perplexity, rel=1e-5
    )


def test_equal_logits_measure_exactly_zero_and_a_nan_row_infinite(tiny_reference):
    ref = tiny_reference("llama")
    same = measure(ref, ref.logits.clone())
    assert (same.kl == 0).all() and same.top1.all() and same.perplexity == ref.perplexity
    broken = ref.logits.clone()
    broken[5, 3] = float("nan")
    effect = measure(ref, broken)
    assert math.isinf(effect.kl[5]) and not effect.top1[5] and math.isinf(effect.perplexity)
    assert np.isfinite(np.delete(effect.kl, 5)).all()


def test_kl_stays_right_where_p_underflows_but_q_does_not():
    """q puts its mass on a token whose p is 0 even in float64 (e^-800): the precise form
    cannot see it there, and the plain form takes over."""
    z_p = torch.tensor([[0.0, -800.0, 1.0, 0.5], [0.0, 0.1, 0.2, 0.3]])
    z_q = torch.tensor([[0.0, 8.0, 1.0, 0.5], [0.0, 0.1, 0.2, 0.3 + 1e-4]])
    assert z_p.double().softmax(-1)[0, 1] == 0
    got = kl_divergence(z_p, z_q)
    torch.testing.assert_close(got, kl_of(z_p, z_q), rtol=1e-12, atol=1e-15)
    assert 0 < got[1] < 1e-8  # the precise form: a difference of 1e-4 in one logit


def test_kl_over_a_real_vocabulary_is_float64s():
    """SmolLM2's 49,152 tokens, 64 positions, q with mass where p has little (the terms of
    both sums cancel to a few hundredths, as a norm swap gave): within 1e-9 of torch's
    kl_div in float64, where float32 sums were off by 1 %."""
    generator = torch.Generator().manual_seed(0)
    z_p = 3.0 * torch.randn(64, 49_152, generator=generator)
    z_q = z_p + 0.3 * torch.randn(64, 49_152, generator=generator) + 2.0 * (z_p < -4)
    expected = kl_of(z_p, z_q)
    assert 0.01 < expected.min() and expected.max() < 1.0
    torch.testing.assert_close(kl_divergence(z_p, z_q), expected, rtol=1e-9, atol=0)


@pytest.mark.parametrize("name", CAUSAL)
@pytest.mark.parametrize("replay", [0, 1, 3])
def test_replaying_unchanged_blocks_reproduces_the_logits_bit_for_bit(
    tiny, tiny_reference, name, replay
):
    ref = tiny_reference(name)
    logits = modified_logits(tiny(name), ref, lambda loaded, paths, edits: None, replay=replay)
    assert torch.equal(logits, ref.logits)


def test_edits_are_undone_even_when_the_pass_raises(tiny):
    model = tiny("llama").loaded.model
    linear = model.model.layers[0].self_attn.q_proj
    weight, blocks = linear.weight, model.model.layers
    with pytest.raises(RuntimeError), Edits(model) as edits:
        edits.parameter(linear, "weight", torch.zeros_like(weight))
        edits.forward(blocks[1], lambda *args, **kwargs: None)
        edits.on_output("model.norm", lambda *args: None)
        edits.on_input("model.layers.2", lambda *args: None)
        assert linear.weight is not weight and "forward" in blocks[1].__dict__
        raise RuntimeError("the pass failed")
    assert linear.weight is weight and "forward" not in blocks[1].__dict__
    assert not model.model.norm._forward_hooks and not blocks[2]._forward_pre_hooks


def _state(model: torch.nn.Module):
    return (
        {name: param for name, param in model.named_parameters(remove_duplicate=False)},
        {
            name: (len(m._forward_hooks), len(m._forward_pre_hooks), "forward" in m.__dict__)
            for name, m in model.named_modules()
        },
    )


@pytest.mark.parametrize("experiment", sorted(EXPERIMENTS))
@pytest.mark.parametrize("name", ["llama", "gemma2", "gpt2"])
def test_every_experiment_leaves_the_shared_model_as_it_was(tiny, name, experiment):
    """Same parameter objects, no hook or forward left, logits bit-identical."""
    live = tiny(name)
    ref = reference(live, TextSpec())
    model = live.loaded.model
    before, logits = _state(model), plain_logits(model, ref.tokens.ids)
    EXPERIMENTS[experiment](live, ref)
    params, modules = _state(model)
    assert all(params[key] is value for key, value in before[0].items())
    assert modules == before[1]
    assert torch.equal(plain_logits(model, ref.tokens.ids), logits)


def test_two_sessions_at_once_never_see_each_others_edits(tiny, tiny_reference):
    """Threads running different experiments on one model get what they get alone."""
    live, ref = tiny("llama"), tiny_reference("llama")
    runs = {
        "swap": lambda: swap_norms(live, ref, SwapSpec()).effect.nll,
        "freeze": lambda: freeze_scale(live, ref, FreezeSpec((0, 2))).effect.nll,
        "fold": lambda: fold_norms(live, ref, FoldSpec()).effect.nll,
        "half": lambda: float16_run(live, ref, HalfSpec()).effect.nll,
    }
    alone = {key: run() for key, run in runs.items()}
    seen: dict[str, list] = {key: [] for key in runs}
    errors = []

    def work(key):
        try:
            for _ in range(4):
                seen[key].append(runs[key]())
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(key,)) for key in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for key in runs:
        for got in seen[key]:
            np.testing.assert_array_equal(got, alone[key])


def test_a_reference_of_another_model_is_refused(tiny, tiny_reference):
    with pytest.raises(EngineError) as caught:
        swap_norms(tiny("qwen2"), tiny_reference("llama"), SwapSpec())
    assert caught.value.key == "experiments.other_model"


def test_a_masked_language_model_is_refused(tmp_path):
    bert = load_live_model(tiny_models.save_tiny("bert", tmp_path / "bert"))
    with pytest.raises(EngineError) as caught:
        reference(bert, TextSpec())
    assert caught.value.key == "experiments.not_causal"
