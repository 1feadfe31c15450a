"""The Kernels page's job: LayerNorm against RMSNorm timed on this machine."""

from __future__ import annotations

import time

from ui.compute import Job
from ui.i18n import t


def norm_timings(config) -> Job:
    """LayerNorm vs RMSNorm timed on this machine (the Kernels page's "Measure")."""
    from engine.backend import compute_device
    from engine.perf.timing import time_norms, timing_seconds

    def run(report, should_stop):
        timed = time_norms(
            config.rows, config.widths, config.dtype, config.passes, compute_device(), repeats=5
        )
        return timed, time.strftime("%H:%M:%S")

    seconds = timing_seconds(config.rows, config.widths, config.passes)
    label = t("kernels.measuring", n=len(config.widths) * len(config.passes))
    return Job("kernels.timing", config, run, label, seconds, max_entries=16)
