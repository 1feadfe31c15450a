"""Axes page: the ``[B, T, d]`` tensor as a box with the cells pooled into the clicked cell's
statistic shaded as a slab, the way Wu & He's Figure 2 draws the four norms.

An oblique drawing in 2-D (filled polygons), which renders in every browser without WebGL.

References:
- Wu, He 2018, "Group Normalization", arXiv:1803.08494 (Figure 2)
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from engine.axes.sharing import CellSelection
from ui.figures.axes import CLICKED_COLOR, OUTLINE_COLOR, bounding_box
from ui.figures.style import NORM_COLORS
from ui.i18n import translate

BOX_PAD_FILL = "rgba(96, 96, 96, 0.16)"  # PAD blocks in the box overlap: lighter than the map's


_DEPTH_ANGLE = math.radians(35)  # the B axis is drawn up and to the right
_DEPTH_SCALE = 0.55  # and shorter than the others, as in an oblique drawing


def _lengths(batch: int, tokens: int, d: int) -> tuple[float, float, float]:
    """Drawn lengths of the d, T and B edges: proportional, each at least a third of the
    longest so that B = 1 or d = 2 is still a box."""
    biggest = max(batch, tokens, d)
    return tuple(min(max(n / biggest, 0.34), 1.0) for n in (d, tokens, batch))


def _project(u, v, w, lengths) -> tuple[float, float]:
    """Fractions along (channels u, positions v, samples w) to drawing coordinates."""
    length_d, length_t, length_b = lengths
    depth = _DEPTH_SCALE * length_b * w
    return u * length_d + depth * math.cos(_DEPTH_ANGLE), -v * length_t + depth * math.sin(
        _DEPTH_ANGLE
    )


def _faces(box, shape, lengths) -> list[list[tuple[float, float]]]:
    """The three visible faces (front, top, right) of cells ``box = (b0, b1, t0, t1, c0, c1)``
    (half-open), as polygons."""
    batch, tokens, d = shape
    b0, b1, t0, t1, c0, c1 = box
    u0, u1, v0, v1, w0, w1 = c0 / d, c1 / d, t0 / tokens, t1 / tokens, b0 / batch, b1 / batch

    def p(u, v, w):
        return _project(u, v, w, lengths)

    front = [p(u0, v0, w0), p(u1, v0, w0), p(u1, v1, w0), p(u0, v1, w0)]
    top = [p(u0, v0, w0), p(u0, v0, w1), p(u1, v0, w1), p(u1, v0, w0)]
    right = [p(u1, v0, w0), p(u1, v0, w1), p(u1, v1, w1), p(u1, v1, w0)]
    return [front, top, right]


def _polygon(
    points, fill: str, line: str, name: str | None = None, legend: bool = False, width=1.0
):
    xs = [x for x, _ in points] + [points[0][0]]
    ys = [y for _, y in points] + [points[0][1]]
    return go.Scatter(
        x=xs,
        y=ys,
        mode="lines",
        fill="toself",
        fillcolor=fill,
        line=dict(color=line, width=width),
        hoverinfo="skip",
        name=name,
        showlegend=legend,
        legendgroup=name,
    )


def _rgba(hex_color: str, alpha: float, lighten: float = 0.0) -> str:
    red, green, blue = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    red, green, blue = (round(c + (255 - c) * lighten) for c in (red, green, blue))
    return f"rgba({red}, {green}, {blue}, {alpha})"


def cuboids(mask: np.ndarray) -> list[tuple[int, int, int, int, int, int]]:
    """``mask`` [B, T, d] as cuboids (b0, b1, t0, t1, c0, c1), half-open: one per run of
    samples whose (positions × channels) bounding boxes agree."""
    runs: list[list[int]] = []
    for b in range(mask.shape[0]):
        box = bounding_box(mask[b])
        if box is None:
            continue
        t0, t1, c0, c1 = box
        if runs and runs[-1][1] == b and runs[-1][2:] == [t0, t1 + 1, c0, c1 + 1]:
            runs[-1][1] = b + 1
        else:
            runs.append([b, b + 1, t0, t1 + 1, c0, c1 + 1])
    return [tuple(run) for run in runs]


def box_figure(real: np.ndarray, selection: CellSelection, kind: str, lang: str) -> go.Figure:
    """The ``[B, T, d]`` tensor as a box; the cells pooled into the clicked cell's statistic
    as a shaded slab, PAD positions greyed, the clicked cell in amber."""
    pad = translate("axes.heatmap.pad", lang)
    pooled_name = translate("axes.box.pooled", lang)
    clicked = translate("axes.box.clicked", lang)
    shape = selection.pooled.shape
    batch, tokens, d = shape
    lengths = _lengths(batch, tokens, d)
    color = NORM_COLORS[kind]
    traces = []
    outline = "rgba(60, 60, 60, 0.9)"
    for face, alpha in zip(_faces((0, batch, 0, tokens, 0, d), shape, lengths), (0.05, 0.1, 0.14)):
        traces.append(_polygon(face, f"rgba(120, 120, 120, {alpha})", outline))
    pad_legend = True
    for b in reversed(range(batch)):  # back to front: nearer PAD blocks drawn over farther
        length = int(real[b].sum())
        if length < tokens:
            for face in _faces((b, b + 1, length, tokens, 0, d), shape, lengths):
                trace = _polygon(face, BOX_PAD_FILL, "rgba(80,80,80,0.4)", pad, pad_legend)
                traces.append(trace)
                pad_legend = False
    pooled_legend = True
    pooled = selection.pooled if selection.label >= 0 else np.zeros(shape, dtype=bool)  # DyT
    for box in reversed(cuboids(pooled)):
        for face, (alpha, lighten) in zip(
            _faces(box, shape, lengths), ((0.85, 0.0), (0.85, 0.35), (0.85, -0.0))
        ):
            fill = _rgba(color, alpha, lighten)
            traces.append(_polygon(face, fill, color, pooled_name, pooled_legend))
            pooled_legend = False
    b, t, c = selection.cell
    # outlined as the shared set on the heatmap: in BatchNorm's orange slab an amber cell
    # edged in brown was lost
    for index, face in enumerate(_faces((b, b + 1, t, t + 1, c, c + 1), shape, lengths)):
        traces.append(_polygon(face, CLICKED_COLOR, OUTLINE_COLOR, clicked, index == 0, 2.5))
    traces += _hidden_edges(lengths)
    layout = dict(
        annotations=_axis_names(shape, lengths, lang),
        height=330,
        margin=dict(l=10, r=10, t=10, b=10),
        legend=dict(orientation="h", y=0.0, yanchor="top", x=0.0),
        plot_bgcolor="rgba(0,0,0,0)",
        xaxis=dict(visible=False),
        yaxis=dict(visible=False, scaleanchor="x", scaleratio=1),
    )
    return go.Figure(data=traces, layout=layout)


def _hidden_edges(lengths) -> list[go.Scatter]:
    """The three edges behind the box, dashed."""
    corner = _project(0, 1, 1, lengths)
    ends = (_project(1, 1, 1, lengths), _project(0, 0, 1, lengths), _project(0, 1, 0, lengths))
    return [
        go.Scatter(
            x=[corner[0], end[0]],
            y=[corner[1], end[1]],
            mode="lines",
            line=dict(color="rgba(60,60,60,0.6)", width=1, dash="dot"),
            hoverinfo="skip",
            showlegend=False,
        )
        for end in ends
    ]


def _named(axis: str, n: int, lang: str) -> str:
    """An edge's name: "d = 32 channels", "B = 1 sequence"."""
    return translate(f"axes.box.{axis}" + ("_one" if n == 1 else ""), lang, n=n)


def _axis_names(shape, lengths, lang: str) -> list[dict]:
    batch, tokens, d = shape
    bottom = _project(0.5, 1, 0, lengths)
    left = _project(0, 0.5, 0, lengths)
    depth = _project(0, 0, 0.5, lengths)
    style = dict(showarrow=False, font=dict(size=13))
    return [
        dict(
            x=bottom[0],
            y=bottom[1],
            text=_named("channels", d, lang),
            yshift=-12,
            **style,
        ),
        dict(
            x=left[0],
            y=left[1],
            text=_named("tokens", tokens, lang),
            textangle=-90,
            xshift=-12,
            **style,
        ),
        dict(
            x=depth[0],
            y=depth[1],
            text=_named("batch", batch, lang),
            textangle=-math.degrees(_DEPTH_ANGLE),
            xshift=-10,
            yshift=8,
            **style,
        ),
    ]
