"""How many parameters a model's norms hold, and what they cost per token.

Parameters.  Each norm over width w holds w gains, plus w biases for LayerNorm with bias
(GPT-2, BERT); nGPT's L2 normalization holds none.  A layer holds the norms its placement
puts on each residual branch (``engine/depth/placements.py``) plus the family's extras
(QK-norm, MLA's latent norms), and a model adds its final and embedding norms.  GPT-3 175B
(Brown et al. 2020, arXiv:2005.14165, Table 2.1: d = 12,288, L = 96), Pre-LN with bias:
2 norms x 2d x 96 + 2d = 4,743,168 norm parameters.

All parameters, for the two architectures most configs are (``total_formula`` in
catalog.toml), counted as ``sum(p.numel() for p in model.parameters())`` of the HF causal LM
counts them (a tied LM head once):
- ``gpt2``: token and position embeddings V·d + P·d; per layer the fused qkv projection
  d·3d + 3d, the output projection d·d + d, the MLP d·I + I + I·d + d; the norms.
- ``llama``: token embeddings V·d (twice when the LM head is not tied); per layer q and o
  d·H·h_d each, k and v d·KV·h_d each (biases where the config or the family says), the
  gated MLP 3·d·I (+ 2I + d with mlp_bias); the norms.

Cost.  A norm reads its [tokens, d] input once and writes it once (``engine/perf/roofline.py``);
where it reads a residual sum just formed (x + F(x)), fusing the add into the norm saves one
of the five passes over [tokens, d] (read x, r; write h; read h; write y -> read x, r; write
h, y).  A QK-norm or latent norm costs the values it reads a token: OLMo 2's q_norm over
H·h_d, Qwen 3's over h_d on each of the H heads (the same H·h_d values), MLA's over its rank;
their adds are not residual sums, so no fusing is counted for them.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.config import DTYPES, ModelShape
from engine.errors import EngineError
from engine.models.families import EXTRA_ROLES, POSITIONS, Family, Stack
from engine.models.loader import catalog
from engine.perf.roofline import FLOPS_PER_ELEMENT, NormTraffic, norm_traffic


@dataclass(frozen=True)
class NormGroup:
    """Norm modules of one kind in a model: one row of the budget table."""

    stack: str  # "decoder" / "encoder"
    role: str  # "<branch>.<position>", "qk_norm", "latent_norm", "final" or "embedding"
    module: str | None  # HF name, "{i}" standing for the layer; None where not known
    width: int
    count: int  # modules
    parameters_each: int
    per_token: int  # values each module reads a token (its width, or heads x head_dim)

    @property
    def parameters(self) -> int:
        return self.count * self.parameters_each


@dataclass(frozen=True)
class NormBudget:
    """The norm parameters of one model and their share of all its parameters."""

    family: str
    norm_kind: str
    bias: bool
    groups: tuple[NormGroup, ...]
    norm_modules: int
    norm_parameters: int
    total_parameters: int | None  # None where the family's total is not estimated
    share: float | None  # norm_parameters / total_parameters (a fraction, not a percentage)


@dataclass(frozen=True)
class NormCost:
    """Bytes and FLOPs of a model's residual-width norms for ``tokens`` tokens."""

    family: str
    dtype: str
    bytes_per_element: int
    tokens: int
    per_call: NormTraffic  # one norm over [tokens, d]
    calls: int  # residual-width norms in one forward pass
    extra_calls: int  # QK-norm and latent norm modules run in one forward pass
    extra_roles: tuple[str, ...]  # which of EXTRA_ROLES those are
    extra_values: int  # the values those read a token, all together
    bytes_moved: int  # every norm of the pass, both kinds
    flops: int
    memory_time_s: float  # bytes_moved at the roofline's bandwidth
    add_norm_pairs: int  # norms that read a residual sum just formed
    unfused_add_norm_bytes: int  # those adds and norms as separate kernels
    fused_add_norm_bytes: int  # ... fused

    @property
    def fused_bytes_saved(self) -> int:
        return self.unfused_add_norm_bytes - self.fused_add_norm_bytes


def _family(shape: ModelShape) -> Family:
    return catalog().family(shape.family)


def _width(shape: ModelShape, width: str) -> int | None:
    heads, kv_heads, head_dim = shape.heads, shape.kv_heads, shape.head_dim
    return {
        "hidden": shape.hidden,
        "head_dim": head_dim,
        "q_projection": None if heads is None or head_dim is None else heads * head_dim,
        "kv_projection": None if kv_heads is None or head_dim is None else kv_heads * head_dim,
        "q_lora_rank": shape.q_lora_rank,
        "kv_lora_rank": shape.kv_lora_rank,
    }[width]


def _layers(shape: ModelShape, stack: Stack) -> int:
    return shape.decoder_layers if stack.count == "decoder_layers" else shape.layers


def norm_groups(shape: ModelShape) -> tuple[NormGroup, ...]:
    """Every norm module of the model ``shape`` describes, grouped by role and stack."""
    family = _family(shape)
    if family.bias is None:
        raise EngineError("models.unknown_fact", {"family": family.name, "field": "bias"})
    per_width = 0 if family.weight_init == "none" else (2 if family.bias else 1)
    placement = family.placement_entry.norms
    groups = []

    def add(
        stack: Stack, role: str, module: str | None, width: int, count: int, per_token=None
    ) -> None:
        values = width if per_token is None else per_token
        groups.append(NormGroup(stack.name, role, module, width, count, per_width * width, values))

    if family.embedding_norm:
        add(family.stacks[0], "embedding", family.embedding_norm, shape.hidden, 1)
    for stack in family.stacks:
        layers = _layers(shape, stack)
        prefix = f"{stack.layers_path}.{{i}}." if stack.layers_path else ""
        for branch in stack.branches:
            for position in POSITIONS:
                if getattr(placement, position):
                    name = branch.at(position)
                    module = prefix + name if name else None
                    add(stack, f"{branch.branch}.{position}", module, shape.hidden, layers)
        for extra in stack.extra:
            width = _width(shape, extra.width)
            if width is None:  # e.g. DeepSeek with q_lora_rank null: no q_a_layernorm
                continue
            per_token = None if extra.per_token is None else _width(shape, extra.per_token)
            add(stack, extra.role, prefix + extra.module, width, layers, per_token)
        if stack.final_norm:
            add(stack, "final", stack.final, shape.hidden, 1)
    return tuple(groups)


def _other_parameters(shape: ModelShape, family: Family) -> int | None:
    """Every parameter that is not a norm's, for the families with a total formula."""
    d, layers, vocab = shape.hidden, shape.layers, shape.vocab
    embeddings = vocab * d * (1 if shape.tied_embeddings else 2)
    if family.total_formula == "gpt2":
        inner = shape.intermediate
        attention = (d * 3 * d + 3 * d) + (d * d + d)
        mlp = (d * inner + inner) + (inner * d + d)
        return embeddings + shape.positions * d + layers * (attention + mlp)
    if family.total_formula == "llama":
        q_width = shape.heads * shape.head_dim
        kv_width = shape.kv_heads * shape.head_dim
        attention = 2 * d * q_width + 2 * d * kv_width
        if shape.attention_bias:
            attention += q_width + 2 * kv_width + d
        elif family.qkv_bias:
            attention += q_width + 2 * kv_width
        mlp = 3 * d * shape.intermediate
        if shape.mlp_bias:
            mlp += 2 * shape.intermediate + d
        return embeddings + layers * (attention + mlp)
    return None


def norm_budget(shape: ModelShape) -> NormBudget:
    """Norm parameters of the model ``shape`` describes, and their share of all parameters."""
    family = _family(shape)
    groups = norm_groups(shape)
    norm_parameters = sum(g.parameters for g in groups)
    others = _other_parameters(shape, family)
    total = None if others is None else others + norm_parameters
    return NormBudget(
        family=family.id,
        norm_kind=family.norm_kind,
        bias=bool(family.bias),
        groups=groups,
        norm_modules=sum(g.count for g in groups),
        norm_parameters=norm_parameters,
        total_parameters=total,
        share=None if not total else norm_parameters / total,
    )


def _add_norm_pairs(shape: ModelShape, family: Family) -> int:
    """Norms that read a residual sum just formed, so the add can be fused into them.

    Norm(x + F) on the stream (Post-LN) always does; a branch's input norm does except the
    model's very first (it reads the embeddings); a norm on a branch's output is applied
    before its add; a final norm reads the last layer's sum.
    """
    placement = family.placement_entry.norms
    pairs = 0
    for stack in family.stacks:
        layers = _layers(shape, stack)
        branches = len(stack.branches)
        if placement.on_stream:
            pairs += layers * branches
        if placement.before:
            pairs += layers * branches - 1
        if stack.final_norm:
            pairs += 1
    return pairs


MAX_COST_TOKENS = 1 << 24  # the most tokens the calculator counts for (a batch of long contexts)
# What a page offers to cost a model's norms in, beside its config's own (which may also be
# float64: ``norm_cost`` takes any of ``DTYPES``)
COST_DTYPES = ("bfloat16", "float16", "float32")


def norm_cost(shape: ModelShape, dtype: str | None = None, tokens: int = 1) -> NormCost:
    """Bytes moved and FLOPs of the residual-width norms, in ``dtype`` (default: the config's,
    else bfloat16), and what fusing the residual adds into them saves."""
    family = _family(shape)
    if family.norm_kind not in FLOPS_PER_ELEMENT:
        raise EngineError(
            "models.no_cost_model",
            {"kind": family.norm_kind, "allowed": ", ".join(FLOPS_PER_ELEMENT)},
        )
    dtype = dtype or shape.dtype or "bfloat16"
    if dtype not in DTYPES:
        raise EngineError(
            "models.unknown_dtype",
            {"dtype": dtype, "allowed": ", ".join(DTYPES)},
        )
    if (
        isinstance(tokens, bool)
        or not isinstance(tokens, int)
        or not 1 <= tokens <= MAX_COST_TOKENS
    ):
        raise EngineError("models.bad_tokens", {"tokens": tokens, "limit": f"{MAX_COST_TOKENS:,}"})
    bytes_per_element = DTYPES[dtype].itemsize
    per_call = norm_traffic(tokens, shape.hidden, bytes_per_element, family.norm_kind)
    groups = norm_groups(shape)
    calls = sum(g.count for g in groups if g.role not in EXTRA_ROLES)
    extra = [g for g in groups if g.role in EXTRA_ROLES]
    values = sum(g.count * g.per_token for g in extra)  # traffic is linear in the values
    extra_traffic = (
        norm_traffic(tokens, values, bytes_per_element, family.norm_kind) if values else None
    )
    pairs = _add_norm_pairs(shape, family)
    return NormCost(
        family=family.id,
        dtype=dtype,
        bytes_per_element=bytes_per_element,
        tokens=tokens,
        per_call=per_call,
        calls=calls,
        extra_calls=sum(g.count for g in extra),
        extra_roles=tuple(role for role in EXTRA_ROLES if any(g.role == role for g in extra)),
        extra_values=values,
        bytes_moved=calls * per_call.bytes_moved + (extra_traffic.bytes_moved if values else 0),
        flops=calls * per_call.flops + (extra_traffic.flops if values else 0),
        memory_time_s=calls * per_call.memory_time_s
        + (extra_traffic.memory_time_s if values else 0.0),
        add_norm_pairs=pairs,
        unfused_add_norm_bytes=pairs * per_call.unfused_add_norm_bytes,
        fused_add_norm_bytes=pairs * per_call.fused_add_norm_bytes,
    )
