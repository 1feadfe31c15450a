"""Which axes of a ``[B, T, d]`` tensor each normalization kind pools: one table, by kind.

A statistic (a mean and a variance, or RMSNorm's mean square) is computed over the cells of
its *pooled* axes; the kind computes one statistic for every index of its *indexed* axes,
so ``statistics_count`` is the product of those axes' sizes.  Every kind carries a gain γ of
shape ``[d]`` (one per channel) and all but RMSNorm a bias β of that shape: RMSNorm re-scales
without re-centring, and neither the paper nor ``nn.RMSNorm`` gives it a β.  DyT adds its
scalar α.

The table states what ``engine/norms/reference.py`` computes, which is what PyTorch computes
on the channels-first ``[B, d, T]`` layout: ``nn.BatchNorm1d`` pools B and T per channel,
``F.instance_norm`` pools T per (sequence, channel), ``F.group_norm`` pools T and the d/G
channels of a group per (sequence, group) — B·G statistics.  GroupNorm applied to each token
on its own (``nn.GroupNorm`` on ``[B·T, d]``) computes B·T·G instead: ``groupnorm_layouts``.

References:
- Ba, Kiros, Hinton 2016, "Layer Normalization", arXiv:1607.06450
- Zhang, Sennrich 2019, "Root Mean Square Layer Normalization", arXiv:1910.07467
- Ioffe, Szegedy 2015, "Batch Normalization", arXiv:1502.03167
- Ulyanov, Vedaldi, Lempitsky 2016, "Instance Normalization", arXiv:1607.08022
- Wu, He 2018, "Group Normalization", arXiv:1803.08494 (Figure 2 draws these axes)
- Zhu, Chen, He, LeCun, Liu 2025, "Transformers without Normalization", arXiv:2503.10622
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class KindAxes:
    """How one kind shares statistics across the cells of ``[B, T, d]``."""

    pooled: tuple[str, ...]  # axes one statistic pools over; "d/G": the channels of a group
    indexed: tuple[str, ...]  # axes indexing the statistics, in the engine's stat layout
    params: tuple[str, ...] = ("gamma", "beta")  # per-channel parameters, shape [d] each

    @property
    def count_formula(self) -> str:
        """``"B·T"``, ``"d"``, ...: the number of statistics as a product of axis names."""
        return "·".join(self.indexed) if self.indexed else "0"

    @property
    def mixes_positions(self) -> bool:
        """True when one position's output depends on other positions (pools over T)."""
        return "T" in self.pooled


KIND_AXES: dict[str, KindAxes] = {
    "layernorm": KindAxes(pooled=("d",), indexed=("B", "T")),
    "rmsnorm": KindAxes(pooled=("d",), indexed=("B", "T"), params=("gamma",)),
    "batchnorm": KindAxes(pooled=("B", "T"), indexed=("d",)),
    "instancenorm": KindAxes(pooled=("T",), indexed=("B", "d")),
    "groupnorm": KindAxes(pooled=("T", "d/G"), indexed=("B", "G")),
    "dyt": KindAxes(pooled=(), indexed=()),  # and its learned scalar alpha
}


# Kinds whose statistic pools only a token's own channels: one statistic per row of [B·T, d].
ROW_KINDS = tuple(kind for kind, axes in KIND_AXES.items() if axes.pooled == ("d",))
# Kinds with no statistic over B or T: a token's output depends on that token alone (the row
# kinds and DyT, which has no statistic at all).
PER_TOKEN_KINDS = tuple(
    kind for kind, axes in KIND_AXES.items() if not {"B", "T"} & set(axes.pooled)
)


def axis_sizes(batch: int, tokens: int, d: int, groups: int = 1) -> dict[str, int]:
    """Sizes of the named axes for a ``[batch, tokens, d]`` tensor and ``groups`` groups."""
    return {"B": batch, "T": tokens, "d": d, "G": groups, "d/G": d // groups}


def statistics_shape(kind: str, batch: int, tokens: int, d: int, groups: int = 1):
    """Shape of the kind's statistics array, e.g. ``(B, T)`` for LayerNorm, ``(d,)`` for BN."""
    sizes = axis_sizes(batch, tokens, d, groups)
    return tuple(sizes[axis] for axis in KIND_AXES[kind].indexed)


def statistics_count(kind: str, batch: int, tokens: int, d: int, groups: int = 1) -> int:
    """How many statistics (μ, σ² pairs; mean squares for RMSNorm) the kind computes."""
    shape = statistics_shape(kind, batch, tokens, d, groups)
    return math.prod(shape) if shape else 0


# GroupNorm on each token alone (``nn.GroupNorm(G, d)`` on the ``[B·T, d]`` rows, the per-head
# GroupNorm of RetNet-style models): neither layout is the error, the count depends on it.
GROUPNORM_PER_TOKEN = KindAxes(pooled=("d/G",), indexed=("B", "T", "G"))


def groupnorm_layouts(batch: int, tokens: int, d: int, groups: int) -> dict[str, tuple[str, int]]:
    """GroupNorm's statistics on a ``[batch, tokens, d]`` sequence in each layout:
    ``{"sequence": ("B·G", count), "per_token": ("B·T·G", count)}``."""
    sizes = axis_sizes(batch, tokens, d, groups)
    layouts = {"sequence": KIND_AXES["groupnorm"], "per_token": GROUPNORM_PER_TOKEN}
    return {
        name: (axes.count_formula, math.prod(sizes[axis] for axis in axes.indexed))
        for name, axes in layouts.items()
    }
