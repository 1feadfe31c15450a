"""What a dump's residual stream says in three sentences, read from its report: the first
token's jump, the ordinary tokens' gradual growth, and the largest entry against float16.

- *The first token's jump* (Sun et al. 2024's massive activations): at each point of the
  stream the first token's RMS step (RMS_l / RMS_{l-1}) is compared with the step of the
  median of the other tokens; the jump is the point where the first token outgrows the
  others most.  Measured against the others, the first block's lift of the tiny
  embeddings (every token ×20 in SmolLM2) is not mistaken for it.
- *Ordinary tokens*: the median RMS of the other tokens, from the first block's output
  (point 1; point 0 where the stream has only two points) to the last point, and its
  largest step between neighbouring points.
- *The largest entry*: the largest |a| of the stream, where it is, and whether it and its
  square fit float16 (largest finite 65,504): a value above 256 fits, its square does not,
  which is why RMSNorm computes its mean square in float32 (Micikevicius et al. 2018).

References:
- Sun, Chen, Kolter, Liu 2024, "Massive Activations in Large Language Models", arXiv:2402.17762
- Micikevicius et al. 2018, "Mixed Precision Training", arXiv:1710.03740
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from engine.dumps.diagnostics import quiet
from engine.dumps.names import split_index
from engine.dumps.report import DumpReport

FLOAT16_MAX = float(torch.finfo(torch.float16).max)  # 65504
FLOAT32_MAX = float(torch.finfo(torch.float32).max)


@dataclass(frozen=True)
class StreamStory:
    """One sequence's first token against its others, and the dump's largest entry."""

    batch: int  # the sequence the token numbers describe
    jump_point: int | None  # where the first token outgrows the others most (None: T = 1
    #   or fewer than two points)
    jump_before: float  # the first token's RMS at jump_point - 1
    jump_after: float  # ... and at jump_point
    others_step: float  # the other tokens' median RMS step at jump_point
    others_start: float  # the other tokens' median RMS at point ``others_start_at``
    others_end: float  # ... at the last point
    others_max_step: float  # their largest step between neighbouring points (from
    #   ``others_start_at``)
    largest: float  # the largest |a| of the whole stream (every sequence)
    largest_at: tuple[int, int, int, int] | None  # (point, batch, token, channel) (None: a
    #   stream with no finite value)
    largest_pair: int | None = None  # the norm pair (index into layout.norm_pairs) of the
    #   block whose input holds the largest entry, when the dump has one
    others_max_step_at: int | None = None  # the point others_max_step arrives at
    first_token_massive: int = 0  # massive activations the report lists on this first token
    others_zero_at: tuple[int, ...] = ()  # points (from others_start_at) where the other
    #   tokens' median RMS is 0: a step out of them has no ratio, and others_max_step leaves
    #   it out
    # where others_start is read: point 1 (the first block's output, its lift of the
    #   embeddings left out) when there are more than two points, else point 0
    others_start_at: int = 1

    @property
    def jump_ratio(self) -> float:
        return self.jump_after / self.jump_before if self.jump_before > 0 else float("nan")

    @property
    def fits_float16(self) -> bool:
        return self.largest <= FLOAT16_MAX

    @property
    def fits_float32(self) -> bool:
        return self.largest <= FLOAT32_MAX

    @property
    def square_overflows_float16(self) -> bool:
        return self.largest * self.largest > FLOAT16_MAX


def _largest(rep: DumpReport) -> tuple[float, tuple[int, int, int, int] | None]:
    """The largest |a| and where it is, from each layer's largest entries the reduction
    keeps whatever the thresholds (not from the massive ones: a threshold above it left the
    entry unplaced, and the norm reading it fell back to the first pair)."""
    top = rep.massive.top3[:, 0]  # [L]
    if not np.isfinite(top).any():
        return float("nan"), None
    point = int(np.nanargmax(top))
    largest = float(top[point])
    stats = rep.stats
    kept = np.nonzero((stats.large_layer == point) & (np.abs(stats.large_values) == largest))[0]
    if not kept.size:
        return largest, None
    i = int(kept[0])
    batch, token = divmod(int(stats.large_rows[i]), max(1, rep.layout.tokens))
    return largest, (point, batch, token, int(stats.large_channels[i]))


def _reading_pair(rep: DumpReport, largest_at) -> int | None:
    """The norm that reads the stream point ``largest_at[0]``: a norm of the block whose
    input it is, by the number in the point's name (block i's input, or block i − 1's output;
    in output_hidden_states' numbering, hidden_states.i is block i's input), not by its place
    in the stream, which the file's order may set; of several norms (the attention's and the
    MLP's), the first by name: Llama's input_layernorm."""
    if largest_at is None:
        return None
    template, block = split_index(rep.labels[largest_at[0]])
    if block is None:  # a name without a number: its place in the stream
        block = largest_at[0]
    elif template.endswith("output"):  # block i's output is block i + 1's input
        block += 1
    pairs = rep.layout.norm_pairs
    candidates = [i for i, pair in enumerate(pairs) if pair.layer == block]
    return min(candidates, key=lambda i: pairs[i].label) if candidates else None


def stream_story(rep: DumpReport, batch: int = 0) -> StreamStory:
    """The story of sequence ``batch`` of ``rep`` (module docstring)."""
    rms = rep.residual.rms[:, batch, :].astype(np.float64)  # [L, T]
    points, tokens = rms.shape
    largest, largest_at = _largest(rep)
    pair = _reading_pair(rep, largest_at)
    nan = float("nan")
    if tokens < 2 or points < 2:
        return StreamStory(batch, None, nan, nan, nan, nan, nan, nan, largest, largest_at, pair)
    with quiet():  # a point of NaN only has no median
        first = rms[:, 0]  # [L]
        others = np.nanmedian(rms[:, 1:], axis=1)  # [L]
        first_step = first[1:] / first[:-1]  # [L - 1]
        others_step = others[1:] / others[:-1]  # [L - 1]
        outgrow = np.where(np.isfinite(first_step / others_step), first_step / others_step, -1)
        jump = int(np.argmax(outgrow)) + 1
        start = 1 if points > 2 else 0  # after the first block's lift of the embeddings
        steps = others_step[start:]
        steps = np.where(np.isfinite(steps), steps, np.nan)  # out of a point of zeros: no ratio
        finite = np.isfinite(steps).any()
        max_step = float(np.nanmax(steps)) if finite else nan
        max_step_at = int(np.nanargmax(steps)) + start + 1 if finite else None
    return StreamStory(
        batch=batch,
        jump_point=jump,
        jump_before=float(first[jump - 1]),
        jump_after=float(first[jump]),
        others_step=float(others_step[jump - 1]),
        others_start=float(others[start]),
        others_end=float(others[-1]),
        others_max_step=max_step,
        largest=largest,
        largest_at=largest_at,
        largest_pair=pair,
        others_max_step_at=max_step_at,
        first_token_massive=int(np.sum((rep.massive.batch == batch) & (rep.massive.token == 0))),
        others_zero_at=tuple(int(p) for p in np.flatnonzero(others == 0) if p >= start),
        others_start_at=start,
    )
