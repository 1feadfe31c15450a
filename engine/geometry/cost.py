"""What the high-dimension work costs, predicted from its spec before any work is done.

``high_dimension_report`` draws ``bounded_rows(spec)`` random inputs of width d once and runs
a norm over all of them 3 + 2E + 4 times (E = number of eps values): the three histograms'
norms, LayerNorm and RMSNorm at every eps, and the identity check's four calls (LayerNorm and
RMSNorm of x - mu 1, in float32 and in float64); each pass also measures ||y||, <y, 1> and
cos(x, y) in float64.  ``plane_view`` runs a block power iteration over the same [N, d]
inputs (a few products with the data) and three norms.  Both are linear in N * d:

    seconds = BASE_S + S_PER_CELL_PASS * N * d * passes        (report)
    seconds = BASE_S + VIEW_S_PER_CELL * N * d                 (plane view)

Measured on the project's 2-core CPU with one torch thread (CPU seconds, torch 2.13,
2026-11-30, 8 eps values): report 0.23 s at d = 768 (N = 2,000), 0.67 s at d = 2,048,
0.77 s at d = 8,192 (N = 512); PCA view 0.11, 0.25 and 0.39 s.  ``ui/compute.py`` scales
these by how fast the server has recently been.
"""

from __future__ import annotations

from engine.config import GeometrySpec
from engine.geometry.cloud import bounded_rows

BASE_S = 0.01
S_PER_CELL_PASS = 8e-9  # one norm call over one number, with its float64 measures
VIEW_S_PER_CELL = 1e-7  # the power iteration, the projections and three norms


def report_passes(eps_count: int) -> int:
    """Norm calls over the whole sample that ``high_dimension_report`` makes."""
    return 3 + 2 * eps_count + 4


def report_seconds(spec: GeometrySpec, eps_count: int) -> float:
    """Predicted wall time of ``high_dimension_report(spec, eps_values)`` on one thread."""
    cells = bounded_rows(spec) * spec.d
    return BASE_S + S_PER_CELL_PASS * cells * report_passes(eps_count)


def view_seconds(spec: GeometrySpec) -> float:
    """Predicted wall time of ``plane_view(spec, ...)`` on one thread."""
    return BASE_S + VIEW_S_PER_CELL * bounded_rows(spec) * spec.d
