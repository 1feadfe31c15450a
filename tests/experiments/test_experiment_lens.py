"""The logit lens against the model's own modules: its final norm called on each layer's
stream, that norm rescaled to the last layer's scale, and the unembedding alone."""

from __future__ import annotations

import re
import types

import numpy as np
import pytest
import torch

from engine.config import LENS_DEFAULT_POSITIONS, LensSpec
from engine.errors import EngineError
from engine.experiments.lens import default_positions, logit_lens
from ui.figures.experiments import lens_table
from ui.text.experiments import lens_sentences

NAMES = ["llama", "gemma", "gemma2", "olmo2", "gpt2"]


def _decode(model, y: torch.Tensor) -> torch.Tensor:
    """log-probabilities of the unembedding of y [P, d], with Gemma 2's soft-capping."""
    z = model.get_output_embeddings()(y).float()
    cap = getattr(model.config, "final_logit_softcapping", None)
    if cap:
        z = torch.tanh(z / cap) * cap
    return torch.log_softmax(z.double(), -1)


def _scale(h: torch.Tensor, kind: str, eps: float) -> torch.Tensor:
    """[P, 1] 1/RMS (1/σ), float64."""
    h = h.double()
    statistic = h.var(-1, correction=0) if kind == "layernorm" else h.pow(2).mean(-1)
    return (statistic + eps).rsqrt()[:, None]


def _lenses(live, ref, positions):
    """[3, L+1, P, V] log-probabilities, each variant from the model's own modules."""
    model = live.loaded.model
    norm = model.get_submodule(ref.norms[ref.final_norm])
    eps = getattr(norm, "eps", None) or norm.variance_epsilon
    kind = live.loaded.architecture.norm_kind
    beta = getattr(norm, "bias", None)
    beta = 0.0 if beta is None else beta.double()
    last = _scale(ref.stream[-1, positions], kind, eps)
    out = []
    with torch.inference_mode():
        for h in ref.stream[:, positions]:  # [P, d]
            own = norm(h)  # the model's final norm module
            rescaled = (own.double() - beta) * (last / _scale(h, kind, eps)) + beta
            out.append(
                torch.stack(
                    [_decode(model, own), _decode(model, rescaled.float()), _decode(model, h)]
                )
            )
    return torch.stack(out, 1)


@pytest.mark.parametrize("name", NAMES)
def test_each_lens_is_the_models_own_norm_and_unembedding(tiny, tiny_reference, name):
    live, ref = tiny(name), tiny_reference(name)
    result = logit_lens(live, ref, LensSpec(positions=(0, 7, 23), top_k=3))
    log_p = _lenses(live, ref, list(result.positions))  # [3, L+1, P, V]
    entropy = -(log_p.exp() * log_p).sum(-1)
    np.testing.assert_allclose(result.entropy, entropy.numpy(), rtol=1e-4, atol=1e-5)
    top = log_p.topk(3, dim=-1)
    np.testing.assert_allclose(result.top_probs, top.values.exp().numpy(), rtol=1e-4, atol=1e-6)
    clear = np.diff(-top.values.numpy(), axis=-1).min(-1) > 1e-4  # no near-tie for the order
    np.testing.assert_array_equal(result.top_ids[clear], top.indices.numpy()[clear])
    assert set(result.token_texts) >= set(result.top_ids.flatten().tolist())


@pytest.mark.parametrize("name", NAMES)
def test_at_the_last_layer_both_scaled_lenses_are_the_model(tiny, tiny_reference, name):
    ref = tiny_reference(name)
    result = logit_lens(tiny(name), ref, LensSpec(top_k=1))
    assert result.agrees[:2, -1].all()
    assert result.kl_to_model[:2, -1].max() < 1e-5
    np.testing.assert_array_equal(result.model_top, ref.logits[list(result.positions)].argmax(-1))
    assert (result.entropy >= 0).all() and (
        result.entropy <= np.log(ref.logits.shape[1]) + 1e-6
    ).all()


def test_default_positions_spread_over_the_text_to_its_last_token():
    assert default_positions(512) == tuple(sorted(set(default_positions(512))))
    assert len(default_positions(512)) == LENS_DEFAULT_POSITIONS
    assert default_positions(512)[0] == 0 and default_positions(512)[-1] == 511
    assert default_positions(5) == (0, 1, 2, 3, 4)


def test_a_position_past_the_text_is_refused(tiny, tiny_reference):
    with pytest.raises(EngineError) as caught:
        logit_lens(tiny("llama"), tiny_reference("llama"), LensSpec(positions=(3, 24)))
    assert caught.value.key == "experiments.bad_positions"
    assert caught.value.params == {"value": 24, "last": 23}


def test_the_pages_table_shows_every_top_token_and_its_sentence_names_the_lenses(
    tiny, tiny_reference
):
    """The table holds ``top_k`` tokens a cell (the setting's whole effect on the page), and
    the summary names the lenses as words in its sentence, not as the options' labels."""
    live, ref = tiny("llama"), tiny_reference("llama")
    run = types.SimpleNamespace(result=logit_lens(live, ref, LensSpec(top_k=3)))
    table = lens_table(run, "en")
    # a probability: two decimals, or two significant digits under 0.005 (never "0.00")
    probability = r" (?:\d\.\d\d|\d(?:\.\d)?×10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)(?: · |$)"
    for cells in list(table.values())[1:]:  # one column a lens, after the points
        assert all(len(re.findall(probability, cell)) == 3 for cell in cells), cells
        assert not any(" 0.00" in cell or "'" in cell for cell in cells), cells
    flat = types.SimpleNamespace(
        result=types.SimpleNamespace(
            variants=("final",),
            top_ids=np.array([[[[9, 7, 10, 8]]]]),  # [variants, points, positions, k]
            top_probs=np.array([[[[0.5, 0.421, 0.01, 3.1e-5]]]]),
            token_texts={7: " tell", 8: "\n", 9: "-", 10: "$"},
        )
    )
    # st.table reads a cell as Markdown: a leading "-" token was a list bullet, lost from sight
    cell = "`-` 0.50 · `␣tell` 0.42 · `$` 0.01 · `⏎` 3.1×10⁻⁵"
    assert list(lens_table(flat, "en").values())[1] == [cell]
    early = lens_sentences(run, "en")[0]
    # the answers' words, lower-cased inside a sentence
    assert "The final norm" not in early and "the final norm computed on that layer" in early
