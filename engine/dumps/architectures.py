"""Which modules of a Hugging Face model hold the residual stream and its norms, read from the
model catalog (``engine/models/catalog.toml``): the families whose row sets ``capture``.

A capture hooks three kinds of module, found by their paths in ``model.named_modules()``:
- the *blocks* (the first stack's ``layers``: ``layers``, ``h``, ``encoder.layer``): the
  residual stream is each block's input, and the last block's output;
- each block's *norms*, by their path inside the block (the branches' module names and the
  extra norms: ``input_layernorm``, ``ln_1``, ``self_attn.q_norm``);
- the norms outside the blocks (the embedding norm, the final norm).

Paths are relative to the base model (``model.base_model``: ``model`` in
``LlamaForCausalLM``, ``transformer`` in ``GPT2LMHeadModel``, ``bert`` in
``BertForMaskedLM``), as the catalog writes them, so one row serves every head class.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from engine.dumps.refusals import capture_error
from engine.models.families import POSITIONS, Family
from engine.models.loader import catalog


@dataclass(frozen=True)
class Architecture:
    """What the capture reads from a catalog family (paths from the base model)."""

    name: str  # the config's model_type, as messages and a capture's metadata name it
    blocks: str  # the ModuleList of blocks
    block_norms: tuple[str, ...]  # each block's norms, by their path inside it, forward order
    embedding_norm: str | None
    final_norm: str | None
    norm_kind: str  # "rmsnorm" | "layernorm": what the norms compute
    placement: str  # how the norms sit: an id of engine/depth/placements.py
    weight_offset: float  # Gemma multiplies by (1 + weight): a capture stores 1 + weight
    head: str  # "causal": AutoModelForCausalLM; "masked": AutoModelForMaskedLM


def _captured(model_type: str | None = None) -> tuple[Family, ...]:
    families = catalog().families
    return tuple(f for f in families if f.capture and model_type in (None, *f.model_types))


def supported_model_types() -> tuple[str, ...]:
    return tuple(dict.fromkeys(t for family in _captured() for t in family.model_types))


def architecture_for(model_type: str) -> Architecture:
    """The capture's reading of ``config.model_type``, or the refusal listing the supported
    ones.  Families that share a model type (Llama 1-3, SmolLM2) name the same modules."""
    families = _captured(model_type)
    if not families:
        raise capture_error(
            "unknown_architecture",
            model_type=model_type,
            supported=", ".join(supported_model_types()),
        )
    family, stack = families[0], families[0].stacks[0]
    norms = []
    for branch in stack.branches:  # the extra norms (QK-norm) run inside attention
        extra = [e.module for e in stack.extra] if branch.branch == "attention" else []
        before, *after = [branch.at(p) for p in POSITIONS]
        norms += [name for name in (before, *extra, *after) if name is not None]
    return Architecture(
        name=model_type,
        blocks=stack.layers_path,
        block_norms=tuple(norms),
        embedding_norm=family.embedding_norm,
        final_norm=stack.final,
        norm_kind=family.norm_kind,
        placement=family.placement,
        weight_offset=family.weight_offset or 0.0,
        head=family.capture,
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
    named = [(_join(base, arch.embedding_norm), None)] if arch.embedding_norm else []
    named += [
        (f"{block}.{name}", i) for i, block in enumerate(block_paths) for name in arch.block_norms
    ]
    named += [(_join(base, arch.final_norm), None)] if arch.final_norm else []
    for path, _ in named:
        if path not in modules:
            raise capture_error(
                "modules_not_found", architecture=arch.name, path=path, kind="Module"
            )
    return ModulePaths(block_paths, tuple(p for p, _ in named), tuple(i for _, i in named))


def norm_eps(module: torch.nn.Module) -> float | None:
    """The epsilon a norm module adds (``eps`` in torch and Gemma, ``variance_epsilon`` in
    Llama-style RMSNorms)."""
    for attribute in ("eps", "variance_epsilon"):
        value = getattr(module, attribute, None)
        if isinstance(value, (int, float)):
            return float(value)
    return None
