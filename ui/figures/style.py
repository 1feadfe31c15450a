"""Chart styling shared by every figure module: log axes that read from the back of a room.

plotly's own log axis labels every minor tick once a range spans less than a few decades
("6 7 8 9 10 2 3 4 5 6 7 8 9 100"), and stacks "9 8 7 6 5 4 3 2" between decades.
``log_axis`` writes the ticks itself: the sampled values where an axis shows a few sampled
points (the depths of a sweep, the widths timed), else powers of ten, else 1-2-5 steps, else
(a range narrower than 2×) a few round linear values — always at least two labelled ticks,
never more than about eight, and one more past each end the data overrun (the axis' range
reaches it), so every value drawn lies between two labelled ticks and can be read off; in
plain numbers ("0.01", "1,000") or, when one of them would be too small or large for that,
all in powers ("10⁻⁶", "2×10⁻⁵").
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from ui.formatting import scientific

# One colour per norm kind on every page (LayerNorm blue, RMSNorm red: Geometry's, the dumps
# page's, the Vector Lab's, the Axes page's, the Kernels page's).
NORM_COLORS = {
    "layernorm": "#1f77b4",
    "rmsnorm": "#d62728",
    "batchnorm": "#ff7f0e",
    "instancenorm": "#8c564b",
    "groupnorm": "#9467bd",
    "dyt": "#2ca02c",
}
# A question's right answer once revealed (the class chart), in plotly's own green; the light
# one where its round is greyed (the first of two).
RIGHT_COLORS = ("#98df8a", "#2ca02c")

# How plotly writes an axis's numbers when ``log_axis`` does not write them itself: grouped
# ("300,000", never "300k"), and from 10⁶ on with a power of ten ("2×10¹⁴" at a hover too,
# never "200T", whose T reads as nothing a learner knows); a heatmap's colour bar alike.
# Composed onto the default template at import: Streamlit's import sets that default to its
# own theme, so this module is imported after Streamlit (app.py, tests/conftest.py do).
AXIS_NUMBERS = dict(separatethousands=True, exponentformat="power", minexponent=5)
pio.templates["normscope_numbers"] = go.layout.Template(
    layout=dict(xaxis=AXIS_NUMBERS, yaxis=AXIS_NUMBERS, coloraxis_colorbar=AXIS_NUMBERS),
    data=dict(heatmap=[go.Heatmap(colorbar=AXIS_NUMBERS)]),
)
if pio.templates.default != "normscope":  # Streamlit's theme, plus ours, merged once here:
    # a "streamlit+normscope_numbers" default is merged again for every figure (9 ms each)
    pio.templates["normscope"] = pio.templates[f"{pio.templates.default}+normscope_numbers"]
    pio.templates.default = "normscope"

MAX_SAMPLED_TICKS = 12  # more sampled points than this: decades instead
MAX_WHOLE_TICKS = 10  # a count axis (layers, steps) spanning this few: a tick on each count
MAX_TICKS = 8
PLAIN_RANGE = (1e-3, 1e5)  # labels inside it are written as plain numbers


def legend_below(**settings) -> dict:
    """A horizontal legend at the figure's bottom edge (container units): the plot's margin
    grows to hold it, so the tick labels and the x-axis title above it are never covered,
    whatever the text size and the chart's width (a legend placed as a fraction of the plot's
    height covered them on a half-width chart and while presenting; measured in Chromium).
    Built this way, a shared figure needs no per-view copy to move its legend
    (``ui.projected.for_screen``)."""
    return dict(orientation="h", yref="container", y=0, yanchor="bottom", **settings)


def frame(height: int, top: int = 10) -> dict:
    """The charts' frame as layout data: 10 px margins (``top`` holds a title), the legend
    below the plot (``legend_below``)."""
    return dict(height=height, margin=dict(l=10, r=10, t=top, b=10), legend=legend_below())


def panel_title(text: str, x: float, y: float, size: int = 16) -> dict:
    """A panel's title as a layout annotation: centred on ``x`` and sitting on ``y`` (paper
    units), as ``make_subplots`` writes its subplot titles."""
    return dict(
        text=text,
        x=x,
        y=y,
        xref="paper",
        yref="paper",
        xanchor="center",
        yanchor="bottom",
        showarrow=False,
        font=dict(size=size),
    )


def framed(figure: go.Figure, height: int, top: int = 10, **layout) -> go.Figure:
    """``figure`` in the charts' frame (``frame``); ``layout`` adds to it or replaces it."""
    figure.update_layout(**{**frame(height, top), **layout})
    return figure


def shaded_band(figure: go.Figure, x, low, high, fillcolor: str, upper=None, **lower) -> None:
    """The area between ``low`` and ``high``: ``high`` an invisible line, ``low`` filled up to
    it ("tonexty"); ``upper`` and ``lower`` name or mark each edge's trace."""
    figure.add_scatter(
        x=x,
        y=high,
        mode="lines",
        line=dict(width=0),
        showlegend=False,
        hoverinfo="skip",
        **(upper or {}),
    )
    figure.add_scatter(
        x=x, y=low, mode="lines", line=dict(width=0), fill="tonexty", fillcolor=fillcolor, **lower
    )


def tick_text(value: float, plain: bool) -> str:
    """A log axis' tick label: "0.02", "1,000" (``plain``), or "10⁻⁶", "2×10⁷"."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    if plain:
        return f"{value:,.6g}" if abs(value) >= 1 else f"{value:.6g}"
    exponent = math.floor(math.log10(abs(value)) + 1e-9)
    mantissa = value / 10.0**exponent
    return scientific(f"{mantissa:.3g}", exponent)


def tick_texts(ticks: Iterable[float]) -> list[str]:
    """One axis' labels in one notation: all plain when every tick is, else all powers."""
    ticks = list(ticks)
    plain = all(PLAIN_RANGE[0] <= abs(v) < PLAIN_RANGE[1] for v in ticks)
    return [tick_text(v, plain) for v in ticks]


def _slack(value: float) -> float:
    """Float noise at ``value``: each end's own (on a log axis over 10¹⁴, one slack taken
    from the top end counted every tick below 10⁵ as inside the data)."""
    return 1e-9 * abs(value)


def _inside(candidates: Iterable[float], low: float, high: float) -> list[float]:
    return sorted({c for c in candidates if low - _slack(low) <= c <= high + _slack(high)})


def _covering(ticks: list[float], low: float, high: float, grid: list[float]) -> list[float]:
    """``ticks`` and, past each end the data overrun, the nearest value of ``grid`` beyond it."""
    below = [g for g in grid if 0 < g <= low + _slack(low)]
    above = [g for g in grid if g >= high - _slack(high)]
    if ticks and ticks[0] > low + _slack(low) and below:
        ticks = [below[-1], *ticks]
    if ticks and ticks[-1] < high - _slack(high) and above:
        ticks = [*ticks, above[0]]
    return ticks


_EXPONENTS = (-323, 308)  # the powers of ten a float64 holds (10.0**309 overflows)


def _decade_ticks(low: float, high: float, mantissas: tuple[float, ...]) -> list[float]:
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    # decades apart: at most MAX_TICKS - 1 inside the data, and one past an end it overruns
    step = max(1, math.ceil((last - first) / (MAX_TICKS - 1))) if mantissas == (1,) else 1
    exponents = range(max(first - step, _EXPONENTS[0]), min(last + 2 * step, _EXPONENTS[1] + 1))
    values = [m * 10.0**e for e in exponents[::step] for m in mantissas]
    values = [v for v in values if math.isfinite(v) and v > 0]
    ticks = _inside(values, low, high)
    thinned = ticks[:: max(1, math.ceil(len(ticks) / MAX_TICKS))]
    if len(thinned) < len(ticks):  # every n-th value: the next one out is n steps away
        n = len(ticks) // len(thinned) + (len(ticks) % len(thinned) > 0)
        grid = [thinned[0] * (ticks[1] / ticks[0]) ** k for k in range(-n, 0)]
        grid += [thinned[-1] * (ticks[1] / ticks[0]) ** k for k in range(1, n + 1)]
        return _covering(thinned, low, high, sorted([*grid, *thinned]))
    return _covering(ticks, low, high, sorted(values))


def _linear_ticks(low: float, high: float) -> list[float]:
    """Round values across a narrow range (about 4 of them): 180, 200, 220, 240."""
    raw = (high - low) / 4
    magnitude = 10.0 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    start = math.ceil(low / step) * step - step
    values = [round(start + i * step, 12) for i in range(int((high - start) / step) + 2)]
    values = [v for v in values if v > 0]
    return _covering(_inside(values, low, high), low, high, values)


def log_ticks(values: Iterable[float], sampled: Iterable[float] | None = None) -> list[float]:
    """Where a log axis over ``values`` puts its labelled ticks (see the module docstring)."""
    if sampled is not None:
        points = sorted({float(v) for v in sampled if v > 0 and math.isfinite(v)})
        if 2 <= len(points) <= MAX_SAMPLED_TICKS:
            return points
    data = np.asarray([v for v in values if v is not None], dtype=float)
    data = data[np.isfinite(data) & (data > 0)]
    if data.size == 0:
        return []
    low, high = float(data.min()), float(data.max())
    if high / low < 2:  # under a factor of 2: decades and 1-2-5 steps give one tick at most
        ticks = _linear_ticks(low, high) if high > low else [low]
        return ticks if len(ticks) >= 2 else sorted({low, high})
    for mantissas in ((1,), (1, 2, 5), (1, 2, 3, 5)):
        ticks = _decade_ticks(low, high, mantissas)
        inside = _inside(ticks, low, high)
        if len(inside) >= 3 or (mantissas == (1, 2, 3, 5) and inside):
            return ticks
    return sorted({low, high})


def _axis_values(figure: go.Figure, axis: str, anchor: str) -> list[float]:
    """Every value drawn against one axis (``anchor``: "x", "y2", ...) by the figure's traces."""
    values: list[float] = []
    for trace in figure.data:
        if (getattr(trace, f"{axis}axis", None) or axis) != anchor:
            continue
        data = getattr(trace, axis, None)
        if data is None:
            continue
        array = np.asarray(data, dtype=object).ravel()
        values += [float(v) for v in array if isinstance(v, int | float | np.number)]
    return values


def log_axis(
    figure: go.Figure,
    axis: str = "y",
    *,
    values: Iterable[float] | None = None,
    sampled: Iterable[float] | None = None,
    row: int | None = None,
    col: int | None = None,
    **settings,
) -> go.Figure:
    """Make the figure's ``axis`` ("x" or "y") logarithmic with readable ticks; returns it.

    ``values``: what the axis shows (default: read from the traces drawn on it, so call this
    after adding them); ``sampled``: the points sampled along it (a sweep's depths), labelled
    one by one when there are few; ``row``/``col`` pick a subplot; ``settings`` go to plotly.
    """
    anchor = axis
    if row is not None and col is not None:
        subplot = figure.get_subplot(row, col)
        anchor = getattr(subplot, f"{axis}axis").plotly_name.replace("axis", "")
    if values is None:
        values = _axis_values(figure, axis, anchor)
    values = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    ticks = log_ticks(values, sampled)
    update = figure.update_xaxes if axis == "x" else figure.update_yaxes
    update(
        type="log",
        tickmode="array" if ticks else "auto",
        tickvals=ticks or None,
        ticktext=tick_texts(ticks) or None,
        row=row,
        col=col,
    )
    if ticks and values and (ticks[0] < min(values) or ticks[-1] > max(values)):
        # a tick past the data: plotly's autorange would stop short of it, so reach it
        low, high = math.log10(min(ticks[0], *values)), math.log10(max(ticks[-1], *values))
        pad = 0.03 * (high - low or 1.0)
        update(range=[low - pad, high + pad], autorange=False, row=row, col=col)
    if settings:
        update(row=row, col=col, **settings)
    return figure


def linear_axis(figure: go.Figure, axis: str = "y", **settings) -> go.Figure:
    """Undo ``log_axis`` (a figure whose log toggle is off): plotly's own linear ticks."""
    update = figure.update_xaxes if axis == "x" else figure.update_yaxes
    update(type="linear", tickmode="auto", tickvals=None, ticktext=None, **settings)
    return figure


def whole_axis(figure: go.Figure) -> go.Figure:
    """A linear x axis of counts (layers, steps): over a short span plotly would label halves
    ("0.5 of a layer"), so every whole number there gets its tick; longer spans keep plotly's
    own ticks, whole numbers already.  Call it after the last trace is added."""
    linear_axis(figure, "x")
    values = _axis_values(figure, "x", "x")
    if values and max(values) - min(values) <= MAX_WHOLE_TICKS:
        figure.update_xaxes(tickmode="linear", tick0=0, dtick=1)
        if max(values) == min(values):  # one count (a one-layer stack): its tick alone
            figure.update_xaxes(range=[values[0] - 0.5, values[0] + 0.5])
    return figure
