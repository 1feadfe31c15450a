"""Which modules of a Hugging Face model hold the residual stream and its norms: one table.

A capture hooks three kinds of module, found by their paths in ``model.named_modules()``:
- the *blocks* (``model.layers``, ``transformer.h``, ``encoder.layer``): the residual stream
  is each block's input, and the last block's output;
- each block's *norms*, by their path inside the block (``input_layernorm``, ``ln_1``,
  ``attention.output.LayerNorm``);
- the norms outside the blocks (``norm`` after the last block, BERT's embedding norm).

Paths are relative to the base model (``model.base_model``: ``model`` in
``LlamaForCausalLM``, ``transformer`` in ``GPT2LMHeadModel``, ``bert`` in
``BertForMaskedLM``), so the same row serves every head class of an architecture.

To support another architecture, add a row to ``ARCHITECTURES`` naming its
``config.model_type`` values, its blocks, its norms and their kind; then add its tiny config
to ``tests/dumps/tiny_models.py`` so the capture tests run on it.

References:
- Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture" (Pre-LN vs
  Post-LN), arXiv:2002.04745
- Gemma team 2024, Gemma's RMSNorm scales by (1 + weight), arXiv:2403.08295
- OLMo team 2024, "2 OLMo 2 Furious" (norms on the sublayer outputs, QK-norm),
  arXiv:2501.00656
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from engine.dumps.refusals import capture_error


@dataclass(frozen=True)
class Architecture:
    """Where one family of models keeps its blocks and norms (paths from the base model)."""

    name: str  # the family, as messages and metadata name it
    model_types: tuple[str, ...]  # the config.model_type values it covers
    blocks: str  # the ModuleList of blocks
    block_norms: tuple[str, ...]  # each block's norms, by their path inside the block
    outer_norms: tuple[str, ...]  # norms outside the blocks (final norm, embedding norm)
    norm_kind: str  # "rmsnorm" | "layernorm": what the norms compute
    placement: str  # how the norms sit: "pre", "post", "peri", "olmo2" (engine/depth names)
    weight_offset: float = 0.0  # Gemma multiplies by (1 + weight): a capture stores 1 + weight
    head: str = "causal"  # "causal": AutoModelForCausalLM; "masked": AutoModelForMaskedLM


_LLAMA_NORMS = ("input_layernorm", "post_attention_layernorm")

ARCHITECTURES: tuple[Architecture, ...] = (
    Architecture(
        "llama", ("llama", "mistral"), "layers", _LLAMA_NORMS, ("norm",), "rmsnorm", "pre"
    ),
    Architecture("qwen2", ("qwen2",), "layers", _LLAMA_NORMS, ("norm",), "rmsnorm", "pre"),
    Architecture("gemma", ("gemma",), "layers", _LLAMA_NORMS, ("norm",), "rmsnorm", "pre", 1.0),
    Architecture(
        "gemma2",
        ("gemma2",),
        "layers",
        _LLAMA_NORMS + ("pre_feedforward_layernorm", "post_feedforward_layernorm"),
        ("norm",),
        "rmsnorm",
        "peri",  # a norm before and after each sublayer ("sandwich")
        1.0,
    ),
    Architecture(
        "olmo2",
        ("olmo2",),
        "layers",
        # q_norm / k_norm normalise the whole projected query / key row of a token
        ("self_attn.q_norm", "self_attn.k_norm", "post_attention_layernorm")
        + ("post_feedforward_layernorm",),
        ("norm",),
        "rmsnorm",
        "olmo2",
    ),
    Architecture("gpt2", ("gpt2",), "h", ("ln_1", "ln_2"), ("ln_f",), "layernorm", "pre"),
    Architecture(
        "bert",
        ("bert",),
        "encoder.layer",
        ("attention.output.LayerNorm", "output.LayerNorm"),
        ("embeddings.LayerNorm",),
        "layernorm",
        "post",
        head="masked",
    ),
)


def supported_model_types() -> tuple[str, ...]:
    return tuple(t for arch in ARCHITECTURES for t in arch.model_types)


def architecture_for(model_type: str) -> Architecture:
    """The row covering ``config.model_type``, or the refusal listing the supported ones."""
    for arch in ARCHITECTURES:
        if model_type in arch.model_types:
            return arch
    raise capture_error(
        "unknown_architecture",
        model_type=model_type,
        supported=", ".join(supported_model_types()),
    )


@dataclass(frozen=True)
class ModulePaths:
    """The full module paths (as in ``model.named_modules()``) a capture hooks."""

    blocks: tuple[str, ...]  # [L] e.g. "model.layers.3"
    norms: tuple[str, ...]  # every norm, in the order the forward pass runs them
    norm_layers: tuple[int | None, ...]  # the block each norm belongs to (None: outside)


def _join(*parts: str) -> str:
    return ".".join(part for part in parts if part)


def module_paths(model: torch.nn.Module, arch: Architecture) -> ModulePaths:
    """Resolve ``arch``'s relative paths in ``model``; refuse a model whose modules differ."""
    by_module = {id(module): name for name, module in model.named_modules()}
    base = by_module.get(id(getattr(model, "base_model", model)), "")
    modules = dict(model.named_modules())
    blocks_path = _join(base, arch.blocks)
    blocks = modules.get(blocks_path)
    if not isinstance(blocks, torch.nn.ModuleList) or len(blocks) == 0:
        raise capture_error(
            "modules_not_found", architecture=arch.name, path=blocks_path, kind="ModuleList"
        )
    block_paths = tuple(f"{blocks_path}.{i}" for i in range(len(blocks)))
    norms: list[str] = []
    layers: list[int | None] = []
    outer_first = [n for n in arch.outer_norms if n.startswith("embeddings")]
    for name in outer_first:
        norms.append(_join(base, name))
        layers.append(None)
    for i, block in enumerate(block_paths):
        for name in arch.block_norms:
            norms.append(f"{block}.{name}")
            layers.append(i)
    for name in arch.outer_norms:
        if name not in outer_first:
            norms.append(_join(base, name))
            layers.append(None)
    for path in norms:
        if path not in modules:
            raise capture_error(
                "modules_not_found", architecture=arch.name, path=path, kind="norm module"
            )
    return ModulePaths(block_paths, tuple(norms), tuple(layers))


def norm_eps(module: torch.nn.Module) -> float | None:
    """The epsilon a norm module adds (``eps`` in torch and Gemma, ``variance_epsilon`` in
    Llama-style RMSNorms)."""
    for attribute in ("eps", "variance_epsilon"):
        value = getattr(module, attribute, None)
        if isinstance(value, (int, float)):
            return float(value)
    return None
