"""Tiny, randomly initialised Hugging Face models of every architecture the capture covers,
built from configs (nothing downloaded), and a character-level tokenizer for them.

``save_tiny(name, folder)`` writes a ``save_pretrained`` directory (config, weights and
tokenizer) that ``engine.dumps.model_files.load_model`` loads like any real model.
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


ARCHITECTURE_OF = {  # tiny model → the row of engine.dumps.architectures that covers it
    "llama": "llama",
    "mistral": "llama",
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
