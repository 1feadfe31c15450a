"""Activation-dump charts: residual RMS per layer and token, massive activations, how much
centering matters (LayerNorm vs RMSNorm); the channel view and the DyT fit are in
``ui.figures.dumps_channels``.

Titles are ``dumps.<chart>_title``, ``_x`` and ``_y``; the dump's own entry names go through
``ui.formatting.plot_text`` (plotly would read ``<b>`` or ``<a href>`` in them as markup).

References: Sun et al. 2024, "Massive Activations in Large Language Models",
arXiv:2402.17762 (top-1/2/3 over the median, per layer); Zhang & Sennrich 2019, RMSNorm,
arXiv:1910.07467 (RMS² = σ² + μ²); Zhu et al. 2025, "Transformers without Normalization",
arXiv:2503.10622 (γ·tanh(αx)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.dumps.diagnostics import (
    CenteringDiagnostics,
    MassiveDiagnostics,
    ResidualDiagnostics,
)
from engine.dumps.norm_views import TokenNorms
from engine.dumps.report import NormComparison
from ui.figures.style import framed, linear_axis, log_axis, shaded_band, tick_texts
from ui.formatting import finite_or_none, plot_text, positive_or_none
from ui.i18n import translate
from ui.text.dumps import chosen_token_names

FIRST_COLOR = "#d62728"  # the first token, wherever it is drawn
OUTLIER_COLOR = "#ff7f0e"
ALL_COLOR = "#1f77b4"
MEDIAN_COLOR = "#2ca02c"
MUTED = "#7f7f7f"
BAND_FILL = "rgba(31, 119, 180, 0.15)"
TOP_COLORS = ("#d62728", "#ff7f0e", "#9467bd")
TOKEN_COLORS = ("#d62728", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b")
# outlier tokens' lines: none is the first token's red, the median's green or all tokens' blue
OUTLIER_LINE_COLORS = ("#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf")
MAX_OUTLIER_LINES = 4  # outlier tokens drawn as lines of their own
MAX_NAMED_TOKENS = 64  # beyond this many tokens the axis shows positions, not texts
NAMED_TICK_PX = 14  # a token name's share of the axis, written at −60°, without overlapping
HEATMAP_FRAME_PX = 170  # the heatmap's layer axis, its title, its margins and its colour bar
PHONE_NAMED_TICKS = 12  # names that fit a 390 px phone's column (358 px) at NAMED_TICK_PX
# presenting (ui/projected.py: 16 px ticks, larger titles): each name's share, the frame, and
# the names that fit a phone's column then (350 px)
PROJECTED_TICK_PX, PROJECTED_FRAME_PX, PROJECTED_PHONE_TICKS = 19, 210, 7


def chart_layout(
    figure: go.Figure, chart: str, lang: str, log_y: bool, height: int = 400, **titles
) -> go.Figure:
    """Titles from ``dumps.<chart>_title``, ``_x`` and ``_y`` (``titles`` replace them)."""
    framed(
        figure,
        height,
        50,
        title=titles.get("title") or translate(f"dumps.{chart}_title", lang),
        xaxis_title=translate(f"dumps.{chart}_x", lang),
        yaxis_title=titles.get("y") or translate(f"dumps.{chart}_y", lang),
        hovermode="x unified",
    )
    # powers of ten ("10⁻³"), not SI prefixes ("1m", "100µ"), which read as units
    if log_y:
        return log_axis(figure, "y", exponentformat="power")
    return linear_axis(figure, "y", exponentformat="power")


def decade_ticks(low: float, high: float) -> tuple[list[float], list[str]]:
    """Colour-bar ticks at powers of ten between log10 values ``low`` and ``high``."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return [], []
    powers = list(range(math.floor(low), math.ceil(high) + 1))
    return [float(p) for p in powers], tick_texts([10.0**p for p in powers])


def log10_or_nan(values: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log10(values.astype(np.float64))
    out[~np.isfinite(out)] = np.nan
    return out


def rms_heatmap(
    rms: np.ndarray,
    layer_names: Sequence[str],
    lang: str,
    log: bool = True,
    outliers: Sequence[tuple[int, int]] = (),
    token_names: Sequence[str] | None = None,
) -> go.Figure:
    """Each token's RMS at each layer of one sequence, ``rms`` [L, T]; the first token and
    the ``outliers`` ((token, layer of its largest ratio)) marked; ``token_names`` [T] (safe
    for plotly) label the token axis when the dump names its tokens."""
    layers, tokens = rms.shape
    values = rms.astype(np.float64)
    z = log10_or_nan(values) if log else np.where(np.isfinite(values), values, np.nan)
    hover = (
        f"{translate('dumps.layer_word', lang)} %{{y}} · %{{customdata[0]}}<br>"
        f"{translate('dumps.token_word', lang)} %{{x}}<br>RMS %{{customdata[1]:.4g}}"
        "<extra></extra>"
    )
    shown = np.asarray([plot_text(name) for name in layer_names], dtype=object)  # [L]
    custom = np.dstack([np.repeat(shown[:, None], tokens, axis=1), values])
    colorbar = dict(title="RMS")
    if log:
        finite = z[np.isfinite(z)]
        low, high = (finite.min(), finite.max()) if finite.size else (math.nan, math.nan)
        colorbar["tickvals"], colorbar["ticktext"] = decade_ticks(low, high)
    figure = go.Figure(
        go.Heatmap(
            z=z,
            x=np.arange(tokens),
            y=np.arange(layers),
            customdata=custom,
            hovertemplate=hover,
            colorscale="Viridis",
            colorbar=colorbar,
        )
    )
    figure.add_scatter(
        x=[0] * layers,
        y=np.arange(layers),
        mode="lines",
        line=dict(color=FIRST_COLOR, width=2, dash="dot"),
        name=translate("dumps.first_token", lang),
        hoverinfo="skip",
    )
    if outliers:
        figure.add_scatter(
            x=[token for token, _ in outliers],
            y=[layer for _, layer in outliers],
            mode="markers",
            marker=dict(symbol="circle-open", size=12, color=OUTLIER_COLOR, line=dict(width=2)),
            name=translate("dumps.outlier_token", lang),
            hoverinfo="skip",
        )
    chart_layout(figure, "heatmap", lang, log_y=False, height=min(720, 260 + 12 * layers))
    figure.update_layout(hovermode="closest")
    if tokens <= 12:  # a few tokens or layers: one tick each, never "0.5" (a row or column)
        figure.update_xaxes(dtick=1)
    if layers <= 12:
        figure.update_yaxes(tickmode="linear", tick0=0, dtick=1)  # "auto" would ignore dtick
    if token_names is not None and len(token_names) == tokens <= MAX_NAMED_TOKENS:
        ticks = [f"{i} {name}" for i, name in enumerate(token_names)]
        figure.update_xaxes(tickvals=np.arange(tokens), ticktext=ticks, tickangle=-60)
    return figure


def rms_heatmaps(*args, projected: bool = False, **kwargs) -> tuple[tuple[go.Figure, int], ...]:
    """``rms_heatmap(*args, **kwargs)`` in the layouts a column may need, each with the least
    width (px) at which its token names do not overlap, widest first: every token named, and,
    when that needs more than a phone's column, a name every few tokens (24 names in a 390 px
    phone's column were drawn over one another).  ``projected``: the widths for presenting's
    larger tick text (the plain widths let the names run into each other there)."""
    full = rms_heatmap(*args, **kwargs)
    tokens = len(full.data[0].x)
    names = full.layout.xaxis.ticktext
    if names is None:  # positions, not names: plotly spaces its own ticks
        return ((full, 0),)
    tick, frame, phone = (
        (PROJECTED_TICK_PX, PROJECTED_FRAME_PX, PROJECTED_PHONE_TICKS)
        if projected
        else (NAMED_TICK_PX, HEATMAP_FRAME_PX, PHONE_NAMED_TICKS)
    )
    variants = [(full, frame + tick * tokens)]
    if tokens > phone:
        named = range(0, tokens, math.ceil(tokens / phone))
        sparse = go.Figure(full).update_xaxes(
            tickvals=list(named), ticktext=[names[i] for i in named]
        )
        variants.append((sparse, frame + tick * len(named)))
    return tuple(variants)


def _layer_lines(figure: go.Figure, lines, log_y: bool) -> go.Figure:
    """One trace per (values [L], name, line style), against the layer index."""
    for values, name, line in lines:
        y = positive_or_none(values) if log_y else finite_or_none(values)
        figure.add_trace(go.Scatter(x=np.arange(len(values)), y=y, name=name, line=line))
    if lines and len(lines[0][0]) <= 12:  # a few layers: one tick each, never "1.5"
        figure.update_xaxes(dtick=1)
    return figure


def rms_lines(
    residual: ResidualDiagnostics, batch: int, lang: str, outlier_tokens: Sequence[int] = ()
) -> go.Figure:
    """RMS against layer: every token's 10-90 % band, the median token, all tokens together,
    the first token and a few outlier tokens of sequence ``batch``, and the fitted growth."""

    rms = residual.rms  # [L, B, T]
    layers = np.arange(rms.shape[0])
    flat = rms.reshape(rms.shape[0], -1).astype(np.float64)  # [L, B*T]
    flat = np.where(np.isfinite(flat), flat, np.nan)
    # each edge a token's own RMS, inside the 10-90 % (of 16 tokens with two massive ones, an
    # interpolated 90th percentile lay halfway to them, an RMS no token had)
    with np.errstate(all="ignore"):
        low = np.nanpercentile(flat, 10, axis=1, method="higher")
        high = np.nanpercentile(flat, 90, axis=1, method="lower")
        low, high = np.fmin(low, high), np.fmax(low, high)  # two tokens: the pair, in order
    figure = go.Figure()
    band = translate("dumps.band", lang)
    low, high = positive_or_none(low), positive_or_none(high)  # the band: 10 % up to 90 %
    shaded_band(figure, layers, low, high, BAND_FILL, dict(name=band), name=band, hoverinfo="skip")
    named = (  # (values, dumps.<text>, line)
        (residual.rms_layer, "all_tokens", dict(color=ALL_COLOR, width=2)),
        (residual.rms_median_token, "median_token", dict(color=MEDIAN_COLOR, width=2)),
        (residual.rms_max_token, "max_token", dict(color=MUTED, width=1, dash="dot")),
        (rms[:, batch, 0], "first_token", dict(color=FIRST_COLOR, width=2)),
    )
    lines = [(values, translate(f"dumps.{text}", lang), line) for values, text, line in named]
    for index, token in enumerate([t for t in outlier_tokens if t != 0][:MAX_OUTLIER_LINES]):
        line = dict(color=OUTLIER_LINE_COLORS[index % len(OUTLIER_LINE_COLORS)], width=1)
        lines.append((rms[:, batch, token], translate("dumps.token_n", lang, token=token), line))
    # the median token's fit: the all-token RMS is the first token's once it jumps, so a
    # single c·g^l through it follows no curve drawn here
    fit = next((g for g in residual.growth if g.basis == "median_token"), None)
    if fit is not None and math.isfinite(fit.rate):
        fitted = fit.intercept * fit.rate ** layers.astype(np.float64)  # c·g^l
        lines.append(
            (fitted, translate("dumps.fit", lang), dict(color=MEDIAN_COLOR, width=1, dash="dash"))
        )
    return chart_layout(_layer_lines(figure, lines, log_y=True), "lines", lang, True, height=440)


def massive_figure(massive: MassiveDiagnostics, lang: str) -> go.Figure:
    """Top-1/2/3 |a| over the layer's median |a|, per layer (Sun et al. 2024, Fig. 1), with
    the massive threshold on the same scale."""
    with np.errstate(all="ignore"):
        threshold = massive.threshold / massive.median_abs  # [L]
    lines = [
        (
            massive.top3_ratio[:, rank],
            translate("dumps.top_rank", lang, rank=rank + 1),
            dict(color=TOP_COLORS[rank], width=2 if rank == 0 else 1),
        )
        for rank in range(3)
    ]
    lines.append((threshold, translate("dumps.threshold", lang), dict(color=MUTED, dash="dash")))
    figure = _layer_lines(go.Figure(), lines, log_y=True)
    figure.update_traces(mode="lines+markers", marker=dict(size=5))
    figure.data[-1].mode = "lines"  # the threshold
    return chart_layout(figure, "massive_chart", lang, log_y=True)


def _token_styles(token_names: Sequence[str], width: float) -> list[dict]:
    return [
        dict(color=TOKEN_COLORS[i % len(TOKEN_COLORS)], width=width)
        for i in range(len(token_names))
    ]


def centering_figure(
    centering: CenteringDiagnostics, comparison: NormComparison, lang: str
) -> go.Figure:
    """μ²/RMS² per layer: over all tokens, and for each chosen token (log scale: the share
    is often a fraction of a percent)."""
    all_tokens = translate("dumps.all_tokens", lang)
    lines = [(centering.mu2_share, all_tokens, dict(color=ALL_COLOR, width=3))]
    token_names = chosen_token_names(comparison, lang)
    styles = _token_styles(token_names, 1)
    lines += [(comparison.mu2_share[:, i], n, styles[i]) for i, n in enumerate(token_names)]
    return chart_layout(_layer_lines(go.Figure(), lines, log_y=True), "share", lang, log_y=True)


def difference_figure(comparison: NormComparison, lang: str) -> go.Figure:
    """RMS over d of LayerNorm(x) − RMSNorm(x) per layer, for each chosen token."""
    token_names = chosen_token_names(comparison, lang)
    styles = _token_styles(token_names, 2)
    lines = [(comparison.difference_rms[:, i], n, styles[i]) for i, n in enumerate(token_names)]
    return chart_layout(_layer_lines(go.Figure(), lines, log_y=False), "difference", lang, False)


def token_norms_figure(norms: TokenNorms, lang: str) -> go.Figure:
    """One token's LayerNorm and RMSNorm outputs channel by channel (top) and their
    difference on its own scale (bottom: it is often a hundredth of the outputs)."""
    difference = translate("dumps.ln_minus_rms", lang)
    channels = np.arange(norms.layernorm.shape[1])
    ln, rms = norms.layernorm[0], norms.rmsnorm[0]
    figure = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.65, 0.35])
    figure.add_scatter(
        x=channels,
        y=finite_or_none(ln),
        name="LayerNorm(x)",
        line=dict(color=ALL_COLOR),
        row=1,
        col=1,
    )
    figure.add_scatter(
        x=channels,
        y=finite_or_none(rms),
        name="RMSNorm(x)",
        line=dict(color=FIRST_COLOR, dash="dot"),
        row=1,
        col=1,
    )
    figure.add_trace(
        go.Scatter(x=channels, y=finite_or_none(ln - rms), name=difference, line=dict(color=MUTED)),
        row=2,
        col=1,
    )
    chart_layout(figure, "token", lang, log_y=False, height=480)
    x_title = translate("dumps.token_x", lang)
    figure.update_layout(xaxis_title=None, xaxis2_title=x_title, yaxis2_title=difference)
    return figure
