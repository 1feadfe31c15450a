"""Tiny, randomly initialised Hugging Face models of every architecture the capture covers,
built from configs (nothing downloaded), and a character-level tokenizer for them.

``save_tiny(name, folder)`` writes a ``save_pretrained`` directory (config, weights and
tokenizer) that ``engine.dumps.model_files.load_model`` loads like any real model;
``save_tiny_gguf(path)`` a GGUF file it loads the way it loads SmolLM2's.
"""

from __future__ import annotations

from pathlib import Path

import torch

VOCAB_CHARS = (
    [chr(c) for c in range(32, 127)] + list("今天气很好我们去公园散步吧。，") + ["\n"]
)  # printable ASCII and a few Chinese characters: 110 tokens with the specials
SPECIALS = ["[PAD]", "[UNK]", "[BOS]"]
CONTEXT = 24  # max_position_embeddings of every tiny model


def tokenizer():
    """A character-level fast tokenizer: one token per character, [BOS] first."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {token: i for i, token in enumerate(SPECIALS + VOCAB_CHARS)}
    core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    core.post_processor = processors.TemplateProcessing(
        single="[BOS] $A", special_tokens=[("[BOS]", vocab["[BOS]"])]
    )
    core.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="[PAD]", unk_token="[UNK]", bos_token="[BOS]"
    )


def _configs() -> dict:
    import transformers as tf

    vocab = len(SPECIALS) + len(VOCAB_CHARS)
    ids = dict(pad_token_id=0, bos_token_id=2, eos_token_id=0)
    common = dict(
        vocab_size=vocab,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=3,
        num_attention_heads=2,
        max_position_embeddings=CONTEXT,
        **ids,
    )
    kv = dict(num_key_value_heads=1)
    return {
        "llama": tf.LlamaConfig(**common, **kv),
        "mistral": tf.MistralConfig(**common, **kv),
        "qwen2": tf.Qwen2Config(**common, **kv),
        "gemma": tf.GemmaConfig(**common, **kv, head_dim=8),
        "gemma2": tf.Gemma2Config(**common, **kv, head_dim=8),
        "olmo2": tf.Olmo2Config(**common, **kv),
        "gpt2": tf.GPT2Config(
            vocab_size=vocab, n_embd=16, n_layer=3, n_head=2, n_positions=CONTEXT, **ids
        ),
        "bert": tf.BertConfig(**common),
    }


ARCHITECTURE_OF = {  # tiny model → the model type engine.dumps.architectures names it by
    "llama": "llama",
    "mistral": "mistral",
    "qwen2": "qwen2",
    "gemma": "gemma",
    "gemma2": "gemma2",
    "olmo2": "olmo2",
    "gpt2": "gpt2",
    "bert": "bert",
}
NAMES = tuple(ARCHITECTURE_OF)


def build(name: str, seed: int = 0) -> torch.nn.Module:
    """The tiny model ``name`` with random weights, norm weights randomised too (they start
    at 1 or 0, which would hide a wrong weight or a missing Gemma offset)."""
    import transformers as tf

    config = _configs()[name]
    torch.manual_seed(seed)
    auto = tf.AutoModelForMaskedLM if name == "bert" else tf.AutoModelForCausalLM
    model = auto.from_config(config, dtype=torch.float32).eval()
    with torch.no_grad():
        for module_name, module in model.named_modules():
            if "norm" in module_name.lower() or module_name.endswith(("ln_1", "ln_2", "ln_f")):
                for param in module.parameters(recurse=False):
                    param.add_(0.3 * torch.randn_like(param))
    return model


def save_tiny(name: str, folder: Path, seed: int = 0) -> Path:
    """Write the tiny model ``name`` and the tokenizer to ``folder`` (save_pretrained)."""
    model = build(name, seed)
    model.save_pretrained(folder)
    tokenizer().save_pretrained(folder)
    return folder


def save_tiny_gguf(path: Path, tied: bool = True, seed: int = 0) -> Path:
    """Write a tiny Llama as a GGUF file (float32 tensors, a byte-level BPE vocabulary of
    single letters), the way llama.cpp lays one out, so ``load_model`` reads it through
    transformers' GGUF path like SmolLM2's.  ``tied``: no ``output.weight`` (the LM head is
    the embedding, as in SmolLM2)."""
    import gguf
    import numpy as np

    vocab, d, hidden, layers, heads, kv_heads = 40, 16, 32, 2, 2, 1
    head_dim = d // heads
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_block_count(layers)
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(d)
    writer.add_feed_forward_length(hidden)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_freq_base(10000.0)
    tokens = ["<pad>", "<s>", "</s>"] + [chr(c) for c in range(ord("a"), ord("a") + vocab - 3)]
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(tokens)
    writer.add_token_scores([0.0] * vocab)
    writer.add_token_types([3, 3, 3] + [1] * (vocab - 3))  # 3: control tokens
    writer.add_token_merges([])
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_pad_token_id(0)
    rng = np.random.default_rng(seed)

    def tensor(name: str, *shape: int) -> None:
        writer.add_tensor(name, (0.2 * rng.standard_normal(shape)).astype(np.float32))

    tensor("token_embd.weight", vocab, d)
    tensor("output_norm.weight", d)
    if not tied:
        tensor("output.weight", vocab, d)
    for i in range(layers):
        tensor(f"blk.{i}.attn_norm.weight", d)
        tensor(f"blk.{i}.attn_q.weight", d, d)
        tensor(f"blk.{i}.attn_k.weight", head_dim * kv_heads, d)
        tensor(f"blk.{i}.attn_v.weight", head_dim * kv_heads, d)
        tensor(f"blk.{i}.attn_output.weight", d, d)
        tensor(f"blk.{i}.ffn_norm.weight", d)
        tensor(f"blk.{i}.ffn_gate.weight", hidden, d)
        tensor(f"blk.{i}.ffn_up.weight", hidden, d)
        tensor(f"blk.{i}.ffn_down.weight", d, hidden)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
