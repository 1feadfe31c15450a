"""One vector followed step by step: x, its drop onto the plane <v, 1> = 0, the result.

LayerNorm in three steps:

    x  ->  x - mu * 1            (the projection along 1 onto the plane; mu = <x, 1> / d)
       ->  (x - mu * 1) / sqrt(sigma^2 + eps)        (rescaled onto the sqrt(d) sphere)
       ->  gamma * (...) + beta                       (stretched and moved: the ellipsoid)

RMSNorm skips the first step.  The vector comes from the caller (the Vector Lab links a
typed vector here), so its width is its own: ``spec.d``, the cloud settings and gamma/beta
are not used; ``spec.eps`` and ``spec.dyt_alpha`` are.

References:
- Ba, Kiros, Hinton 2016, "Layer Normalization", arXiv:1607.06450
- Zhang, Sennrich 2019, "Root Mean Square Layer Normalization", arXiv:1910.07467
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import torch

from engine.config import GEOMETRY_MAX_D, GEOMETRY_SCENE_MAX_D, GeometrySpec
from engine.errors import EngineError
from engine.geometry.arrays import readonly
from engine.geometry.cloud import norm_spec, normed
from engine.geometry.degenerate import degeneracy_flags
from engine.geometry.measures import ones_component, split_along_ones
from engine.geometry.meshes import SceneMeshes, scene_meshes
from engine.norms.dispatch import normalize
from engine.norms.kinds import PER_TOKEN_KINDS
from engine.threads import torch_threads

MAX_ENTRY = 1e15  # |x_i|: d * x_i^2 stays below float32's maximum 3.4e38 for d <= 8192


@dataclass(frozen=True)
class VectorPath:
    """Every point of one vector's way through LayerNorm, RMSNorm and DyT."""

    x: np.ndarray  # [d] the input, as float32 saw it
    mean: float  # mu = <x, 1> / d
    along_ones: np.ndarray  # [d] mu * 1: the part LayerNorm removes
    centered: np.ndarray  # [d] x - mu * 1: the drop onto the plane <v, 1> = 0
    sigma: float  # |x - mu 1| / sqrt(d), the biased standard deviation (float64)
    rms: float  # |x| / sqrt(d) (float64)
    # sigma^2 and rms^2 as PyTorch's float32 LayerNorm and RMSNorm computed them: 0 where the
    # squares underflowed (entries below ~1e-23), and the norm then divided by sqrt(eps) alone
    op_variance: float
    op_mean_square: float
    layernorm: np.ndarray  # [d] (x - mu 1) / sqrt(sigma^2 + eps): on the sphere in the plane
    rmsnorm: np.ndarray  # [d] x / sqrt(rms^2 + eps): on the sphere, x's direction
    dyt: np.ndarray  # [d] tanh(alpha * x)
    sqrt_d: float
    layernorm_norm: float  # ||layernorm||, sqrt(d) * sigma / sqrt(sigma^2 + eps)
    rmsnorm_norm: float  # ||rmsnorm||, sqrt(d) * rms / sqrt(rms^2 + eps)
    centered_ones: float  # <x - mu 1, 1>: 0 up to rounding
    rmsnorm_cos_input: float  # cos(x, rmsnorm) = 1 (NaN for the zero vector)
    layernorm_cos_input: float  # cos(x, layernorm) < 1 unless mu = 0
    flags: tuple[str, ...]


def _check_vector(vector) -> tuple[float, ...]:
    values = tuple(vector)
    if not 1 <= len(values) <= GEOMETRY_MAX_D:
        raise EngineError(
            "geometry.vector_length",
            {"d": len(values), "limit": GEOMETRY_MAX_D},
        )
    for position, value in enumerate(values, start=1):
        finite = isinstance(value, numbers.Real) and math.isfinite(value)
        if not finite or abs(value) > MAX_ENTRY:
            raise EngineError(
                "geometry.vector_entry",
                {"position": position, "value": str(value), "limit": MAX_ENTRY},
            )
    return tuple(float(value) for value in values)


def vector_path(
    vector: tuple[float, ...], spec: GeometrySpec, threads: int | None = 1
) -> VectorPath:
    """The steps of ``vector`` (d numbers) through the three norms under ``spec``."""
    values = _check_vector(vector)
    with torch_threads(threads):
        x = torch.tensor(values, dtype=torch.float32)[None, :]  # [1, d]
        layer = normalize(x, norm_spec("layernorm", spec))
        square = normalize(x, norm_spec("rmsnorm", spec)).var  # [1]: the mean square it used
        mean, centered = split_along_ones(x)  # [1], [1, d] float64
        outputs = {kind: normed(x, kind, spec) for kind in PER_TOKEN_KINDS}  # [1, d] each
    ln, rms = outputs["layernorm"], outputs["rmsnorm"]
    return VectorPath(
        x=readonly(x[0]),
        mean=float(mean[0]),
        along_ones=readonly(mean[:, None].expand_as(centered)[0]),
        centered=readonly(centered[0]),
        sigma=float(centered[0].norm()) / math.sqrt(x.shape[-1]),
        rms=float(x[0].double().norm()) / math.sqrt(x.shape[-1]),
        op_variance=float(layer.var[0]),
        op_mean_square=float(square[0]),
        **{kind: out.y[0] for kind, out in outputs.items()},
        sqrt_d=math.sqrt(x.shape[-1]),
        layernorm_norm=float(ln.norm[0]),
        rmsnorm_norm=float(rms.norm[0]),
        centered_ones=float(ones_component(centered)[0]),
        rmsnorm_cos_input=float(rms.cos_input[0]),
        layernorm_cos_input=float(ln.cos_input[0]),
        flags=degeneracy_flags(x, spec.eps),
    )


def drawn_path(
    vector: tuple[float, ...], spec: GeometrySpec, threads: int | None = 1
) -> tuple[VectorPath, SceneMeshes | None]:
    """``vector_path``, with the sphere, plane and axis sized to reach every point of it when
    it can be drawn (d <= 3), else None."""
    path = vector_path(vector, spec, threads)
    d = path.x.shape[0]
    if d > GEOMETRY_SCENE_MAX_D:
        return path, None
    drawn = np.concatenate([path.x, path.centered, path.layernorm, path.rmsnorm])
    reach = max(1.5 * math.sqrt(d), 1.2 * float(np.abs(drawn[np.isfinite(drawn)]).max()))
    return path, scene_meshes(d, reach)
