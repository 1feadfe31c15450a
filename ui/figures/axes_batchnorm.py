"""Axes page: one chart per BatchNorm failure (``engine.axes`` experiments 1-5).

Pure functions: an experiment's result in, ``go.Figure`` out; no Streamlit import.  Titles,
axis titles and trace names arrive translated (``Panel`` and a ``names`` mapping); each chart
draws only the result's numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.axes.batch_of_one import BatchOfOne
from engine.axes.causal_leak import CausalLeak
from engine.axes.padding import PaddingPollution
from engine.axes.small_batch import SmallBatchNoise
from engine.axes.train_eval import TrainEvalGap
from ui.figures.axes import CLICKED_COLOR, NORM_COLORS
from ui.figures.style import log_axis

REAL_COLOR = "#1f77b4"  # statistics of the real tokens / what should happen
POLLUTED_COLOR = NORM_COLORS["batchnorm"]  # BatchNorm's statistics as it computes them
THEORY_COLOR = "#555555"  # the app's theory-line grey (ui/figures/depth.py)
MUTED_COLOR = "#8c8c8c"  # inputs and raw draws (ui/figures/vector_lab.py's input grey)
SECOND_COLOR = "#2ca02c"


@dataclass(frozen=True)
class Panel:
    """One panel's title and axis titles, translated."""

    title: str
    x: str
    y: str


Names = Mapping[str, str]  # trace id -> translated name


def _two_panels(left: Panel, right: Panel, spacing: float = 0.1) -> go.Figure:
    figure = make_subplots(
        rows=1, cols=2, subplot_titles=(left.title, right.title), horizontal_spacing=spacing
    )
    for column, panel in ((1, left), (2, right)):
        figure.update_xaxes(title_text=panel.x, row=1, col=column)
        figure.update_yaxes(title_text=panel.y, row=1, col=column)
    return figure


def _finish(figure: go.Figure, height: int = 380) -> go.Figure:
    figure.update_layout(
        height=height,
        margin=dict(l=10, r=10, t=40, b=10),
        legend=dict(orientation="h", y=-0.2, yanchor="top", x=0.0),
        hovermode="closest",
    )
    return figure


def _finite(values) -> list[float | None]:
    return [float(v) if math.isfinite(v) else None for v in np.asarray(values, dtype=float)]


def padding_figure(result: PaddingPollution, left: Panel, right: Panel, names: Names):
    """Per-channel mean and std, PAD counted (what BatchNorm computes) vs left out."""
    figure = _two_panels(left, right)
    channels = np.arange(len(result.mean_real))
    for column, (polluted, real) in enumerate(
        ((result.mean_with_pad, result.mean_real), (result.std_with_pad, result.std_real)), 1
    ):
        for key, values, color, symbol in (
            ("real", real, REAL_COLOR, "circle-open"),
            ("with_pad", polluted, POLLUTED_COLOR, "circle"),
        ):
            figure.add_trace(
                go.Scatter(
                    x=channels,
                    y=_finite(values),
                    mode="markers+lines",
                    line=dict(color=color, width=1),
                    marker=dict(color=color, symbol=symbol, size=7),
                    name=names[key],
                    legendgroup=key,
                    showlegend=column == 1,
                ),
                row=1,
                col=column,
            )
    figure.add_hline(y=result.pad_value, line=dict(color=MUTED_COLOR, dash="dot"), row=1, col=1)
    return _finish(figure)


def small_batch_figure(result: SmallBatchNoise, left: Panel, right: Panel, names: Names):
    """Left: channel 0's batch mean in every draw, by b.  Right: its spread against b, log-log,
    with the 1/√(b·T) line (and the batch variance's spread with its line)."""
    figure = _two_panels(left, right)
    generator = np.random.default_rng(0)  # horizontal jitter only: the draws are the engine's
    for index, b in enumerate(result.batch_sizes):
        means = result.example_means[index]
        jitter = generator.uniform(-0.28, 0.28, len(means))
        figure.add_trace(
            go.Scatter(
                x=index + jitter,
                y=means,
                mode="markers",
                marker=dict(color=POLLUTED_COLOR, size=4, opacity=0.45),
                name=names["draws"],
                legendgroup="draws",
                showlegend=index == 0,
                hovertemplate="b = " + str(int(b)) + "<br>%{y:.3f} σ<extra></extra>",
            ),
            row=1,
            col=1,
        )
    figure.update_xaxes(
        tickvals=list(range(len(result.batch_sizes))),
        ticktext=[str(int(b)) for b in result.batch_sizes],
        row=1,
        col=1,
    )
    sizes = result.batch_sizes
    for key, measured, theory, color in (
        ("mean_spread", result.mean_spread, result.mean_spread_theory, POLLUTED_COLOR),
        ("var_spread", result.var_spread, result.var_spread_theory, SECOND_COLOR),
    ):
        figure.add_trace(
            go.Scatter(
                x=sizes,
                y=_finite(measured),
                mode="markers",
                marker=dict(color=color, size=9),
                name=names[key],
            ),
            row=1,
            col=2,
        )
        figure.add_trace(
            go.Scatter(
                x=sizes,
                y=_finite(theory),
                mode="lines",
                line=dict(color=color, dash="dash", width=1.5),
                name=names[f"{key}_theory"],
            ),
            row=1,
            col=2,
        )
    log_axis(figure, "x", sampled=[int(b) for b in sizes], row=1, col=2)  # each batch size
    log_axis(figure, "y", row=1, col=2)
    return _finish(figure, 400)


def train_eval_figure(result: TrainEvalGap, left: Panel, right: Panel, names: Names):
    """Left: channel 0's batch means and running mean over training steps, the population
    mean, and the shifted inference batch's mean.  Right: the train/eval gap against shift."""
    channel = int(np.argmax(np.abs(result.population_mean)))  # the most offset channel (else 0)
    left = Panel(f"{left.title} · c = {channel}", left.x, left.y)
    figure = _two_panels(left, right)
    steps = np.arange(1, result.steps + 1)
    figure.add_trace(
        go.Scatter(
            x=steps,
            y=result.batch_mean_history[:, channel],
            mode="markers",
            marker=dict(color=MUTED_COLOR, size=4),
            name=names["batch_mean"],
        ),
        row=1,
        col=1,
    )
    figure.add_trace(
        go.Scatter(
            x=np.arange(result.steps + 1),
            y=result.running_mean_history[:, channel],
            mode="lines",
            line=dict(color=POLLUTED_COLOR, width=2),
            name=names["running_mean"],
        ),
        row=1,
        col=1,
    )
    population = float(result.population_mean[channel])
    figure.add_trace(
        go.Scatter(
            x=[0, result.steps],
            y=[population, population],
            mode="lines",
            line=dict(color=THEORY_COLOR, dash="dash", width=1),
            name=names["population"],
        ),
        row=1,
        col=1,
    )
    figure.add_trace(
        go.Scatter(
            x=[result.steps],
            y=[float(result.eval_batch_mean[channel])],
            mode="markers",
            marker=dict(color=CLICKED_COLOR, size=12, symbol="diamond", line=dict(width=1)),
            name=names["eval_mean"],
        ),
        row=1,
        col=1,
    )
    figure.add_trace(
        go.Scatter(
            x=result.shift_grid,
            y=result.gap_by_shift,
            mode="lines+markers",
            line=dict(color=POLLUTED_COLOR),
            marker=dict(size=5),
            name=names["gap"],
        ),
        row=1,
        col=2,
    )
    figure.add_trace(
        go.Scatter(
            x=[result.shift],
            y=[result.gap_mean],
            mode="markers",
            marker=dict(color=CLICKED_COLOR, size=13, symbol="diamond", line=dict(width=1)),
            name=names["chosen"],
        ),
        row=1,
        col=2,
    )
    return _finish(figure, 400)


def batch_of_one_figure(result: BatchOfOne, panel: Panel, names: Names):
    """The one token's channels: its input, β, the output with ε > 0 (on β), and ε = 0 (NaN)."""
    channels = np.arange(len(result.x))
    figure = make_subplots(rows=1, cols=1, subplot_titles=(panel.title,))
    figure.add_trace(
        go.Bar(x=channels, y=result.x, marker_color=MUTED_COLOR, opacity=0.55, name=names["x"])
    )
    figure.add_trace(
        go.Scatter(
            x=channels,
            y=result.beta,
            mode="markers",
            marker=dict(symbol="circle-open", size=13, color="#111111", line=dict(width=2)),
            name=names["beta"],
        )
    )
    figure.add_trace(
        go.Scatter(
            x=channels,
            y=_finite(result.y),
            mode="markers",
            marker=dict(size=6, color=POLLUTED_COLOR),
            name=names["y"],
        )
    )
    nan = [c for c, v in zip(channels, result.y_eps0) if not math.isfinite(v)]
    if nan:
        figure.add_trace(
            go.Scatter(
                x=nan,
                y=[0.0] * len(nan),
                mode="markers",
                marker=dict(symbol="x", size=8, color=POLLUTED_COLOR, line=dict(width=1)),
                name=names["y_eps0"],
            )
        )
    figure.update_layout(xaxis_title=panel.x, yaxis_title=panel.y)
    return _finish(figure, 360)


def causal_figure(
    result: CausalLeak, left: Panel, right: Panel, kind_names: Names, changed: str
) -> go.Figure:
    """|Δy| at each position after token ``result.position`` of sequence 0 was replaced:
    in that sequence (left) and in the other sequences (right), one line per kind.  The
    replaced token's own change (large under every kind) is left out of the left panel, so
    the scale shows what leaks into the other positions."""
    figure = _two_panels(left, right)
    positions = np.arange(result.same_sample.shape[1])
    dashes = {"layernorm": "solid", "rmsnorm": "dash", "dyt": "dot"}
    for index, kind in enumerate(result.kinds):
        # the replaced token itself changes under every kind: left out, marked by the line
        same = [
            None if t == result.position else float(v)
            for t, v in enumerate(result.same_sample[index])
        ]
        for column, values in ((1, same), (2, result.other_samples[index])):
            figure.add_trace(
                go.Scatter(
                    x=positions,
                    y=values,
                    mode="lines+markers",
                    line=dict(color=NORM_COLORS[kind], dash=dashes.get(kind, "solid"), width=2),
                    marker=dict(size=5),
                    name=kind_names[kind],
                    legendgroup=kind,
                    showlegend=column == 1,
                ),
                row=1,
                col=column,
            )
    for column in (1, 2):
        figure.add_vline(
            x=result.position, line=dict(color=CLICKED_COLOR, width=2), row=1, col=column
        )
    figure.add_annotation(
        x=result.position,
        y=1.0,
        yref="y domain",
        text=changed,
        showarrow=False,
        xanchor="right",
        xshift=-4,
        font=dict(color="#7a5500"),
        row=1,
        col=1,
    )
    return _finish(figure, 400)
