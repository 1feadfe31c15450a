"""Swap a norm: RMSNorm → LayerNorm (subtract each token's mean first) in chosen blocks.

RMSNorm is LayerNorm without the centring (Zhang & Sennrich 2019): y = x / RMS(x) · γ
against y = (x − μ) / σ · γ.  The two agree on a token whose mean μ is 0, since then
RMS² = σ² + μ² = σ².  Swapping one for the other in a trained model asks how far from zero
the means of its residual stream are where the norm reads it — and whether the model
relied on what the mean carried.  The swapped norm keeps the module's γ and epsilon; a
LayerNorm swapped in has no β (RMSNorm has none to keep).  A LayerNorm model (GPT-2) is
swapped the other way: LayerNorm → RMSNorm, its β kept.

References:
- Zhang, Sennrich 2019, "Root Mean Square Layer Normalization", arXiv:1910.07467
- Ba, Kiros, Hinton 2016, "Layer Normalization", arXiv:1607.06450
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from engine.config import SwapSpec
from engine.dumps.live import LiveModel
from engine.experiments import norm_maps
from engine.experiments.runs import Effect, Reference, chosen_norms, measure, modified_logits

OTHER_KIND = {"rmsnorm": "layernorm", "layernorm": "rmsnorm"}


@dataclass(frozen=True)
class SwapResult:
    spec: SwapSpec
    from_kind: str  # the model's norms
    to_kind: str  # what they were swapped for
    norms: tuple[str, ...]  # the swapped norms' module paths
    effect: Effect
    seconds: float


def swap_norms(
    live: LiveModel, ref: Reference, spec: SwapSpec, threads: int | None = 1
) -> SwapResult:
    """The model with the norms ``spec`` chooses computed as the other kind."""
    start = time.perf_counter()
    chosen, first = chosen_norms(ref, spec.layers, spec.final)
    paths = {ref.norms[i] for i in chosen}
    kind = OTHER_KIND[live.loaded.architecture.norm_kind]

    def edit(loaded, module_paths, edits) -> None:
        for norm in norm_maps.norm_modules(loaded.model, loaded.architecture, module_paths):
            if norm.path in paths:
                hook = norm_maps.replace_output(
                    lambda x, norm=norm: norm_maps.computed(norm, x, kind)
                )
                edits.on_output(norm.path, hook)

    logits = modified_logits(live, ref, edit, replay=first, threads=threads)
    return SwapResult(
        spec=spec,
        from_kind=live.loaded.architecture.norm_kind,
        to_kind=kind,
        norms=tuple(ref.norms[i] for i in chosen),
        effect=measure(ref, logits),
        seconds=time.perf_counter() - start,
    )
