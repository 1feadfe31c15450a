"""Depth page charts: residual stream, gradients, updates, x_0's weight, the L-sweep and the
training lab's losses (the wiring diagrams are in ``ui.figures.depth_wiring``).

Titles are ``depth.<chart>_title``, ``_x`` and ``_y``; series arrive named.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from engine.depth.placements import PLACEMENTS
from engine.depth.simulator import DepthResult
from engine.depth.sweep import SweepResult
from engine.depth.theory import POST_LN_LEVEL, pre_ln_band, x0_weight_expected
from engine.training.loop import TrainResult
from ui.figures.style import framed, linear_axis, log_axis, shaded_band, whole_axis
from ui.formatting import finite_or_none, format_number, signed
from ui.i18n import translate
from ui.text.depth import post_level_text

PLACEMENT_COLORS = {
    "post": "#d62728",
    "pre": "#1f77b4",
    "peri": "#2ca02c",
    "olmo2": "#9467bd",
    "deepnorm": "#ff7f0e",
    "pre_scaled": "#17becf",
    "none": "#7f7f7f",
}
DASHES = ("solid", "dash", "dot", "dashdot", "longdash")
THEORY_COLOR = "#555555"
X0_MEASURED_WIDTH, X0_EXPECTED_WIDTH = 6, 2  # px: the weight on x_0, measured and expected
BAND_FILL = "rgba(31, 119, 180, 0.12)"
RUN_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e")

SWEEP_HEIGHT = 540  # px: the sweep's legend holds the fitted slopes

Series = tuple[str, DepthResult]  # (translated name, result)


def _styles(series: Sequence[Series]) -> list[dict]:
    """Colour by placement; a placement seen again gets the next dash style."""
    seen: dict[str, int] = {}
    styles = []
    for _, result in series:
        p = result.spec.placement
        styles.append(dict(color=PLACEMENT_COLORS[p], dash=DASHES[seen.get(p, 0) % len(DASHES)]))
        seen[p] = seen.get(p, 0) + 1
    return styles


def _scales(figure: go.Figure, log_y: bool, log_x: bool = False, sampled_x=None) -> go.Figure:
    """Log or linear axes, the log ones ticked for a projector (``ui.figures.style``); call it
    after the last trace is added, since the ticks are read from the traces."""
    (log_axis if log_y else linear_axis)(figure, "y")
    return log_axis(figure, "x", sampled=sampled_x) if log_x else whole_axis(figure)


def _mode(values) -> str:
    """A line of one point draws nothing (a one-layer stack): that point gets its marker."""
    return "lines" if len(values) > 1 else "lines+markers"


def _layout(
    figure: go.Figure, chart: str, lang: str, log_y: bool, x: str = "residual"
) -> go.Figure:
    """Titles from ``depth.<chart>_title`` and ``_y``, the x axis' from ``depth.<x>_x``."""
    framed(
        figure,
        420,
        50,
        title=translate(f"depth.{chart}_title", lang),
        xaxis_title=translate(f"depth.{x}_x", lang),
        yaxis_title=translate(f"depth.{chart}_y", lang),
        hovermode="x unified",
    )
    return _scales(figure, log_y)


def _per_layer_figure(series, field, chart, lang, log_y, first_layer) -> go.Figure:
    figure = go.Figure()
    for (name, result), style in zip(series, _styles(series)):
        values = getattr(result, field)
        layers = np.arange(first_layer, first_layer + len(values))
        figure.add_trace(
            go.Scatter(
                x=layers, y=finite_or_none(values), name=name, mode=_mode(values), line=style
            )
        )
    return _layout(figure, chart, lang, log_y)


def residual_figure(series: Sequence[Series], lang: str) -> go.Figure:
    """E||x_l||^2/d against l for each result, with Xiong's Lemma-2 Pre-LN band shaded.

    Each overlay is drawn only when a result of the placement it describes is shown
    (``engine/depth/placements.py``, ``lemma2``): the band for Pre-LN; for results whose
    stream is normed (post, deepnorm), a dotted trace of the mean square entering each
    layer's last norm, and Post-LN adds Lemma 2's 3/2 level.
    """
    figure = _per_layer_figure(series, "residual_ms", "residual", lang, log_y=True, first_layer=0)
    depth = max((r.spec.layers for _, r in series), default=0)
    band = any(PLACEMENTS[r.spec.placement].lemma2 == "pre_band" for _, r in series)
    band_label = translate("depth.band", lang)
    if depth and band:
        ell = np.arange(depth + 1)
        lo, hi = pre_ln_band(ell)
        shaded_band(figure, ell, lo, hi, BAND_FILL, dict(name=band_label), name=band_label)
    before_norm = translate("depth.before_norm", lang)
    posts = [(n, r) for n, r in series if PLACEMENTS[r.spec.placement].norms.on_stream]
    for (name, result), style in zip(posts, _styles(posts)):
        layers = np.arange(1, result.spec.layers + 1)
        figure.add_scatter(
            x=layers,
            y=finite_or_none(result.pre_norm_ms),
            mode=_mode(layers),
            name=translate("app.labelled", lang, label=name, value=before_norm),
            line={**style, "dash": "dot"},
        )
    described = any(PLACEMENTS[r.spec.placement].lemma2 == "post_level" for _, r in posts)
    if described and depth:  # a trace, not add_hline: hline labels misplace on log axes
        figure.add_scatter(
            x=[1, depth],
            y=[POST_LN_LEVEL, POST_LN_LEVEL],
            mode="lines",
            name=post_level_text(),
            line=dict(color=THEORY_COLOR, dash="dot", width=1),
        )
    return _scales(figure, log_y=True)


def per_layer_figure(series: Sequence[Series], chart: str, lang: str) -> go.Figure:
    """One value per layer l (1..L) against l for each result, ``chart`` "grad" (the
    weights' gradient norm), "update" (||F_l|| / ||x_{l-1}||) or "cosine" (of x_{l-1}
    and x_l; linear axis)."""
    field = {"grad": "grad_norm", "update": "update_ratio", "cosine": "cosine"}[chart]
    return _per_layer_figure(series, field, chart, lang, chart != "cosine", first_layer=1)


def x0_weight_figure(series: Sequence[Series], lang: str, gain: float | None = None) -> go.Figure:
    """The identity path's weight on x_0 against l, with (1 + gain)^(-l/2) dashed when the
    branch gain is known (2^(-l/2) for a branch as large as the stream, gain = 1)."""
    figure = _per_layer_figure(series, "x0_weight", "x0", lang, True, first_layer=0)
    depth = max((r.spec.layers for _, r in series), default=0)
    if gain is not None and depth:
        # the measured weight follows the expectation so closely that a thin dashed line on
        # it vanished: the measured lines wide, the expectation narrower, dashed, on top
        figure.update_traces(line_width=X0_MEASURED_WIDTH)
        ell = np.arange(depth + 1)
        figure.add_scatter(
            x=ell,
            y=x0_weight_expected(ell, gain),
            mode="lines",
            name=translate("depth.x0_reference", lang, gain=format_number(gain, 3)),
            line=dict(color=THEORY_COLOR, dash="dash", width=X0_EXPECTED_WIDTH),
        )
    return _scales(figure, log_y=True)


def sweep_figure(
    sweeps: Sequence[tuple[str, SweepResult]], lang: str, theory: bool = True
) -> go.Figure:
    """Last layer's gradient norm against L on log-log axes, one fitted line per sweep.

    Each sweep's legend entry reads "<name>: fitted slope −0.48", so the slopes are on the
    chart and wrap with the legend (a subtitle listing them was cut at the chart's edge).
    Theorem 1's slopes (0 for post, -1/2 for pre) are dashed lines through each sweep's first
    point; pre's only with ``theory`` (a final norm, which its Pre-LN has).
    """
    figure = go.Figure()
    for name, sweep in sweeps:
        color = PLACEMENT_COLORS[sweep.spec.placement]
        x = sweep.layers.astype(float)
        fitted = translate("depth.slope", lang, name=name, slope=signed(sweep.slope))
        figure.add_scatter(
            x=x,
            y=finite_or_none(sweep.last_grad_norm),
            mode="markers",
            name=fitted,
            legendgroup=name,
            marker=dict(color=color, size=9),
        )
        fit = np.exp(sweep.intercept) * x**sweep.slope
        figure.add_scatter(
            x=x,
            y=fit,
            mode="lines",
            showlegend=False,
            name=fitted,
            legendgroup=name,
            line=dict(color=color),
        )
        slope = PLACEMENTS[sweep.spec.placement].theorem1_slope
        # Theorem 1's Pre-LN ends in a final norm; its Post-LN has none: drawn either way
        if slope is not None and (theory or sweep.spec.placement == "post"):
            y0 = float(sweep.last_grad_norm[0])
            figure.add_scatter(
                x=x,
                y=y0 * (x / x[0]) ** slope,
                mode="lines",
                name=translate("depth.theory_slope", lang, name=name, slope=signed(slope, 1)),
                line=dict(color=color, dash="dash", width=1),
            )
    figure = _layout(figure, "sweep", lang, log_y=True, x="sweep")
    # plotly gives a legend below the plot half the chart's height at most: room for the
    # nine entries of seven placements one per line on a phone, scrolled at 420 px
    figure.update_layout(height=SWEEP_HEIGHT)
    depths = sorted({int(d) for _, sweep in sweeps for d in sweep.layers})
    _scales(figure, log_y=True, log_x=True, sampled_x=depths)  # each simulated depth labelled
    figure.update_layout(hovermode="closest")
    return figure


def training_loss_figure(runs: Sequence[tuple[str, TrainResult]], lang: str) -> go.Figure:
    """Per-step loss of each run (streamed or finished) with the chance loss dashed."""
    figure = go.Figure()
    for (name, run), color in zip(runs, RUN_COLORS * 4):
        figure.add_scatter(
            x=run.steps,
            y=finite_or_none(run.loss),
            mode=_mode(run.steps),
            name=name,
            line=dict(color=color),
        )
    last = max((int(run.steps[-1]) for _, run in runs if len(run.steps)), default=0)
    if last:
        chance = runs[0][1].chance_loss
        figure.add_scatter(
            x=[1, last],
            y=[chance, chance],
            mode="lines",
            name=translate("depth.chance", lang),
            line=dict(color=THEORY_COLOR, dash="dash", width=1),
        )
        # named on the chart too: a run that stalls draws its line over the dashed one
        figure.add_annotation(
            x=1,
            xref="paper",
            xanchor="right",
            y=float(np.log10(chance)),  # a log axis places an annotation by log10(y)
            yanchor="bottom",
            text=translate("depth.chance", lang),
            showarrow=False,
            font=dict(color=THEORY_COLOR),
        )
    # the run's last step is a tick (300) at the plot's right edge: 10 px cut its label
    return _layout(figure, "loss", lang, log_y=True, x="loss").update_layout(margin_r=24)
