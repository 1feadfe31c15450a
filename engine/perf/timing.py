"""Timing LayerNorm against RMSNorm on this machine.

For the Kernels page (and anyone with a Python prompt):

- ``time_norms`` times LayerNorm and RMSNorm forward, and forward+backward, at chosen
  shapes and dtype, on this machine, and returns plain rows (dicts).  It tests a claim
  people repeat — the RMSNorm paper reports 7-64 % less running time end to end, one of our
  source texts says RMSNorm takes 0.67x the time of LayerNorm on LLaMA-7B — by measuring
  instead of quoting.  Norms are memory-bound (a few FLOPs per value against a full read
  and write of ``[B, T, d]``), so on a GPU the two should cost nearly the same; on a CPU the
  numbers say something about that CPU only.

Bytes counted per call, as in ``benchmarks/bench_kernels.py``: forward reads x and writes y
(2·M·N·elem bytes); backward reads x and dy and writes dx (3·M·N·elem bytes); the weight,
bias and per-row statistics are negligible.

References:
- Zhang, Sennrich 2019, "Root Mean Square Layer Normalization", arXiv:1910.07467 (the
  7-64 % claim, Table 1-2)
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable

import torch
import torch.nn.functional as F

from engine.config import DTYPES

# Claims the Kernels page tests by measuring (quoted, never endorsed):
PAPER_CLAIM = (0.07, 0.64)  # Zhang & Sennrich 2019, Tables 1-2: running time cut by 7-64 %
SOURCE_CLAIM_RATIO = 0.67  # one source text: RMSNorm time / LayerNorm time on SOURCE_CLAIM_MODEL
SOURCE_CLAIM_MODEL = "LLaMA-7B"

KINDS = ("layernorm", "rmsnorm")
PASSES = ("forward", "forward+backward")
PROVIDERS = ("auto", "torch", "triton")
BYTES_PER_ELEMENT_PASS = {"forward": 2, "forward+backward": 5}  # reads + writes of M·N


def _resolve_provider(provider: str, device: torch.device) -> str:
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}; expected one of {PROVIDERS}")
    if provider == "auto":
        return "triton" if device.type == "cuda" else "torch"
    if provider == "triton" and device.type != "cuda":
        raise ValueError("provider='triton' needs a CUDA device (the interpreter is not timed)")
    return provider


def _norm_fn(kind: str, provider: str, weight, bias) -> Callable[[torch.Tensor], torch.Tensor]:
    """y = norm(x): PyTorch's fused ops, or our Triton kernels (CUDA only)."""
    if provider == "triton":
        from engine.norms.dispatch import triton_row_norm

        is_rms = kind == "rmsnorm"
        return lambda x: triton_row_norm(x, weight, bias, 1e-5, is_rms)
    d = weight.shape[0]
    if kind == "layernorm":
        return lambda x: F.layer_norm(x, (d,), weight, bias, 1e-5)
    return lambda x: F.rms_norm(x, (d,), weight, 1e-5)


def _calls_per_sample(fn: Callable[[], object], min_sample_s: float) -> int:
    """Warm ``fn`` up and return how many calls make one sample last ``min_sample_s``."""
    fn()  # warm-up: allocations, first-call dispatch
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    return max(1, int(min_sample_s / once))


def _cpu_sample(fn: Callable[[], object], calls: int) -> float:
    """Seconds per call, averaged over ``calls`` back-to-back calls."""
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def _cuda_seconds(fn: Callable[[], object]) -> float:
    import triton.testing

    return triton.testing.do_bench(fn, warmup=10, rep=50, return_mode="median") * 1e-3


def time_norms(
    rows: int = 1024,
    widths: Iterable[int] = (256, 512, 1024, 2048, 4096),
    dtype: str = "float32",
    passes: Iterable[str] = PASSES,
    device: str | torch.device | None = None,
    provider: str = "auto",
    min_sample_s: float = 0.005,
    repeats: int = 5,
    seed: int = 0,
) -> list[dict]:
    """Median time per call of LayerNorm and RMSNorm at ``[rows, width]`` for each width.

    LayerNorm carries a weight and a bias, RMSNorm a weight only, as in real models.  On a
    CPU, PyTorch's fused ``layer_norm`` / ``rms_norm`` are timed (the two kinds interleaved
    sample by sample, so background load hits both alike); on CUDA, ``provider="auto"``
    times our Triton kernels with ``triton.testing.do_bench``.

    Returns one dict per (width, pass, kind): ``kind, pass, rows, width, dtype, device,
    provider, median_us, min_us, gbps`` (GB/s by the byte counts in the module docstring).
    """
    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; expected one of {tuple(DTYPES)}")
    passes = tuple(passes)
    for p in passes:
        if p not in PASSES:
            raise ValueError(f"unknown pass {p!r}; expected one of {PASSES}")
    if rows < 1:
        raise ValueError(f"rows must be >= 1, got {rows}")
    dev = torch.device(device) if device is not None else torch.device("cpu")
    chosen = _resolve_provider(provider, dev)
    torch_dtype = DTYPES[dtype]
    gen = torch.Generator(device="cpu").manual_seed(seed)
    device_name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "CPU"
    out = []
    for width in widths:
        if width < 1:
            raise ValueError(f"widths must be >= 1, got {width}")
        x = torch.randn(rows, width, generator=gen).to(dev, torch_dtype)  # [M, N]
        dy = torch.randn(rows, width, generator=gen).to(dev, torch_dtype)  # [M, N]
        weight = (1.0 + 0.1 * torch.randn(width, generator=gen)).to(dev, torch_dtype)  # [N]
        bias = (0.1 * torch.randn(width, generator=gen)).to(dev, torch_dtype)  # [N]
        for pass_ in passes:
            calls = {}
            for kind in KINDS:
                b = bias if kind == "layernorm" else None
                if pass_ == "forward":
                    norm = _norm_fn(kind, chosen, weight, b)
                    calls[kind] = lambda norm=norm, x=x: norm(x)
                else:
                    leaves = [t.detach().clone().requires_grad_() for t in (x, weight)]
                    if b is not None:
                        leaves.append(b.detach().clone().requires_grad_())
                    norm = _norm_fn(kind, chosen, leaves[1], leaves[2] if b is not None else None)

                    def call(norm=norm, leaves=leaves, dy=dy):
                        return torch.autograd.grad(norm(leaves[0]), leaves, dy)

                    calls[kind] = call
            samples = {kind: [] for kind in KINDS}
            if dev.type == "cuda":
                for kind in KINDS:
                    samples[kind] = [_cuda_seconds(calls[kind])]
            else:
                per_sample = {k: _calls_per_sample(calls[k], min_sample_s) for k in KINDS}
                for _ in range(repeats):  # interleave the kinds, one sample at a time
                    for kind in KINDS:
                        samples[kind].append(_cpu_sample(calls[kind], per_sample[kind]))
            elem = torch.empty(0, dtype=torch_dtype).element_size()
            nbytes = BYTES_PER_ELEMENT_PASS[pass_] * rows * width * elem
            for kind in KINDS:
                median_s = statistics.median(samples[kind])
                out.append(
                    {
                        "kind": kind,
                        "pass": pass_,
                        "rows": rows,
                        "width": width,
                        "dtype": dtype,
                        "device": device_name,
                        "provider": chosen,
                        "median_us": median_s * 1e6,
                        "min_us": min(samples[kind]) * 1e6,
                        "gbps": nbytes / median_s / 1e9,
                    }
                )
    return out


def rms_over_ln(timings: Iterable[dict]) -> list[dict]:
    """RMSNorm time / LayerNorm time per (width, pass): ``width, pass, ratio`` rows.

    A ratio of 0.67 is what one source text claims for LLaMA-7B; 1.0 means no difference.
    """
    by_key: dict[tuple, dict[str, float]] = {}
    for row in timings:
        by_key.setdefault((row["rows"], row["width"], row["pass"]), {})[row["kind"]] = row[
            "median_us"
        ]
    return [
        {"rows": r, "width": w, "pass": p, "ratio": t["rmsnorm"] / t["layernorm"]}
        for (r, w, p), t in by_key.items()
        if "rmsnorm" in t and "layernorm" in t and t["layernorm"] > 0
    ]


# Predicted cost of ``time_norms`` on a CPU: warm-up and calibration (2 calls) then ``repeats``
# samples of at least ``min_sample_s``, for both kinds, per (width, pass).  One call touches
# rows x width values; these per-value times were measured for PyTorch's fused CPU ops
# (float32, one thread; benchmarks/bench_cost.py).
CPU_SECONDS_PER_VALUE = {"forward": 3e-9, "forward+backward": 1e-8}


def timing_seconds(
    rows: int,
    widths: Iterable[int],
    passes: Iterable[str] = PASSES,
    repeats: int = 5,
    min_sample_s: float = 0.005,
) -> float:
    """Predicted wall time of ``time_norms`` with these arguments on this machine's CPU."""
    total = 0.0
    for width in widths:
        for pass_ in passes:
            call = rows * width * CPU_SECONDS_PER_VALUE[pass_]
            total += len(KINDS) * (2 * call + repeats * max(min_sample_s, call))
    return total
