"""Fold γ into the following linear maps: the same model with fewer operations per token.

A Pre-Norm block reads its norm's output n ⊙ γ (+ β) only through linear maps (the query,
key and value projections; the MLP's input projections; the unembedding after the final
norm).  For such a map W (and bias b),

    W (γ ⊙ n + β) + b = (W diag γ) n + (W β + b),

so γ can be multiplied into W's columns once, β into its bias, and the norm left to compute
n = x / RMS(x) alone (FlashNorm, Graef et al. 2024; TransformerLens' ``fold_ln``).  The
logits are those of the original model up to float32 rounding: ``max_logit_difference`` is
the largest |Δ logit| over the text.

Which maps read a norm is not written anywhere for a model: it is found by running a few
tokens with hooks and matching each linear map's input to a norm's output (the same
tensor: same storage and size).  A norm whose output feeds no linear map is not foldable
(Gemma 2's and OLMo 2's norms after a sublayer feed the residual stream; OLMo 2's QK-norms
feed the rotary position encoding) and is listed in ``unfoldable``.

What it saves, per folded norm of width d': d' multiplications per token (by γ), d'
additions (by β, where there is one) and 2·d' parameters, against a model whose matrix
products cost about one multiplication per weight per token (``multiplications_per_token``).
What it can cost: a map whose weight is tied to another (SmolLM2's unembedding is its
embedding) needs its own folded copy, ``parameters_added``; a map without a bias gets one
when β is folded into it.

References:
- Graef et al. 2024, "FlashNorm: fast normalization for LLMs", arXiv:2407.09577
- Nanda, Bloom et al., TransformerLens ``fold_ln`` (HookedTransformer.fold_layer_norm)
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

import numpy as np
import torch
from transformers.pytorch_utils import Conv1D

from engine.config import FoldSpec
from engine.dumps.architectures import ModulePaths, module_paths
from engine.dumps.hooks import first_tensor, output_tensor
from engine.dumps.live import LiveModel
from engine.experiments import norm_maps
from engine.experiments.runs import (
    Edits,
    Effect,
    Reference,
    logits_of,
    measure,
    model_inputs,
    same_model,
)

LINEAR_MAPS = (torch.nn.Linear, Conv1D)  # Conv1D: GPT-2's linear map, weight [in, out]
TRACE_TOKENS = 8  # tokens of the pass that finds which maps read which norm


@dataclass(frozen=True)
class FoldedNorm:
    path: str
    into: tuple[str, ...]  # the linear maps γ (and β) were folded into
    width: int  # d'
    has_bias: bool


@dataclass(frozen=True)
class FoldResult:
    spec: FoldSpec
    folded: tuple[FoldedNorm, ...]
    unfoldable: tuple[str, ...]  # norms whose output no linear map reads
    untied: tuple[str, ...]  # maps whose weight was shared and needed a folded copy
    max_logit_difference: float  # max |logit_folded − logit_original| over the text
    max_abs_logit: float  # max |logit_original|: the scale float32 rounds at
    parameters_removed: int  # γ and β of the folded norms
    parameters_added: int  # untied copies and new biases
    multiplications_saved: int  # per token
    additions_saved: int  # per token (β)
    additions_added: int  # per token (new biases)
    multiplications_per_token: int  # Σ of every linear map's weights: the matrix products
    effect: Effect
    seconds: float


def readers(model: torch.nn.Module, paths: ModulePaths, ids) -> dict[str, tuple[str, ...]]:
    """{norm path: the linear maps whose input is that norm's output}, from one short pass."""
    outputs: dict[str, torch.Tensor] = {}  # kept alive, so no other tensor reuses the storage
    inputs: dict[str, torch.Tensor] = {}
    with Edits(model) as edits:
        for norm in paths.norms:

            def keep_output(module, args, kwargs, output, norm=norm):
                outputs[norm] = output_tensor(output)

            edits.on_output(norm, keep_output)
        for name, module in model.named_modules():
            if isinstance(module, LINEAR_MAPS):

                def keep_input(module, args, kwargs, name=name):
                    inputs[name] = first_tensor(args, kwargs)

                edits.on_input(name, keep_input)
        with torch.inference_mode():
            model(**model_inputs(model, ids[:TRACE_TOKENS]))
    found = {}
    for norm, y in outputs.items():
        found[norm] = tuple(
            name
            for name, x in inputs.items()
            if x.data_ptr() == y.data_ptr() and x.numel() == y.numel()
        )
    return found


def _shared(model: torch.nn.Module) -> set[int]:
    """ids of parameters that more than one module holds (tied weights)."""
    held = Counter(id(p) for m in model.modules() for p in m._parameters.values() if p is not None)
    return {key for key, count in held.items() if count > 1}


def _fold_into(edits: Edits, module: torch.nn.Module, gain, bias) -> int:
    """Fold ``gain`` [d'] and ``bias`` [d'] (or None) into ``module``; returns the new bias
    entries it had to create (0 when it had one)."""
    weight = module.weight.detach()  # Linear [out, in]; Conv1D [in, out]
    column = (slice(None), None) if isinstance(module, Conv1D) else (None, slice(None))
    # One product per weight, rounded once: the same in float32 as in float64 then rounded.
    edits.parameter(module, "weight", weight * gain.to(weight.dtype)[column])
    if bias is None:
        return 0
    wide = weight.double()
    shift = bias.double() @ wide if isinstance(module, Conv1D) else wide @ bias.double()  # [out]
    old = module.bias
    new = shift if old is None else old.detach().double() + shift  # [out]
    edits.parameter(module, "bias", new.to(weight.dtype))
    return shift.numel() if old is None else 0


def fold_norms(
    live: LiveModel, ref: Reference, spec: FoldSpec, threads: int | None = 1
) -> FoldResult:
    """The model with γ and β of every foldable norm folded into the maps that read it."""
    start = time.perf_counter()
    same_model(live, ref)
    folded, unfoldable, untied = [], [], []
    added = new_bias_entries = 0
    with live.exclusive("float32", threads) as loaded:
        model = loaded.model
        paths = module_paths(model, loaded.architecture)
        read_by = readers(model, paths, ref.tokens.ids)
        shared = _shared(model)
        modules = dict(model.named_modules())
        total = sum(m.weight.numel() for m in modules.values() if isinstance(m, LINEAR_MAPS))
        with Edits(model) as edits:
            for norm in norm_maps.norm_modules(model, loaded.architecture, paths):
                if norm.layer is None and not spec.final:
                    continue
                maps = read_by.get(norm.path, ())
                if not maps or norm.weight is None:
                    unfoldable.append(norm.path)
                    continue
                gain = norm.gain  # [d'] float32: offset + weight
                for name in maps:
                    if id(modules[name].weight) in shared:
                        untied.append(name)
                        added += modules[name].weight.numel()
                    new_bias_entries += _fold_into(edits, modules[name], gain, norm.bias)
                norm_module = modules[norm.path]
                identity = torch.full_like(norm.weight, 1.0 - norm.offset)  # offset + w = 1
                edits.parameter(norm_module, "weight", identity)
                if norm.bias is not None:
                    edits.parameter(norm_module, "bias", torch.zeros_like(norm.bias))
                folded.append(
                    FoldedNorm(norm.path, maps, norm.weight.numel(), norm.bias is not None)
                )
            with torch.inference_mode():
                output = model(**model_inputs(model, ref.tokens.ids))
        logits = logits_of(output)
    widths = np.array([f.width for f in folded], dtype=np.int64)
    with_bias = np.array([f.width for f in folded if f.has_bias], dtype=np.int64)
    difference = (logits - ref.logits).abs()
    return FoldResult(
        spec=spec,
        folded=tuple(folded),
        unfoldable=tuple(unfoldable),
        untied=tuple(untied),
        max_logit_difference=float(difference.max()),
        max_abs_logit=float(ref.logits.abs().max()),
        parameters_removed=int(widths.sum() + with_bias.sum()),
        parameters_added=int(added + new_bias_entries),
        multiplications_saved=int(widths.sum()),
        additions_saved=int(with_bias.sum()),
        additions_added=int(new_bias_entries),
        multiplications_per_token=int(total),
        effect=measure(ref, logits),
        seconds=time.perf_counter() - start,
    )
