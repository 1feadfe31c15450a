"""What a dump's report costs, predicted from its layout before any data is read.

Time.  ``report`` reads every value of the residual stream once (converting it to float32
and taking the per-row, per-channel and magnitude statistics of ``chunks``), then fits a
DyT curve to a sample of each norm pair (``norm_views.fit_dyt``: a few hundred passes of
``tanh`` over up to 16k points):
``seconds = BASE_S + VALUE_S * L·B·T·d + PAIR_S * norm pairs``.

Measured on the project's 2-core CPU with torch 2.13 under other load (uploads held in
memory, 2026-11-30): a 51 MiB float32 stream [17, 2, 512, 768] took 0.18 s (13 ns a value),
a 66 MiB float16 one [33, 1, 1024, 1024] 0.31 s (9 ns), a compressed .npz 1.1 s (25 ns);
SmolLM2's 31-layer, 19-token dump with 61 norm pairs 0.5 s, of which the fits ~0.4 s.
``ui/compute.py`` scales these by how fast the server has recently been.
"""

from __future__ import annotations

from engine.dumps.layout import Layout
from engine.dumps.limits import MB

BASE_S = 0.03  # opening readers, the final statistics, the norm comparison's re-reads
VALUE_S = 1.5e-8  # seconds per value of the stream (between the float32 and .npz figures)
PAIR_S = 7e-3  # seconds per norm pair's DyT fit


# Opening reads headers only, except a .pt upload, which torch.load copies whole (0.09 s for
# 200 MB on a quiet machine; 4x that allowed for a busy one).  Its structure is bounded
# before it is loaded (``limits``), so no open takes long.
OPEN_BASE_S = 0.01
OPEN_COPY_S_PER_MB = 2e-3


def open_seconds(suffix: str, nbytes: int, in_memory: bool) -> float:
    """Predicted wall time of ``open_dump`` on one file of ``nbytes``."""
    copied = in_memory and suffix in (".pt", ".pth")
    return OPEN_BASE_S + (OPEN_COPY_S_PER_MB * nbytes / MB if copied else 0.0)


def report_seconds(layout: Layout, fit_norms: bool = True) -> float:
    """Predicted wall time of ``report`` on a dump with this layout, in this process."""
    values = len(layout.layers) * layout.batch * layout.tokens * layout.d
    fits = len(layout.norm_pairs) if fit_norms else 0
    return BASE_S + VALUE_S * values + PAIR_S * fits


# The live model (``engine.dumps.live``, one intra-op thread), from benchmarks/RESULTS.md: a
# 32-token capture 0.135 s and its report 0.035 s; ``compare_precisions`` 3.7-4.8 s on 24
# tokens (three passes, the bfloat16/float16 copies made on the first call, 61 precision
# stories).  A capture's estimate counts the prompt's tokens with the model's tokenizer
# (milliseconds; ``LiveModel.prompt_tokens``): a guess from characters is 4x off either way
# (English ~4 characters a token, Chinese ~2 tokens a character, digits 1 a character).  The
# precision comparison, always on request, guesses them from its characters.
LIVE_BASE_S = 0.03  # tokenizing, hooks, serialising the capture
LIVE_TOKEN_S = 0.005  # per token: the forward pass and the report
PRECISION_BASE_S = 1.5  # three passes' fixed cost, the half copies of the weights
PRECISION_TOKEN_S = 0.13  # per token: three passes and a precision story per norm
CHARACTERS_PER_TOKEN = 2.0  # a cautious guess between English and Chinese


def prompt_tokens(characters: int, limit: int = 256) -> int:
    """A guess of a prompt's tokens from its length in characters (at most ``limit``)."""
    return min(limit, max(1, round(characters / CHARACTERS_PER_TOKEN)))


def live_seconds(tokens: int) -> float:
    """Predicted wall time of a live capture and its report for a prompt of ``tokens`` tokens
    (``LiveModel.prompt_tokens``: 0 for a prompt refused before the forward pass)."""
    return LIVE_BASE_S + LIVE_TOKEN_S * tokens


def precision_seconds(characters: int) -> float:
    """Predicted wall time of ``compare_precisions`` on a prompt this long."""
    return PRECISION_BASE_S + PRECISION_TOKEN_S * prompt_tokens(characters)
