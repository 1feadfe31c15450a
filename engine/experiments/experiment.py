"""One experiment as a page runs it: the unmodified run on the text, the experiment, and the
answer to the question a learner predicted before it ran.

    run = run_experiment(live, TextSpec("en"), MassiveSpec("zero"))
    perplexity(run.baseline_nll), run.result.effect.perplexity   # before, after
    run.answer                                              # "broken"

The unmodified run (``runs.reference``) is kept for the last model and text asked for
(``functools.lru_cache``, one entry: ~240 MB on 512 tokens), so trying the settings of one
experiment after another pays for it once.

The questions, and how the measurement answers them (``OPTIONS``, ``ExperimentRun.answer``):
- "perplexity" (every experiment with one modified model): by how much does the text's
  perplexity change?  "better": it falls by more than ``SAME``; "same": by at most ``SAME``
  (5 %, the freeze sweep's default tolerance) either way; "worse": up to ``BROKEN`` times;
  "broken": more, or not finite.  (A fall is rare but real: one's own text, such as a run of
  replacement characters, can read as more likely to a changed model.)
- "lens": at the first third of the layers, which lens gives the least certain next-token
  distribution (the highest mean entropy)?
- "sweep": how many of the single-norm freezes keep perplexity within the tolerance?
  "none", "some" (at most half), "most" (more than half).
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.config import EXPERIMENT_SPECS, LENS_VARIANTS, FreezeSweepSpec, TextSpec
from engine.dumps.live import LiveModel
from engine.experiments.fold import fold_norms
from engine.experiments.freeze import freeze_scale, freeze_sweep
from engine.experiments.half import float16_run
from engine.experiments.lens import logit_lens
from engine.experiments.massive import massive_activations
from engine.experiments.runs import Reference, reference
from engine.experiments.swap import swap_norms
from engine.threads import Cancelled, Progress, StopCheck

SAME = 0.05  # perplexity within ×(1 ± 5 %): "same"
BROKEN = 10.0  # perplexity more than ten-fold: "broken"
REFERENCE_SHARE = 0.3  # of a single experiment's progress bar: the unmodified run

RUNNERS = {
    "massive": massive_activations,
    "swap": swap_norms,
    "freeze": freeze_scale,
    "fold": fold_norms,
    "lens": logit_lens,
    "half": float16_run,
}


def experiment_of(spec: Any) -> str:
    """The id (``EXPERIMENTS``) of the experiment ``spec`` configures."""
    names = {kind: name for name, kind in EXPERIMENT_SPECS.items()}
    if type(spec) not in names:
        raise TypeError(f"not an experiment's spec: {type(spec).__name__}")
    return names[type(spec)]


# The answers a prediction chooses from, per experiment
OPTIONS = {name: ("better", "same", "worse", "broken") for name in EXPERIMENT_SPECS} | {
    "lens": LENS_VARIANTS,
    "sweep": ("none", "some", "most"),
}


@dataclass(frozen=True)
class ExperimentRun:
    """An experiment on a text, with what the unmodified model did on it."""

    experiment: str  # EXPERIMENTS
    text: TextSpec
    spec: Any  # the experiment's spec (EXPERIMENT_SPECS)
    model: str  # LiveModel.name
    token_texts: tuple[str, ...]  # [T] what each token adds to the text
    text_tokens: int  # tokens of the whole text (T is at most this)
    baseline_nll: np.ndarray  # [T-1] the unmodified model's -log p of each next token
    result: Any  # MassiveResult, SwapResult, FreezeResult, FreezeSweep, FoldResult, ...
    seconds: float  # the unmodified run (or its lookup) and the experiment

    @property
    def tokens(self) -> int:
        return len(self.token_texts)

    @property
    def answer(self) -> str | None:
        """The option (``OPTIONS[self.experiment]``) the measurement makes true, or None."""
        result = self.result
        if self.experiment == "lens":
            entropy = result.mean_entropy  # [3, L+1]
            early = entropy[:, early_points(entropy.shape[1] - 1)].mean(-1)  # [3]
            return result.variants[int(np.argmax(early))]
        if self.experiment == "sweep":
            held = int(result.tolerated.sum())
            return "none" if held == 0 else ("some" if 2 * held <= len(result.layers) else "most")
        if getattr(result, "effect", None) is None:  # no massive entry: nothing was changed
            return None
        return perplexity_band(result.effect.perplexity_ratio)


@functools.lru_cache(maxsize=1)
def cached_reference(live: LiveModel, text: TextSpec) -> Reference:
    """``runs.reference`` for the last (model, text) asked for."""
    return reference(live, text)


def run_experiment(
    live: LiveModel,
    text: TextSpec,
    spec: Any,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
    threads: int | None = 1,
) -> ExperimentRun:
    """The experiment ``spec`` configures, on ``text``, against the unmodified model.
    ``progress`` gets the fraction done; ``should_stop`` is polled between the passes (and,
    in the sweep, before every block) and ends the run with ``Cancelled``."""
    start = time.perf_counter()
    experiment = experiment_of(spec)

    def check() -> None:
        if should_stop is not None and should_stop():
            raise Cancelled()

    def report(fraction: float) -> None:
        if progress is not None:
            progress(fraction)

    check()
    ref = cached_reference(live, text)
    report(REFERENCE_SHARE)
    check()
    if isinstance(spec, FreezeSweepSpec):

        def swept(fraction: float) -> None:
            report(REFERENCE_SHARE + (1 - REFERENCE_SHARE) * fraction)

        result = freeze_sweep(live, ref, spec, swept, should_stop, threads)
    else:
        result = RUNNERS[experiment](live, ref, spec, threads=threads)
    report(1.0)
    return ExperimentRun(
        experiment=experiment,
        text=text,
        spec=spec,
        model=ref.model,
        token_texts=ref.tokens.texts,
        text_tokens=ref.tokens.text_tokens,
        baseline_nll=ref.nll,
        result=result,
        seconds=time.perf_counter() - start,
    )


def perplexity_band(ratio: float) -> str:
    """ "better", "same", "worse" or "broken" for a perplexity ratio (``OPTIONS``)."""
    if not math.isfinite(ratio) or ratio > BROKEN:
        return "broken"
    if ratio > 1 + SAME:
        return "worse"
    if ratio >= 1 - SAME:  # within ±5 %, as the sweep's tolerance and the options say
        return "same"
    return "better"


def early_points(layers: int) -> slice:
    """The stream points the lens question reads: 1 .. L/3 (0, the embeddings, left out)."""
    return slice(1, max(2, layers // 3 + 1))


def default_specs() -> dict[str, Any]:
    """Every experiment at its spec's defaults: what the page opens on."""
    return {name: kind() for name, kind in EXPERIMENT_SPECS.items()}
