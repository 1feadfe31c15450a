"""Reading a pasted config.json: HF's aliases, class defaults, and refusals naming the field."""

import json

import pytest

from engine.errors import EngineError
from engine.models.config_json import FIELD_ALIASES, parse_config

LLAMA = {
    "model_type": "llama",
    "hidden_size": 576,
    "num_hidden_layers": 30,
    "num_attention_heads": 9,
    "num_key_value_heads": 3,
    "intermediate_size": 1536,
    "vocab_size": 49152,
    "rms_norm_eps": 1e-5,
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
}


def test_llama_config_text_reads_every_field():
    shape = parse_config(json.dumps(LLAMA))
    assert (shape.family, shape.hidden, shape.layers) == ("smollm2", 576, 30)  # its fields
    assert (shape.heads, shape.kv_heads, shape.head_dim) == (9, 3, 64)
    assert (shape.intermediate, shape.vocab, shape.tied_embeddings) == (1536, 49152, True)
    assert (shape.eps, shape.dtype) == (1e-5, "bfloat16")


def test_aliases_of_gpt2_and_t5():
    gpt2 = parse_config(
        {
            "model_type": "gpt2",
            "n_embd": 64,
            "n_layer": 3,
            "n_head": 4,
            "n_positions": 32,
            "vocab_size": 101,
            "n_inner": None,
        }
    )
    assert (gpt2.hidden, gpt2.layers, gpt2.heads, gpt2.intermediate) == (64, 3, 4, 256)
    assert gpt2.tied_embeddings is True  # GPT2Config's default, from the catalog
    assert gpt2.eps == 1e-5  # layer_norm_epsilon left out: the class default
    t5 = parse_config(
        {"model_type": "t5", "d_model": 512, "num_layers": 6, "layer_norm_epsilon": 1e-6}
    )
    assert (t5.hidden, t5.layers, t5.decoder_layers) == (512, 6, 6)  # decoder defaults to encoder


def test_every_alias_table_entry_is_a_distinct_hf_name():
    names = [alias for aliases in FIELD_ALIASES.values() for alias in aliases]
    assert len(names) == len(set(names))


def test_eps_falls_back_to_the_config_class_default_not_the_released_value():
    without = {k: v for k, v in LLAMA.items() if k != "rms_norm_eps"}
    assert parse_config(without).eps == 1e-6  # LlamaConfig's default, as HF would build it


def test_gemma3_multimodal_config_is_read_from_its_text_config():
    config = {
        "model_type": "gemma3",
        "tie_word_embeddings": True,
        "text_config": {
            "model_type": "gemma3_text",
            "hidden_size": 2560,
            "num_hidden_layers": 34,
            "num_attention_heads": 8,
            "num_key_value_heads": 4,
            "intermediate_size": 10240,
            "vocab_size": 262208,
        },
        "vision_config": {"hidden_size": 1152},
    }
    shape = parse_config(config)
    assert (shape.family, shape.hidden, shape.layers, shape.head_dim) == ("gemma3", 2560, 34, 256)
    assert shape.tied_embeddings is True


def test_deepseek_q_lora_rank_null_means_no_query_latent():
    config = {
        "model_type": "deepseek_v3",
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "q_lora_rank": None,
        "kv_lora_rank": 16,
    }
    shape = parse_config(config)
    assert (shape.q_lora_rank, shape.kv_lora_rank) == (None, 16)
    defaulted = parse_config({k: v for k, v in config.items() if k != "q_lora_rank"})
    assert defaulted.q_lora_rank == 1536  # DeepseekV3Config's default


@pytest.mark.parametrize(
    ("text", "key", "params"),
    [
        ('{"model_type": "llama", "hidden_size": 64,', "models.bad_json", {"line": 1}),
        ('{"model_type": "llama"\n "hidden_size": 64}', "models.bad_json", {"line": 2}),
        ("[1, 2]", "models.not_an_object", {"type": "array"}),  # JSON's words, not Python's
        ("null", "models.not_an_object", {"type": "null"}),
        ('"llama"', "models.not_an_object", {"type": "string"}),
        ("true", "models.not_an_object", {"type": "boolean"}),
        ("4096", "models.not_an_object", {"type": "number"}),
        ('{"hidden_size": 64}', "models.missing_field", {"field": "model_type"}),
        ('{"model_type": "mamba"}', "models.generic_missing_field", {"field": "hidden_size"}),
        ('{"model_type": 7}', "models.bad_text", {"field": "model_type"}),
        ("[" * 10_000 + "]" * 10_000, "models.too_deep", {"limit": 64}),
        (
            '{"model_type": "llama", "hidden_size": 1' + "0" * 5000 + "}",
            "models.number_too_long",
            {},
        ),
        ('{"model_type": "\\ud800"}', "models.bad_unicode", {}),
        (
            '{"model_type": "llama", "hidden_size": ' + str(10**400) + ', "num_hidden_layers": 2}',
            "models.bad_count",
            {"field": "hidden_size"},
        ),
        (
            '{"model_type": "llama", "hidden_size": 16777217, "num_hidden_layers": 2}',
            "models.bad_count",
            {"field": "hidden_size", "high": 2**24},
        ),
        (
            '{"model_type": "llama", "num_hidden_layers": 2}',
            "models.missing_field",
            {"field": "hidden_size"},
        ),
        (
            '{"model_type": "gpt2", "n_embd": 64}',
            "models.missing_field",
            {"field": "num_hidden_layers"},
        ),
        (
            '{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,'
            ' "vocab_size": 10}',
            "models.missing_field",
            {"field": "intermediate_size"},
        ),
        (
            '{"model_type": "llama", "hidden_size": "64", "num_hidden_layers": 2}',
            "models.bad_count",
            {"field": "hidden_size", "value": '"64"'},
        ),
        (
            '{"model_type": "llama", "hidden_size": 0, "num_hidden_layers": 2}',
            "models.bad_count",
            {"field": "hidden_size"},
        ),
        (
            '{"model_type": "llama", "hidden_size": true, "num_hidden_layers": 2}',
            "models.bad_count",
            {"field": "hidden_size"},
        ),
        (
            '{"model_type": "llama", "hidden_size": 8, "num_hidden_layers": 2, "rms_norm_eps": -1,'
            ' "num_attention_heads": 2, "intermediate_size": 8, "vocab_size": 8}',
            "models.bad_eps",
            {"field": "rms_norm_eps"},
        ),
    ],
)
def test_malformed_or_unfamiliar_configs_name_what_is_wrong(text, key, params):
    with pytest.raises(EngineError) as caught:
        parse_config(text)
    assert caught.value.key == key
    for name, value in params.items():
        assert caught.value.params[name] == value
    assert str(caught.value)  # a plain English sentence for Python users


def test_the_missing_field_message_lists_the_aliases():
    with pytest.raises(EngineError) as caught:
        parse_config({"model_type": "bert", "num_hidden_layers": 2})
    assert caught.value.params["aliases"] == "hidden_size / n_embd / d_model"
    assert "hidden_size / n_embd / d_model" in str(caught.value)


def test_family_overrides_model_type():
    shape = parse_config(
        {
            "model_type": "gpt2",
            "n_embd": 8,
            "n_layer": 1,
            "n_head": 2,
            "n_positions": 4,
            "vocab_size": 5,
        },
        family="gpt3",
    )
    assert shape.family == "gpt3"
    with pytest.raises(EngineError) as caught:
        parse_config({"n_embd": 8}, family="gpt5")
    assert caught.value.key == "models.unknown_family"


def test_huge_values_are_refused_and_not_repeated_whole():
    config = {"model_type": "llama", "hidden_size": list(range(30_000)), "num_hidden_layers": 2}
    with pytest.raises(EngineError) as caught:
        parse_config(config)
    assert caught.value.key == "models.bad_count"
    assert len(caught.value.params["value"]) <= 61 and caught.value.params["value"].endswith("…")
    with pytest.raises(EngineError) as caught:
        parse_config(
            {
                "model_type": "llama",
                "hidden_size": 8,
                "num_hidden_layers": 2,
                "rms_norm_eps": 10**400,
                "num_attention_heads": 2,
                "intermediate_size": 8,
                "vocab_size": 8,
            }
        )
    assert caught.value.key == "models.bad_eps"


PHI3 = {  # microsoft/Phi-3-mini-4k-instruct's config.json, the fields a count reads
    "model_type": "phi3",
    "hidden_size": 3072,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "intermediate_size": 8192,
    "vocab_size": 32064,
    "rms_norm_eps": 1e-5,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}
LLAMA3_8B = {  # meta-llama/Meta-Llama-3-8B's config.json
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "rms_norm_eps": 1e-5,
    "rope_theta": 500000.0,
    "tie_word_embeddings": False,
}


def test_a_model_type_the_catalog_lacks_is_read_by_its_standard_fields():
    shape = parse_config(json.dumps(PHI3))
    assert shape.read_by == "generic" and shape.family == "llama3"
    assert (shape.hidden, shape.layers, shape.heads, shape.kv_heads) == (3072, 32, 32, 32)
    assert (shape.intermediate, shape.vocab, shape.eps) == (8192, 32064, 1e-5)


def test_a_shared_model_type_is_read_as_the_family_its_fields_point_to():
    assert parse_config(LLAMA3_8B).family == "llama3"
    assert parse_config(LLAMA3_8B).read_by == "fields"
    llama2 = {**LLAMA3_8B, "vocab_size": 32000, "num_key_value_heads": 32,
              "intermediate_size": 11008}  # fmt: skip
    assert parse_config(llama2).family == "llama2"
    assert parse_config({**LLAMA3_8B, "model_type": "qwen2"}).read_by == "model_type"
    assert parse_config(LLAMA3_8B, family="llama1").read_by == "named"


def test_a_gemma_3_multimodal_config_naming_only_what_differs_from_the_defaults_is_read():
    """A saved config.json leaves out what Gemma3TextConfig fills in by default (its heads,
    vocabulary and ε here): read with those defaults, as transformers builds the model."""
    transformers = pytest.importorskip("transformers")
    text_config = {
        "model_type": "gemma3_text",
        "hidden_size": 2560,
        "intermediate_size": 10240,
        "num_hidden_layers": 34,
        "sliding_window": 1024,
    }
    shape = parse_config({"model_type": "gemma3", "text_config": text_config})
    built = transformers.Gemma3TextConfig(**text_config)
    assert (shape.hidden, shape.layers, shape.heads, shape.kv_heads, shape.head_dim) == (
        built.hidden_size,
        built.num_hidden_layers,
        built.num_attention_heads,
        built.num_key_value_heads,
        built.head_dim,
    )
    assert shape.vocab == built.vocab_size and shape.eps == built.rms_norm_eps


@pytest.mark.parametrize("model_type", ["mamba", "мамба"])
def test_a_model_type_outside_the_catalog_missing_a_decoders_field_says_how_it_was_read(
    model_type,
):
    with pytest.raises(EngineError) as refused:
        parse_config({"model_type": model_type, "hidden_size": 768, "num_hidden_layers": 24})
    assert refused.value.key == "models.generic_missing_field"
    assert refused.value.params["model_type"] == model_type
    assert "num_attention_heads" in refused.value.params["aliases"]


def test_a_text_longer_than_any_config_is_refused_with_its_length_and_the_limit():
    """The page's box had ``max_chars``: the browser dropped a longer paste without a word,
    leaving the previous config and its results on the page."""
    from engine.models.config_json import MAX_CONFIG_CHARS
    from ui.errors import error_text

    text = json.dumps({"model_type": "llama", "pad": " " * MAX_CONFIG_CHARS})
    with pytest.raises(EngineError) as refused:
        parse_config(text)
    assert refused.value.key == "models.too_long"
    said = error_text(refused.value)
    assert f"{len(text):,} characters long" in said and f"{MAX_CONFIG_CHARS:,}" in said


@pytest.mark.parametrize(("kv_heads", "heads"), [(64, 8), (7, 30)])
def test_key_value_heads_that_do_not_divide_the_heads_are_refused(kv_heads, heads):
    """Grouped-query attention shares each key-value head among heads / kv_heads query heads;
    64 of 8 was counted as 14.25 billion parameters, a model transformers cannot build."""
    config = {"model_type": "llama", "hidden_size": 240, "num_hidden_layers": 2}
    config |= {"intermediate_size": 64, "vocab_size": 10, "num_attention_heads": heads}
    with pytest.raises(EngineError) as refused:
        parse_config({**config, "num_key_value_heads": kv_heads})
    assert refused.value.key == "models.kv_heads"
    assert refused.value.params["field"] == "num_key_value_heads"
    shape = parse_config({**config, "num_key_value_heads": 2 if heads % 2 == 0 else 3})
    assert shape.heads == heads and heads % shape.kv_heads == 0


@pytest.mark.parametrize(
    ("name", "key", "field"),
    [
        ("PhiConfig", "models.generic_layernorm", "layer_norm_eps"),
        ("GPTNeoXConfig", "models.generic_layernorm", "layer_norm_eps"),
        ("MixtralConfig", "models.generic_experts", "num_local_experts"),
        ("Qwen3MoeConfig", "models.generic_experts", "num_local_experts"),
    ],
)
def test_a_config_the_generic_reading_would_count_wrong_is_refused(name, key, field, monkeypatch):
    """The model the config builds (transformers, on the meta device) has LayerNorms with a
    bias or expert MLPs, which the generic Pre-RMSNorm decoder reading would not count."""
    import torch
    import transformers

    from ui.errors import error_text

    config = getattr(transformers, name)()
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config)
    kinds = {type(m).__name__ for m in model.modules()}
    experts = any("Expert" in kind or "Moe" in kind or "MoE" in kind for kind in kinds)
    assert "LayerNorm" in kinds or experts  # the oracle: what the generic reading misses
    with pytest.raises(EngineError) as refused:
        parse_config(config.to_json_string())
    assert refused.value.key == key and refused.value.params["field"] == field
    monkeypatch.setattr("ui.i18n.current_language", lambda: "zh")
    said = error_text(refused.value)
    assert "目录中没有" in said and field in said


def test_fewer_dimensions_than_heads_names_the_fields_written_not_head_dim():
    """hidden_size 4 for 8 heads and no head_dim: "head_dim = 0 is too small" named a field
    the config did not hold."""
    config = {**LLAMA3_8B, "hidden_size": 4, "num_attention_heads": 8}
    config.pop("head_dim", None)
    with pytest.raises(EngineError) as refused:
        parse_config(json.dumps(config))
    assert refused.value.key == "models.no_head_dim"
    assert refused.value.params["field"] == "hidden_size"
    assert refused.value.params["heads_field"] == "num_attention_heads"


def test_a_text_config_that_is_not_an_object_is_refused_as_transformers_refuses_it():
    """{"model_type": "gemma3", "text_config": [1, 2]} was read at Gemma 3's class defaults."""
    with pytest.raises(EngineError) as refused:
        parse_config('{"model_type": "gemma3", "text_config": [1, 2]}')
    assert refused.value.key == "models.bad_object" and refused.value.params["value"] == "[1, 2]"


def test_a_byte_order_mark_is_read_past_and_an_unread_dtype_is_named_as_written():
    config = {**LLAMA3_8B, "dtype": {"a": 1}}
    config.pop("torch_dtype", None)
    shape = parse_config("\ufeff" + json.dumps(config))
    assert shape.unread_dtype == '{"a": 1}' and shape.dtype_field == "dtype"  # as written
