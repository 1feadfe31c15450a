"""Vector Lab chart: the input row above, the outputs below, inf/NaN marked."""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.figures.style import framed
from ui.formatting import finite_or_none
from ui.i18n import translate

INPUT_COLOR = "#8c8c8c"
SERIES_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd")
NONFINITE_COLOR = "#d62728"
BAR_LIMIT = 64  # up to this many channels, draw bars; beyond, lines


def input_output_figure(
    x: Sequence[float],
    outputs: Sequence[tuple[str, Sequence[float]]],
    lang: str,
) -> go.Figure:
    """Two stacked panels sharing the channel axis: ``x`` on top, each output series below.

    Non-finite outputs cannot be drawn as bars; each is marked with a red ✕ at y = 0 whose
    hover text says whether it is +inf, -inf or NaN.
    """
    input_name = translate("vector_lab.chart_input", lang)
    output_name = translate("vector_lab.chart_output", lang)
    d = len(x)
    channels = list(range(1, d + 1))
    figure = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.08,
        row_heights=[0.4, 0.6],
        subplot_titles=(input_name, output_name),
    )
    as_bars = d <= BAR_LIMIT
    trace = go.Bar if as_bars else go.Scatter
    line_style = {} if as_bars else {"mode": "lines"}
    figure.add_trace(
        trace(
            x=channels,
            y=finite_or_none(x),
            name=input_name,
            marker_color=INPUT_COLOR,
            showlegend=False,
            **line_style,
        ),
        row=1,
        col=1,
    )
    for (name, values), color in zip(outputs, SERIES_COLORS):
        figure.add_trace(
            trace(
                x=channels, y=finite_or_none(values), name=name, marker_color=color, **line_style
            ),
            row=2,
            col=1,
        )
        bad = [(i, v) for i, v in zip(channels, values) if not math.isfinite(v)]
        if bad:
            figure.add_scatter(
                x=[i for i, _ in bad],
                y=[0.0] * len(bad),
                mode="markers",
                name=f"{name}: {translate('vector_lab.chart_nonfinite', lang)}",
                marker=dict(
                    symbol="x",
                    size=11 if len(bad) <= BAR_LIMIT else 4,
                    color=NONFINITE_COLOR,
                    line=dict(width=2),
                ),
                hovertext=[str(v) for _, v in bad],
                hoverinfo="text+name",
                row=2,
                col=1,
            )
    framed(figure, 460, 40, barmode="group", hovermode="x unified")
    figure.update_xaxes(title_text=translate("vector_lab.chart_index", lang), row=2, col=1)
    if d <= 16:
        figure.update_xaxes(dtick=1)
    return figure
