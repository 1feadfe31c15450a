"""Geometry page charts: ||y|| against input scale at one eps, DyT's norms against alpha, the
high-dimension histograms and their spread over eps, a 2-D view of a wide cloud.

The histograms' series arrive named.  Log axes label decades only (``dtick=1``).  Traces
carry a stable ``meta`` tag (plotly drops ``uid`` from its JSON).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.geometry.dyt_sweep import DytSweep
from engine.geometry.eps_curve import EpsCurve
from engine.geometry.high_dimension import EpsSpread, Measures
from engine.geometry.views import PlaneView
from engine.norms.kinds import ROW_KINDS
from ui.figures.geometry_traces import COLORS
from ui.figures.style import framed, shaded_band, tick_texts
from ui.formatting import format_number
from ui.i18n import translate
from ui.labels import NORM_NAMES

DECADES = dict(type="log", dtick=1, exponentformat="power")
HISTOGRAM_BINS = 60
MIN_RANGE_SHARE = 0.1  # a panel spans at least this share of its quantity's natural size
SQRT_D_ROOM = 0.08  # share of the ||y|| panel left on each side of its values and sqrt(d)
# ||y|| / sqrt(d) of LayerNorm and RMSNorm coincide for zero-mean inputs: the first drawn is
# wide and solid with large markers, the next narrow and dashed on top of it, so both show
SPREAD_STYLES = (
    dict(line=dict(width=5), marker=dict(size=11)),
    dict(line=dict(width=2, dash="dash"), marker=dict(size=5)),
)


def _base(figure: go.Figure, title: str, x: str, y: str, height: int = 420) -> go.Figure:
    return framed(figure, height, 60, title=title, xaxis_title=x, yaxis_title=y)


def _mark_level(figure: go.Figure, y: float, text: str) -> None:
    """A dashed horizontal reference line, labelled above its left end (the empty corner: every
    curve here starts low and rises towards the line on the right)."""
    figure.add_hline(
        y=y,
        line=dict(color="#888888", dash="dash"),
        annotation_text=text,
        annotation_position="top left",
    )


def _mark_position(figure: go.Figure, x: float, text: str, color: str) -> None:
    """A dotted vertical line on the log x axis, labelled just above the plot, centred on it:
    out of the way of the curves and of the horizontal line's label inside the plot."""
    figure.add_vline(x=x, line=dict(color=color, dash="dot"))  # data units on a log axis
    figure.add_annotation(
        x=float(np.log10(x)),  # an annotation on a log axis takes log10 units (add_vline's own
        xref="x",  # annotation does not, and lands at 10**x: the far right)
        y=1.0,
        yref="paper",
        yanchor="bottom",
        text=text,
        showarrow=False,
        font=dict(color=color),
    )


def eps_curve_figure(curve: EpsCurve, lang: str) -> go.Figure:
    """sqrt(d) s / sqrt(s^2 + eps) against s (log), with the cloud's and the sweep's norms."""
    figure = go.Figure()
    sweeps = (
        ("sweep_layernorm", curve.sweep_layernorm_sigma, curve.sweep_layernorm_norm, "layernorm"),
        ("sweep_rmsnorm", curve.sweep_rmsnorm_rms, curve.sweep_rmsnorm_norm, "rmsnorm"),
    )
    for tag, scale, norm, kind in sweeps:
        figure.add_scatter(
            x=scale.reshape(-1),
            y=norm.reshape(-1),
            mode="markers",
            name=translate(f"geometry.eps_curve.{tag}", lang),
            meta=tag,
            marker=dict(color=COLORS[kind], size=4, opacity=0.25, symbol="circle-open"),
        )
    clouds = (
        ("layernorm", curve.layernorm_sigma, curve.layernorm_norm),
        ("rmsnorm", curve.rmsnorm_rms, curve.rmsnorm_norm),
    )
    for kind, scale, norm in clouds:
        figure.add_scatter(
            x=scale,
            y=norm,
            mode="markers",
            name=translate(f"geometry.eps_curve.{kind}", lang),
            meta=kind,
            marker=dict(color=COLORS[kind], size=6, opacity=0.8),
        )
    figure.add_scatter(  # last: the formula drawn over the measured points it predicts
        x=curve.scale_grid,
        y=curve.predicted,
        mode="lines",
        name=translate("geometry.eps_curve.formula", lang),
        meta="formula",
        line=dict(color="#111111", width=1.5, dash="dash"),
    )
    _mark_level(figure, curve.sqrt_d, f"√d = {format_number(curve.sqrt_d)}")
    if curve.eps > 0:
        sqrt_eps = float(np.sqrt(curve.eps))
        _mark_position(figure, sqrt_eps, f"√ε = {format_number(curve.eps**0.5)}", "#666666")
    figure.update_xaxes(**DECADES)
    figure.update_yaxes(range=[0, 1.1 * curve.sqrt_d])
    return _base(
        figure,
        translate("geometry.eps_curve.title", lang),
        translate("geometry.eps_curve.x", lang),
        "‖y‖",
    )


def dyt_norms_figure(sweep: DytSweep, alpha: float, lang: str) -> go.Figure:
    """||tanh(alpha x)|| over the cloud against alpha: median and 5-95 % band, sqrt(d) for
    reference, and the share of saturated entries on a second axis."""

    figure = make_subplots(specs=[[{"secondary_y": True}]])
    low, median, high = np.nanpercentile(sweep.norm, [5, 50, 95], axis=1)
    shaded_band(
        figure,
        sweep.alphas,
        low,
        high,
        "rgba(44, 160, 44, 0.2)",
        dict(meta="band_high"),
        name=translate("geometry.dyt.band", lang),
        meta="band",
        hoverinfo="skip",
    )
    figure.add_scatter(
        x=sweep.alphas,
        y=median,
        mode="lines+markers",
        name=translate("geometry.dyt.median", lang),
        meta="median",
        line=dict(color=COLORS["dyt"], width=2),
    )
    figure.add_scatter(
        x=sweep.alphas,
        y=sweep.saturated_fraction,
        mode="lines",
        name=translate("geometry.dyt.saturated", lang),
        meta="saturated",
        line=dict(color="#555555", dash="dot"),
        secondary_y=True,
    )
    _mark_level(figure, sweep.sqrt_d, f"√d = {format_number(sweep.sqrt_d)}")
    _mark_position(figure, float(alpha), translate("geometry.dyt.chosen", lang), COLORS["dyt"])
    _base(figure, translate("geometry.dyt.title", lang), "α", "‖tanh(αx)‖")
    ends = np.log10([sweep.alphas[0], sweep.alphas[-1]])
    figure.update_xaxes(**DECADES, range=[ends[0] - 0.05, ends[1] + 0.05])  # log10 units
    figure.update_yaxes(range=[0, 1.1 * sweep.sqrt_d], secondary_y=False)
    figure.update_yaxes(
        range=[0, 1.05],
        tickvals=[0, 0.25, 0.5, 0.75, 1.0],
        ticktext=[
            "0\u00a0%",
            "25\u00a0%",
            "50\u00a0%",
            "75\u00a0%",
            "100\u00a0%",
        ],  # as the sentences write a share
        secondary_y=True,
        title=translate("geometry.dyt.saturated", lang),
        showgrid=False,  # one set of gridlines: the right axis's would not line up with them
    )
    return figure


def shared_bins(
    arrays: list[np.ndarray],
    scale: float | None,
    bins: int = HISTOGRAM_BINS,
    bounds: tuple[float, float] | None = None,
):
    """Bin edges common to every series of a panel, or None when nothing is finite.

    Common bins make a spike a spike: LayerNorm's lengths, equal to sqrt(d) up to float32
    jitter (~1e-6), fill one bin whose width is set by the panel, not by the jitter.  The
    range is at least ``MIN_RANGE_SHARE * scale`` wide (the quantity's natural size: sqrt(d)
    for ||y||, d for <y, 1>, 1 for a cosine) around the values, moved inside ``bounds``
    where the quantity has them (a cosine's [-1, 1]: cosines of 1 drew an axis to 1.04).
    """
    finite = np.concatenate([a[np.isfinite(a)] for a in arrays]) if arrays else np.array([])
    if not finite.size:
        return None
    low, high = float(finite.min()), float(finite.max())
    floor = MIN_RANGE_SHARE * (scale if scale else max(abs(low), abs(high), 1e-12))
    if high - low < floor:
        middle = (low + high) / 2
        low, high = middle - floor / 2, middle + floor / 2
        bins += 1 - bins % 2  # odd: the values sit mid-bin, not on the middle edge
    if bounds is not None:  # the window slides inside them, its width kept
        shift = max(bounds[0] - low, 0.0) - max(high - bounds[1], 0.0)
        low, high = max(low + shift, bounds[0]), min(high + shift, bounds[1])
    return np.linspace(low, high, bins + 1)


def _decades_spanned(arrays: list[np.ndarray]) -> float:
    """log10(largest / smallest) of the positive finite values (0 when there are none)."""
    positive = np.concatenate([a[np.isfinite(a) & (a > 0)] for a in arrays])
    return float(np.log10(positive.max() / positive.min())) if positive.size else 0.0


def histograms_figure(
    series: list[tuple[str, str, Measures]],
    titles: tuple[str, ...],
    scales: tuple[float | None, ...],
    sqrt_d: float | None = None,
    log_first: bool = False,
) -> go.Figure:
    """Histograms side by side of ||y||, <y, 1>, cos(x, y) (as many as ``titles``), every
    series binned alike and overlaid.

    ``series``: (translated name, colour key and tag, measures); ``scales``: each panel's
    natural size (see ``shared_bins``; None: the values' own).  ``log_first`` bins the first
    panel in log10 when its values span a decade or more (a real model's massive
    activations) and labels its decades only.
    """
    columns = len(titles)
    # one count axis (every panel counts the same vectors), its ticks on the first panel
    # alone: a phone's narrow gaps put each panel's ticks over its neighbour's bars
    figure = make_subplots(
        rows=1, cols=columns, subplot_titles=titles, horizontal_spacing=0.06, shared_yaxes=True
    )
    first_edges = None  # the ||y|| panel's bins, when linear
    for column in range(1, columns + 1):
        field = ("norm", "ones", "cos_input")[column - 1]
        values = [np.asarray(getattr(m, field), dtype=float) for _, _, m in series]
        logged = column == 1 and log_first and _decades_spanned(values) >= 1
        if logged:
            with np.errstate(divide="ignore", invalid="ignore"):
                values = [np.where(v > 0, np.log10(v), np.nan) for v in values]
        bounds = (-1.0, 1.0) if field == "cos_input" else None
        edges = shared_bins(values, None if logged else scales[column - 1], bounds=bounds)
        if edges is None:
            continue
        if column == 1 and not logged:
            first_edges = edges
        centres, width = (edges[:-1] + edges[1:]) / 2, edges[1] - edges[0]
        for (name, tag, _), data in zip(series, values):
            counts, _ = np.histogram(data[np.isfinite(data)], bins=edges)
            figure.add_bar(
                x=centres,
                y=counts,
                width=width,
                name=name,
                meta=f"{tag}_{column}",
                legendgroup=tag,
                showlegend=column == 1,
                marker=dict(color=COLORS.get(tag, "#7f7f7f"), line=dict(width=0)),
                opacity=0.6,
                row=1,
                col=column,
            )
        if logged:
            decades = np.arange(np.floor(edges[0]), np.ceil(edges[-1]) + 1)
            figure.update_xaxes(
                tickvals=decades, ticktext=[f"10<sup>{int(k)}</sup>" for k in decades], row=1, col=1
            )
    if sqrt_d is not None:
        figure.add_vline(x=sqrt_d, line=dict(color="#444444", dash="dash", width=1), row=1, col=1)
        # the label ends left of the bar of the bin holding √d (the spike), where
        # ending at the line it touched the bar
        spike = sqrt_d
        if first_edges is not None:
            at = int(np.searchsorted(first_edges, sqrt_d, side="right")) - 1
            spike = min(sqrt_d, float(first_edges[min(max(at, 0), len(first_edges) - 2)]))
        figure.add_annotation(
            x=spike,
            y=1,
            xref="x",
            yref="y domain",
            xanchor="right",
            yanchor="top",
            xshift=-4,
            text=f"√d = {format_number(sqrt_d)}",
            showarrow=False,
        )
        if first_edges is not None:  # the spike at sqrt(d), its line and label clear of the edge
            low, high = min(first_edges[0], sqrt_d), max(first_edges[-1], sqrt_d)
            room = SQRT_D_ROOM * (high - low)
            figure.update_xaxes(range=[low - room, high + room], row=1, col=1)
    return framed(figure, 360, 40, barmode="overlay", bargap=0)


def spread_figure(spread: EpsSpread, lang: str) -> go.Figure:
    """Mean ||y|| / sqrt(d) and mean cos(x, y), +- one standard deviation (cut at 0, and at
    +-1 for the cosine), at each eps.

    eps is a category axis ("0" cannot sit on a log axis).
    """
    titles = [translate(f"geometry.high.spread_{panel}", lang) for panel in ("norm", "cos")]
    # two quantities, two y axes: the gap holds the second's ticks ("0.9985") on a phone
    figure = make_subplots(rows=1, cols=2, subplot_titles=titles, horizontal_spacing=0.16)
    eps_text = tick_texts(spread.eps_values)  # one notation: "10⁻⁵" as the slider, "10⁻⁴"
    for index, kind in enumerate(ROW_KINDS):  # the norms with an eps
        style = SPREAD_STYLES[min(index, len(SPREAD_STYLES) - 1)]
        measured = getattr(spread, kind)
        panels = (
            (measured.norm_mean / spread.sqrt_d, measured.norm_std / spread.sqrt_d, 0, np.inf, 1),
            (measured.cos_mean, measured.cos_std, -1, 1, 2),
        )
        for mean, std, low, high, column in panels:
            figure.add_scatter(
                x=eps_text,
                y=mean,
                error_y=dict(  # ± std, cut at what the measure can reach (a cosine ≤ 1)
                    type="data",
                    symmetric=False,
                    array=np.clip(high - mean, 0, std),  # 0 for a mean rounded past 1
                    arrayminus=np.clip(mean - low, 0, std),
                    visible=True,
                ),
                mode="lines+markers",
                name=NORM_NAMES[kind],
                meta=f"{kind}_{column}",
                legendgroup=kind,
                showlegend=column == 1,
                line=dict(color=COLORS[kind], **style["line"]),
                marker=style["marker"],
                row=1,
                col=column,
            )
    figure.update_xaxes(type="category", title="ε")
    return framed(figure, 340, 40)


def plane_view_figure(view: PlaneView, lang: str, shown: tuple[str, ...]) -> go.Figure:
    """Inputs and the chosen norms' outputs on the view's two directions (equal scales)."""
    names = {"inputs": translate("geometry.trace.inputs", lang), **NORM_NAMES}
    if view.method == "axes":
        x, y = (translate("geometry.view_axis_title", lang, axis=a) for a in view.axes)
    else:
        x, y = (
            translate(f"geometry.view_{view.method}_{i}", lang, share=f"{100 * share:.1f}\u00a0%")
            for i, share in enumerate(view.explained, 1)
        )
    title = translate("geometry.view_title", lang, rows=f"{view.rows:,}", d=f"{view.d:,}")
    figure = go.Figure()
    series = [("inputs", view.inputs, "input")] + [
        (kind, getattr(view, kind), kind) for kind in shown
    ]
    for tag, points, color in series:
        figure.add_scattergl(
            x=points[:, 0],
            y=points[:, 1],
            mode="markers",
            name=names[tag],
            meta=tag,
            marker=dict(color=COLORS[color], size=4, opacity=0.55),
        )
    figure.update_yaxes(scaleanchor="x")
    return _base(figure, title, x, y, height=520)
