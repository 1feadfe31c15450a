"""Folding γ and β into the linear maps: the same logits as the unfolded model up to float32
rounding, the maps found for each architecture, and the accounting of what it saves."""

from __future__ import annotations

import pytest
import torch

from engine.config import FoldSpec
from engine.dumps.architectures import module_paths
from engine.experiments.fold import fold_norms, readers
from tests.experiments.conftest import CAUSAL, plain_logits


@pytest.mark.parametrize("name", CAUSAL)
def test_folded_logits_are_the_unfolded_models_up_to_rounding(tiny, tiny_reference, name):
    live, ref = tiny(name), tiny_reference(name)
    result = fold_norms(live, ref, FoldSpec())
    unfolded = plain_logits(live.loaded.model, ref.tokens.ids)
    assert torch.equal(unfolded, ref.logits)  # the oracle: an ordinary pass, no hooks
    assert result.max_abs_logit == pytest.approx(float(unfolded.abs().max()))
    assert 0 < result.max_logit_difference < 1e-5 * result.max_abs_logit
    assert result.effect.top1.all() and result.effect.kl.max() < 1e-9
    assert result.folded[-1].path == ref.norms[ref.final_norm]


def test_a_wrong_fold_would_show_in_the_difference(tiny, tiny_reference, monkeypatch):
    """The measured difference is not a constant: fold γ twice and it is large."""
    import engine.experiments.fold as fold

    live, ref = tiny("llama"), tiny_reference("llama")
    original = fold._fold_into

    def twice(edits, module, gain, bias):
        return original(edits, module, gain * gain, bias)

    monkeypatch.setattr(fold, "_fold_into", twice)
    wrong = fold_norms(live, ref, FoldSpec())
    assert wrong.max_logit_difference > 1e-2 * wrong.max_abs_logit


READERS = {  # what reads each norm of block 1, and the final norm, per architecture
    "llama": {
        "model.layers.1.input_layernorm": ("q_proj", "k_proj", "v_proj"),
        "model.layers.1.post_attention_layernorm": ("gate_proj", "up_proj"),
        "model.norm": ("lm_head",),
    },
    "gemma2": {
        "model.layers.1.input_layernorm": ("q_proj", "k_proj", "v_proj"),
        "model.layers.1.post_attention_layernorm": (),  # added to the residual stream
        "model.layers.1.pre_feedforward_layernorm": ("gate_proj", "up_proj"),
        "model.layers.1.post_feedforward_layernorm": (),
        "model.norm": ("lm_head",),
    },
    "olmo2": {
        "model.layers.1.self_attn.q_norm": (),  # rotary position encoding comes next
        "model.layers.1.self_attn.k_norm": (),
        "model.layers.1.post_attention_layernorm": (),
        "model.layers.1.post_feedforward_layernorm": (),
        "model.norm": ("lm_head",),
    },
    "gpt2": {
        "transformer.h.1.ln_1": ("c_attn",),
        "transformer.h.1.ln_2": ("c_fc",),
        "transformer.ln_f": ("lm_head",),
    },
}


@pytest.mark.parametrize("name", sorted(READERS))
def test_the_maps_that_read_each_norm_are_found_by_tracing(tiny, tiny_reference, name):
    live, ids = tiny(name), tiny_reference(name).tokens.ids  # the reference holds the model
    with live.exclusive() as loaded:  # too: computed inside, it would wait for this block
        paths = module_paths(loaded.model, loaded.architecture)
        found = readers(loaded.model, paths, ids)
    for norm, expected in READERS[name].items():
        assert tuple(path.rpartition(".")[2] for path in found[norm]) == expected, norm


def test_the_accounting_of_a_tied_layernorm_model(tiny, tiny_reference):
    """GPT-2: every LayerNorm folded (γ and β), the tied unembedding copied and given a
    bias for ln_f's β."""
    live, ref = tiny("gpt2"), tiny_reference("gpt2")
    result = fold_norms(live, ref, FoldSpec())
    vocab, d = live.loaded.model.lm_head.weight.shape
    assert len(result.folded) == 7 and not result.unfoldable  # 2 per block and ln_f
    assert result.untied == ("lm_head",)
    assert result.parameters_added == vocab * d + vocab  # the copy, and its new bias
    assert result.additions_added == vocab
    assert result.multiplications_saved == result.additions_saved == 7 * d
    assert result.parameters_removed == 2 * 7 * d
    weights = (
        sum(m.weight.numel() for m in live.loaded.model.modules() if hasattr(m, "nf"))
        + live.loaded.model.lm_head.weight.numel()
    )  # Conv1D maps and the unembedding
    assert result.multiplications_per_token == weights


def test_without_the_final_norm_nothing_is_untied(tiny, tiny_reference):
    result = fold_norms(tiny("gemma"), tiny_reference("gemma"), FoldSpec(final=False))
    assert result.untied == () and result.parameters_added == 0
    assert all(f.path != "model.norm" for f in result.folded) and len(result.folded) == 6
    assert result.max_logit_difference < 1e-5 * result.max_abs_logit
