"""Training lab: train a tiny GPT live on a toy task, Pre-LN vs Post-LN, warm-up on or off.

Tasks (every sequence starts with BOS; the loss and accuracy count only the answer tokens):
    copy     BOS a_1 .. a_n SEP a_1 .. a_n
    reverse  BOS a_1 .. a_n SEP a_n .. a_1
    modadd   BOS a PLUS b EQ c,   c = (a + b) mod p
Fresh batches are drawn every step from a seeded generator, so the per-step loss is also a
held-out loss.  The optimiser is Adam (betas 0.9, 0.999, no weight decay, no clipping: a
clipped run cannot show divergence); the learning rate rises linearly over ``warmup_steps``
when ``warmup`` is on and is constant otherwise.

The lesson (Xiong et al. 2020, Section 3; Liu et al. 2020 for the amplification view): at
initialisation the gradients near a Post-LN model's output are large, so a learning rate that
Pre-LN takes without warm-up drives Post-LN into a bad region early, where it stalls near the
chance loss or diverges; a warm-up lets it through.

Defaults (``engine.config.TrainSpec``): reverse 8 symbols of 10, 6 layers, d = 64, 4 heads,
Adam lr 3e-3, batch 32, 300 steps, warm-up 100 steps when on.  Trained on the CPU (torch
2.13, one thread; a run's time is in benchmarks/RESULTS.md, "Depth simulator (CPU)"), final
loss = mean of the last 30 steps (``FINAL_WINDOW``), chance = ln 10 = 2.30:

    lr      Pre-LN, no warm-up   Post-LN, no warm-up    Post-LN, warm-up     (seeds 0-5)
    1e-3    6/6 trained          6/6 trained            6/6 trained
    2e-3    6/6 trained          5/6 trained, 1 stall   6/6 trained
    3e-3    5/6 trained (seed 3  6/6 stalled at 2.31   6/6 trained
            plateaus at 1.96)

Post-LN at lr 3e-3 without warm-up sits at the chance loss from about step 15 on and was
still there after 1000 steps (seed 0); it stalls rather than producing NaNs.  At 8 layers
and lr 3e-3 Pre-LN itself stalls on 1 seed of 6 and barely learns on another, so the
defaults stay at 6 layers: needing no warm-up is not a licence for any learning rate.

References:
- Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture", arXiv:2002.04745
- Liu et al. 2020, "Understanding the Difficulty of Training Transformers", arXiv:2004.08249
- Kingma, Ba 2015, "Adam: A Method for Stochastic Optimization", arXiv:1412.6980
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from engine.config import TrainSpec
from engine.threads import Cancelled, torch_threads
from engine.training.model import TinyGPT

DIVERGED_LOSS = 1e3  # a loss above this (or not finite) ends the run as diverged
FINAL_WINDOW = 30  # a run's final loss and accuracy: their mean over its last this many steps


@dataclass(frozen=True)
class TrainStep:
    """One optimisation step, as streamed by ``iter_training``."""

    step: int  # 1-based
    loss: float  # cross-entropy on the answer tokens of this step's (fresh) batch
    accuracy: float  # fraction of answer tokens predicted exactly (argmax)
    lr: float
    grad_norm: float  # global L2 norm of all parameter gradients, before the update


@dataclass(frozen=True, eq=False)
class TrainResult:
    """A finished (or stopped) run; arrays are numpy, one entry per step taken."""

    spec: TrainSpec
    steps: np.ndarray  # [n]
    loss: np.ndarray  # [n]
    accuracy: np.ndarray  # [n]
    lr: np.ndarray  # [n]
    grad_norm: np.ndarray  # [n]
    chance_loss: float  # ln(number of possible answers): a model that learnt nothing
    outcome: str  # "trained", "stalled" or "diverged" (see ``classify_outcome``)
    seconds: float

    @property
    def final_window(self) -> int:
        """How many of the last steps the final loss and accuracy average (fewer in a short
        run): one step's loss on a fresh batch is noisy."""
        return min(FINAL_WINDOW, len(self.loss))

    @property
    def final_loss(self) -> float:
        return float(np.mean(self.loss[-self.final_window :]))

    @property
    def final_accuracy(self) -> float:
        """In percent."""
        return 100 * float(np.mean(self.accuracy[-self.final_window :]))


def vocabulary(spec: TrainSpec) -> int:
    """Symbols plus BOS and SEP (copy/reverse) or residues plus BOS, PLUS, EQ (modadd)."""
    return spec.modulus + 3 if spec.task == "modadd" else spec.symbols + 2


def sequence_length(spec: TrainSpec) -> int:
    """T, the model's input length: a whole example minus its last token."""
    return 5 if spec.task == "modadd" else 2 * spec.length + 1


def chance_loss(spec: TrainSpec) -> float:
    """Cross-entropy of guessing uniformly among the possible answers."""
    return math.log(spec.modulus if spec.task == "modadd" else spec.symbols)


def make_batch(spec: TrainSpec, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """(inputs [B, T], targets [B, T]); targets are -100 except where an answer is predicted."""
    B = spec.batch
    if spec.task == "modadd":
        p = spec.modulus
        bos, plus, eq = p, p + 1, p + 2
        a = torch.randint(0, p, (B, 1), generator=gen)
        b = torch.randint(0, p, (B, 1), generator=gen)
        full = torch.cat(
            [
                torch.full_like(a, bos),
                a,
                torch.full_like(a, plus),
                b,
                torch.full_like(a, eq),
                (a + b) % p,
            ],
            dim=1,
        )  # [B, 6]
        answer_from = 5
    else:
        n = spec.length
        bos, sep = spec.symbols, spec.symbols + 1
        seq = torch.randint(0, spec.symbols, (B, n), generator=gen)  # [B, n]
        answer = seq if spec.task == "copy" else seq.flip(1)  # [B, n]
        col = torch.full((B, 1), bos)
        full = torch.cat([col, seq, torch.full((B, 1), sep), answer], dim=1)  # [B, 2n+2]
        answer_from = n + 2
    inputs, targets = full[:, :-1], full[:, 1:].clone()  # [B, T], T = len - 1
    targets[:, : answer_from - 1] = -100
    return inputs, targets


def learning_rate(spec: TrainSpec, step: int) -> float:
    """Learning rate at 1-based ``step``: linear warm-up then constant, or constant."""
    if spec.warmup:
        return spec.lr * min(1.0, step / spec.warmup_steps)
    return spec.lr


def classify_outcome(loss: np.ndarray, chance: float, stopped_early: bool) -> str:
    """ "diverged" if the loss blew up, "stalled" if the last tenth of the run is still above
    half the chance loss, "trained" otherwise."""
    if stopped_early or not np.all(np.isfinite(loss)):
        return "diverged"
    tail = loss[-max(1, len(loss) // 10) :]
    return "stalled" if float(np.mean(tail)) > 0.5 * chance else "trained"


def iter_training(
    spec: TrainSpec,
    should_stop: Callable[[], bool] | None = None,
    threads: int | None = None,
) -> Iterator[TrainStep]:
    """Train ``spec`` and yield a ``TrainStep`` after every step.

    Stops after ``spec.steps`` steps, when the loss diverges (that step is yielded first),
    or when ``should_stop()`` returns True.  Deterministic for a given seed and thread count;
    uses private generators and leaves the global RNG alone.  ``threads`` applies to each
    step's computation only (``engine.threads``) and is restored before every ``yield``.
    """
    with torch_threads(threads):
        model, optim, data_gen = _setup(spec)
    for step in range(1, spec.steps + 1):
        if should_stop is not None and should_stop():
            return
        with torch_threads(threads):
            record = _step(spec, model, optim, data_gen, step)
        yield record
        if not math.isfinite(record.loss) or record.loss > DIVERGED_LOSS:
            return


def _setup(spec: TrainSpec):
    """The model, its Adam optimiser and the data generator, all from ``spec.seed``."""
    seq_len = sequence_length(spec) + 1
    model = TinyGPT(
        vocabulary(spec), seq_len, spec.layers, spec.d, spec.heads, spec.placement, spec.seed
    )
    optim = torch.optim.Adam(model.parameters(), lr=spec.lr, betas=(0.9, 0.999), eps=1e-8)
    return model, optim, torch.Generator().manual_seed(spec.seed + 1)


def _step(spec: TrainSpec, model: TinyGPT, optim, data_gen, step: int) -> TrainStep:
    """One step: loss and gradients on a fresh batch, then the Adam update (if finite)."""
    lr = learning_rate(spec, step)
    for group in optim.param_groups:
        group["lr"] = lr
    inputs, targets = make_batch(spec, data_gen)  # [B, T], [B, T]
    logits = model(inputs)  # [B, T, vocab]
    loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
    optim.zero_grad(set_to_none=True)
    loss.backward()
    grads = [p.grad.pow(2).sum() for p in model.parameters() if p.grad is not None]
    with torch.no_grad():
        mask = targets != -100
        accuracy = (logits.argmax(-1)[mask] == targets[mask]).float().mean()
    record = TrainStep(step, loss.item(), accuracy.item(), lr, math.sqrt(sum(grads).item()))
    if math.isfinite(record.loss) and record.loss <= DIVERGED_LOSS:
        optim.step()
    return record


PARTIAL_EVERY = 25  # steps between the run-so-far summaries ``train`` gives ``progress``


def train(
    spec: TrainSpec,
    progress: Callable[..., None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    threads: int | None = None,
) -> TrainResult:
    """Run ``iter_training`` to the end and collect it all.

    Every ``PARTIAL_EVERY`` steps ``progress(fraction, partial)`` gets the fraction done and
    the run so far as a ``TrainResult`` (a page draws its loss curve live).  A run that
    ``should_stop`` ended early raises ``Cancelled``: it is not a result.
    """
    start = time.perf_counter()
    records = []
    for record in iter_training(spec, should_stop, threads):
        records.append(record)
        if progress is not None and record.step % PARTIAL_EVERY == 0:
            progress(record.step / spec.steps, summarize(spec, records))
    if should_stop is not None and should_stop():
        raise Cancelled(f"training stopped after {len(records)} steps")
    return summarize(spec, records, time.perf_counter() - start)


def summarize(spec: TrainSpec, records: list[TrainStep], seconds: float = 0.0) -> TrainResult:
    """A ``TrainResult`` from streamed steps (lets a page build it from what it drew)."""
    loss = np.array([r.loss for r in records], dtype=np.float64)
    diverged = bool(records) and (
        not math.isfinite(records[-1].loss) or records[-1].loss > DIVERGED_LOSS
    )
    chance = chance_loss(spec)
    return TrainResult(
        spec=spec,
        steps=np.array([r.step for r in records], dtype=np.int64),
        loss=loss,
        accuracy=np.array([r.accuracy for r in records], dtype=np.float64),
        lr=np.array([r.lr for r in records], dtype=np.float64),
        grad_norm=np.array([r.grad_norm for r in records], dtype=np.float64),
        chance_loss=chance,
        outcome=classify_outcome(loss, chance, diverged) if records else "stalled",
        seconds=seconds,
    )
