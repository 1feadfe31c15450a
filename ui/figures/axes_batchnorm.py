"""Axes page: one chart per BatchNorm failure (``engine.axes`` experiments 1-5).

A panel's titles are ``<panel>_title``, ``_x`` and ``_y`` in ``locales/*/axes.toml``, its
traces' names the experiment's own keys.

A two-panel experiment returns its panels as two figures (a ``Pair``): the page draws them in
two columns, side by side on a wide screen and one under the other on a phone, where one
figure of two subplots would squeeze both and run their titles into each other.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.axes.batch_of_one import BatchOfOne
from engine.axes.causal_leak import CausalLeak
from engine.axes.padding import PaddingPollution
from engine.axes.small_batch import SmallBatchNoise
from engine.axes.train_eval import TrainEvalGap
from ui.figures.axes import CLICKED_COLOR
from ui.figures.style import NORM_COLORS, framed, legend_below, log_axis
from ui.formatting import finite_or_none, positive_or_none
from ui.i18n import translate
from ui.labels import NORM_NAMES

REAL_COLOR = "#1f77b4"  # statistics of the real tokens / what should happen
POLLUTED_COLOR = NORM_COLORS["batchnorm"]  # BatchNorm's statistics as it computes them
THEORY_COLOR = "#555555"  # the app's theory-line grey (ui/figures/depth.py)
MUTED_COLOR = "#8c8c8c"  # inputs and raw draws (ui/figures/vector_lab.py's input grey)
SECOND_COLOR = "#2ca02c"


Pair = tuple[go.Figure, go.Figure]  # the left panel's figure, the right panel's


def _panel(panel: str, lang: str, height: int = 400, suffix: str = "") -> go.Figure:
    """A panel's figure, titled (``suffix`` appended) from ``<panel>_title``, ``_x``, ``_y``."""
    figure = go.Figure()
    figure.update_layout(
        xaxis_title=translate(f"{panel}_x", lang), yaxis_title=translate(f"{panel}_y", lang)
    )
    return _finish(figure, height, translate(f"{panel}_title", lang) + suffix)


def _pair(left: str, right: str, lang: str, height: int = 400) -> Pair:
    return _panel(left, lang, height), _panel(right, lang, height)


def _finish(figure: go.Figure, height: int, title: str) -> go.Figure:
    title = dict(text=title, x=0.5, xanchor="center", font=dict(size=14))
    return framed(figure, height, 40, title=title, legend=legend_below(x=0.0), hovermode="closest")


def padding_figure(result: PaddingPollution, lang: str) -> Pair:
    """Per-channel mean and std, PAD counted (what BatchNorm computes) vs left out."""
    pair = _pair("axes.padding.mean", "axes.padding.std", lang, 380)
    channels = np.arange(len(result.mean_real))
    for figure, (polluted, real) in zip(
        pair, ((result.mean_with_pad, result.mean_real), (result.std_with_pad, result.std_real))
    ):
        for key, values, color, symbol in (
            ("real", real, REAL_COLOR, "circle-open"),
            ("with_pad", polluted, POLLUTED_COLOR, "circle"),
        ):
            figure.add_scatter(
                x=channels,
                y=finite_or_none(values),
                mode="markers+lines",
                line=dict(color=color, width=1),
                marker=dict(color=color, symbol=symbol, size=7),
                name=translate(f"axes.padding.{key}", lang),
            )
    pair[0].add_hline(y=result.pad_value, line=dict(color=MUTED_COLOR, dash="dot"))
    for figure in pair:
        _whole_channels(figure, len(channels))
    return pair


def _whole_channels(figure: go.Figure, d: int) -> None:
    """A channel axis ticks whole channels (at d = 1 plotly ticked −0.4 … 0.4): one tick a
    channel up to 16; past that plotly's own steps, which are whole there."""
    figure.update_xaxes(dtick=1 if d <= 16 else None)


def small_batch_figure(result: SmallBatchNoise, lang: str) -> Pair:
    """Left: channel 0's batch mean in every draw, by b.  Right: its spread against b, log-log,
    with the 1/√(b·T) line (and the batch variance's spread with its line)."""

    figure, spread = _pair("axes.small.draws_panel", "axes.small.spread", lang)
    generator = np.random.default_rng(0)  # horizontal jitter only: the draws are the engine's
    for index, b in enumerate(result.batch_sizes):
        means = result.example_means[index]
        jitter = generator.uniform(-0.28, 0.28, len(means))
        figure.add_scatter(
            x=index + jitter,
            y=means,
            mode="markers",
            marker=dict(color=POLLUTED_COLOR, size=4, opacity=0.45),
            name=translate("axes.small.draws", lang),
            legendgroup="draws",
            showlegend=index == 0,
            hovertemplate="b = " + str(int(b)) + "<br>%{y:.3f} σ<extra></extra>",
        )
    figure.update_xaxes(
        tickvals=list(range(len(result.batch_sizes))),
        ticktext=[str(int(b)) for b in result.batch_sizes],
    )
    sizes = result.batch_sizes
    for key, measured, theory, color in (
        ("mean_spread", result.mean_spread, result.mean_spread_theory, POLLUTED_COLOR),
        ("var_spread", result.var_spread, result.var_spread_theory, SECOND_COLOR),
    ):
        spread.add_scatter(
            x=sizes,
            y=positive_or_none(measured),
            mode="markers",
            marker=dict(color=color, size=9),
            name=translate(f"axes.small.{key}", lang),
        )
        spread.add_scatter(
            x=sizes,
            y=positive_or_none(theory),
            mode="lines",
            line=dict(color=color, dash="dash", width=1.5),
            name=translate(f"axes.small.{key}_theory", lang),
        )
    log_axis(spread, "x", sampled=[int(b) for b in sizes])  # each batch size
    log_axis(spread, "y")
    return figure, spread


def train_eval_figure(result: TrainEvalGap, lang: str) -> Pair:
    """Left: channel 0's batch means and running mean over training steps, the population
    mean, and the shifted inference batch's mean.  Right: the train/eval gap against shift."""

    channel = int(np.argmax(np.abs(result.population_mean)))  # the most offset channel (else 0)
    figure = _panel("axes.train_eval.history", lang, suffix=f" · c = {channel}")
    gap = _panel("axes.train_eval.gap_panel", lang)
    steps = np.arange(1, result.steps + 1)
    figure.add_scatter(
        x=steps,
        y=result.batch_mean_history[:, channel],
        mode="markers",
        marker=dict(color=MUTED_COLOR, size=4),
        name=translate("axes.train_eval.batch_mean", lang),
    )
    figure.add_scatter(
        x=np.arange(result.steps + 1),
        y=result.running_mean_history[:, channel],
        mode="lines",
        line=dict(color=POLLUTED_COLOR, width=2),
        name=translate("axes.train_eval.running_mean", lang),
    )
    population = float(result.population_mean[channel])
    figure.add_scatter(
        x=[0, result.steps],
        y=[population, population],
        mode="lines",
        line=dict(color=THEORY_COLOR, dash="dash", width=1),
        name=translate("axes.train_eval.population", lang),
    )
    figure.add_scatter(
        x=[result.steps],
        y=[float(result.eval_batch_mean[channel])],
        mode="markers",
        marker=dict(color=CLICKED_COLOR, size=12, symbol="diamond", line=dict(width=1)),
        name=translate("axes.train_eval.eval_mean", lang),
    )
    gap.add_scatter(
        x=result.shift_grid,
        y=result.gap_by_shift,
        mode="lines+markers",
        line=dict(color=POLLUTED_COLOR),
        marker=dict(size=5),
        name=translate("axes.train_eval.gap", lang),
    )
    gap.add_scatter(
        x=[result.shift],
        y=[result.gap_mean],
        mode="markers",
        marker=dict(color=CLICKED_COLOR, size=13, symbol="diamond", line=dict(width=1)),
        name=translate("axes.train_eval.chosen", lang),
    )
    return figure, gap


def batch_of_one_figure(result: BatchOfOne, lang: str) -> go.Figure:
    """The one token's channels: its input, β, the output with ε > 0 (on β), and ε = 0 (NaN).

    NaN has no height: its × markers sit in a strip of their own under the chart, labelled
    as such, so that no one reads them as outputs equal to 0.
    """

    channels = np.arange(len(result.x))
    figure = make_subplots(
        rows=2, cols=1, shared_xaxes=True, row_heights=(0.86, 0.14), vertical_spacing=0.04
    )
    figure.add_bar(
        x=channels,
        y=result.x,
        marker_color=MUTED_COLOR,
        opacity=0.55,
        name=translate("axes.one.x", lang),
    )
    figure.add_scatter(
        x=channels,
        y=result.beta,
        mode="markers",
        marker=dict(symbol="circle-open", size=13, color="#111111", line=dict(width=2)),
        name=translate("axes.one.beta", lang),
    )
    figure.add_scatter(
        x=channels,
        y=finite_or_none(result.y),
        mode="markers",
        marker=dict(size=6, color=POLLUTED_COLOR),
        name=translate("axes.one.y", lang),
    )
    nan = [c for c, v in zip(channels, result.y_eps0) if not math.isfinite(v)]
    if nan:
        figure.add_scatter(
            x=nan,
            y=[0.0] * len(nan),  # a place in the NaN strip, not a value
            mode="markers",
            marker=dict(symbol="x", size=8, color=POLLUTED_COLOR, line=dict(width=1)),
            name=translate("axes.one.y_eps0", lang),
            hovertemplate="c = %{x}: NaN<extra></extra>",
            row=2,
            col=1,
        )
    figure.update_yaxes(
        range=(-1, 1),
        tickvals=[0],
        ticktext=[translate("axes.layout.nan_strip", lang)],
        showgrid=False,
        zeroline=False,
        fixedrange=True,
        row=2,
        col=1,
    )
    figure.update_xaxes(title_text=translate("axes.one.chart_x", lang), row=2, col=1)
    _whole_channels(figure, len(channels))
    figure.update_yaxes(title_text=translate("axes.one.chart_y", lang), row=1, col=1)
    return _finish(figure, 380, translate("axes.one.chart_title", lang))


def causal_figure(result: CausalLeak, lang: str) -> Pair:
    """|Δy| at each position after token ``result.position`` of sequence 0 was replaced:
    in that sequence (left) and in the other sequences (right), one line per kind.  The
    replaced token's own change (large under every kind) is left out of the left panel, so
    the scale shows what leaks into the other positions."""
    pair = _pair("axes.causal.same", "axes.causal.other", lang)
    positions = np.arange(result.same_sample.shape[1])
    dashes = {"layernorm": "solid", "rmsnorm": "dash", "dyt": "dot"}
    for index, kind in enumerate(result.kinds):
        # the replaced token itself changes under every kind: left out, marked by the line
        same = [
            None if t == result.position else float(v)
            for t, v in enumerate(result.same_sample[index])
        ]
        for figure, values in zip(pair, (same, result.other_samples[index])):
            figure.add_scatter(
                x=positions,
                y=values,
                mode="lines+markers",
                line=dict(color=NORM_COLORS[kind], dash=dashes.get(kind, "solid"), width=2),
                marker=dict(size=5),
                name=NORM_NAMES[kind],
            )
    for figure in pair:
        figure.add_vline(x=result.position, line=dict(color=CLICKED_COLOR, width=2))
    pair[0].add_annotation(
        x=result.position,
        y=1.0,
        yref="y domain",
        text=translate("axes.causal.changed", lang, position=result.position),
        showarrow=False,
        xanchor="right",
        xshift=-4,
        font=dict(color="#7a5500"),
    )
    return pair
