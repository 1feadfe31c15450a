"""The engine calls the pages make, each as a ``ui.compute.Job`` built from a frozen config.

Each function names the work, keys it by the spec it depends on, predicts its time from the
engine's cost model, and wraps the engine call so it reports progress and stops when asked.
Engine modules are imported inside the functions: a page pays only for the engine it uses.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np

from ui.compute import Job
from ui.formatting import literal
from ui.i18n import t
from ui.labels import placement_label


def vector_explanation(config, compute_dtype: str | None = None) -> Job:
    """The Vector Lab's worked example (milliseconds: computed inline)."""
    from engine.norms.worked import explain_vectors

    spec = (
        config.spec if compute_dtype is None else replace(config.spec, compute_dtype=compute_dtype)
    )

    def run(report, should_stop):
        return explain_vectors(
            config.rows, spec, config.input_dtype, config.weight, config.bias, config.row_index
        )

    return Job("vector_lab.explain", (config, spec), run, max_entries=256)


def default_eps() -> Job:
    """Each API's real default epsilon, per storage dtype (engine.norms.precision_facts)."""
    from engine.norms.precision_facts import default_eps_table
    from ui.share import STORAGE_DTYPES

    def run(report, should_stop):
        return {dtype: default_eps_table(dtype) for dtype in STORAGE_DTYPES}

    return Job("vector_lab.default_eps", (), run, max_entries=1)


def precision_facts(dtype: str) -> Job:
    """Resolution of ``dtype``; for half dtypes also where a square and a running sum break."""
    from engine.config import HALF_DTYPES
    from engine.norms.precision_facts import (
        resolution,
        running_sum_limit,
        square_overflow_threshold,
    )
    from ui.text.vector_lab_precision import DtypeFacts

    def run(report, should_stop):
        if dtype not in HALF_DTYPES:  # a float32 running sum takes 2^25 terms to stall
            return DtypeFacts(resolution(dtype), None, None)
        return DtypeFacts(
            resolution(dtype), square_overflow_threshold(dtype), running_sum_limit(1.0, dtype)
        )

    return Job("vector_lab.precision_facts", dtype, run, max_entries=8)


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
    from engine.jobs import Cancelled
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


def norm_timings(config) -> Job:
    """LayerNorm vs RMSNorm timed on this machine (the Kernels page's "Measure")."""
    from engine.backend import compute_device
    from engine.perf.timing import time_norms, timing_seconds

    def run(report, should_stop):
        rows = time_norms(
            config.rows, config.widths, config.dtype, config.passes, compute_device(), repeats=5
        )
        return rows, time.strftime("%H:%M:%S")

    seconds = timing_seconds(config.rows, config.widths, config.passes)
    label = t("kernels.measuring", n=len(config.widths) * len(config.passes))
    return Job("kernels.timing", config, run, label, seconds, max_entries=16)


def model_norm_budget(shape) -> Job:
    """Norm parameters of a model and their share (milliseconds: computed inline).

    ``share=False``: the shape may come from a config.json someone pasted, which is theirs.
    """
    from engine.models import norm_budget

    def run(report, should_stop):
        return norm_budget(shape)

    return Job("models.budget", shape, run, share=False, max_entries=16)


def model_norm_cost(shape, dtype: str | None, tokens: int) -> Job:
    """Bytes and FLOPs of a model's norms, and what fusing the adds saves (inline, private)."""
    from engine.models import norm_cost

    def run(report, should_stop):
        return norm_cost(shape, dtype, tokens)

    return Job("models.cost", (shape, dtype, tokens), run, share=False, max_entries=16)


# Activation dumps.  Every job below takes the ``ChosenDump`` (ui/widgets/dumps.py) it reads
# and keeps its results as that source says: an upload, or a prompt someone typed, is their
# own data (``share=False``: kept in this browser session's state, never in the process-wide
# store, dropped with the session); the shipped example and the given prompts are shared.
# A source is keyed by its id, never by its bytes.


def _dump_job(name: str, source, key, run, label="", seconds=0.0, max_entries=2) -> Job:
    kept = max_entries * 4 if source.share else max_entries  # shared: every session's views
    return Job(name, (source.key, key), run, label, seconds, source.share, kept)


def dump_open(source, spec) -> Job:
    """The dump's headers scanned and its layout inferred (no data read: inline)."""
    from engine.dumps import open_dump

    def run(report, should_stop):
        return open_dump(source.opened, spec)

    return _dump_job("dumps.open", source, spec, run)


def dump_report(source, dump, spec) -> Job:
    """Every diagnostic of the dump: one streaming pass, with a progress bar when it is long."""
    from engine.dumps import report
    from engine.dumps.cost import report_seconds

    def run(progress, should_stop):
        return report(dump, spec, progress, should_stop, fit_norms=source.fit_norms)

    label = t("dumps.reducing", file=literal(source.name))
    seconds = report_seconds(dump.layout, source.fit_norms)
    return _dump_job("dumps.report", source, spec, run, label, seconds, max_entries=3)


def dump_tables(source, rep) -> Job:
    """The report's tables, for the page's tables and downloads (milliseconds: inline)."""
    from engine.dumps import report_tables

    def run(report, should_stop):
        return report_tables(rep)

    return _dump_job("dumps.tables", source, rep.spec, run)


def dump_token_norms(source, dump, spec, layer: int, row: int) -> Job:
    """LayerNorm and RMSNorm of one token of the dump (one row read: inline)."""
    from engine.dumps import compare_norms, open_dump

    def run(report, should_stop):  # ``dump`` re-laid out with the override, not re-scanned
        return compare_norms(open_dump(dump, spec), layer, [row], spec.norm_eps)

    return _dump_job("dumps.token", source, (spec, layer, row), run, max_entries=16)


def dump_row(source, dump, layer: int, batch: int, token: int) -> Job:
    """One token's d numbers at one point of the stream (for a Vector Lab link: inline)."""
    from engine.dumps import read_tokens

    row = batch * dump.layout.tokens + token

    def run(report, should_stop):
        return read_tokens(dump, [layer], [row])[0, 0].double().numpy()  # [d]

    return _dump_job("dumps.row", source, (dump.spec, layer, row), run, max_entries=4)


def dump_story(source, rep, batch: int) -> Job:
    """The first token's jump, ordinary tokens' growth, the largest entry (inline)."""
    from engine.dumps.story import stream_story

    def run(report, should_stop):
        return stream_story(rep, batch)

    return _dump_job("dumps.story", source, (rep.spec, batch), run, max_entries=4)


def dump_norm_step(source, rep, norm: str, batch: int, token: int) -> Job:
    """One token through one captured norm, and the reference formula on it (inline)."""
    from engine.dumps.live import read_norm_io
    from engine.dumps.norm_step import norm_step

    def run(report, should_stop):
        return norm_step(read_norm_io(rep, norm, batch, token))

    return _dump_job("dumps.norm_step", source, (rep.spec, norm, batch, token), run, max_entries=8)


DYT_FIT_S = 0.5  # one norm pair's DyT fit on this machine (benchmarks/RESULTS.md, live model)


def dump_dyt_fit(source, pair) -> Job:
    """The DyT curve of one norm pair, for a report made without fits (the live model)."""
    from engine.dumps.norm_views import fit_dyt

    def run(report, should_stop):
        return fit_dyt(pair)

    label = t("dumps.fitting", norm=literal(pair.label))
    return _dump_job("dumps.dyt_fit", source, pair.label, run, label, DYT_FIT_S, max_entries=8)


def live_capture(live, spec, shared: bool) -> Job:
    """A prompt through the live model, as an in-memory dump (``engine.dumps.live``)."""
    from engine.dumps.cost import live_seconds
    from engine.dumps.live import capture_live

    def run(report, should_stop):
        return capture_live(live, spec, threads=1)

    label = t("dumps.live_running", model=live.name)
    seconds = live_seconds(len(spec.prompt))
    kept = 16 if shared else 2  # a capture holds its activations: a session keeps two
    return Job("dumps.live", (live.name, spec), run, label, seconds, shared, kept)


def live_precision(live, prompt: str, shared: bool) -> Job:
    """The prompt in float32, bfloat16 and float16, and which norms overflow in float16."""
    from engine.dumps.cost import precision_seconds
    from engine.dumps.live_precision import compare_precisions

    def run(progress, should_stop):
        return compare_precisions(live, prompt, progress, should_stop, threads=1)

    label = t("dumps.precision_running")
    seconds = precision_seconds(len(prompt))
    return Job("dumps.precision", (live.name, prompt), run, label, seconds, shared, 8)


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


# --- the Geometry page: the scene's calls take milliseconds (benchmarks/RESULTS.md, Geometry)


def _scene_only(spec):
    """``spec`` with the settings wide vectors ignore (per-axis gamma, beta) at their
    defaults, so the high-dimension results are shared whatever the scene's sliders say."""
    from engine.config import GeometrySpec

    plain = GeometrySpec()
    names = [f"{name}_{axis}" for name in ("gamma", "beta") for axis in ("x", "y", "z")]
    return replace(spec, **{name: getattr(plain, name) for name in names})


def geometry_scene(spec) -> Job:
    """The cloud, its three norms' outputs, the sphere, plane, axis and ellipsoid (d <= 3)."""
    from engine.geometry.scene import build_scene

    def run(report, should_stop):
        return build_scene(spec, threads=1)

    return Job("geometry.scene", spec, run, max_entries=64)


def geometry_two_dimensions(spec) -> Job:
    """LayerNorm at d = 2: its two outputs, counted."""
    from engine.geometry.two_dimensions import two_dimensional_layernorm

    def run(report, should_stop):
        return two_dimensional_layernorm(spec, threads=1)

    return Job("geometry.two_dimensions", spec, run, max_entries=32)


def geometry_vector_path(vector: tuple[float, ...], spec) -> Job:
    """One vector step by step (any width; the engine refuses what it does not take), with
    the sphere, plane and axis sized to reach it when it can be drawn (d <= 3), else None."""
    from engine.config import GEOMETRY_SCENE_MAX_D
    from engine.geometry.meshes import scene_meshes
    from engine.geometry.path import vector_path

    def run(report, should_stop):
        path = vector_path(vector, spec, threads=1)
        d = len(vector)
        if d > GEOMETRY_SCENE_MAX_D:
            return path, None
        drawn = np.concatenate([path.x, path.centered, path.layernorm, path.rmsnorm])
        reach = max(1.5 * math.sqrt(d), 1.2 * float(np.abs(drawn[np.isfinite(drawn)]).max()))
        return path, scene_meshes(d, reach)

    return Job("geometry.path", (vector, spec), run, max_entries=64)


def geometry_eps_curve(spec) -> Job:
    """||y|| against the input scale at the spec's eps: the formula and measured norms."""
    from engine.geometry.eps_curve import eps_curve

    def run(report, should_stop):
        return eps_curve(spec, threads=1)

    return Job("geometry.eps_curve", spec, run, max_entries=32)


def geometry_dyt_sweep(spec) -> Job:
    """The cloud through DyT at the engine's alphas (the chosen alpha is not part of it)."""
    from engine.config import GeometrySpec
    from engine.geometry.dyt_sweep import DEFAULT_ALPHAS, dyt_sweep

    sweep_spec = replace(spec, dyt_alpha=GeometrySpec().dyt_alpha)

    def run(report, should_stop):
        return dyt_sweep(sweep_spec, DEFAULT_ALPHAS, threads=1)

    return Job("geometry.dyt_sweep", sweep_spec, run, max_entries=16)


def geometry_high_dimension(spec) -> Job:
    """Histograms, their spread over eps and the identity check (d up to 8192)."""
    from engine.geometry.cost import report_seconds
    from engine.geometry.high_dimension import DEFAULT_EPS_VALUES, high_dimension_report

    wide = _scene_only(spec)

    def run(report, should_stop):
        return high_dimension_report(wide, DEFAULT_EPS_VALUES, report, should_stop, threads=1)

    label = t("geometry.high.running", d=f"{wide.d:,}")
    seconds = report_seconds(wide, len(DEFAULT_EPS_VALUES))
    return Job("geometry.high", wide, run, label, seconds, max_entries=16)


def geometry_plane_view(spec, method: str, axes: tuple[int, int]) -> Job:
    """Inputs and outputs projected onto two directions (PCA, two axes, or 1 and the plane)."""
    from engine.geometry.cost import view_seconds
    from engine.geometry.views import plane_view

    wide = _scene_only(spec)

    def run(report, should_stop):
        return plane_view(wide, method, axes, threads=1)

    label = t("geometry.view_running", d=f"{wide.d:,}")
    key = (wide, method, axes)
    return Job("geometry.view", key, run, label, view_seconds(wide), max_entries=32)


def geometry_real_activations() -> Job:
    """The shipped SmolLM2 dump's norm inputs and outputs, measured (5 norms x 96 tokens)."""
    from engine.geometry.real_activations import real_activations

    def run(report, should_stop):
        return real_activations(threads=1)

    return Job("geometry.real", (), run, max_entries=1)
