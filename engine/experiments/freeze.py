"""Freeze the scale: each token's 1/RMS replaced by one constant, its average over the text.

A norm does two things to a token: it divides by the token's own RMS (σ for LayerNorm,
after subtracting the mean), and it multiplies by γ.  Freezing the scale keeps γ (and
LayerNorm's centring and β) but divides every token by the same number, the average of
1/RMS over the text's tokens at that norm: the norm becomes a fixed linear map.  Heimersheim
(2024) removed GPT-2's LayerNorms by replacing each token's σ with a fixed number and
fine-tuning the model to cope; here nothing is fine-tuned, so the sweep asks which blocks of
the trained model tolerate losing their per-token scale as it is.

Why a block might: where the tokens' RMS barely varies over the text the constant is close
to every token's own scale (``variation``, the spread of 1/RMS over the tokens relative to
its mean, says how close).  Why it might not: a token whose RMS is far from the others' (in
SmolLM2 the first token, which carries the massive activations) is divided by the wrong
number.
``exempt`` leaves some tokens their own scale (and out of the average): the first token,
or every token that carries a massive activation somewhere in the stream (found as on the
dumps page); this separates what those few tokens need from what the others need.

References:
- Heimersheim 2024, "You can remove GPT2's LayerNorm by fine-tuning", arXiv:2409.13710
- Sun, Chen, Kolter, Liu 2024, "Massive Activations in Large Language Models",
  arXiv:2402.17762
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from engine.config import FreezeSpec, FreezeSweepSpec
from engine.dumps.live import LiveModel
from engine.experiments import norm_maps
from engine.experiments.massive import massive_tokens
from engine.experiments.runs import Effect, Reference, chosen_norms, measure, modified_logits
from engine.threads import Cancelled, Progress, StopCheck


@dataclass(frozen=True)
class FreezeResult:
    spec: FreezeSpec
    norms: tuple[str, ...]  # [n] the frozen norms' module paths
    exempt: tuple[int, ...]  # positions that kept their own scale
    scale: np.ndarray  # [n] the constant each was given: mean of 1/RMS over the frozen tokens
    variation: np.ndarray  # [n] std / mean of 1/RMS over them (0: every token alike)
    effect: Effect
    seconds: float


def freeze_scale(
    live: LiveModel,
    ref: Reference,
    spec: FreezeSpec,
    threads: int | None = 1,
    should_stop: StopCheck | None = None,
) -> FreezeResult:
    """The model with the norms ``spec`` chooses dividing every token by one constant."""
    start = time.perf_counter()
    chosen, first = chosen_norms(ref, spec.layers, spec.final)
    exempt = {"none": (), "first": (0,), "massive": None}[spec.exempt]
    exempt = massive_tokens(ref) if exempt is None else exempt
    kept = [t for t in range(len(ref.tokens.ids)) if t not in set(exempt)]
    rstd = ref.norm_rstd[list(chosen)][:, kept].double()  # [n, T'] the tokens frozen
    scale = rstd.mean(-1)  # [n]
    variation = rstd.std(-1, correction=0) / scale  # [n]
    scales = {ref.norms[i]: float(value) for i, value in zip(chosen, scale)}

    def edit(loaded, paths, edits) -> None:
        for norm in norm_maps.norm_modules(loaded.model, loaded.architecture, paths):
            if norm.path in scales:
                hook = norm_maps.replace_output(lambda x, norm=norm: frozen(norm, x))
                edits.on_output(norm.path, hook)

    def frozen(norm: norm_maps.NormModule, x: torch.Tensor) -> torch.Tensor:
        y = norm_maps.frozen(norm, x, scales[norm.path])  # [B, T, d']
        if exempt:
            y[:, exempt] = norm_maps.computed(norm, x[:, exempt], norm.kind)
        return y

    logits = modified_logits(live, ref, edit, first, threads, should_stop)
    return FreezeResult(
        spec=spec,
        norms=tuple(ref.norms[i] for i in chosen),
        exempt=tuple(exempt),
        scale=scale.numpy(),
        variation=variation.numpy(),
        effect=measure(ref, logits),
        seconds=time.perf_counter() - start,
    )


@dataclass(frozen=True)
class FreezeSweep:
    """Every block frozen alone (and the final norm alone, last), each against the
    unmodified model."""

    spec: FreezeSweepSpec
    layers: tuple[int | None, ...]  # [n] the block frozen in each run (None: the final norm)
    results: tuple[FreezeResult, ...]  # [n]
    seconds: float

    @property
    def perplexity_ratio(self) -> np.ndarray:
        return np.array([r.effect.perplexity_ratio for r in self.results])  # [n]

    @property
    def mean_kl(self) -> np.ndarray:
        return np.array([r.effect.mean_kl for r in self.results])  # [n]

    @property
    def top1_agreement(self) -> np.ndarray:
        return np.array([r.effect.top1_agreement for r in self.results])  # [n]

    @property
    def tolerated(self) -> np.ndarray:
        """[n] bool: perplexity changed by at most ``spec.tolerance`` (a fraction), up or
        down, as the question asks ("within 5 %") and the other experiments' "unchanged"
        answers count (one-sided, an 11 % fall on an 8-token text was "within 5 %")."""
        return np.abs(self.perplexity_ratio - 1.0) <= self.spec.tolerance


def freeze_sweep(
    live: LiveModel,
    ref: Reference,
    spec: FreezeSweepSpec,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
    threads: int | None = 1,
) -> FreezeSweep:
    """``freeze_scale`` on each block alone, then (``spec.final``) on the final norm alone.
    ``progress`` gets the fraction done after each run; ``should_stop`` is polled before
    every block of every pass (``Cancelled``)."""
    start = time.perf_counter()
    layers: list[int | None] = list(range(ref.layers)) + ([None] if spec.final else [])
    # Later blocks replay more of the unmodified run, so their passes are cheaper.
    cost = [ref.layers - (ref.layers if layer is None else layer) + 1 for layer in layers]
    done, results = 0, []
    for layer, share in zip(layers, cost):
        if should_stop is not None and should_stop():
            raise Cancelled()
        choice = FreezeSpec(
            layers=() if layer is None else (layer,),
            final=layer is None,
            exempt=spec.exempt,
        )
        results.append(freeze_scale(live, ref, choice, threads, should_stop))
        done += share
        if progress is not None:
            progress(done / sum(cost))
    return FreezeSweep(spec, tuple(layers), tuple(results), time.perf_counter() - start)
