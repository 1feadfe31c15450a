"""Timing LayerNorm against RMSNorm on this machine, for the Kernels page and a Python prompt.

It tests a claim people repeat — the RMSNorm paper reports 7-64 % less running time end to
end, one of our source texts says RMSNorm takes 0.67x the time of LayerNorm on LLaMA-7B — by
measuring instead of quoting.  Norms are memory-bound (a few FLOPs per value against a full
read and write of ``[B, T, d]``), so on a GPU the two should cost nearly the same; on a CPU
the numbers say something about that CPU only.

Bytes counted per call, as in ``benchmarks/bench_kernels.py``: forward reads x and writes y
(2·M·N·elem bytes); backward reads x and dy and writes dx (3·M·N·elem bytes); the weight,
bias and per-row statistics are negligible.

References:
- Zhang, Sennrich 2019, "Root Mean Square Layer Normalization", arXiv:1910.07467 (the
  7-64 % claim, Table 1-2)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.benchmark import Timer

from engine.config import DTYPES, TIMING_PASSES, TimingSpec
from engine.norms.kinds import ROW_KINDS
from engine.threads import Cancelled, Progress, StopCheck, torch_threads

# Claims the Kernels page tests by measuring (quoted, never endorsed):
PAPER_CLAIM = (0.07, 0.64)  # Zhang & Sennrich 2019, Tables 1-2: running time cut by 7-64 %
SOURCE_CLAIM_RATIO = 0.67  # one source text: RMSNorm time / LayerNorm time on SOURCE_CLAIM_MODEL
SOURCE_CLAIM_MODEL = "LLaMA-7B"

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


def _norm_fn(kind: str, provider: str, weight, bias=None) -> Callable[[torch.Tensor], torch.Tensor]:
    """y = norm(x): PyTorch's fused ops, or our Triton kernels (CUDA only)."""
    if provider == "triton":
        from engine.norms.dispatch import triton_row_norm

        is_rms = kind == "rmsnorm"
        return lambda x: triton_row_norm(x, weight, bias, 1e-5, is_rms)
    d = weight.shape[0]
    if kind == "layernorm":
        return lambda x: F.layer_norm(x, (d,), weight, bias, 1e-5)
    return lambda x: F.rms_norm(x, (d,), weight, 1e-5)


def _cpu_seconds(calls: dict[str, Callable[[], object]], min_sample_s: float, repeats: int):
    """``repeats`` samples of seconds per call for each of ``calls``, the kinds interleaved
    sample by sample so that background load hits both alike; each sample is one
    ``Timer.timeit`` (which warms up first) of enough calls to last ``min_sample_s``."""
    threads = torch.get_num_threads()  # Timer's default is one thread: time what runs here
    timers = {k: Timer("f()", globals={"f": f}, num_threads=threads) for k, f in calls.items()}
    number = {k: max(1, int(min_sample_s / t.timeit(1).median)) for k, t in timers.items()}
    samples: dict[str, list[float]] = {kind: [] for kind in calls}
    for _ in range(repeats):
        for kind, timer in timers.items():
            samples[kind].append(timer.timeit(number[kind]).median)
    return samples


def _cuda_seconds(fn: Callable[[], object]) -> list[float]:
    """(first quartile, median, third quartile) of do_bench's runs, in seconds."""
    import triton.testing

    quartiles = triton.testing.do_bench(fn, warmup=10, rep=50, quantiles=[0.25, 0.5, 0.75])
    return [q * 1e-3 for q in quartiles]


@dataclass(frozen=True)
class NormTimings:
    """What ``time_norms`` measured: one row per (width, pass, kind)."""

    rows: tuple[dict, ...]

    @property
    def ratios(self) -> list[dict]:
        """RMSNorm time over LayerNorm time per (width, pass), with its verdict."""
        return rms_over_ln(self.rows)


def time_norms(
    rows: int = TimingSpec.rows,
    widths: Iterable[int] = TimingSpec.widths,
    dtype: str = TimingSpec.dtype,
    passes: Iterable[str] = TIMING_PASSES,
    device: str | torch.device | None = None,
    provider: str = "auto",
    min_sample_s: float = 0.005,
    repeats: int = 5,
    seed: int = 0,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
    threads: int | None = None,
) -> NormTimings:
    """Median time per call of LayerNorm and RMSNorm at ``[rows, width]`` for each width.

    LayerNorm carries a weight and a bias, RMSNorm a weight only, as in real models.  On a
    CPU, PyTorch's fused ``layer_norm`` / ``rms_norm`` are timed with
    ``torch.utils.benchmark.Timer`` (the two kinds interleaved sample by sample, so
    background load hits both alike); on CUDA, ``provider="auto"`` times our Triton kernels
    with ``triton.testing.do_bench``.

    Its rows are one dict per (width, pass, kind): ``kind, pass, rows, width, dtype, device,
    provider, median_us, q1_us, q3_us, min_us, gbps, measured_at`` (q1 and q3: the quartiles
    of the samples, or of ``do_bench``'s runs on CUDA; GB/s by the byte counts in the module
    docstring; when the timing started, "YYYY-MM-DD HH:MM:SS UTC").  ``should_stop`` is polled and
    ``progress`` told between (width, pass) pairs; ``threads``: torch's intra-op threads.
    """
    with torch_threads(threads):
        if dtype not in DTYPES:
            raise ValueError(f"unknown dtype {dtype!r}; expected one of {tuple(DTYPES)}")
        passes = tuple(passes)
        for p in passes:
            if p not in TIMING_PASSES:
                raise ValueError(f"unknown pass {p!r}; expected one of {TIMING_PASSES}")
        if rows < 1:
            raise ValueError(f"rows must be >= 1, got {rows}")
        dev = torch.device(device) if device is not None else torch.device("cpu")
        chosen = _resolve_provider(provider, dev)
        torch_dtype = DTYPES[dtype]
        gen = torch.Generator(device="cpu").manual_seed(seed)
        device_name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "CPU"
        measured_at = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
        widths = tuple(widths)
        out, done = [], 0
        for width in widths:
            if width < 1:
                raise ValueError(f"widths must be >= 1, got {width}")
            x = torch.randn(rows, width, generator=gen).to(dev, torch_dtype)  # [M, N]
            dy = torch.randn(rows, width, generator=gen).to(dev, torch_dtype)  # [M, N]
            weight = (1.0 + 0.1 * torch.randn(width, generator=gen)).to(dev, torch_dtype)  # [N]
            bias = (0.1 * torch.randn(width, generator=gen)).to(dev, torch_dtype)  # [N]
            for pass_ in passes:
                if should_stop is not None and should_stop():
                    raise Cancelled(f"timing stopped after {done} of {len(widths) * len(passes)}")
                calls = {}
                for kind in ROW_KINDS:
                    b = bias if kind == "layernorm" else None
                    if pass_ == "forward":
                        norm = _norm_fn(kind, chosen, weight, b)
                        calls[kind] = lambda norm=norm, x=x: norm(x)
                    else:
                        given = (x, weight) if b is None else (x, weight, b)
                        leaves = [t.detach().clone().requires_grad_() for t in given]
                        norm = _norm_fn(kind, chosen, *leaves[1:])  # weight (and bias)

                        def call(norm=norm, leaves=leaves, dy=dy):
                            return torch.autograd.grad(norm(leaves[0]), leaves, dy)

                        calls[kind] = call
                if dev.type == "cuda":  # do_bench's quartiles stand for each kind's samples
                    samples = {kind: _cuda_seconds(call) for kind, call in calls.items()}
                else:
                    samples = _cpu_seconds(calls, min_sample_s, repeats)
                elem = torch.empty(0, dtype=torch_dtype).element_size()
                nbytes = BYTES_PER_ELEMENT_PASS[pass_] * rows * width * elem
                for kind in ROW_KINDS:
                    q1_s, median_s, q3_s = map(float, np.percentile(samples[kind], (25, 50, 75)))
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
                            "q1_us": q1_s * 1e6,
                            "q3_us": q3_s * 1e6,
                            "min_us": min(samples[kind]) * 1e6,
                            "gbps": nbytes / median_s / 1e9,
                            "measured_at": measured_at,
                        }
                    )
                done += 1
                if progress is not None:
                    progress(done / (len(widths) * len(passes)))
        return NormTimings(tuple(out))


MAX_SPREAD = 0.2  # a timing whose quartiles lie further apart than this share of its median


def spread(row: dict) -> float:
    """A timing's interquartile range as a share of its median (0 for a single sample)."""
    return (row["q3_us"] - row["q1_us"]) / row["median_us"]


def rms_over_ln(timings: Iterable[dict], max_spread: float = MAX_SPREAD) -> list[dict]:
    """RMSNorm time / LayerNorm time per (width, pass): ``rows, width, pass, ratio, verdict``.

    The verdict says whether the ratio may be read, by a stated rule:

    - ``busy``: a spread (``spread``) is over ``max_spread``, or, at this width, a norm's
      forward + backward median is below its forward median (a sum measured faster than its
      part).  The machine was too busy to tell; the ratio means nothing.
    - ``tie``: the spreads are narrow but the two norms' interquartile ranges overlap: no
      difference this machine can measure.
    - ``ranked``: narrow spreads that do not overlap: the ratio says which norm is faster.

    A ratio of 0.67 is what one source text claims for LLaMA-7B; 1.0 means no difference.
    """
    by_key: dict[tuple, dict[str, dict]] = {}
    for row in timings:
        by_key.setdefault((row["rows"], row["width"], row["pass"]), {})[row["kind"]] = row
    out = []
    for (r, w, p), pair in by_key.items():
        if set(pair) != set(ROW_KINDS) or pair["layernorm"]["median_us"] <= 0:
            continue
        ln, rms = pair["layernorm"], pair["rmsnorm"]
        out.append(
            {
                "rows": r,
                "width": w,
                "pass": p,
                "ratio": rms["median_us"] / ln["median_us"],
                "verdict": _verdict(ln, rms, _sum_faster_than_part(by_key, r, w), max_spread),
            }
        )
    return out


def _sum_faster_than_part(by_key: dict, rows: int, width: int) -> bool:
    """Whether a norm's forward + backward measured faster than its forward, at this width."""
    forward = by_key.get((rows, width, "forward"), {})
    both = by_key.get((rows, width, "forward+backward"), {})
    return any(
        both[kind]["median_us"] < forward[kind]["median_us"]
        for kind in ROW_KINDS
        if kind in forward and kind in both
    )


def _verdict(ln: dict, rms: dict, inconsistent: bool, max_spread: float) -> str:
    if inconsistent or max(spread(ln), spread(rms)) > max_spread:
        return "busy"
    apart = rms["q3_us"] < ln["q1_us"] or ln["q3_us"] < rms["q1_us"]
    return "ranked" if apart else "tie"
