"""Why normalization is memory-bound: bytes moved vs FLOPs, against a GPU's roofline.

A norm over ``[M, d]`` (M = B·T tokens) reads every element once and writes it once, while
doing a handful of arithmetic operations per element: 7 for LayerNorm (add to the sum,
subtract the mean, square, add to the sum, times rstd, times gamma, plus beta) and 4 for
RMSNorm (square, add to the sum, times rstd, times gamma); the per-row rsqrt is negligible.
Its arithmetic intensity (FLOPs per byte) is therefore ~1-2 for 16-bit data (half that in
float32), far below a GPU's ridge point (peak FLOP/s / peak bytes/s), so its time is set by memory
bandwidth alone; the parameters (gamma, beta: 2d numbers) are negligible next to the
activations (M·d).

Fusing the residual add into the norm.  A Pre-Norm block computes h = x + r, then y = norm(h).
As two ops that is five passes over [M, d]: the add reads x and r and writes h, the norm
reads h back and writes y.  One fused kernel reads x and r once and writes h and y: four
passes.  Fusion saves exactly one read of h (1/5 of the traffic, a 1.25x bound on the
speed-up of a memory-bound add + norm), not a full round trip.

Hardware figures (NVIDIA H200 SXM datasheet): HBM3e 4.8 TB/s; FP32 on CUDA cores (what a
norm's arithmetic uses) 67 TFLOP/s.
"""

from __future__ import annotations

from dataclasses import dataclass

FLOPS_PER_ELEMENT = {"layernorm": 7, "rmsnorm": 4}
GPU_NAME = "H200"  # the GPU whose datasheet figures follow
# (reads, writes) of [M, d] tensors: the add reads x and r and writes h; the norm reads h, writes y
UNFUSED_ADD_NORM_PASSES = {"add": (2, 1), "norm": (1, 1)}
FUSED_ADD_NORM_PASSES = (2, 2)  # one kernel: reads x and r, writes h and y
UNFUSED_PASSES = sum(reads + writes for reads, writes in UNFUSED_ADD_NORM_PASSES.values())
FUSED_PASSES = sum(FUSED_ADD_NORM_PASSES)
H200_BANDWIDTH = 4.8e12  # bytes/s, HBM3e
H200_FP32_FLOPS = 67e12  # FLOP/s on CUDA cores (no tensor cores for a norm)


@dataclass(frozen=True)
class NormTraffic:
    """Cost model of one norm call over ``[tokens, d]``."""

    tokens: int
    d: int
    bytes_moved: int  # read x + write y
    flops: int
    intensity: float  # FLOP / byte
    ridge: float  # FLOP / byte where the roofline bends
    parameters: int  # gamma (+ beta)
    memory_time_s: float  # bytes / bandwidth
    compute_time_s: float  # flops / peak
    unfused_add_norm_bytes: int  # h = x + r (read 2, write 1), then y = norm(h) (read 1, write 1)
    fused_add_norm_bytes: int  # read x and r once, write h and y
    bandwidth: float  # bytes / s the times are taken at
    parameter_bytes: int  # gamma (+ beta), stored as the activations are

    @property
    def parameter_share(self) -> float:
        """The parameters' share of the numbers the norm moves (activations in and out)."""
        return self.parameter_bytes / (self.bytes_moved + self.parameter_bytes)

    @property
    def memory_time_with_parameters_s(self) -> float:
        """The time to move the activations and the parameters."""
        return (self.bytes_moved + self.parameter_bytes) / self.bandwidth

    @property
    def fusion_saving(self) -> float:
        """Unfused bytes / fused bytes: the speed-up fusion allows when memory-bound."""
        return self.unfused_add_norm_bytes / self.fused_add_norm_bytes


def norm_traffic(
    tokens: int,
    d: int,
    bytes_per_element: int = 2,
    kind: str = "layernorm",
    bandwidth: float = H200_BANDWIDTH,
    peak_flops: float = H200_FP32_FLOPS,
) -> NormTraffic:
    """The roofline arithmetic for one ``kind`` norm over ``[tokens, d]``."""
    if tokens < 1 or d < 1 or bytes_per_element < 1:
        raise ValueError("tokens, d and bytes_per_element must be >= 1")
    if kind not in FLOPS_PER_ELEMENT:
        raise ValueError(f"unknown kind {kind!r}; expected one of {tuple(FLOPS_PER_ELEMENT)}")
    elements = tokens * d
    bytes_moved = 2 * elements * bytes_per_element
    flops = FLOPS_PER_ELEMENT[kind] * elements
    return NormTraffic(
        tokens=tokens,
        d=d,
        bytes_moved=bytes_moved,
        flops=flops,
        intensity=flops / bytes_moved,
        ridge=peak_flops / bandwidth,
        parameters=d if kind == "rmsnorm" else 2 * d,
        memory_time_s=bytes_moved / bandwidth,
        compute_time_s=flops / peak_flops,
        unfused_add_norm_bytes=UNFUSED_PASSES * elements * bytes_per_element,
        fused_add_norm_bytes=FUSED_PASSES * elements * bytes_per_element,
        bandwidth=bandwidth,
        parameter_bytes=(d if kind == "rmsnorm" else 2 * d) * bytes_per_element,
    )
