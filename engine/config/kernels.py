"""TimingSpec and RooflineSpec: what the Kernels page times, and the shape it works the
roofline out for (``engine/perf/``)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.config.fields import Checked, param
from engine.config.norms import DTYPES

TIMING_DTYPES = ("float32", "bfloat16", "float16")
TIMING_ROWS = (256, 1024, 4096)  # the page's menus; time_norms takes any shape
TIMING_WIDTHS = (256, 512, 1024, 2048, 4096, 8192)
TIMING_PASSES = ("forward", "forward+backward")
# the widest row the Triton kernels hold in registers (engine/kernels/row_norm_forward.py):
# a wider one is streamed in chunks, read twice (statistics, then the normalization)
MAX_FUSED_N = 65536
WIDE_ROW_PASSES = 3  # ... its passes over [B, T, d]: x read twice, y written
WIDE_ROW_FUSED_PASSES = 5  # with a residual: x and r read, h written and read back, y written


@dataclass(frozen=True)
class TimingSpec(Checked):
    """LayerNorm against RMSNorm timed at ``[rows, width]`` for each width and pass
    (``engine.perf.timing.time_norms``); ``widths`` and ``passes`` are subsets of
    ``TIMING_WIDTHS`` and ``TIMING_PASSES``."""

    rows: int = param(1024, low=1, high=1 << 16, offered=TIMING_ROWS)  # [65,536, 8,192]: 2 GiB
    widths: tuple[int, ...] = (256, 1024, 4096)
    dtype: str = param("float32", choices=TIMING_DTYPES)
    passes: tuple[str, ...] = TIMING_PASSES


@dataclass(frozen=True)
class RooflineSpec(Checked):
    """One norm over ``[tokens, d]`` in ``dtype``, for the roofline arithmetic
    (``engine.perf.roofline.norm_traffic``)."""

    tokens: int = param(4096, low=1, high=1 << 24)
    d: int = param(4096, low=1, high=1 << 18)
    dtype: str = param("bfloat16", choices=TIMING_DTYPES)

    @property
    def bytes_per_element(self) -> int:
        return DTYPES[self.dtype].itemsize
