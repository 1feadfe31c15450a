"""Reproducible example inputs: random vectors with a chosen distribution and mean shift."""

from __future__ import annotations

import math

import torch

DISTRIBUTIONS = ("normal", "uniform", "constant")


def random_vectors(
    rows: int,
    d: int,
    distribution: str = "normal",
    shift: float = 0.0,
    scale: float = 1.0,
    seed: int = 0,
) -> torch.Tensor:
    """``[rows, d]`` float64 values ``shift + scale * z``.

    ``z`` is standard normal, uniform on [-sqrt(3), sqrt(3)] (also unit variance), or zero
    ("constant": every entry equals ``shift``, the case where every norm's variance is 0);
    the specs that name ``distribution`` (``RandomSpec``, ``GeometrySpec``) refuse any other.
    """
    generator = torch.Generator().manual_seed(seed)
    if distribution == "normal":
        z = torch.randn(rows, d, generator=generator, dtype=torch.float64)  # [rows, d]
    elif distribution == "uniform":
        z = (torch.rand(rows, d, generator=generator, dtype=torch.float64) * 2 - 1) * math.sqrt(3)
    else:
        z = torch.zeros(rows, d, dtype=torch.float64)
    return shift + scale * z
