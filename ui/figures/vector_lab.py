"""Vector Lab chart: the input row above, the outputs below, inf/NaN marked."""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go

from ui.figures.style import NORM_COLORS, frame, panel_title
from ui.formatting import finite_or_none
from ui.i18n import join, translate

INPUT_COLOR = "#8c8c8c"
NONFINITE_COLOR = "#111111"  # not a norm's colour (RMSNorm is red)
BAR_LIMIT = 64  # up to this many channels, draw bars; beyond, lines
# Lines' channel axis reaches this share of d past each end: autorange ends it at channel 1,
# and a massive activation in channel 1 (a preset's) was drawn on the y axis's own line
LINE_MARGIN = 0.02


ROW_HEIGHTS = (0.4, 0.6)  # the input's panel, the outputs' panel: fractions of the plot
SPACING = 0.08  # between the two panels, a fraction of the plot's height


def _panels(input_name: str, output_name: str, index_name: str, d: int) -> dict:
    """The layout of two stacked panels sharing the channel axis (what ``make_subplots`` with
    two rows, shared x and subplot titles writes, in one dict: one validation, not one per
    step; ``tests/ui/test_figures_vector_lab.py`` compares the two)."""
    usable = 1.0 - SPACING
    low_top = ROW_HEIGHTS[1] * usable
    top_bottom = low_top + SPACING
    channel_axis = {"dtick": 1} if d <= 16 else {}  # a tick per channel
    if d > BAR_LIMIT:  # lines would end at the first and last channels: on the axis lines
        channel_axis = {"range": [1 - LINE_MARGIN * d, d + LINE_MARGIN * d]}

    return dict(
        xaxis=dict(
            anchor="y", domain=[0.0, 1.0], matches="x2", showticklabels=False, **channel_axis
        ),
        yaxis=dict(anchor="x", domain=[top_bottom, 1.0]),
        xaxis2=dict(anchor="y2", domain=[0.0, 1.0], title=dict(text=index_name), **channel_axis),
        yaxis2=dict(anchor="x2", domain=[0.0, low_top]),
        annotations=[panel_title(input_name, 0.5, 1.0), panel_title(output_name, 0.5, low_top)],
    )


NOTE_ROOM = 0.3  # above the highest value drawn, a band of this share of the values' span
PAD = 0.05  # below a negative lowest value, as plotly's autorange pads a bar's far end


def _room_for_note(values: Sequence[float]) -> tuple[float, float]:
    """The outputs panel's y range with a free band on top for a note: the note in the middle
    of the panel ran over the ✕ marks (at 0) and over other norms' bars."""
    drawn = [v for v in values if math.isfinite(v)] + [0.0]
    low, high = min(drawn), max(drawn)
    if high == low:  # only zeros and ✕ marks (their row at −0.5)
        low, high = -1.0, 1.0
    span = high - low
    return (low - PAD * span if low < 0 else low), high + NOTE_ROOM * span


def input_output_figure(
    x: Sequence[float],
    outputs: Sequence[tuple[str, Sequence[float], str]],
    lang: str,
) -> go.Figure:
    """Two stacked panels sharing the channel axis: ``x`` on top, each output series below
    (``outputs``: name, values and norm kind, drawn in that kind's colour on every page).

    Non-finite outputs cannot be drawn as bars; each is marked with a black ✕ in a row below
    the finite outputs (at y = 0 a ✕ merged with another norm's outputs of 0), its hover
    text saying whether it is +inf, -inf or NaN.  The traces and the layout are written
    as plain data and validated once (plotly's validation is most of a figure's cost).
    """
    input_name = translate("vector_lab.chart_input", lang)
    output_name = translate("vector_lab.chart_output", lang)
    d = len(x)
    channels = list(range(1, d + 1))
    as_bars = d <= BAR_LIMIT
    kind = {"type": "bar"} if as_bars else {"type": "scatter", "mode": "lines"}
    below = {"xaxis": "x2", "yaxis": "y2"}
    data = [
        dict(
            x=channels,
            y=finite_or_none(x),
            name=input_name,
            marker=dict(color=INPUT_COLOR),
            showlegend=False,
            xaxis="x",
            yaxis="y",
            **kind,
        )
    ]
    finite = [v for _, values, _ in outputs for v in values if math.isfinite(v)] or [0.0]
    low, high = min(finite), max(finite)
    marks_at = low - (0.5 if high == low else 0.12 * (high - low))  # the ✕ row
    for name, values, norm in outputs:
        color = NORM_COLORS[norm]
        data.append(
            dict(
                x=channels,
                y=finite_or_none(values),
                name=name,
                marker=dict(color=color),
                **below,
                **kind,
            )
        )
        bad = [(i, v) for i, v in zip(channels, values) if not math.isfinite(v)]
        if bad:
            data.append(
                dict(
                    type="scatter",
                    x=[i for i, _ in bad],
                    y=[marks_at] * len(bad),
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
                    **below,
                )
            )
    index_name = translate("vector_lab.chart_index", lang)
    layout = _panels(input_name, output_name, index_name, d)
    zeros = [name for name, values, _ in outputs if len(values) and all(v == 0 for v in values)]
    if zeros:  # bars of height 0 draw nothing: an empty panel would look broken
        text = translate("vector_lab.chart_all_zero", lang, names=join(zeros, lang))
        low, top = _room_for_note([v for _, values, _ in outputs for v in values])
        layout["yaxis2"]["range"] = [low, top]
        layout["annotations"].append(
            dict(text=text, x=0.5, y=top, yanchor="top", showarrow=False)
            | dict(xref="paper", yref="y2", font=dict(size=14, color=NONFINITE_COLOR))
        )
    layout.update(frame(460, 40), barmode="group", hovermode="x unified")
    return go.Figure(data=data, layout=layout)
