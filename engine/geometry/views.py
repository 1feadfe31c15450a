"""Flat views of a high-dimensional cloud: inputs and outputs projected onto two directions.

Three ways to pick the two directions (unit vectors of R^d):

- "pca":  the inputs' first two principal directions (about the cloud's mean);
- "axes": two coordinate axes chosen by the caller;
- "ones": the all-ones direction 1/sqrt(d), and the inputs' first principal direction
  inside the plane <v, 1> = 0.  In this view LayerNorm's outputs sit on the line
  <y, 1> = 0 whatever the mean shift, while RMSNorm's keep the inputs' tilt along 1.

Every set of points is projected onto the *same* two directions (fitted on the inputs),
so the outputs can be compared with the inputs they came from.  The principal directions
come from a seeded block power iteration (Halko, Martinsson, Tropp 2011, arXiv:0909.4061):
a few products with the [N, d] data instead of a full SVD, which would take seconds at
d = 8192.  When d <= 10 the block spans all of R^d and the answer is exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from engine.config import GeometrySpec
from engine.errors import EngineError
from engine.geometry.arrays import readonly
from engine.geometry.cloud import bounded_rows, input_vectors, norm_spec
from engine.geometry.measures import split_along_ones
from engine.norms.dispatch import normalize
from engine.norms.kinds import PER_TOKEN_KINDS
from engine.threads import Progress, StopCheck, torch_threads

VIEW_METHODS = ("pca", "axes", "ones")
OVERSAMPLE = 8  # extra block columns: the top two directions converge in a few iterations
POWER_ITERATIONS = 6


def principal_directions(data: torch.Tensor, count: int, seed: int = 0) -> torch.Tensor:
    """The ``count`` leading principal directions of ``data`` ([N, d]), as rows
    ``[count, d]``; rows beyond the data's rank (or beyond d) are zero.  Each direction's
    sign is fixed so that its largest-magnitude entry is positive."""
    rows = data.double()  # [N, d]
    centered = rows - rows.mean(dim=0)  # [N, d]
    d = rows.shape[-1]
    width = min(d, count + OVERSAMPLE)
    generator = torch.Generator().manual_seed(seed)
    block = torch.randn(d, width, generator=generator, dtype=torch.float64)  # [d, k]
    block, _ = torch.linalg.qr(block)
    for _ in range(POWER_ITERATIONS):
        # C^T (C Q) written as ((C Q)^T C)^T: both products read rows (row-major friendly)
        block, _ = torch.linalg.qr(((centered @ block).T @ centered).T)  # [d, k]
    _, singular, vh = torch.linalg.svd(centered @ block, full_matrices=False)  # [k], [k, k]
    directions = (block @ vh.T).T  # [k, d], ordered by singular value
    directions[singular <= singular.max().clamp_min(1e-300) * 1e-12] = 0.0  # no variance
    result = torch.zeros(count, d, dtype=torch.float64)  # [count, d]
    result[: min(count, width)] = directions[:count]
    largest = result.gather(1, result.abs().argmax(dim=1, keepdim=True))  # [count, 1]
    return result * torch.where(largest < 0, -1.0, 1.0)


def _basis(x: torch.Tensor, method: str, axes: tuple[int, int], seed: int) -> torch.Tensor:
    """The two unit directions ``[2, d]`` of a view of the float64 inputs ``x``."""
    d = x.shape[-1]
    if method == "pca":
        return principal_directions(x, 2, seed)  # [2, d]
    if method == "axes":
        basis = torch.zeros(2, d, dtype=torch.float64)  # [2, d] (not eye(d): 512 MiB at 8192)
        basis[0, axes[0]] = basis[1, axes[1]] = 1.0
        return basis
    ones = torch.full((d,), 1.0 / math.sqrt(d), dtype=torch.float64)  # [d]
    _, in_plane = split_along_ones(x)  # [N, d] x - mu 1
    direction = principal_directions(in_plane, 1, seed)[0]  # [d]
    direction = direction - (direction @ ones) * ones  # exactly in the plane, not ~1e-16 off
    length = torch.linalg.vector_norm(direction)
    direction = direction / length if length > 1e-12 else torch.zeros_like(direction)
    return torch.stack([ones, direction])  # [2, d]


@dataclass(frozen=True)
class PlaneView:
    """Inputs and outputs (gamma = 1, beta = 0) projected onto two directions."""

    method: str  # one of VIEW_METHODS
    axes: tuple[int, int]  # the coordinates shown by "axes" (0-based); (0, 1) otherwise
    d: int
    rows: int
    basis: np.ndarray  # [2, d] the two unit directions (a zero row: no such direction)
    explained: np.ndarray  # [2] share of the inputs' variance along each direction
    inputs: np.ndarray  # [N, 2]
    layernorm: np.ndarray  # [N, 2]
    rmsnorm: np.ndarray  # [N, 2]
    dyt: np.ndarray  # [N, 2]


def plane_view(
    spec: GeometrySpec,
    method: str = "pca",
    axes: tuple[int, int] = (0, 1),
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
    threads: int | None = None,
) -> PlaneView:
    """A 2-D view of the spec's inputs and their outputs, for any d <= 8192 (one pass of a
    few hundred milliseconds at most: ``progress`` and ``should_stop`` are not called)."""
    if method not in VIEW_METHODS:
        raise EngineError(
            "geometry.view_method",
            {"value": str(method), "accepted": ", ".join(VIEW_METHODS)},
        )
    axes = tuple(int(a) for a in axes)
    if method == "axes" and (len(axes) != 2 or not all(0 <= a < spec.d for a in axes)):
        raise EngineError(
            "geometry.view_axes",
            {"axes": ", ".join(str(a) for a in axes), "d": spec.d, "last": spec.d - 1},
        )
    if method == "axes" and axes[0] == axes[1] and spec.d > 1:  # all on the line x = y
        raise EngineError("geometry.same_axes", {"axis": axes[0], "last": spec.d - 1})
    with torch_threads(threads):
        x = input_vectors(spec, bounded_rows(spec))  # [N, d]
        x64 = x.double()  # [N, d]
        basis = _basis(x64, method, axes, spec.seed)  # [2, d]
        spread = x64 - x64.mean(dim=0)  # [N, d]
        total = float((spread * spread).sum())
        along = ((spread @ basis.T) ** 2).sum(dim=0)  # [2]
        explained = along / total if total > 0 else torch.zeros(2, dtype=torch.float64)  # [2]
        projected = {
            kind: normalize(x, norm_spec(kind, spec)).y.double() @ basis.T  # [N, 2]
            for kind in PER_TOKEN_KINDS
        }
        return PlaneView(
            method=method,
            axes=axes if method == "axes" else (0, 1),
            d=spec.d,
            rows=x.shape[0],
            basis=readonly(basis),
            explained=readonly(explained),
            inputs=readonly(x64 @ basis.T),
            **{kind: readonly(points) for kind, points in projected.items()},
        )
