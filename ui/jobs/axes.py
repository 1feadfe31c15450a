"""The Axes page's jobs: which cells share statistics, and BatchNorm's five failures."""

from __future__ import annotations

from ui.compute import Job
from ui.i18n import t

# --- the Axes page: every call takes milliseconds at the defaults (engine/axes/__init__.py) ---

AXES_VALUES_PER_SECOND = 3e7  # small-batch draws per second, measured 6e7 on one warm core
# seconds per cell of B·T·d, measured at 65,536 cells on one core (2-core machine), doubled
AXES_PADDING_S_PER_CELL = 9e-6  # one LayerNorm call per sequence
AXES_CAUSAL_S_PER_CELL = 1.4e-5  # every kind, twice
AXES_TRAIN_S_PER_CELL_STEP = 5e-8  # one batch-statistics call per training step


def _cells(spec) -> int:
    return spec.batch * spec.tokens * spec.d


def axes_statistics(spec) -> Job:
    """Every cell's statistic under ``spec.kind`` (the heatmap, the box, the legend)."""
    from engine.axes.sharing import axes_statistics as compute_statistics

    def run(report, should_stop):
        return compute_statistics(spec)

    return Job("axes.statistics", spec, run, max_entries=128)


def axes_selection(stats, cell: tuple[int, int, int]) -> Job:
    """The cells ``cell`` shares its statistic with, and that statistic."""
    from engine.axes.sharing import select_cell

    def run(report, should_stop):
        return select_cell(stats, cell)

    return Job("axes.selection", (stats.spec, cell), run, max_entries=256)


def padding_pollution(spec) -> Job:
    from engine.axes.padding import padding_pollution as experiment

    seconds = AXES_PADDING_S_PER_CELL * _cells(spec)
    label = t("axes.experiment_running", number=1)
    return Job("axes.padding", spec, lambda report, should_stop: experiment(spec), label, seconds)


def small_batch_noise(spec, batch_sizes: tuple[int, ...], draws: int) -> Job:
    from engine.axes.small_batch import CHANNELS
    from engine.axes.small_batch import small_batch_noise as experiment

    def run(report, should_stop):
        return experiment(spec, batch_sizes, draws, threads=1)

    values = draws * sum(batch_sizes) * spec.tokens * min(spec.d, CHANNELS)
    label = t("axes.experiment_running", number=2)
    seconds = values / AXES_VALUES_PER_SECOND
    return Job("axes.small_batch", (spec, batch_sizes, draws), run, label, seconds)


def train_eval_gap(spec, shift: float, momentum: float, steps: int) -> Job:
    from engine.axes.train_eval import train_eval_gap as experiment

    def run(report, should_stop):
        return experiment(spec, shift, momentum, steps, threads=1)

    seconds = AXES_TRAIN_S_PER_CELL_STEP * _cells(spec) * steps
    label = t("axes.experiment_running", number=3)
    return Job("axes.train_eval", (spec, shift, momentum, steps), run, label, seconds)


def batch_of_one(spec) -> Job:
    from engine.axes.batch_of_one import batch_of_one as experiment

    return Job("axes.batch_of_one", spec, lambda report, should_stop: experiment(spec))


def causal_leak(spec, position: int) -> Job:
    from engine.axes.causal_leak import causal_leak as experiment

    def run(report, should_stop):
        return experiment(spec, position)

    seconds = AXES_CAUSAL_S_PER_CELL * _cells(spec)
    label = t("axes.experiment_running", number=5)
    return Job("axes.causal", (spec, position), run, label, seconds)
