"""The Depth page's jobs: a placement's stack, the L-sweep, a training-lab run."""

from __future__ import annotations

import time
from dataclasses import replace

from ui.compute import Job
from ui.i18n import t
from ui.labels import placement_label


def depth_simulation(spec) -> Job:
    """One placement's stack, forward and backward."""
    from engine.depth import simulate_depth
    from engine.depth.cost import simulation_cost

    def run(report, should_stop):
        return simulate_depth(spec, progress=report, should_stop=should_stop, threads=1)

    label = t("depth.simulating", name=placement_label(spec.placement), layers=spec.layers)
    return Job("depth.simulate", spec, run, label, simulation_cost(spec).seconds)


def depth_sweep(spec, depths: tuple[int, ...]) -> Job:
    """The last layer's gradient against L; L itself is set by the sweep, so any L shares it."""
    from engine.depth import sweep_last_layer_grad
    from engine.depth.cost import sweep_cost

    template = replace(spec, layers=1)

    def run(report, should_stop):
        return sweep_last_layer_grad(
            template, layers=depths, progress=report, should_stop=should_stop, threads=1
        )

    label = t(
        "depth.sweep_running",
        name=placement_label(spec.placement),
        low=depths[0],
        high=depths[-1],
    )
    return Job("depth.sweep", (template, depths), run, label, sweep_cost(spec, depths).seconds)


TRAINING_REDRAW_STEPS = 25  # the live loss chart is redrawn every this many steps


def training_run(name: str, spec) -> Job:
    """One training-lab run; reports the run so far every ``TRAINING_REDRAW_STEPS`` steps."""
    from engine.threads import Cancelled
    from engine.training.cost import training_seconds
    from engine.training.loop import iter_training, summarize

    def run(report, should_stop):
        records, started = [], time.perf_counter()
        for record in iter_training(spec, should_stop, threads=1):
            records.append(record)
            if record.step % TRAINING_REDRAW_STEPS == 0:
                report(record.step / spec.steps, summarize(spec, records))
        if should_stop():
            raise Cancelled(f"training stopped after {len(records)} steps")
        return summarize(spec, records, time.perf_counter() - started)

    label = t("depth.training_run", name=name, steps=spec.steps)
    return Job("depth.train", spec, run, label, training_seconds(spec), max_entries=32)
