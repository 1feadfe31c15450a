"""One prompt through the live model in float32, bfloat16 and float16: where the residual
streams part, and which norms would overflow in float16 without upcasting.

Two questions, two measurements:
- *Where do the dtypes diverge?*  The model runs the prompt in each dtype (weights
  converted from the float32 model); at every point of the residual stream, each token's
  relative distance to the float32 run, ‖x_dtype − x_float32‖ / ‖x_float32‖, in float64.
  ``diverges_at`` is the first point where some token is off by more than
  ``HALF_DIVERGENCE`` (10 %).
- *Which norms would overflow?*  Every norm's inputs from the float32 run are stored in
  float16 and normalised by ``engine.norms.precision.precision_story``: the ``torch_half``
  path (``x.pow(2).mean(-1)`` on the half tensor, no upcast) overflows where some |x| ≥ 256
  (x² > 65504); the ``upcast`` path is what Hugging Face's norms do (statistics in float32).

References:
- Micikevicius et al. 2018, "Mixed Precision Training", arXiv:1710.03740
- Sun, Chen, Liu, Liu 2024, "Massive Activations in Large Language Models", arXiv:2402.17762
- Kalamkar et al. 2019, "A Study of BFLOAT16 for Deep Learning Training", arXiv:1905.12322
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from engine.config import CAPTURE_DTYPES, HALF_DIVERGENCE, LiveSpec, PrecisionSpec
from engine.dumps.capture import Capture
from engine.dumps.live import LiveModel
from engine.dumps.story import FLOAT16_MAX
from engine.norms.precision import precision_story
from engine.threads import Cancelled, Progress, StopCheck


@dataclass(frozen=True)
class DtypeRun:
    """The prompt's residual stream in one dtype, against the float32 run."""

    dtype: str
    rms: np.ndarray  # [P, T] each token's RMS at each stream point (P = blocks + 1)
    relative_error: np.ndarray  # [P, T] ‖x − x_float32‖ / ‖x_float32‖ (0 for float32)
    nonfinite: np.ndarray  # [P] entries that are NaN or inf at each point
    diverges_at: int | None  # first point where a token is off by > HALF_DIVERGENCE; None: never
    next_token: str  # the most likely next token in this dtype
    seconds: float  # the forward pass with hooks (the first half run also converts weights)


@dataclass(frozen=True)
class NormOverflow:
    """One norm's float32-run inputs stored in float16, normalised without upcasting."""

    label: str  # e.g. "model.layers.12.input_layernorm"
    layer: int | None
    max_abs: float  # the largest |x| of its inputs (x² overflows float16 from 256)
    outcomes: tuple[str, ...]  # [T] torch_half path: "ok" | "wrong" | "silent_zero" |
    #   "nonfinite" | "input_overflow" (x itself beyond 65504)
    first_failure: str  # the quantity that first overflowed on the first failing token
    upcast_ok: bool  # the upcast path (Hugging Face's) gets every token right

    @property
    def failing_tokens(self) -> tuple[int, ...]:
        return tuple(t for t, outcome in enumerate(self.outcomes) if outcome != "ok")


@dataclass(frozen=True)
class PrecisionComparison:
    """The prompt in every dtype, and the norms that overflow in float16 without upcasting."""

    prompt: str
    tokens: tuple[str, ...]  # [T]
    labels: tuple[str, ...]  # [P] the stream points' entry names
    runs: tuple[DtypeRun, ...]  # float32, bfloat16, float16
    norms: tuple[NormOverflow, ...]  # every norm, in forward order
    kind: str  # the norms' kind ("rmsnorm" | "layernorm")
    eps: float

    def run(self, dtype: str) -> DtypeRun:
        return self.runs[[r.dtype for r in self.runs].index(dtype)]

    @property
    def overflowing_layers(self) -> tuple[int, ...]:
        """Blocks with a norm that overflows in float16 without upcasting."""
        found = {n.layer for n in self.norms if n.failing_tokens and n.layer is not None}
        return tuple(sorted(found))


def _stream(result: Capture, labels: tuple[str, ...]) -> torch.Tensor:
    return torch.stack([result.tensors[name][0] for name in labels]).double()  # [P, T, d]


def _norm_overflow(label, layer, x: torch.Tensor, kind: str, eps: float) -> NormOverflow:
    """The precision story of ``x`` ([T, d], float32 run) stored in float16.  A token with an
    entry beyond float16's range cannot even be stored: "input_overflow"."""
    peaks = x.abs().amax(-1)  # [T]
    storable = (peaks <= FLOAT16_MAX).nonzero().flatten().tolist()  # NaN/inf are not
    outcomes = ["input_overflow"] * x.shape[0]
    first_failure, upcast_ok = "", True
    if storable:
        rows = x[storable].double().numpy()  # [k, d]
        story = precision_story(rows, PrecisionSpec(kind, eps, "float16"))
        half = story.path("torch_half")
        for token, row in zip(storable, half.rows):
            outcomes[token] = row.outcome
        failure = next((row.diagnosis for row in half.rows if row.outcome != "ok"), None)
        first_failure = failure.quantity if failure is not None else ""
        upcast_ok = all(row.outcome == "ok" for row in story.path("upcast").rows)
    if len(storable) < x.shape[0] and not first_failure:
        first_failure = "input"
    return NormOverflow(label, layer, float(peaks.max()), tuple(outcomes), first_failure,
                        upcast_ok and len(storable) == x.shape[0])  # fmt: skip


def compare_precisions(
    live: LiveModel,
    prompt: str,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
    threads: int | None = 1,
) -> PrecisionComparison:
    """Run ``prompt`` in every dtype of ``CAPTURE_DTYPES`` and compare (module docstring).
    The first call converts the weights to bfloat16 and float16 (copies kept by ``live``);
    half-precision matrix products are slow on a CPU (benchmarks/RESULTS.md).  ``threads``:
    see ``LiveModel.capture``."""
    LiveSpec(prompt)  # the same refusals as a live report
    results: dict[str, Capture] = {}
    seconds: dict[str, float] = {}
    for done, dtype in enumerate(CAPTURE_DTYPES):
        if should_stop is not None and should_stop():
            raise Cancelled()
        start = time.perf_counter()
        norm_layers = None if dtype == "float32" else ()  # norms: from the float32 run only
        results[dtype] = live.capture([prompt], dtype, threads, norm_layers=norm_layers)
        seconds[dtype] = time.perf_counter() - start
        if progress is not None:
            progress(0.6 * (done + 1) / len(CAPTURE_DTYPES))
    exact = results["float32"]
    labels = exact.stream
    reference = _stream(exact, labels)  # [P, T, d]
    reference_norm = reference.norm(dim=-1)  # [P, T]
    tokenizer = live.loaded.tokenizer
    runs = []
    for dtype in CAPTURE_DTYPES:
        x = _stream(results[dtype], labels)  # [P, T, d]
        finite = torch.isfinite(x)  # [P, T, d]
        error = (x - reference).norm(dim=-1) / reference_norm.clamp_min(1e-30)  # [P, T]
        error = torch.where(finite.all(-1), error, torch.inf)  # [P, T]
        off = (error > HALF_DIVERGENCE).any(-1).nonzero()  # [k, 1]
        logits = results[dtype].logits
        runs.append(
            DtypeRun(
                dtype=dtype,
                rms=x.pow(2).mean(-1).sqrt().numpy(),
                relative_error=error.numpy(),
                nonfinite=(~finite).sum((-1, -2)).numpy(),
                diverges_at=int(off[0, 0]) if off.numel() else None,
                next_token=tokenizer.decode([int(logits[0, -1].float().argmax())]),
                seconds=seconds[dtype],
            )
        )
    kind = exact.metadata["norm_kind"]
    eps = float(exact.metadata["norm_eps"] or 1e-5)
    norms = []
    for done, (name, layer) in enumerate(zip(exact.norms, exact.norm_layers)):
        if should_stop is not None and should_stop():
            raise Cancelled()
        x = exact.tensors[f"{name}.input"][0].float()  # [T, d]
        norms.append(_norm_overflow(name, layer, x, kind, eps))
        if progress is not None:
            progress(0.6 + 0.4 * (done + 1) / len(exact.norms))
    return PrecisionComparison(
        prompt=prompt,
        tokens=exact.tokens[0],
        labels=labels,
        runs=tuple(runs),
        norms=tuple(norms),
        kind=kind,
        eps=eps,
    )
