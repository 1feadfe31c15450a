"""Output geometry of normalization: norms, the all-ones direction, angles.

With eps = 0 and gamma = 1, RMSNorm puts every output on the sphere of radius sqrt(d)
(||y||^2 = sum x_i^2 / mean(x^2) = d).  LayerNorm first removes the component along the
all-ones vector 1 (x - mu 1 is orthogonal to 1), then rescales onto the same sphere, so its
outputs lie on a (d-2)-sphere inside the hyperplane <y, 1> = 0.

All three measures are taken in float64, so what they show is the rounding of the norm
that produced ``y``, not of the measurement.
"""

from __future__ import annotations

import torch


def l2_norm(y: torch.Tensor) -> torch.Tensor:
    """||y||_2 over the last axis, in float64."""
    return torch.linalg.vector_norm(y.double(), dim=-1)


def ones_component(y: torch.Tensor) -> torch.Tensor:
    """<y, 1> = sum_i y_i over the last axis, in float64 (0 for LayerNorm outputs)."""
    return y.double().sum(dim=-1)


def cosine(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """cos(a, b) over the last axis, in float64 (NaN where either vector is zero), within
    [-1, 1]: the quotient's rounding gave 1 + 2.2e-16 for RMSNorm's parallel outputs, a
    cosine no vectors have (below 1, rounding stays: 1 - 1.1e-15 is what was computed)."""
    a, b = a.double(), b.double()
    denominator = l2_norm(a) * l2_norm(b)
    # einsum runs as a batched matrix product, with no [..., d] product written first
    # (figures: benchmarks/RESULTS.md, "Geometry: the dot product behind every cosine")
    return (torch.einsum("...d,...d->...", a, b) / denominator).clamp(-1.0, 1.0)


def cosine_gap(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """1 − cos(a, b) over the last axis, in float64, to its own digits: ½‖a/‖a‖ − b/‖b‖‖²,
    a small difference of unit vectors squared.  ``1 - cosine(a, b)`` holds only float64's
    spacing near 1 (steps of 1.1e-16): for RMSNorm's [1, 2, 3, 4] it gave 3.3e-16, where the
    gap is 3.1e-16.  NaN where either vector is zero."""
    a, b = a.double(), b.double()
    units = a / l2_norm(a)[..., None]  # [..., d]
    units -= b / l2_norm(b)[..., None]  # in place: one [..., d] array fewer at a time
    return 0.5 * torch.einsum("...d,...d->...", units, units)


def split_along_ones(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(mu, x - mu * 1) over the last axis, in float64.

    The projection of x onto the unit vector 1/sqrt(d) is <x, 1/sqrt(d)> 1/sqrt(d) = mu * 1
    with mu = <x, 1> / d; what remains, x - mu * 1, is orthogonal to 1 (it lies in the plane
    <v, 1> = 0).  Computed in float64 so the drop onto the plane is exact to ~1e-16.
    """
    mean = ones_component(x) / x.shape[-1]  # [...]
    return mean, x.double() - mean[..., None]  # [...], [..., d]
