"""What ``bench_kernels.py`` measures: shapes, dtypes, providers, byte counts, datasheet peaks.

The cases of the kernel benchmark, apart from the loop that times them: the [M, N] shapes,
each provider as a plain function (``ours``, eager ``torch``, ``compile``, ``liger`` when
installed; the fused and unfused add + norm), the bytes a perfect kernel must move per pass,
the GPU's datasheet HBM bandwidth, and the measured copy bandwidth.

Imports torch: ``bench_kernels.py`` imports this module only after it has set
``TRITON_INTERPRET`` for a dry run (triton itself is imported inside the providers).
"""

from __future__ import annotations

import statistics
import time

import torch

SHAPES = [(4096, 4096), (16384, 8192), (32768, 4096), (4096, 65536)]
QUICK_SHAPES = [(4096, 4096), (4096, 65536)]
DRY = [(64, 256)]  # --dry-run: the GPU code path on the CPU, interpreted
DTYPES = ("bfloat16", "float32")
KINDS = ("rmsnorm", "layernorm")
PROVIDERS = ("ours", "torch", "compile", "liger")
EPS = 1e-5
# Datasheet HBM bandwidth in GB/s, by a substring of torch.cuda.get_device_name().
PEAK_GBPS = {
    "H200": 4800.0,
    "H100 NVL": 3900.0,
    "H100 PCIe": 2000.0,
    "H100": 3350.0,
    "A100-SXM4-80GB": 2039.0,
    "A100 80GB PCIe": 1935.0,
    "A100": 1555.0,
    "L40S": 864.0,
    "RTX 4090": 1008.0,
}
BYTES_PER_VALUE = {"forward": 2, "backward": 3, "add+norm forward": 4}


def datasheet_peak(name: str) -> float | None:
    for key, gbps in PEAK_GBPS.items():
        if key in name:
            return gbps
    return None


def copy_bandwidth_gbps(torch, do_bench, device: str) -> float:
    """Device-to-device copy of 2 GiB (8 MiB in a dry run), counting bytes read + written."""
    numel = 2**29 if device == "cuda" else 2**21
    src = torch.empty(numel, dtype=torch.float32, device=device).normal_()
    dst = torch.empty_like(src)
    ms = do_bench(lambda: dst.copy_(src), warmup=25, rep=200, return_mode="median")
    return 2 * numel * 4 / (ms * 1e-3) / 1e9


def _eager_layer_norm(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, EPS)


def _eager_rms_norm(x, w, b):
    return torch.nn.functional.rms_norm(x, (x.shape[-1],), w, EPS)


def _eager_add_layer_norm(x, r, w):
    h = x + r
    return _eager_layer_norm(h, w, None), h


def _eager_add_rms_norm(x, r, w):
    h = x + r
    return _eager_rms_norm(h, w, None), h


_COMPILED: dict = {}


def compiled(fn):
    """One torch.compile wrapper per eager function (dynamo then caches per shape/dtype)."""
    if fn not in _COMPILED:
        _COMPILED[fn] = torch.compile(fn, dynamic=False)
    return _COMPILED[fn]


def norm_providers(kind: str) -> dict:
    """provider -> f(x, w, b) -> y, for the providers available here."""
    from engine.kernels.row_norm_function import row_norm

    is_rms = kind == "rmsnorm"
    eager = _eager_rms_norm if is_rms else _eager_layer_norm

    def ours(x, w, b):
        return row_norm(x, None, w, b, EPS, 0.0, is_rms)[0]

    providers = {"ours": ours, "torch": eager, "compile": compiled(eager)}
    try:
        if is_rms:
            from liger_kernel.ops.rms_norm import LigerRMSNormFunction

            def liger(x, w, b):
                return LigerRMSNormFunction.apply(x, w, EPS, 0.0, "llama", False)
        else:
            from liger_kernel.ops.layer_norm import LigerLayerNormFunction

            def liger(x, w, b):
                return LigerLayerNormFunction.apply(x, w, b, EPS)

        providers["liger"] = liger
    except ImportError:
        pass
    return providers


def add_norm_providers(kind: str) -> dict:
    """provider -> f(x, r, w) -> (y, h): ours fused and unfused, torch eager and compiled."""
    from engine.kernels.row_norm_function import row_norm

    is_rms = kind == "rmsnorm"
    eager = _eager_add_rms_norm if is_rms else _eager_add_layer_norm

    def fused(x, r, w):
        y, h, *_ = row_norm(x, r, w, None, EPS, 0.0, is_rms)
        return y, h

    def unfused(x, r, w):
        h = x + r
        return row_norm(h, None, w, None, EPS, 0.0, is_rms)[0], h

    return {
        "ours fused": fused,
        "ours unfused": unfused,
        "torch": eager,
        "compile": compiled(eager),
    }


def rel_err(a, b) -> float:
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()


def cpu_do_bench(fn, warmup=25, rep=100, return_mode="median"):
    """A stand-in for triton.testing.do_bench in a dry run: host clock, median, in ms."""
    fn()
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)
