"""Parameter totals of real Hugging Face causal LMs (tiny, random weights) against the
calculator: ``sum(p.numel())`` over the model, and over its norm modules."""

import pytest
import torch

from engine.models.calculator import norm_budget, norm_cost
from engine.models.config_json import parse_config
from tests.models.hf_tiny import norm_modules, tiny_config, transformers

TOTALS = [
    ("GPT2Config", {}),
    ("GPT2Config", {"tie_word_embeddings": False, "n_inner": 80}),
    ("LlamaConfig", {}),
    ("LlamaConfig", {"tie_word_embeddings": True, "attention_bias": True, "mlp_bias": True}),
    ("MistralConfig", {}),
    ("Qwen2Config", {}),
    ("Qwen3Config", {}),
    ("Gemma2Config", {}),
    ("Gemma3TextConfig", {}),
    ("Olmo2Config", {}),
]


@pytest.mark.parametrize(("config_class", "overrides"), TOTALS)
def test_totals_of_hf_causal_lms_match_their_parameter_count(config_class, overrides):
    config = tiny_config(config_class, **overrides)
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(config)
    budget = norm_budget(parse_config(config.to_dict()))
    assert budget.total_parameters == sum(p.numel() for p in model.parameters())
    norms = norm_modules(model)
    assert budget.norm_parameters == sum(p.numel() for m in norms.values() for p in m.parameters())
    assert budget.norm_modules == len(norms)


def test_families_without_a_total_formula_give_none():
    config = tiny_config("DeepseekV3Config")
    budget = norm_budget(parse_config(config.to_dict()))
    assert budget.total_parameters is None and budget.share is None
    assert budget.norm_parameters == 2 * (2 * 64 + 32 + 24) + 64


@pytest.mark.parametrize(
    "config_class",
    ["LlamaConfig", "Qwen3Config", "Gemma3TextConfig", "Olmo2Config", "DeepseekV3Config"],
)
def test_the_cost_counts_every_value_each_norm_reads_in_a_forward_pass(config_class):
    """A forward pass of the HF model over 5 tokens, each norm module's input counted by a
    hook: the calculator's bytes are 2 bytes a value read and written, every norm included
    (Qwen 3's q_norm over head_dim reads all heads; OLMo 2's over the whole projection)."""
    config = tiny_config(config_class)
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    read = []
    for module in norm_modules(model).values():
        module.register_forward_hook(lambda _m, inputs, _out: read.append(inputs[0].numel()))
    tokens = 5
    with torch.no_grad():
        model(torch.arange(tokens)[None] % config.vocab_size)
    cost = norm_cost(parse_config(config.to_dict()), "bfloat16", tokens=tokens)
    assert cost.bytes_moved == 2 * 2 * sum(read)  # read once and written once, 2 bytes each
    assert cost.calls + cost.extra_calls == len(read)
