"""The norm calculator by hand: GPT-3's count (seed 000) and total, and the roofline bytes per
token.  Totals against real HF models are in test_model_totals_transformers.py."""

import pytest

from engine.errors import EngineError
from engine.models.calculator import MAX_COST_TOKENS, norm_budget, norm_cost
from engine.models.config_json import parse_config
from engine.models.loader import catalog
from engine.perf.roofline import norm_traffic


def _gpt3():
    return parse_config(catalog().family("gpt3").example.config, family="gpt3")


def test_gpt3_175b_norm_parameters_by_hand():
    budget = norm_budget(_gpt3())
    d, layers = 12_288, 96
    assert budget.norm_parameters == 2 * 2 * d * layers + 2 * d == 4_743_168  # seed 000
    assert budget.norm_modules == 2 * layers + 1
    assert budget.bias is True


def test_gpt3_175b_total_is_175_billion_and_norms_are_0_0027_percent():
    budget = norm_budget(_gpt3())
    d, layers, vocab, context = 12_288, 96, 50_257, 2_048
    per_layer = 12 * d * d + 13 * d  # qkv 3d^2+3d, out d^2+d, MLP 8d^2+5d, two LayerNorms 4d
    by_hand = vocab * d + context * d + layers * per_layer + 2 * d
    assert budget.total_parameters == by_hand == 174_604_259_328
    assert round(budget.total_parameters / 1e9) == 175
    assert f"{100 * budget.share:.4f}" == "0.0027"
    assert 100 * 4_743_168 / 1.75e11 == pytest.approx(0.0027, abs=5e-5)  # seed's own denominator


def test_llama_and_gemma_norms_have_no_bias():
    for family in ("llama2", "gemma2"):
        budget = norm_budget(parse_config(catalog().family(family).example.config, family=family))
        assert budget.bias is False
        assert all(g.parameters_each == g.width for g in budget.groups)
    llama2 = norm_budget(parse_config(catalog().family("llama2").example.config))
    assert llama2.norm_parameters == 2 * 4096 * 32 + 4096


def test_norm_cost_of_llama_3_8b_in_bfloat16_by_hand():
    shape = parse_config(catalog().family("llama3").example.config)
    cost = norm_cost(shape, dtype="bfloat16", tokens=1)
    d, layers = 4096, 32
    assert cost.bytes_per_element == 2
    assert cost.calls == 2 * layers + 1
    assert cost.per_call == norm_traffic(1, d, 2, "rmsnorm")
    assert cost.bytes_moved == (2 * layers + 1) * 2 * d * 2  # read + write, 2 bytes each
    assert cost.flops == (2 * layers + 1) * 4 * d
    assert cost.per_call.intensity < cost.per_call.ridge
    # every input norm but the first reads a fresh residual sum, and so does the final norm
    assert cost.add_norm_pairs == 2 * layers
    assert cost.fused_bytes_saved == 2 * layers * d * 2  # one pass over [1, d] per pair
    assert cost.unfused_add_norm_bytes == 5 * cost.fused_bytes_saved


def test_norm_cost_follows_the_placement():
    bert = norm_cost(parse_config(catalog().family("bert").example.config), dtype="float32")
    assert bert.add_norm_pairs == 2 * 12  # every Post-LN norm reads x + F(x)
    assert bert.calls == 2 * 12 + 1  # and the embedding LayerNorm
    olmo2 = norm_cost(parse_config(catalog().family("olmo2").example.config))
    assert olmo2.add_norm_pairs == 1  # norms on the outputs precede the adds; only the final
    gemma2 = norm_cost(parse_config(catalog().family("gemma2").example.config))
    assert gemma2.calls == 4 * 26 + 1 and gemma2.add_norm_pairs == 2 * 26


def test_norm_cost_uses_the_config_dtype_and_refuses_bad_values():
    shape = parse_config({**catalog().family("llama3").example.config, "torch_dtype": "float32"})
    assert norm_cost(shape).bytes_per_element == 4
    with pytest.raises(EngineError) as caught:
        norm_cost(shape, dtype="int4")
    assert caught.value.key == "models.unknown_dtype"
    for tokens in (0, MAX_COST_TOKENS + 1):
        with pytest.raises(EngineError) as caught:
            norm_cost(shape, tokens=tokens)
        assert caught.value.key == "models.bad_tokens"
    assert norm_cost(shape, tokens=MAX_COST_TOKENS).tokens == MAX_COST_TOKENS


@pytest.mark.parametrize(
    ("family", "advertised", "unit"),
    [("gpt2", 124, 1e6), ("llama2", 7, 1e9), ("llama3", 8, 1e9), ("mistral", 7, 1e9)]
    + [("smollm2", 135, 1e6)],
)
def test_example_totals_round_to_the_size_in_the_models_name(family, advertised, unit):
    shape = parse_config(catalog().family(family).example.config, family=family)
    assert round(norm_budget(shape).total_parameters / unit) == advertised
