"""Charts of real activations: one norm's input and output on one token, and the live
model's float32 / bfloat16 / float16 comparison.

Pure functions: engine results in, ``go.Figure`` out; every word a reader sees arrives
translated (``AxisLabels`` and ``names``).  A norm's input is drawn on a linear scale on
purpose: on a token with a massive activation one channel (~20,000) dwarfs the rest (~1-50),
and that one channel is most of the token's RMS, which is what the reader should see.

References: Sun et al. 2024, "Massive Activations in Large Language Models",
arXiv:2402.17762; Micikevicius et al. 2018, "Mixed Precision Training", arXiv:1710.03740.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.dumps.live_precision import DIVERGENCE, PrecisionComparison
from engine.dumps.norm_step import NormStep
from ui.figures.depth import AxisLabels
from ui.figures.dumps import ALL_COLOR, FIRST_COLOR, MUTED, OUTLIER_COLOR

DTYPE_COLORS = {"float32": MUTED, "bfloat16": OUTLIER_COLOR, "float16": FIRST_COLOR}


def norm_io_figure(step: NormStep, labels: AxisLabels, names: dict[str, str]) -> go.Figure:
    """The token's d inputs (top) and the norm's outputs (bottom:
    captured, and the reference formula's recomputation as dots), channel by channel; the
    largest input's channel marked.  ``names``: "input", "output", "recomputed", "peak",
    "input_axis", "output_axis", "hover_channel"."""
    io = step.io
    channels = np.arange(io.x.shape[0])
    figure = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    hover_in = f"{names['hover_channel']} %{{x}}<br>x = %{{y:.6g}}<extra></extra>"
    figure.add_trace(
        go.Scatter(
            x=channels,
            y=io.x,
            hovertemplate=hover_in,
            mode="lines",
            name=names["input"],
            line=dict(color=ALL_COLOR, width=1),
        ),
        row=1,
        col=1,
    )
    hover_out = f"{names['hover_channel']} %{{x}}<br>y = %{{y:.6g}}<extra></extra>"
    figure.add_trace(
        go.Scatter(
            x=channels,
            y=io.y,
            hovertemplate=hover_out,
            mode="lines",
            name=names["output"],
            line=dict(color=FIRST_COLOR, width=1),
        ),
        row=2,
        col=1,
    )
    if step.recomputed is not None:
        figure.add_trace(
            go.Scatter(
                x=channels,
                y=step.recomputed,
                hovertemplate=hover_out,
                mode="markers",
                name=names["recomputed"],
                marker=dict(color=MUTED, size=3),
            ),
            row=2,
            col=1,
        )
    peak = step.peak_channel
    figure.add_trace(
        go.Scatter(
            x=[peak],
            y=[float(io.x[peak])],
            hovertemplate=hover_in,
            mode="markers",
            name=names["peak"],
            marker=dict(color=OUTLIER_COLOR, size=10, symbol="diamond"),
        ),
        row=1,
        col=1,
    )
    figure.update_yaxes(title=names["input_axis"], row=1)
    figure.update_yaxes(title=names["output_axis"], row=2)
    figure.update_xaxes(title=labels.x, row=2)
    figure.update_xaxes(range=[-0.5, channels.shape[0] - 0.5])
    figure.update_layout(
        title=labels.title,
        height=460,
        margin=dict(l=10, r=10, t=50, b=10),
        legend=dict(orientation="h", y=-0.18),
        hovermode="closest",
    )
    return figure


def precision_figure(
    comparison: PrecisionComparison, labels: AxisLabels, names: dict[str, str]
) -> go.Figure:
    """Each half dtype's largest relative distance to float32 over the prompt's tokens, at
    every point of the stream (log scale), with the divergence threshold.  ``names``:
    "threshold", "hover_layer"."""
    figure = go.Figure()
    points = np.arange(len(comparison.labels))
    hover = f"{names['hover_layer']} %{{x}}<br>%{{y:.3g}}<extra>%{{fullData.name}}</extra>"
    for run in comparison.runs:
        if run.dtype == "float32":
            continue
        error = run.relative_error.max(axis=1)  # [P] the worst token at each point
        shown = [float(e) if math.isfinite(e) and e > 0 else None for e in error]
        figure.add_trace(
            go.Scatter(
                x=points,
                y=shown,
                mode="lines+markers",
                name=run.dtype,
                hovertemplate=hover,
                line=dict(color=DTYPE_COLORS[run.dtype]),
                marker=dict(size=4),
            )
        )
    figure.add_hline(
        y=DIVERGENCE,
        line=dict(color=MUTED, dash="dash"),
        annotation_text=names["threshold"],
        annotation_position="top left",
    )
    figure.update_layout(
        title=labels.title,
        xaxis_title=labels.x,
        yaxis_title=labels.y,
        height=380,
        margin=dict(l=10, r=10, t=50, b=10),
        legend=dict(orientation="h", y=-0.25),
        hovermode="closest",
    )
    figure.update_yaxes(type="log", exponentformat="power")
    return figure
