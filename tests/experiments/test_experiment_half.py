"""The float16 run: where a norm without its upcast first fails, against the model's own
float16 pass; and the float32-accumulated matrix products against torch's float16 ones."""

from __future__ import annotations

import copy

import numpy as np
import torch

from engine.config import HalfSpec
from engine.experiments.half import float16_run
from tests.experiments.conftest import PLANTED, nll_of, plain_logits


def _native_half_norm_inputs(live, ids) -> dict[str, torch.Tensor]:
    """Each norm's input [T, d] in an ordinary float16 pass of a copy (its norms upcast)."""
    model = copy.deepcopy(live.loaded.model).half()
    seen = {}

    def keep(module, args, output, name):
        seen[name] = args[0][0]  # returns None: the output is left as it is

    for name, module in model.named_modules():
        if name.endswith("norm"):
            module.register_forward_hook(lambda m, a, o, name=name: keep(m, a, o, name))
    plain_logits(model, ids)
    return seen  # in forward order (dicts keep insertion order)


def test_the_first_failure_is_the_first_norm_input_whose_square_overflows(planted):
    live, ref = planted
    result = float16_run(live, ref, HalfSpec())
    inputs = _native_half_norm_inputs(live, ref.tokens.ids)
    overflowing = [
        (name, int(torch.isinf(x.pow(2)).any(-1).nonzero()[0, 0]))
        for name, x in inputs.items()
        if torch.isinf(x.pow(2)).any()
    ]
    name, token = overflowing[0]
    io = result.first_failure
    assert (io.label, io.token, result.failure) == (name, token, "silent_zero")
    assert ref.tokens.texts[token] == PLANTED and io.layer == 0
    np.testing.assert_array_equal(io.x, inputs[name][token].double().numpy())
    assert np.abs(io.x).max() >= 256 and (io.y == 0).all()
    gain = live.loaded.model.get_submodule(name).weight.detach().half().double().numpy()
    np.testing.assert_array_equal(io.weight, gain)
    assert (io.kind, io.eps) == ("rmsnorm", 1e-6)
    failed_tokens = result.norm_failed[list(result.norms).index(name)]
    assert failed_tokens[token] and failed_tokens.sum() == ref.tokens.texts.count(PLANTED)
    assert result.effect.mean_kl > 0.1


def test_with_the_upcast_no_norm_fails(planted):
    live, ref = planted
    result = float16_run(live, ref, HalfSpec(upcast=True))
    assert result.first_failure is None and result.failure == "" and not result.norm_failed.any()
    assert result.effect.mean_kl < 1e-2


def test_float32_accumulated_products_match_torchs_float16_pass(tiny, tiny_reference):
    """With the model's own norms, the run's logits are an ordinary float16 pass's up to
    float16 rounding (the products are summed in another order)."""
    live, ref = tiny("llama"), tiny_reference("llama")
    result = float16_run(live, ref, HalfSpec(upcast=True))
    native = plain_logits(copy.deepcopy(live.loaded.model).half(), ref.tokens.ids)
    np.testing.assert_allclose(
        result.effect.nll, nll_of(native, ref.tokens.ids).numpy(), rtol=5e-3, atol=5e-3
    )
    assert result.stream_error[0].max() < 1e-3  # the embeddings, rounded to float16


def test_divergence_is_the_first_point_and_token_past_the_threshold(tiny, tiny_reference):
    live, ref = tiny("qwen2"), tiny_reference("qwen2")
    result = float16_run(live, ref, HalfSpec(divergence=1e-3))
    error = result.stream_error
    past = np.argwhere(error > 1e-3)
    assert result.diverges_at == (int(past[0, 0]), int(past[0, 1]))
    assert error.shape == (ref.layers + 1, len(ref.tokens.ids)) and (error >= 0).all()
    never = float16_run(live, ref, HalfSpec(divergence=1e9))
    assert never.diverges_at is None
