"""Massive activations: found as the dumps page's threshold says, set to zero or to their mean
over windows, against hooks and hidden states computed here.  A random model has no entry
of 100, so the thresholds are lowered (the definition is the same)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from engine.config import MassiveSpec
from engine.errors import EngineError
from engine.experiments.massive import massive_activations
from tests.experiments.conftest import CAUSAL, nll_of, plain_logits

LOW = dict(massive_abs=1e-3, massive_ratio=3.0)  # "massive" in a random model


def _entries(stream: np.ndarray, point: int, absolute: float, ratio: float) -> set:
    layer = np.abs(stream[point])  # [T, d]
    threshold = max(absolute, ratio * np.median(layer))
    return {(int(t), int(c)) for t, c in zip(*np.nonzero(layer > threshold))}


def _set_at(live, point: int, token, channel, values) -> torch.nn.Module:
    """A copy of the model whose stream at ``point`` gets ``values`` at (token, channel)."""
    model = copy.deepcopy(live.loaded.model)
    blocks = model.get_submodule(
        "transformer.h" if live.loaded.architecture.name == "gpt2" else "model.layers"
    )

    def before(module, args, kwargs):
        h = (args[0] if args else kwargs["hidden_states"]).clone()
        h[0, token, channel] = torch.as_tensor(values, dtype=h.dtype)
        if args:
            return (h, *args[1:]), kwargs
        return args, {**kwargs, "hidden_states": h}

    blocks[point].register_forward_pre_hook(before, with_kwargs=True)
    return model


@pytest.mark.parametrize("name", CAUSAL)
def test_the_entries_are_those_above_the_dumps_threshold(tiny, tiny_reference, name):
    ref = tiny_reference(name)
    result = massive_activations(tiny(name), ref, MassiveSpec("keep", **LOW))
    stream = ref.stream.double().numpy()
    counts = [len(_entries(stream, p, **_named(LOW))) for p in range(ref.layers + 1)]
    np.testing.assert_array_equal(result.count, counts)
    assert result.point == next(p for p, n in enumerate(counts) if n)
    found = set(zip(result.token.tolist(), result.channel.tolist()))
    assert found == _entries(stream, result.point, **_named(LOW))
    np.testing.assert_array_equal(result.value, stream[result.point, result.token, result.channel])


def _named(low: dict) -> dict:
    return {"absolute": low["massive_abs"], "ratio": low["massive_ratio"]}


@pytest.mark.parametrize("name", ["llama", "gemma2", "olmo2"])
def test_keeping_them_reproduces_the_model_exactly(tiny, tiny_reference, name):
    result = massive_activations(tiny(name), tiny_reference(name), MassiveSpec("keep", **LOW))
    assert (result.effect.kl == 0).all() and result.effect.top1.all()
    np.testing.assert_array_equal(result.effect.nll, tiny_reference(name).nll)


@pytest.mark.parametrize("name", CAUSAL)
def test_zeroing_them_is_a_hook_that_zeroes_them(tiny, tiny_reference, name):
    live, ref = tiny(name), tiny_reference(name)
    spec = MassiveSpec("zero", point=1, **LOW)
    result = massive_activations(live, ref, spec)
    assert result.point == 1 and (result.replacement == 0).all() and len(result.token)
    model = _set_at(live, 1, result.token, result.channel, 0.0)
    logits = plain_logits(model, ref.tokens.ids)
    np.testing.assert_allclose(
        result.effect.nll, nll_of(logits, ref.tokens.ids), rtol=1e-5, atol=1e-5
    )
    assert result.effect.mean_kl > 1e-3


def test_the_mean_is_over_windows_each_run_alone(tiny, tiny_reference):
    live, ref = tiny("llama"), tiny_reference("llama")
    spec = MassiveSpec("mean", point=2, window=8, **LOW)
    result = massive_activations(live, ref, spec)
    ids = torch.tensor(ref.tokens.ids)
    windows = []
    for start in range(0, 24, 8):
        with torch.inference_mode():
            out = live.loaded.model(ids[None, start : start + 8], output_hidden_states=True)
        windows.append(out.hidden_states[2][0].double())  # [8, d] the input of block 2
    values = torch.stack(windows)[:, result.token % 8, result.channel].numpy()  # [3, m]
    reach = result.token < 8
    np.testing.assert_allclose(result.window_values[:, reach], values[:, reach], rtol=1e-5)
    assert np.isnan(result.window_values[:, ~reach]).all()
    np.testing.assert_allclose(result.replacement[reach], values[:, reach].mean(0), rtol=1e-5)
    np.testing.assert_array_equal(result.replacement[~reach], result.value[~reach])
    np.testing.assert_array_equal(result.windows, np.where(reach, 3, 0))
    model = _set_at(live, 2, result.token, result.channel, result.replacement)
    logits = plain_logits(model, ref.tokens.ids)
    np.testing.assert_allclose(
        result.effect.nll, nll_of(logits, ref.tokens.ids), rtol=1e-5, atol=1e-5
    )


def test_at_the_last_point_they_are_set_on_the_last_blocks_output(tiny, tiny_reference):
    live, ref = tiny("gpt2"), tiny_reference("gpt2")
    result = massive_activations(live, ref, MassiveSpec("zero", point=3, **LOW))
    model = copy.deepcopy(live.loaded.model)

    def after(module, args, output):
        h = output.clone()
        h[0, result.token, result.channel] = 0.0
        return h

    model.transformer.h[2].register_forward_hook(after)
    logits = plain_logits(model, ref.tokens.ids)
    np.testing.assert_allclose(
        result.effect.nll, nll_of(logits, ref.tokens.ids), rtol=1e-5, atol=1e-5
    )


def test_with_no_massive_activation_nothing_is_changed(tiny, tiny_reference):
    result = massive_activations(tiny("llama"), tiny_reference("llama"), MassiveSpec("zero"))
    assert result.point is None and result.effect is None and result.token.size == 0
    assert (result.count == 0).all() and (result.threshold >= 100.0).all()


@pytest.mark.parametrize(
    "spec, key",
    [
        (MassiveSpec(point=4, **LOW), "experiments.bad_point"),
        (MassiveSpec("mean", window=16, **LOW), "experiments.too_few_windows"),
    ],
)
def test_a_point_past_the_model_or_too_few_windows_is_refused(tiny, tiny_reference, spec, key):
    with pytest.raises(EngineError) as caught:
        massive_activations(tiny("llama"), tiny_reference("llama"), spec)
    assert caught.value.key == key
    if key.endswith("too_few_windows"):  # what is accepted, in numbers: two windows' tokens
        assert caught.value.params["needed"] == 2 * spec.window == 32
        assert caught.value.params["tokens"] < 32
