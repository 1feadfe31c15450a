"""Freezing the scale against an independent model: a copy whose chosen norms divide every
token by one constant computed here from the norms' inputs, and the sweep's progress and
cancel."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from engine.config import FreezeSpec, FreezeSweepSpec
from engine.dumps.architectures import module_paths
from engine.experiments.freeze import FreezeSweep, freeze_scale, freeze_sweep
from engine.threads import Cancelled
from tests.experiments.conftest import CAUSAL, PLANTED, nll_of, plain_logits


def _eps(module) -> float:
    eps = getattr(module, "eps", None)
    return eps if isinstance(eps, float) else module.variance_epsilon


def _scales(model, paths: set[str], ids, kind: str, exempt: tuple) -> dict[str, float]:
    """Mean over the tokens (but the exempt ones) of 1/sqrt(mean square + eps) (LayerNorm:
    variance) of each norm's input, in float64, from hooks on a plain pass."""
    inputs, handles = {}, []
    for path in paths:
        module = model.get_submodule(path)
        hook = module.register_forward_hook(lambda m, a, o, path=path: inputs.update({path: a[0]}))
        handles.append(hook)
    plain_logits(model, ids)
    for handle in handles:
        handle.remove()
    scales = {}
    for path, x in inputs.items():
        x = x[0].double()  # [T, d]
        x = x[[t for t in range(x.shape[0]) if t not in exempt]]  # [T', d]
        statistic = x.var(-1, correction=0) if kind == "layernorm" else x.pow(2).mean(-1)
        scales[path] = float((statistic + _eps(model.get_submodule(path))).rsqrt().mean())
    return scales


class FrozenNorm(torch.nn.Module):
    def __init__(self, module, kind, offset, scale, exempt):
        super().__init__()
        self.module, self.kind, self.offset = module, kind, offset
        self.scale, self.exempt = scale, list(exempt)

    def forward(self, x):
        xc = x.float()
        if self.kind == "layernorm":
            xc = xc - xc.mean(-1, keepdim=True)
        y = xc * self.scale * (self.offset + self.module.weight.float())
        if getattr(self.module, "bias", None) is not None:
            y = y + self.module.bias.float()
        if self.exempt:  # the module's own code on the exempt tokens
            y[:, self.exempt] = self.module(x[:, self.exempt]).float()
        return y.to(x.dtype)


def frozen_copy(live, chosen: set[str], ids, exempt: tuple) -> torch.nn.Module:
    model = copy.deepcopy(live.loaded.model)
    arch = live.loaded.architecture
    scales = _scales(model, chosen, ids, arch.norm_kind, exempt)
    for path in chosen:
        parent, _, name = path.rpartition(".")
        owner = model.get_submodule(parent)
        frozen = FrozenNorm(getattr(owner, name), arch.norm_kind, arch.weight_offset,
                            scales[path], exempt)  # fmt: skip
        setattr(owner, name, frozen)
    return model


@pytest.mark.parametrize("name", CAUSAL)
@pytest.mark.parametrize(
    "spec",
    [FreezeSpec((1,)), FreezeSpec((0, 2), final=True), FreezeSpec((1,), exempt="first")],
)
def test_a_frozen_scale_is_the_mean_of_the_tokens_own(tiny, tiny_reference, name, spec):
    live, ref = tiny(name), tiny_reference(name)
    result = freeze_scale(live, ref, spec)
    paths = module_paths(live.loaded.model, live.loaded.architecture)
    chosen = {
        p
        for p, layer in zip(paths.norms, paths.norm_layers)
        if layer in spec.layers or (layer is None and spec.final)
    }
    assert set(result.norms) == chosen
    assert result.exempt == ((0,) if spec.exempt == "first" else ())
    model = frozen_copy(live, chosen, ref.tokens.ids, result.exempt)
    logits = plain_logits(model, ref.tokens.ids)
    np.testing.assert_allclose(
        result.effect.nll, nll_of(logits, ref.tokens.ids), rtol=1e-5, atol=1e-5
    )
    assert result.effect.mean_kl > 1e-4 and (result.variation > 0).all()


def test_with_its_own_scale_the_first_token_predicts_as_before(tiny, tiny_reference):
    """Position 0 attends only to itself: with token 0 normalised by its own RMS in every
    block, its next-token distribution is the unmodified one."""
    live, ref = tiny("llama"), tiny_reference("llama")
    result = freeze_scale(live, ref, FreezeSpec(None, final=True, exempt="first"))
    assert result.effect.kl[0] < 1e-9 and result.effect.top1[0]
    assert result.effect.kl[1:].mean() > 1e-3


def test_exempting_massive_tokens_exempts_those_the_massive_experiment_finds(planted):
    """A tiny Llama with one character's embedding made huge: every position of that
    character carries massive activations, and only those positions keep their scale."""
    live, ref = planted
    result = freeze_scale(live, ref, FreezeSpec((1,), exempt="massive"))
    expected = tuple(t for t, text in enumerate(ref.tokens.texts) if text == PLANTED)
    assert result.exempt == expected and len(expected) >= 2
    model = frozen_copy(live, set(result.norms), ref.tokens.ids, expected)
    logits = plain_logits(model, ref.tokens.ids)
    np.testing.assert_allclose(
        result.effect.nll, nll_of(logits, ref.tokens.ids), rtol=1e-5, atol=1e-5
    )


def test_the_sweep_is_each_block_frozen_alone(tiny, tiny_reference):
    live, ref = tiny("qwen2"), tiny_reference("qwen2")
    seen = []
    sweep = freeze_sweep(live, ref, FreezeSweepSpec(tolerance=0.01), progress=seen.append)
    assert sweep.layers == (0, 1, 2, None)
    assert seen == sorted(seen) and seen[-1] == pytest.approx(1.0) and len(seen) == 4
    for layer, result in zip(sweep.layers, sweep.results):
        alone = FreezeSpec(() if layer is None else (layer,), final=layer is None)
        np.testing.assert_array_equal(result.effect.nll, freeze_scale(live, ref, alone).effect.nll)
    np.testing.assert_array_equal(sweep.tolerated, np.abs(sweep.perplexity_ratio - 1) <= 0.01)
    assert sweep.mean_kl.shape == sweep.top1_agreement.shape == (4,)


def test_a_freeze_that_lowers_perplexity_past_the_tolerance_is_not_within_it():
    """ "Within 5 %" both ways: ×0.89 (a short text's block 0) is a change, as ×1.11 is."""
    from types import SimpleNamespace

    ratios = (0.89, 0.96, 1.0, 1.04, 1.11, float("inf"), float("nan"))
    runs = tuple(SimpleNamespace(effect=SimpleNamespace(perplexity_ratio=r)) for r in ratios)
    sweep = FreezeSweep(FreezeSweepSpec(tolerance=0.05), tuple(range(len(ratios))), runs, 0.0)
    assert sweep.tolerated.tolist() == [False, True, True, True, False, False, False]


def test_the_sweep_stops_when_asked_and_leaves_the_model_as_it_was(tiny, tiny_reference):
    live, ref = tiny("gpt2"), tiny_reference("gpt2")
    model = live.loaded.model

    # transformers keeps hooks of its own after a call that asked for hidden states
    def hooks() -> list[tuple[int, int]]:
        return [(len(m._forward_hooks), len(m._forward_pre_hooks)) for m in model.modules()]

    before = hooks()
    calls = []

    def should_stop() -> bool:  # polled before each run and each block: stop mid-pass
        calls.append(1)
        return len(calls) > 6

    with pytest.raises(Cancelled):
        freeze_sweep(live, ref, FreezeSweepSpec(), should_stop=should_stop)
    assert hooks() == before
    assert all("forward" not in m.__dict__ for m in model.modules())
    assert torch.equal(plain_logits(model, ref.tokens.ids), ref.logits)
