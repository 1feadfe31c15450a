"""Merged partials → one array per statistic, indexed [layer, batch, token] or [layer, d]."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.dumps.layout import Layout
from engine.dumps.partials import LayerPartial, Magnitudes


@dataclass(frozen=True)
class StreamStats:
    """The reduced residual stream: every diagnostic is computed from these arrays.

    Means over a row or a channel count finite values only; how many were not finite is in
    ``nonfinite`` (NaN, +inf, -inf per layer), never dropped silently.
    """

    row_mean: np.ndarray  # [L, B, T] mean over d (μ of each token)
    row_ms: np.ndarray  # [L, B, T] mean square over d (RMS² = σ² + μ²)
    row_var: np.ndarray  # [L, B, T] σ² over d, from the row's own deviations (not RMS² − μ²)
    row_maxabs: np.ndarray  # [L, B, T] largest |a| of each token (NaN: none finite)
    row_finite: np.ndarray  # [L, B, T] finite values of each token (d when clean)
    channel_mean: np.ndarray  # [L, d] (NaN where a channel has no finite value, as below)
    channel_var: np.ndarray  # [L, d] biased variance over tokens (what BatchNorm pools)
    channel_maxabs: np.ndarray  # [L, d]
    median_abs: np.ndarray  # [L] median |a| over the layer's finite values
    magnitudes: tuple[Magnitudes, ...]  # [L] |a| by bit pattern (grid: chunks.grid_of)
    top_values: np.ndarray  # [L, k] signed, by |a| descending (NaN where fewer)
    large_layer: np.ndarray  # [m] the LARGE_CAP largest |a| of each layer, largest first
    large_values: np.ndarray  # [m]
    large_rows: np.ndarray  # [m]
    large_channels: np.ndarray  # [m]
    nonfinite: np.ndarray  # [L, 3] NaN, +inf, -inf counts
    nonfinite_rows: tuple[tuple[int, int], ...]  # (layer, row) of the first few


def _rows(partial: LayerPartial, name: str, rows: int) -> np.ndarray:
    values = np.concatenate([getattr(block, name) for block in partial.blocks])
    if values.shape[0] != rows:
        raise ValueError(f"layer {partial.layer}: {values.shape[0]} rows reduced, {rows} expected")
    return values


def finalize(layout: Layout, partials: dict[int, LayerPartial]) -> StreamStats:
    """One ``StreamStats`` from every layer's merged partial."""
    shape = (len(layout.layers), layout.batch, layout.tokens)
    rows = layout.batch * layout.tokens
    ordered = [partials[layer] for layer in range(len(layout.layers))]
    k = ordered[0].top_k
    sums = np.stack([_rows(p, "sums", rows) for p in ordered]).reshape(shape)
    sumsq = np.stack([_rows(p, "sumsq", rows) for p in ordered]).reshape(shape)
    finite = np.stack([_rows(p, "finite", rows) for p in ordered]).reshape(shape)
    row_m2 = np.stack([_rows(p, "m2", rows) for p in ordered]).reshape(shape)
    safe = np.maximum(finite, 1)
    top_values = np.full((len(ordered), k), np.nan)
    for layer, partial in enumerate(ordered):
        found = min(k, partial.top.values.shape[0])
        top_values[layer, :found] = partial.top.values[:found]
    count = np.stack([p.count for p in ordered])
    return StreamStats(
        row_mean=np.where(finite > 0, sums / safe, np.nan),
        row_ms=np.where(finite > 0, sumsq / safe, np.nan),
        row_var=np.where(finite > 0, row_m2 / safe, np.nan),
        row_maxabs=np.where(
            finite > 0, np.stack([_rows(p, "maxabs", rows) for p in ordered]).reshape(shape), np.nan
        ),
        row_finite=finite,
        channel_mean=np.where(count > 0, np.stack([p.mean for p in ordered]), np.nan),
        channel_var=np.where(
            count > 0, np.stack([p.m2 for p in ordered]) / np.maximum(count, 1), np.nan
        ),
        channel_maxabs=np.where(count > 0, np.stack([p.channel_maxabs for p in ordered]), np.nan),
        median_abs=np.array([p.magnitudes.median() for p in ordered]),
        magnitudes=tuple(p.magnitudes for p in ordered),
        top_values=top_values,
        large_layer=np.concatenate(
            [np.full(p.top.values.shape[0], p.layer, dtype=np.int64) for p in ordered]
        ),
        large_values=np.concatenate([p.top.values for p in ordered]),
        large_rows=np.concatenate([p.top.rows for p in ordered]),
        large_channels=np.concatenate([p.top.channels for p in ordered]),
        nonfinite=np.array([[p.nan, p.posinf, p.neginf] for p in ordered], dtype=np.int64),
        nonfinite_rows=tuple(
            (p.layer, int(row)) for p in ordered for row in p.nonfinite_rows.tolist()
        ),
    )
