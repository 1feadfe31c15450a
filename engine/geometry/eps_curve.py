"""How eps pulls outputs inside the sqrt(d) sphere: the formula and measured norms.

With gamma = 1, beta = 0, LayerNorm's output is (x - mu 1) / sqrt(sigma^2 + eps) and
||x - mu 1||^2 = d * sigma^2, so

    ||y|| = sqrt(d) * sigma / sqrt(sigma^2 + eps),

and RMSNorm's is the same with the root mean square in place of sigma (||x||^2 = d rms^2).
Inputs much larger than sqrt(eps) reach the sphere; inputs of size sqrt(eps) land at
sqrt(d / 2); smaller ones collapse towards the origin.  ``predicted_norm`` is that closed
form; everything *measured* comes from ``engine.normalize``, so the page shows the formula
and the norms agreeing (or not) on one plot.

References:
- Ba, Kiros, Hinton 2016, "Layer Normalization", arXiv:1607.06450
- Zhang, Sennrich 2019, "Root Mean Square Layer Normalization", arXiv:1910.07467
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import torch

from engine.config import GeometrySpec
from engine.geometry.arrays import readonly
from engine.geometry.cloud import bounded_rows, input_vectors, norm_spec
from engine.geometry.measures import l2_norm
from engine.norms.dispatch import normalize
from engine.threads import torch_threads

SWEEP_SCALES = 17  # input scales of the sweep, from 1/100 to 100 times sqrt(eps)
SWEEP_ROWS = 64  # random inputs per scale (fewer for wide d: see bounded_rows)
CURVE_POINTS = 161


def predicted_norm(scale: np.ndarray | float, eps: float, d: int) -> np.ndarray:
    """sqrt(d) * s / sqrt(s^2 + eps): ||y|| for an input whose sigma (LayerNorm) or RMS
    (RMSNorm) is s, with gamma = 1, beta = 0.  NaN at s = eps = 0 (0/0, as the norms)."""
    s = np.asarray(scale, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return math.sqrt(d) * s / np.sqrt(s * s + eps)


@dataclass(frozen=True)
class EpsCurve:
    """The formula's curve, the cloud's measured norms, and a sweep of input scales."""

    d: int
    eps: float
    sqrt_d: float
    scale_grid: np.ndarray  # [S] input scale s (sigma or RMS), log-spaced
    predicted: np.ndarray  # [S] sqrt(d) s / sqrt(s^2 + eps)
    layernorm_sigma: np.ndarray  # [N] sigma of each of the spec's inputs
    layernorm_norm: np.ndarray  # [N] ||LayerNorm(x)||
    rmsnorm_rms: np.ndarray  # [N] RMS of each input
    rmsnorm_norm: np.ndarray  # [N] ||RMSNorm(x)||
    sweep_layernorm_sigma: np.ndarray  # [K, M]
    sweep_layernorm_norm: np.ndarray  # [K, M]
    sweep_rmsnorm_rms: np.ndarray  # [K, M]
    sweep_rmsnorm_norm: np.ndarray  # [K, M]
    max_relative_error: float  # max |measured / predicted - 1| over every finite point


def _measure(x: torch.Tensor, spec: GeometrySpec) -> tuple[torch.Tensor, ...]:
    """(sigma, ||LN(x)||, rms, ||RMSNorm(x)||) of the rows of ``x`` ([..., d])."""
    layer = normalize(x, norm_spec("layernorm", spec))
    rms = normalize(x, norm_spec("rmsnorm", spec))
    sigma = layer.var.double().sqrt()  # [...]
    return sigma, l2_norm(layer.y), rms.rms.double(), l2_norm(rms.y)


def _relative_error(measured: torch.Tensor, scale: torch.Tensor, eps: float, d: int) -> float:
    predicted = torch.from_numpy(predicted_norm(scale.numpy(), eps, d))
    error = (measured / predicted - 1).abs()
    error = error[torch.isfinite(error)]
    return float(error.max()) if error.numel() else 0.0


def eps_curve(spec: GeometrySpec, threads: int | None = 1) -> EpsCurve:
    """||y|| against input scale at the spec's eps, for any d up to 8192.

    The measured cloud is the spec's inputs (at most ``bounded_rows`` of them); the sweep
    multiplies ``M`` unit-variance normal inputs by K scales around sqrt(eps) (around 1 when
    eps = 0, where the curve is flat at sqrt(d)).
    """
    d, eps = spec.d, spec.eps
    centre = math.sqrt(eps) if eps > 0 else 1.0
    multipliers = centre * torch.logspace(-2, 2, SWEEP_SCALES, dtype=torch.float64)  # [K]
    sweep_rows = min(SWEEP_ROWS, bounded_rows(spec, copies=SWEEP_SCALES))
    base = replace(spec, distribution="normal", shift=0.0, spread=1.0)
    with torch_threads(threads):
        x = input_vectors(spec, bounded_rows(spec))  # [N, d]
        cloud = _measure(x, spec)
        z = input_vectors(base, sweep_rows).double()  # [M, d]
        swept = (multipliers[:, None, None] * z).float()  # [K, M, d]
        sweep = _measure(swept, spec)
    scales = torch.cat([cloud[0], cloud[2], sweep[0].flatten(), sweep[2].flatten()])
    scales = scales[scales > 0]
    low = min(centre * 1e-3, float(scales.min())) if scales.numel() else centre * 1e-3
    high = max(centre * 1e3, float(scales.max())) if scales.numel() else centre * 1e3
    grid = np.geomspace(low, high, CURVE_POINTS)  # [S]
    error = max(
        _relative_error(cloud[1], cloud[0], eps, d),
        _relative_error(cloud[3], cloud[2], eps, d),
        _relative_error(sweep[1], sweep[0], eps, d),
        _relative_error(sweep[3], sweep[2], eps, d),
    )
    return EpsCurve(
        d=d,
        eps=eps,
        sqrt_d=math.sqrt(d),
        scale_grid=readonly(grid),
        predicted=readonly(predicted_norm(grid, eps, d)),
        layernorm_sigma=readonly(cloud[0]),
        layernorm_norm=readonly(cloud[1]),
        rmsnorm_rms=readonly(cloud[2]),
        rmsnorm_norm=readonly(cloud[3]),
        sweep_layernorm_sigma=readonly(sweep[0]),
        sweep_layernorm_norm=readonly(sweep[1]),
        sweep_rmsnorm_rms=readonly(sweep[2]),
        sweep_rmsnorm_norm=readonly(sweep[3]),
        max_relative_error=error,
    )
