"""What one model family's normalization is, as frozen dataclasses read from catalog.toml.

A family names its placement by an id of ``engine/depth/placements.py`` (the same table the
Depth page's simulator and wiring diagrams read) and records, as data, where it departs from
it: norms on queries and keys (QK-norm), on MLA's latent vectors, on the embeddings, and a
``1 + weight`` gain.  A field the catalog leaves empty is ``None``: unknown, not false.

References: see the ``source`` of each family in catalog.toml.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from engine.config import DEPTH_NORMS
from engine.depth.placements import PLACEMENTS, Placement
from engine.errors import EngineError

BRANCHES = ("attention", "cross_attention", "mlp")  # residual branches of one layer, in order
POSITIONS = ("before", "after", "on_stream")  # as placements.BranchNorms
# the widths a norm can have, resolved from a model's config by engine/models/calculator.py
WIDTHS = ("hidden", "head_dim", "q_projection", "kv_projection", "q_lora_rank", "kv_lora_rank")
EXTRA_ROLES = ("qk_norm", "latent_norm")
_UNNAMED = (None, None, None)


@dataclass(frozen=True)
class BranchModules:
    """The HF module names of one branch's norms (relative to a layer), None where absent."""

    branch: str  # one of BRANCHES
    before: str | None = None
    after: str | None = None
    on_stream: str | None = None

    def at(self, position: str) -> str | None:
        return getattr(self, position)


@dataclass(frozen=True)
class ExtraNorm:
    """A norm in every layer that the placement does not describe (QK-norm, latent norms)."""

    module: str  # relative to one layer
    width: str  # one of WIDTHS: the row it normalizes (and its gains)
    role: str  # one of EXTRA_ROLES
    eps: float | None = None  # a fixed ε where the module ignores the family's eps_field
    # one of WIDTHS: the values it reads per token, where it normalizes several rows of
    # ``width`` a token (a q_norm over head_dim runs on every head: heads * head_dim)
    per_token: str | None = None


@dataclass(frozen=True)
class Stack:
    """One tower of layers: a decoder-only model has one, T5 an encoder and a decoder."""

    name: str  # "decoder" or "encoder"
    count: str  # the layer count it has in a ModelShape: "layers" or "decoder_layers"
    branches: tuple[BranchModules, ...]  # in order; names None where not known
    layers_path: str | None = None  # the layers' ModuleList in the base model, e.g. "layers"
    final: str | None = None  # the final norm's module name
    final_norm: bool | None = None  # there is a final norm (None: unknown)
    extra: tuple[ExtraNorm, ...] = ()

    def norm_modules(self) -> tuple[str, ...]:
        """Every named norm module of one layer, relative to the layer, in branch order."""
        names = [b.at(p) for b in self.branches for p in POSITIONS if b.at(p) is not None]
        return tuple(names) + tuple(e.module for e in self.extra)


@dataclass(frozen=True)
class ModuleNames:
    """One layer's norm names in the shape a wiring diagram labels them.

    ``attention`` and ``mlp`` are (before, after, on_stream) for that branch, None where the
    placement has no norm.  The Llama-family ``post_attention_layernorm`` is the MLP's
    pre-norm in Llama but the attention output's norm in Gemma 2 and OLMo 2.
    """

    family: str
    attention: tuple[str | None, str | None, str | None]
    mlp: tuple[str | None, str | None, str | None]
    final: str | None  # the norm after the last layer, where the family has one


@dataclass(frozen=True)
class Example:
    """A config.json that fills the calculator, with where its numbers come from."""

    label: str  # display text (model names are not translated)
    label_zh: str  # the same in Simplified Chinese (the label itself where it is only a name)
    source: str
    source_zh: str  # the same in Simplified Chinese (citations, names and numbers unchanged)
    config_json: str  # JSON text, so the dataclass stays hashable

    @property
    def config(self) -> dict:
        return json.loads(self.config_json)


@dataclass(frozen=True)
class Family:
    """One model family's normalization.  None means the catalog does not know."""

    id: str
    name: str
    model_types: tuple[str, ...]  # HF config `model_type` values that mean this family
    norm_kind: str  # engine.config.NORM_KINDS or "l2"
    placement: str  # an id of PLACEMENTS
    stacks: tuple[Stack, ...]
    source: tuple[str, ...]
    source_zh: tuple[str, ...]  # the same in Simplified Chinese, one per source
    config_class: str | None = None
    model_class: str | None = None  # the base model; module names are relative to it
    norm_class: str | None = None
    eps_field: str | None = None  # the config field that sets ε
    eps_default: float | None = None  # the config class's default
    eps_released: float | None = None  # the flagship checkpoint's value
    eps_released_source: str | None = None
    eps_released_source_zh: str | None = None
    qk_norm: bool | None = None
    bias: bool | None = None
    weight_init: str | None = None  # "ones", "zeros" or "none" (no learnable gain)
    weight_offset: float | None = None  # the gain is (weight_offset + weight)
    total_formula: str | None = None  # "gpt2" / "llama": how all parameters are counted
    qkv_bias: bool = False  # q, k, v projections always carry a bias (Qwen 2)
    embedding_norm: str | None = None  # a norm on the embeddings (module name)
    config_defaults: tuple[tuple[str, object], ...] = ()  # (HF field, class default)
    note: str | None = None  # where the family departs from its placement (English)
    note_zh: str | None = None  # the same in Simplified Chinese
    example: Example | None = None
    capture: str | None = None  # "causal" / "masked": the head engine/dumps' capture loads

    @property
    def placement_entry(self) -> Placement:
        return PLACEMENTS[self.placement]

    @property
    def final_norm(self) -> bool | None:
        known = [s.final_norm for s in self.stacks]
        if any(known):
            return True
        return None if None in known else False

    @property
    def depth_norm(self) -> str | None:
        """The Depth page's norm for "simulate this"; None where it has none (nGPT's L2)."""
        return self.norm_kind if self.norm_kind in DEPTH_NORMS else None

    @property
    def module_names(self) -> ModuleNames:
        """The first stack's names in the shape the Depth page's wiring diagram labels."""
        stack = self.stacks[0]
        by_branch = {b.branch: b for b in stack.branches}

        def names(branch: str) -> tuple[str | None, str | None, str | None]:
            modules = by_branch.get(branch)
            if modules is None:
                return _UNNAMED
            return (modules.before, modules.after, modules.on_stream)

        return ModuleNames(self.name, names("attention"), names("mlp"), stack.final)

    def norms_per_layer(self) -> tuple[int, ...]:
        """Norm modules in one layer of each stack: the placement's, plus the extras."""
        per_branch = self.placement_entry.norms.count
        return tuple(len(s.branches) * per_branch + len(s.extra) for s in self.stacks)

    def config_default(self, field: str):
        """The config class's default for ``field`` where the catalog records it, else None."""
        return dict(self.config_defaults).get(field)


@dataclass(frozen=True)
class Catalog:
    """Every family of catalog.toml, in the file's order."""

    families: tuple[Family, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(f.id for f in self.families)

    def family(self, family_id: str) -> Family:
        for family in self.families:
            if family.id == family_id:
                return family
        raise EngineError(
            "models.unknown_family",
            {"family": family_id, "allowed": ", ".join(self.ids)},
        )

    def sharing_model_type(self, model_type: str) -> tuple[Family, ...]:
        """Every family whose configs carry ``model_type`` (``llama``: LLaMA ... SmolLM2)."""
        return tuple(f for f in self.families if model_type in f.model_types)

    def placement_names(self, placement: str) -> ModuleNames:
        """The names of the placement's example families, joined: ``pre`` is GPT-2's
        ``ln_1`` / Llama 3's ``input_layernorm``; no family ("") and no names where it has none."""
        entry = PLACEMENTS[placement]
        names = [self.family(f).module_names for f in entry.examples]

        def joined(*parts: str | None) -> str | None:
            return " / ".join(p for p in parts if p is not None) or None

        family = joined(*(n.family for n in names)) or ""
        if (
            family and entry.scale_branch_input
        ):  # LayerNorm scaling applied to a Llama, not Llama's own
            family += " + 1/√l"
        return ModuleNames(
            family,
            tuple(joined(*slot) for slot in zip(*(n.attention for n in names))) or _UNNAMED,
            tuple(joined(*slot) for slot in zip(*(n.mlp for n in names))) or _UNNAMED,
            joined(*(n.final for n in names)),
        )
