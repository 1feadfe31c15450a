"""The Depth page's heavy requests: what runs, its labels, when it waits for a click."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from engine.config import DepthSpec
from engine.depth.limits import SWEEP_LAYERS, simulation_work, sweep_work
from engine.depth.simulator import DepthResult, simulate_depth
from engine.depth.sweep import SweepResult, sweep_last_layer_grad
from engine.training.loop import TrainResult, train
from ui.compute import run_heavy
from ui.i18n import t
from ui.labels import placement_label

Named = list[tuple[str, TrainResult]]


def simulations(specs: tuple[DepthSpec, ...]) -> list[DepthResult] | None:
    """Each placement's stack, or None while the request waits for a click."""
    return run_heavy(
        simulate_depth,
        [(spec,) for spec in specs],
        [t("depth.simulating", name=placement_label(s.placement), layers=s.layers) for s in specs],
        button=t("depth.simulate"),
        widget_key="dp_simulate",
        work=simulation_work,
        default=(DepthSpec(),),
    )


def sweeps(specs: tuple[DepthSpec, ...], depths: tuple[int, ...]) -> list[SweepResult] | None:
    """Each placement's L-sweep over ``depths`` (its own L: any L shares it), or None."""
    names = [placement_label(spec.placement) for spec in specs]
    return run_heavy(
        sweep_last_layer_grad,
        [(replace(spec, layers=1), depths) for spec in specs],
        [t("depth.sweep_running", name=name, low=depths[0], high=depths[-1]) for name in names],
        button=t("depth.sweep_run"),
        widget_key="dp_sweep_run",
        work=sweep_work,
        default=(DepthSpec(), SWEEP_LAYERS),
    )


def trainings(runs: list[tuple[str, object]], on_partial: Callable[[Named], None]) -> Named | None:
    """The training lab's runs, always on a click; ``on_partial`` gets the named runs so far
    (the page draws their losses live)."""
    names = [name for name, _ in runs]
    found = run_heavy(
        train,
        [(spec,) for _, spec in runs],
        [t("depth.training_run", name=name, steps=spec.steps) for name, spec in runs],
        button=t("depth.train"),
        widget_key="dp_train",
        always_ask=True,
        on_partial=lambda done: on_partial([*zip(names, done)]),
        # a run kept from an earlier visit was shown at once, its button gone: an
        # instructor could not show it live again
        again=t("depth.train_again"),
    )
    return None if found is None else [*zip(names, found)]
