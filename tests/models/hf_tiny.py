"""Tiny Hugging Face configs and models for checking the catalog against transformers.

Sizes are small and all different (d = 64, head_dim = 16 with 4 query and 2 key-value heads,
MLP 96, vocabulary 101) so that a width read from the wrong field shows up.  Nothing is
downloaded: models are built from configs with random weights.
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

_LLAMA_LIKE = {
    "hidden_size": 64,
    "intermediate_size": 96,
    "num_hidden_layers": 3,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 101,
}
TINY: dict[str, dict] = {
    "GPT2Config": {
        "n_embd": 64,
        "n_layer": 3,
        "n_head": 4,
        "n_positions": 32,
        "vocab_size": 101,
        "bos_token_id": None,  # the defaults (50256) are outside a 101-token vocabulary
        "eos_token_id": None,
    },
    "BertConfig": {
        "hidden_size": 64,
        "num_hidden_layers": 3,
        "num_attention_heads": 4,
        "intermediate_size": 96,
        "vocab_size": 101,
        "max_position_embeddings": 32,
    },
    "T5Config": {
        "d_model": 64,
        "d_kv": 16,
        "d_ff": 96,
        "num_layers": 2,
        "num_decoder_layers": 3,
        "num_heads": 4,
        "vocab_size": 101,
    },
    "LlamaConfig": _LLAMA_LIKE,
    "MistralConfig": _LLAMA_LIKE,
    "Qwen2Config": _LLAMA_LIKE,
    "Qwen3Config": {**_LLAMA_LIKE, "head_dim": 16},
    "GemmaConfig": {**_LLAMA_LIKE, "head_dim": 16},
    "Gemma2Config": {**_LLAMA_LIKE, "head_dim": 16, "query_pre_attn_scalar": 16},
    "Gemma3TextConfig": {**_LLAMA_LIKE, "head_dim": 16, "query_pre_attn_scalar": 16},
    "Olmo2Config": {**_LLAMA_LIKE, "eos_token_id": None, "pad_token_id": None},
    "DeepseekV3Config": {
        "hidden_size": 64,
        "intermediate_size": 96,
        "moe_intermediate_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "n_routed_experts": 4,
        "num_experts_per_tok": 2,
        "n_group": 2,
        "topk_group": 1,
        "first_k_dense_replace": 1,
        "q_lora_rank": 32,
        "kv_lora_rank": 24,
        "qk_rope_head_dim": 8,
        "qk_nope_head_dim": 8,
        "v_head_dim": 16,
        "vocab_size": 101,
    },
}


def tiny_config(config_class: str, **overrides):
    """A tiny instance of transformers' ``config_class``."""
    return getattr(transformers, config_class)(**{**TINY[config_class], **overrides})


def is_norm(module) -> bool:
    """Norm modules by class name, the way transformers' own _init_weights finds them."""
    name = type(module).__name__
    return "LayerNorm" in name or "RMSNorm" in name


def norm_modules(model) -> dict:
    """name -> module for every norm in ``model`` (HF's own structure is the oracle)."""
    return {name: module for name, module in model.named_modules() if is_norm(module)}


def module_eps(module) -> float:
    """ε as each HF norm class stores it (nn.LayerNorm.eps, variance_epsilon, eps)."""
    for attribute in ("variance_epsilon", "eps"):
        if hasattr(module, attribute):
            return float(getattr(module, attribute))
    raise AssertionError(f"{type(module).__name__} keeps no eps")
