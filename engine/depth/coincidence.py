"""Which depth runs coincide: results whose curves lie on top of each other at every layer,
so a chart of several placements shows fewer lines than runs (the page says which, and why:
placements that norm every branch output, or the stream itself, behave alike there)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.depth.placements import PLACEMENTS
from engine.depth.simulator import DepthResult

COINCIDE_RTOL = 0.01  # traces this close at every layer are one line on a chart


@dataclass(frozen=True)
class Coincidence:
    """Results whose curves lie on top of each other, so a chart shows fewer lines than runs."""

    placements: tuple[str, ...]  # in the order the results were given
    largest_difference: float  # max over layers and pairs of |a - b| / max(|a|, |b|)
    all_branch_outputs_normed: bool  # every one of them norms F's output (peri, olmo2)
    all_streams_normed: bool = False  # every one of them norms the stream (post, deepnorm)


def coinciding(
    results, field: str = "residual_ms", rtol: float = COINCIDE_RTOL
) -> tuple[Coincidence, ...]:
    """Groups of ``results`` whose ``field`` agrees within ``rtol`` at every layer.

    A result joins a group when it is that close to every member; a result close to none
    stays alone and is not listed.  Runs of different depths never coincide.
    """
    groups: list[list] = []
    for result in results:
        for group in groups:
            if all(_difference(result, other, field) <= rtol for other in group):
                group.append(result)
                break
        else:
            groups.append([result])
    found = []
    for group in (g for g in groups if len(g) > 1):
        pairs = [(a, b) for i, a in enumerate(group) for b in group[i + 1 :]]
        found.append(
            Coincidence(
                placements=tuple(r.spec.placement for r in group),
                largest_difference=max(_difference(a, b, field) for a, b in pairs),
                all_branch_outputs_normed=all(
                    PLACEMENTS[r.spec.placement].norms.after for r in group
                ),
                all_streams_normed=all(PLACEMENTS[r.spec.placement].norms.on_stream for r in group),
            )
        )
    return tuple(found)


def _difference(a: DepthResult, b: DepthResult, field: str) -> float:
    """Largest relative gap between two results' ``field``; inf when they cannot be compared."""
    x, y = getattr(a, field), getattr(b, field)
    if x.shape != y.shape or not (np.isfinite(x).all() and np.isfinite(y).all()):
        return math.inf
    scale = np.maximum(np.abs(x), np.abs(y))
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = np.where(scale > 0, np.abs(x - y) / scale, 0.0)
    return float(gap.max()) if gap.size else math.inf
