"""Charts of real activations: one norm's input and output on one token, and the live
model's float32 / bfloat16 / float16 comparison.

A norm's input is drawn on a linear scale on purpose: on a token with a massive activation
one channel (~20,000) dwarfs the rest (~1-50), and that one channel is most of the token's
RMS, which is what the reader should see.

References: Sun et al. 2024, "Massive Activations in Large Language Models",
arXiv:2402.17762; Micikevicius et al. 2018, "Mixed Precision Training", arXiv:1710.03740.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.config import HALF_DIVERGENCE
from engine.dumps.live_precision import PrecisionComparison
from engine.dumps.norm_step import NormStep
from ui.figures.dumps import ALL_COLOR, FIRST_COLOR, MUTED, OUTLIER_COLOR
from ui.figures.style import framed, log_axis
from ui.formatting import plot_text
from ui.i18n import translate

DTYPE_COLORS = {"float32": MUTED, "bfloat16": OUTLIER_COLOR, "float16": FIRST_COLOR}


def norm_io_figure(step: NormStep, norm: str, token: str, lang: str) -> go.Figure:
    """The token's d inputs (top) and the norm's outputs (bottom: captured, and the reference
    formula's recomputation as dots), channel by channel; the largest input's channel marked.
    ``norm`` and ``token`` (the dump's own texts) name them in the title."""

    channel = translate("dumps.channel_word", lang)
    io = step.io
    channels = np.arange(io.x.shape[0])
    figure = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    hover_in, hover_out = (f"{channel} %{{x}}<br>{v} = %{{y:.6g}}<extra></extra>" for v in "xy")
    for row, values, key, color, hover in (
        (1, io.x, "dumps.io_input", ALL_COLOR, hover_in),
        (2, io.y, "dumps.io_output", FIRST_COLOR, hover_out),
    ):
        figure.add_scatter(
            x=channels,
            y=values,
            hovertemplate=hover,
            mode="lines",
            name=translate(key, lang),
            line=dict(color=color, width=1),
            row=row,
            col=1,
        )
    if step.recomputed is not None:
        figure.add_scatter(
            x=channels,
            y=step.recomputed,
            hovertemplate=hover_out,
            mode="markers",
            name=translate("dumps.io_recomputed", lang),
            marker=dict(color=MUTED, size=3),
            row=2,
            col=1,
        )
    peak = step.peak_channel
    figure.add_scatter(
        x=[peak],
        y=[float(io.x[peak])],
        hovertemplate=hover_in,
        mode="markers",
        name=translate("dumps.io_peak", lang),
        marker=dict(color=OUTLIER_COLOR, size=10, symbol="diamond"),
        row=1,
        col=1,
    )
    figure.update_yaxes(title=translate("dumps.io_input_axis", lang), row=1)
    figure.update_yaxes(title=translate("dumps.io_output_axis", lang), row=2)
    figure.update_xaxes(title=translate("dumps.detail_x", lang), row=2)
    figure.update_xaxes(range=[-0.5, channels.shape[0] - 0.5])
    title = translate("dumps.io_title", lang, norm=plot_text(norm), token=plot_text(token))
    # two lines: a module's name alone fills a projector's column
    return framed(figure, 480, 70, title=title, hovermode="closest")


def precision_figure(comparison: PrecisionComparison, lang: str) -> go.Figure:
    """Each half dtype's largest relative distance to float32 over the prompt's tokens, at
    every point of the stream (log scale), with the divergence threshold."""
    figure = go.Figure()
    points = np.arange(len(comparison.labels))
    layer = translate("dumps.layer_word", lang)
    hover = f"{layer} %{{x}}<br>%{{y:.3g}}<extra>%{{fullData.name}}</extra>"
    for run in comparison.runs:
        if run.dtype == "float32":
            continue
        error = run.relative_error.max(axis=1)  # [P] the worst token at each point
        shown = [float(e) if math.isfinite(e) and e > 0 else None for e in error]
        figure.add_scatter(
            x=points,
            y=shown,
            mode="lines+markers",
            name=run.dtype,
            hovertemplate=hover,
            line=dict(color=DTYPE_COLORS[run.dtype]),
            marker=dict(size=4),
        )
    figure.add_hline(y=HALF_DIVERGENCE, line=dict(color=MUTED, dash="dash"))
    figure.add_annotation(  # on its line: add_hline's own label takes y as log10 units on a
        x=0,  # log axis, and sat at 10**0.1, by the "1" gridline
        xref="paper",
        xanchor="left",
        y=math.log10(HALF_DIVERGENCE),
        yref="y",
        yanchor="bottom",
        text=translate("dumps.precision_threshold", lang),
        showarrow=False,
        font=dict(color=MUTED),
    )
    framed(
        figure,
        380,
        50,
        title=translate("dumps.precision_chart_title", lang),
        xaxis_title=translate("dumps.lines_x", lang),
        yaxis_title=translate("dumps.precision_chart_y", lang),
        hovermode="closest",
    )
    drawn = [y for trace in figure.data for y in trace.y if y is not None]
    return log_axis(figure, "y", values=[*drawn, HALF_DIVERGENCE])  # one notation, decades
