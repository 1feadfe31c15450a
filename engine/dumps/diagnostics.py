"""What a reduced stream says about a model's normalization: residual growth, outlier
tokens, massive activations, how much centering matters, and the channel view.

Everything here is computed from ``StreamStats`` (no data read), so the CLI, the page and a
Dask run show the same numbers.

- Residual RMS per layer and token: RMS² = σ² + μ² of each token's d values; its growth
  with depth is fitted as RMS_l ≈ c·g^l (least squares on log RMS); Xiong et al. 2020
  (arXiv:2002.04745) show why a Pre-LN stream grows with depth.
- Massive activations (Sun, Chen, Kolter, Liu 2024, arXiv:2402.17762): entries whose
  magnitude exceeds 100 and about 1,000× the median magnitude of their layer; they sit in
  few fixed channels, mostly on the first token, and act as biases.
- Centering: a token's LayerNorm and RMSNorm differ only by μ (Zhang & Sennrich 2019,
  arXiv:1910.07467); the share μ²/RMS² says how much of a token's scale is its mean.
- Channel view: per-channel mean and spread over all tokens, the statistics BatchNorm
  would pool (Ioffe & Szegedy 2015, arXiv:1502.03167); outlier channels (Dettmers et al.
  2022, arXiv:2208.07339) stand out by their RMS.
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from engine.config import DumpSpec
from engine.dumps.stats import StreamStats

MAX_LISTED = 200  # rows of the outlier-token and outlier-channel tables


@dataclass(frozen=True)
class GrowthFit:
    """RMS_l ≈ intercept · rate^l over the layers, fitted on log RMS."""

    basis: str  # "all_tokens" (RMS over every token) or "median_token"
    rate: float  # growth factor per layer
    intercept: float  # fitted RMS at layer 0
    r2: float  # of the fit in log space


@dataclass(frozen=True)
class ResidualDiagnostics:
    rms: np.ndarray  # [L, B, T] each token's RMS
    rms_layer: np.ndarray  # [L] sqrt(mean over tokens of RMS²)
    rms_median_token: np.ndarray  # [L]
    rms_first_token: np.ndarray  # [L] token 0 (median over the batch)
    rms_max_token: np.ndarray  # [L]
    step_ratio: np.ndarray  # [L] rms_layer[l] / rms_layer[l-1] (NaN at 0)
    growth: tuple[GrowthFit, ...]
    token_ratio: np.ndarray  # [L, B, T] RMS / the layer's median token RMS
    outlier_batch: np.ndarray  # [m] tokens above outlier_ratio at some layer, worst first
    outlier_token: np.ndarray  # [m]
    outlier_layers: np.ndarray  # [m] how many layers flag it
    outlier_first_layer: np.ndarray  # [m]
    outlier_max_ratio: np.ndarray  # [m]
    outlier_max_layer: np.ndarray  # [m]
    outlier_total: int = 0  # tokens flagged in all; the table lists the MAX_LISTED worst


@dataclass(frozen=True)
class MassiveCarriers:
    """The tokens holding a massive activation on some layer, by their largest one first."""

    batch: np.ndarray  # [m]
    token: np.ndarray  # [m]
    layers: np.ndarray  # [m] on how many layers the token holds one
    peak: np.ndarray  # [m] its largest |a| among them


@dataclass(frozen=True)
class MassiveDiagnostics:
    median_abs: np.ndarray  # [L] median |a| of the layer
    threshold: np.ndarray  # [L] max(massive_abs, massive_ratio · median)
    top3: np.ndarray  # [L, 3] the three largest |a|
    top3_ratio: np.ndarray  # [L, 3] top3 / median
    count: np.ndarray  # [L] entries above the threshold (histogram; exact for float16 data)
    layer: np.ndarray  # [m] the listed massive activations, largest first within a layer
    batch: np.ndarray  # [m]
    token: np.ndarray  # [m]
    channel: np.ndarray  # [m]
    value: np.ndarray  # [m] signed
    # every channel and token holding a massive activation on some layer (``massive_channels``,
    # ``massive_carriers``): counted from the reduction, not from the entries listed
    channels: np.ndarray  # [c] ascending
    carriers: MassiveCarriers


@dataclass(frozen=True)
class CenteringDiagnostics:
    mu2_share: np.ndarray  # [L] Σμ² / ΣRMS² over the layer's tokens
    token_share: np.ndarray  # [L, B, T] μ²/RMS² of each token
    token_std: np.ndarray  # [L, B, T] σ


@dataclass(frozen=True)
class ChannelDiagnostics:
    mean: np.ndarray  # [L, d] over every token of the layer
    std: np.ndarray  # [L, d]
    rms: np.ndarray  # [L, d] sqrt(mean² + std²)
    maxabs: np.ndarray  # [L, d]
    ratio: np.ndarray  # [L, d] rms / the layer's median channel rms
    outlier_layer: np.ndarray  # [m] channels above outlier_ratio, worst first
    outlier_channel: np.ndarray  # [m]
    outlier_total: int = 0  # (layer, channel) pairs flagged in all; listed: the MAX_LISTED worst


@contextmanager
def quiet():
    """A layer (or token) of NaN/inf only has no mean: NaN is the answer, not a warning
    (the report counts the values that were not finite)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _fit_growth(values: np.ndarray, basis: str) -> GrowthFit:
    layers = np.arange(values.shape[0], dtype=np.float64)
    ok = np.isfinite(values) & (values > 0)
    if ok.sum() < 2:
        return GrowthFit(basis, float("nan"), float("nan"), float("nan"))
    logs = np.log(values[ok])
    slope, intercept = np.polyfit(layers[ok], logs, 1)
    residual = logs - (intercept + slope * layers[ok])
    spread = ((logs - logs.mean()) ** 2).sum()
    r2 = 1.0 - (residual**2).sum() / spread if spread > 0 else 1.0
    return GrowthFit(basis, float(np.exp(slope)), float(np.exp(intercept)), float(r2))


def residual(stats: StreamStats, spec: DumpSpec) -> ResidualDiagnostics:
    rms = np.sqrt(stats.row_ms)  # [L, B, T]
    layers = rms.shape[0]
    flat = rms.reshape(layers, -1)  # [L, B*T]
    with quiet():
        rms_layer = np.sqrt(np.nanmean(stats.row_ms.reshape(layers, -1), axis=1))
        median = np.nanmedian(flat, axis=1)  # [L]
        ratio = rms / median[:, None, None]  # [L, B, T]
        step = np.concatenate([[np.nan], rms_layer[1:] / rms_layer[:-1]])
        first_token = np.nanmedian(rms[:, :, 0], axis=1)  # [L]
        max_token = np.nanmax(flat, axis=1)  # [L]
    return ResidualDiagnostics(
        rms=rms,
        rms_layer=rms_layer,
        rms_median_token=median,
        rms_first_token=first_token,
        rms_max_token=max_token,
        step_ratio=step,
        growth=(_fit_growth(rms_layer, "all_tokens"), _fit_growth(median, "median_token")),
        token_ratio=ratio,
        **outlier_tokens(ratio, spec.outlier_ratio),
    )


def outlier_tokens(ratio: np.ndarray, threshold: float) -> dict[str, np.ndarray]:
    """The ``outlier_*`` fields of ``ResidualDiagnostics``: tokens whose RMS ``ratio``
    [L, B, T] to their layer's median token exceeds ``threshold`` at some layer."""
    flagged = np.nan_to_num(ratio, nan=0.0) > threshold  # [L, B, T]
    any_layer = flagged.any(axis=0)  # [B, T]
    batch, token = np.nonzero(any_layer)
    worst = np.nan_to_num(ratio, nan=0.0)[:, batch, token]  # [L, m]
    order = np.argsort(-worst.max(axis=0), kind="stable")[:MAX_LISTED]
    return dict(
        outlier_total=len(batch),
        outlier_batch=batch[order],
        outlier_token=token[order],
        outlier_layers=flagged[:, batch, token].sum(axis=0)[order],
        outlier_first_layer=flagged[:, batch, token].argmax(axis=0)[order],
        outlier_max_ratio=worst.max(axis=0)[order],
        outlier_max_layer=worst.argmax(axis=0)[order],
    )


def massive_threshold(median_abs: np.ndarray, spec: DumpSpec) -> np.ndarray:
    """[L] the magnitude above which an entry of each layer is massive (Sun et al. 2024):
    ``max(massive_abs, massive_ratio · the layer's median |a|)``; a layer with no median
    (no finite value) gets ``massive_abs``."""
    return np.maximum(spec.massive_abs, spec.massive_ratio * np.nan_to_num(median_abs))


def massive_channels(channel_maxabs: np.ndarray, threshold: np.ndarray) -> np.ndarray:
    """The channels holding a massive activation on some layer, ascending: those whose
    largest |a| on a layer ([L, d], from the reduction, every value seen) is above that
    layer's threshold [L].  Not read from the listed entries (``LARGE_CAP`` per layer),
    which miss a channel whose massive activations are smaller than the listed ones."""
    above = np.nan_to_num(channel_maxabs, nan=-1.0) > threshold[:, None]  # [L, d]
    return np.flatnonzero(above.any(axis=0))


def massive_carriers(row_maxabs: np.ndarray, threshold: np.ndarray) -> MassiveCarriers:
    """Every token whose largest |a| ([L, B, T], from the reduction) is above its layer's
    threshold [L] on some layer: all of them, not only those of the listed entries."""
    largest = np.nan_to_num(row_maxabs, nan=-1.0)  # [L, B, T]
    above = largest > threshold[:, None, None]  # [L, B, T]
    batch, token = np.nonzero(above.any(axis=0))
    peak = np.where(above, largest, -1.0).max(axis=0)[batch, token]  # [m]
    order = np.lexsort((token, batch, -peak))
    return MassiveCarriers(
        batch=batch[order],
        token=token[order],
        layers=above.sum(axis=0)[batch, token][order],
        peak=peak[order],
    )


def massive(stats: StreamStats, spec: DumpSpec) -> MassiveDiagnostics:
    median = stats.median_abs  # [L]
    threshold = massive_threshold(median, spec)
    top3 = np.abs(stats.top_values[:, :3])  # [L, 3]
    with quiet():
        top3_ratio = top3 / median[:, None]
    keep = np.abs(stats.large_values) > threshold[stats.large_layer]
    # Counted exactly from each layer's largest entries, which hold every massive one unless
    # they all are; past them the histogram's count (on its grid: 100.2 is 100 in bfloat16,
    # not above 100, while the table listed it), never under the entries listed
    layers = len(threshold)
    listed = np.bincount(stats.large_layer[keep], minlength=layers)
    kept = np.bincount(stats.large_layer, minlength=layers)
    binned = np.array(
        [found.count_above(limit) for found, limit in zip(stats.magnitudes, threshold)],
        dtype=np.int64,
    )
    count = np.where(listed < kept, listed, np.maximum(binned, listed)).astype(np.int64)
    tokens = max(1, stats.row_ms.shape[2])
    rows = stats.large_rows[keep]
    return MassiveDiagnostics(
        median_abs=median,
        threshold=threshold,
        top3=top3,
        top3_ratio=top3_ratio,
        count=count,
        layer=stats.large_layer[keep],
        batch=rows // tokens,
        token=rows % tokens,
        channel=stats.large_channels[keep],
        value=stats.large_values[keep],
        channels=massive_channels(stats.channel_maxabs, threshold),
        carriers=massive_carriers(stats.row_maxabs, threshold),
    )


def centering(stats: StreamStats) -> CenteringDiagnostics:
    layers = stats.row_ms.shape[0]
    mu2 = stats.row_mean**2  # [L, B, T]
    with quiet():
        share = np.nansum(mu2.reshape(layers, -1), axis=1) / np.nansum(
            stats.row_ms.reshape(layers, -1), axis=1
        )
        token_share = mu2 / stats.row_ms
    return CenteringDiagnostics(
        mu2_share=share,
        token_share=token_share,
        token_std=np.sqrt(stats.row_var),
    )


def channels(stats: StreamStats, spec: DumpSpec) -> ChannelDiagnostics:
    std = np.sqrt(stats.channel_var)  # [L, d]
    rms = np.sqrt(stats.channel_mean**2 + stats.channel_var)  # [L, d]
    with quiet():
        ratio = rms / np.nanmedian(rms, axis=1, keepdims=True)  # [L, d]
    return ChannelDiagnostics(
        mean=stats.channel_mean,
        std=std,
        rms=rms,
        maxabs=stats.channel_maxabs,
        ratio=ratio,
        **outlier_channels(ratio, spec.outlier_ratio),
    )


def outlier_channels(ratio: np.ndarray, threshold: float) -> dict[str, np.ndarray]:
    """The ``outlier_*`` fields of ``ChannelDiagnostics``: channels whose RMS ``ratio`` [L, d]
    to their layer's median channel exceeds ``threshold``, worst first."""
    layer, channel = np.nonzero(np.nan_to_num(ratio, nan=0.0) > threshold)
    order = np.argsort(-ratio[layer, channel], kind="stable")[:MAX_LISTED]
    return dict(
        outlier_layer=layer[order], outlier_channel=channel[order], outlier_total=len(layer)
    )
