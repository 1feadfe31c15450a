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

BASE_S = 0.03  # opening readers, the final statistics, the norm comparison's re-reads
VALUE_S = 1.5e-8  # seconds per value of the stream (between the float32 and .npz figures)
PAIR_S = 7e-3  # seconds per norm pair's DyT fit


def report_seconds(layout: Layout) -> float:
    """Predicted wall time of ``report`` on a dump with this layout, in this process."""
    values = len(layout.layers) * layout.batch * layout.tokens * layout.d
    return BASE_S + VALUE_S * values + PAIR_S * len(layout.norm_pairs)
