"""One captured norm at one token, worked step by step: the Vector Lab on a real token.

A capture records each norm's input ``x`` and output ``y`` (``live.read_norm_io``).  Here
``x`` is normalised again by ``engine.normalize`` with the norm's own kind, epsilon and
weight (from the capture's metadata), in float64, and compared with ``y``: the model's norm
and the reference formula agree up to the precision the activations were stored in.  The
statistics are the ones the Vector Lab shows: μ, the mean square, RMS = √(σ² + μ²), and
rstd = 1/√(σ² + ε) (LayerNorm) or 1/√(mean square + ε) (RMSNorm).

References:
- Zhang, Sennrich 2019, "Root Mean Square Layer Normalization", arXiv:1910.07467
- Ba, Kiros, Hinton 2016, "Layer Normalization", arXiv:1607.06450
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from engine.config import NormSpec
from engine.dumps.live import NormIO
from engine.norms.dispatch import normalize
from engine.norms.kinds import ROW_KINDS


@dataclass(frozen=True)
class NormStep:
    """One token through one captured norm, and the reference formula on the same input."""

    io: NormIO  # the captured input, output, weight, kind and epsilon
    mean: float  # μ of the input's d values
    mean_square: float  # mean of x² (RMS²)
    rms: float
    rstd: float  # the kind's 1/√(statistic + ε); NaN when the kind is not known
    peak_channel: int  # the channel of the largest |x|
    recomputed: np.ndarray | None  # [d] engine.normalize(x) · weight + bias; None when the
    #   capture does not say which kind of norm it was
    max_difference: float  # max over channels of |recomputed − y|, NaN when not recomputed

    @property
    def peak(self) -> float:
        return float(self.io.x[self.peak_channel])


def norm_step(io: NormIO) -> NormStep:
    """Work ``io`` step by step (module docstring)."""
    x = torch.from_numpy(io.x).double()  # [d]
    mean_square = float(x.pow(2).mean())
    nan = float("nan")
    recomputed, difference, rstd = None, nan, nan
    if io.kind in ROW_KINDS:  # the kinds a capture's metadata can name
        eps = io.eps if io.eps is not None else NormSpec(kind=io.kind).eps
        spec = NormSpec(kind=io.kind, eps=eps, compute_dtype="float64")
        weight = None if io.weight is None else torch.from_numpy(io.weight).double()  # [d]
        bias = None if io.bias is None else torch.from_numpy(io.bias).double()  # [d]
        result = normalize(x, spec, weight, bias)
        recomputed = result.y.numpy()  # [d]
        difference = float(np.abs(recomputed - io.y).max())
        rstd = float(result.rstd.reshape(-1)[0])
    return NormStep(
        io=io,
        mean=float(x.mean()),
        mean_square=mean_square,
        rms=mean_square**0.5,
        rstd=rstd,
        peak_channel=int(x.abs().argmax()),
        recomputed=recomputed,
        max_difference=difference,
    )
