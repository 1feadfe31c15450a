"""Activation-dump charts of channels and of the DyT fit: each channel's RMS over its layer's
median channel, one layer's channels, a norm's input against its output with γ·tanh(αx).

References: Sun et al. 2024, "Massive Activations in Large Language Models",
arXiv:2402.17762; Zhu et al. 2025, "Transformers without Normalization", arXiv:2503.10622
(γ·tanh(αx)).
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.dumps.diagnostics import ChannelDiagnostics
from engine.dumps.norm_views import DyTFit
from ui.figures.dumps import (
    ALL_COLOR,
    FIRST_COLOR,
    MEDIAN_COLOR,
    OUTLIER_COLOR,
    chart_layout,
    decade_ticks,
    log10_or_nan,
)
from ui.figures.style import log_axis
from ui.formatting import (
    finite_or_none,
    format_number,
    format_reading,
    plot_text,
    positive_or_none,
)
from ui.i18n import translate


def channel_heatmap(ratio: np.ndarray, lang: str) -> go.Figure:
    """Each channel's RMS over tokens divided by its layer's median channel, ``ratio``
    [L, d], on a log colour scale centred on 1 (the typical channel)."""
    layers, channels = ratio.shape
    z = log10_or_nan(ratio)  # [L, d]
    finite = z[np.isfinite(z)]
    reach = float(np.abs(finite).max()) if finite.size else 1.0
    tickvals, ticktext = decade_ticks(-reach, reach)
    hover = (
        f"{translate('dumps.layer_word', lang)} %{{y}}<br>"
        f"{translate('dumps.channel_word', lang)} %{{x}}<br>"
        "× %{customdata:.4g}<extra></extra>"
    )
    figure = go.Figure(
        go.Heatmap(
            z=z,
            x=np.arange(channels),
            y=np.arange(layers),
            customdata=ratio.astype(np.float64),
            hovertemplate=hover,
            colorscale="RdBu_r",
            zmid=0.0,
            zmin=-reach,
            zmax=reach,
            colorbar=dict(
                title=translate("dumps.channel_colorbar", lang),
                tickvals=tickvals,
                ticktext=ticktext,
            ),
        )
    )
    chart_layout(figure, "channels_chart", lang, log_y=False, height=min(720, 260 + 12 * layers))
    figure.update_layout(hovermode="closest")
    return figure


def channel_detail(
    channels: ChannelDiagnostics, layer: int, layer_name: str, lang: str
) -> go.Figure:
    """One layer's per-channel mean (top) and standard deviation (bottom, log scale) over all
    tokens — what BatchNorm would pool — with its outlier channels in their own colour."""
    names = {key: translate(f"dumps.channel_{key}", lang) for key in ("mean", "std")}
    index = np.arange(channels.mean.shape[1])
    picked = channels.outlier_channel[channels.outlier_layer == layer]
    usual = np.setdiff1d(index, picked)
    figure = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    for row, values, name in ((1, channels.mean[layer], "mean"), (2, channels.std[layer], "std")):
        clean = finite_or_none(values) if row == 1 else positive_or_none(values)
        figure.add_scatter(
            x=usual,
            y=[clean[i] for i in usual],
            name=names[name],
            mode="markers",
            marker=dict(color=ALL_COLOR if row == 1 else MEDIAN_COLOR, size=4),
            row=row,
            col=1,
        )
        if picked.size:
            figure.add_scatter(
                x=picked,
                y=[clean[i] for i in picked],
                name=translate("dumps.outlier_channel", lang),
                mode="markers",
                marker=dict(color=OUTLIER_COLOR, size=9, symbol="diamond"),
                showlegend=row == 1,
                legendgroup="outlier",
                row=row,
                col=1,
            )
    title = translate("dumps.detail_title", lang, layer=layer, entry=plot_text(layer_name))
    chart_layout(figure, "detail", lang, log_y=False, height=520, title=title)
    figure.update_layout(
        hovermode="closest",
        margin_t=70,  # two lines: the layer's name alone fills a phone's width
        xaxis_title=None,
        xaxis2_title=translate("dumps.detail_x", lang),
        yaxis_title=names["mean"],
        yaxis2_title=names["std"],
    )
    log_axis(figure, "y", row=2, col=1)
    return figure


# The chart's x reach: this quantile of the drawn |x|, or BEND / α where that is wider (tanh(4)
# = 0.9993: the bend and both plateaus).  A few values of the bulk far past the rest (SmolLM2's
# layer 12: 0.5 % of them from |x| = 107 to 808) would otherwise squeeze the curve into a
# sliver of the axis; they are drawn at its edges, their true x in the hover.  Only values
# FAR times the reach away cut the axis: the tail of any smooth distribution lies just past
# its 99.5th percentile (a normal's largest |x| of 2,000 lies 1.1 to 1.6 times past it) and
# stays drawn where it is.
VIEW_QUANTILE = 0.995
BEND = 4.0
FAR = 2.0
DYT_HEIGHT, EDGE_ROOM = 400, 80  # px


def dyt_figure(fit: DyTFit, lang: str) -> go.Figure:
    """A norm's output against its input, and the fitted γ·tanh(αx) (Zhu et al. 2025)."""
    figure = go.Figure()
    edges = _dyt_edges(fit)
    inside = (
        np.ones(fit.x.shape, bool) if edges is None else ((fit.x >= edges[0]) & (fit.x <= edges[1]))
    )
    figure.add_scattergl(
        x=fit.x[inside],
        y=fit.y[inside],
        mode="markers",
        name=translate("dumps.dyt_points", lang, count=f"{fit.points:,}"),
        marker=dict(color=ALL_COLOR, size=3, opacity=0.35),
    )
    if edges is not None:
        far_x, far_y = fit.x[~inside], fit.y[~inside]
        if far_x.size:
            reach, largest = format_reading(max(-edges[0], edges[1])), _largest(far_x)
            name = translate(
                "dumps.dyt_far",
                lang,
                count=f"{far_x.size:,}",
                shown=f"{fit.x.size:,}",
                reach=reach,
                largest=largest,
            )
            _at_edges(figure, far_x, far_y, edges, fit, name, dict(color=ALL_COLOR, size=6))
        if fit.outliers:  # all of them counted, the largest OUTLIER_POINTS drawn
            limit, largest = format_reading(fit.bulk_limit), _largest(fit.outlier_x)
            name = translate(
                "dumps.dyt_outliers", lang, count=f"{fit.outliers:,}", limit=limit, largest=largest
            )
            x, y = fit.outlier_x, fit.outlier_y
            _at_edges(figure, x, y, edges, fit, name, dict(color=FIRST_COLOR, size=9))
    if fit.x.size and math.isfinite(fit.alpha) and math.isfinite(fit.gamma):
        low, high = (float(fit.x.min()), float(fit.x.max())) if edges is None else edges
        x = np.linspace(max(low, float(fit.x.min())), min(high, float(fit.x.max())), 400)
        figure.add_scatter(
            x=x,
            y=fit.gamma * np.tanh(fit.alpha * x),
            mode="lines",
            name="γ·tanh(αx)",
            line=dict(color=FIRST_COLOR, width=2),
        )
    title = translate(
        "dumps.dyt_title",
        lang,
        alpha=format_number(fit.alpha, 4),
        gamma=format_number(fit.gamma, 4),
        r2=format_number(fit.r2, 3),
    )
    y = translate("dumps.dyt_y_affine" if fit.affine_removed else "dumps.dyt_y", lang)
    # taller where the legend names the values at the edges: its lines come off the plot's
    # height, and the y axis' title ran into the chart's title
    height = DYT_HEIGHT + (EDGE_ROOM if edges is not None else 0)
    chart_layout(figure, "dyt", lang, log_y=False, height=height, title=title, y=y)
    figure.update_layout(hovermode="closest")
    if edges is not None:  # the bulk sets the scale; what lies past it sits at its edges
        low, high = edges
        margin = 0.04 * (high - low)
        figure.update_xaxes(range=[low - margin, high + margin])
    return figure


def _dyt_edges(fit: DyTFit) -> tuple[float, float] | None:
    """The x axis' ends (0 included): the drawn bulk's, cut to the reach where a few of its
    values lie far past the rest; None where nothing is drawn at an edge."""
    if not fit.x.size:
        return None
    low, high = min(float(fit.x.min()), 0.0), max(float(fit.x.max()), 0.0)
    reach = float(np.quantile(np.abs(fit.x), VIEW_QUANTILE))
    if math.isfinite(fit.alpha) and fit.alpha > 0:
        reach = max(reach, BEND / fit.alpha)
    cut = 0 < reach and max(-low, high) > FAR * reach
    if not (cut or fit.outliers):
        return None
    if cut:
        low, high = max(low, -reach), min(high, reach)
    if high - low <= 0:
        low, high = -1e-30, 1e-30
    return low, high


def _largest(x: np.ndarray) -> str:
    return format_reading(float(np.abs(x).max()))  # "26,464", as the page's sentences


def _at_edges(figure, x, y, edges, fit: DyTFit, name: str, marker: dict) -> None:
    """Values past the axis' ``edges`` drawn at them (y clipped to the bulk's), each a
    triangle pointing the way it lies, its true x and y in the hover."""
    low, high = edges
    top = max(float(np.abs(fit.y).max()), 1e-30)
    figure.add_scatter(
        x=np.clip(x, low, high),
        y=np.clip(y, -top, top),
        customdata=np.stack([x, y], axis=-1),
        meta={"values": {"x": x, "y": y}},  # what a CSV of the chart holds (figures/export.py)
        mode="markers",
        name=name,
        marker=marker | dict(symbol=["triangle-right" if v > 0 else "triangle-left" for v in x]),
        hovertemplate="x = %{customdata[0]:.6g}<br>y = %{customdata[1]:.4g}<extra></extra>",
    )
