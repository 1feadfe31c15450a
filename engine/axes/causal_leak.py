"""BatchNorm failure 5: in a causal model BatchNorm leaks the future into the past.

A decoder predicts token t from tokens 0..t only; everything computed at position t must not
depend on later positions.  A norm whose statistics pool over T breaks that: change the last
token of a sequence and the per-channel statistics change, so *every* position's output
changes — the earlier tokens of the same sequence (the future leaks into the past) and, for
BatchNorm, every other sequence of the batch too.  LayerNorm and RMSNorm pool within one
token, so the earlier positions' outputs stay bit-for-bit the same; DyT uses no statistic.
InstanceNorm and GroupNorm pool over T as well, so they leak within the sequence (not across
sequences).  The table in ``engine/norms/kinds.py`` predicts which kinds leak
(``mixes_positions``); this experiment measures it, for every kind.

References:
- Vaswani et al. 2017, "Attention Is All You Need", arXiv:1706.03762 (causal masking)
- Shen et al. 2020, "PowerNorm: Rethinking Batch Normalization in Transformers",
  arXiv:2003.07845
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from engine.axes import limits
from engine.axes.sources import draw_tokens, make_tensor
from engine.config import NORM_KINDS, AxesSpec, NormSpec
from engine.norms.dispatch import normalize

CHANGED_SAMPLE = 0  # the sequence whose token is changed


@dataclass(frozen=True)
class CausalLeak:
    """How much each position's output moves when one later token is replaced."""

    kinds: tuple[str, ...]  # every norm kind, NORM_KINDS order
    position: int  # the replaced token's position in sequence CHANGED_SAMPLE
    groups: int  # GroupNorm's groups in this run
    same_sample: np.ndarray  # [K, T] max over channels of |Δy| at each position of that sequence
    other_samples: np.ndarray  # [K, T] max over the other sequences and channels (0 if B = 1)
    earlier_max: np.ndarray  # [K] max of same_sample over the positions before `position`
    leaks_future: tuple[bool, ...]  # [K] earlier_max > 0


def causal_leak(spec: AxesSpec, position: int | None = None) -> CausalLeak:
    """Replace token ``position`` (default the last, T-1) of sequence 0 by a fresh draw."""
    tokens = spec.tokens
    if tokens < 2:
        raise limits.refusal(
            "needs_two_positions",
            tokens=tokens,
        )
    if position is None:
        position = tokens - 1
    position = limits.checked_int("position", position, limits.LEAK_POSITION_LOW, tokens - 1)
    tensor = make_tensor(replace(spec, source="synthetic", lengths=()))
    x = tensor.x  # [B, T, d]
    generator = torch.Generator().manual_seed(spec.seed + 1)
    changed = x.clone()  # [B, T, d]
    fresh = draw_tokens(tensor.profile, (spec.d,), generator, x.dtype)  # [d]
    changed[CHANGED_SAMPLE, position] = fresh
    groups = spec.groups if spec.d % spec.groups == 0 else 1
    same, other = [], []
    for kind in NORM_KINDS:
        norm = NormSpec(
            kind=kind,
            eps=spec.eps,
            groups=groups if kind == "groupnorm" else 1,
            compute_dtype="input",
        )
        diff = (normalize(changed, norm).y - normalize(x, norm).y).abs().double()  # [B, T, d]
        per_position = diff.amax(dim=2)  # [B, T]
        same.append(per_position[CHANGED_SAMPLE])
        rest = torch.cat([per_position[:CHANGED_SAMPLE], per_position[CHANGED_SAMPLE + 1 :]])
        other.append(rest.amax(dim=0) if len(rest) else torch.zeros(tokens, dtype=diff.dtype))
    same_sample = torch.stack(same).numpy()  # [K, T]
    earlier = same_sample[:, :position].max(axis=1)  # [K]
    return CausalLeak(
        kinds=NORM_KINDS,
        position=position,
        groups=groups,
        same_sample=same_sample,
        other_samples=torch.stack(other).numpy(),
        earlier_max=earlier,
        leaks_future=tuple(bool(e > 0) for e in earlier),
    )
