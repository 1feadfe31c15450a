"""The norm swap against an independent model: a copy whose chosen norm modules are replaced
by modules calling torch's own F.layer_norm (F.rms_norm for a LayerNorm model)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from engine.config import SwapSpec
from engine.dumps.architectures import module_paths
from engine.errors import EngineError
from engine.experiments.swap import swap_norms
from tests.experiments.conftest import CAUSAL, kl_of, nll_of, plain_logits


class TorchNorm(torch.nn.Module):
    """F.layer_norm or F.rms_norm with γ = offset + weight and the module's β and ε."""

    def __init__(self, module: torch.nn.Module, kind: str, offset: float):
        super().__init__()
        self.kind, self.offset = kind, offset
        self.weight = module.weight.detach().clone()
        bias = getattr(module, "bias", None)
        self.bias = None if bias is None else bias.detach().clone()
        eps = getattr(module, "eps", None)
        self.eps = eps if isinstance(eps, float) else module.variance_epsilon

    def forward(self, x):
        d, gamma = x.shape[-1], self.offset + self.weight.float()
        if self.kind == "layernorm":
            y = torch.nn.functional.layer_norm(x.float(), (d,), gamma, None, self.eps)
        else:
            y = torch.nn.functional.rms_norm(x.float(), (d,), gamma, self.eps)
        if self.bias is not None:
            y = y + self.bias.float()
        return y.to(x.dtype)


def swapped_copy(live, norms: set[str], kind: str) -> torch.nn.Module:
    model = copy.deepcopy(live.loaded.model)
    offset = live.loaded.architecture.weight_offset
    for path in norms:
        parent, _, name = path.rpartition(".")
        owner = model.get_submodule(parent)
        setattr(owner, name, TorchNorm(getattr(owner, name), kind, offset))
    return model


@pytest.mark.parametrize("name", CAUSAL)
@pytest.mark.parametrize("spec", [SwapSpec(), SwapSpec(layers=(1,), final=False)])
def test_the_swap_is_torchs_other_norm_in_place_of_the_chosen_ones(
    tiny, tiny_reference, name, spec
):
    live, ref = tiny(name), tiny_reference(name)
    result = swap_norms(live, ref, spec)
    expected_kind = {"rmsnorm": "layernorm", "layernorm": "rmsnorm"}
    assert result.to_kind == expected_kind[result.from_kind]
    paths = module_paths(live.loaded.model, live.loaded.architecture)
    layers = range(3) if spec.layers is None else spec.layers
    chosen = {
        p
        for p, layer in zip(paths.norms, paths.norm_layers)
        if layer in layers or (layer is None and spec.final)
    }
    assert set(result.norms) == chosen
    logits = plain_logits(swapped_copy(live, chosen, result.to_kind), ref.tokens.ids)
    np.testing.assert_allclose(
        result.effect.nll, nll_of(logits, ref.tokens.ids), rtol=1e-5, atol=1e-5
    )
    np.testing.assert_allclose(
        result.effect.kl, kl_of(ref.logits, logits).numpy(), rtol=1e-3, atol=1e-6
    )
    assert result.effect.mean_kl > 1e-3  # the swap changed the predictions


def test_a_block_the_model_does_not_have_is_refused(tiny, tiny_reference):
    with pytest.raises(EngineError) as caught:
        swap_norms(tiny("llama"), tiny_reference("llama"), SwapSpec(layers=(0, 3)))
    assert caught.value.key == "experiments.bad_layers"
    assert caught.value.params == {"value": 3, "last": 2}
