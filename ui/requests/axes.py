"""The Axes page's heavy request: experiment 3 (BatchNorm's train/eval gap), which may wait
for a click."""

from __future__ import annotations

from engine.axes import train_eval as gap
from engine.axes.train_eval import TrainEvalGap
from engine.config import AxesSpec
from ui.compute import run_heavy
from ui.i18n import t


def train_eval_gap(
    spec: AxesSpec, shift: float, momentum: float, steps: int
) -> TrainEvalGap | None:
    """Experiment 3's result, or None while it waits for a click: steps x cells take up to
    seconds, so a link opens it computed only when small (``ui.compute``'s rule)."""
    found = run_heavy(
        gap.train_eval_gap,
        [(spec, shift, momentum, steps)],
        [t("axes.experiment_running", number=3)],
        button=t("axes.experiment_run", number=3),
        widget_key="ax_train_eval_run",
        work=gap.train_eval_work,
        default=(AxesSpec(), 0.0, 0.0, gap.DEFAULT_STEPS),  # shift, momentum: no work
    )
    return None if found is None else found[0]
