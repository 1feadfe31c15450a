"""Geometry page: the trace builders the scenes share (``ui.figures.geometry`` draws the
cloud and one vector): colours, the d = 1 strip's lanes, and points, lines, surfaces and
layout at d = 1, 2 or 3.

Each trace carries a stable ``meta`` tag ("sphere", "plane", "layernorm", ...) that tests
and the browser read whatever the language (plotly drops ``uid`` from its JSON).
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from engine.norms.kinds import PER_TOKEN_KINDS
from ui.figures.style import NORM_COLORS, legend_below
from ui.labels import INPUT_AXES

COLORS = {
    "input": "#7f7f7f",
    **{kind: NORM_COLORS[kind] for kind in PER_TOKEN_KINDS},
    "sphere": "#9ecae1",
    "plane": "#fdae6b",
    "axis": "#444444",
    "layernorm_set": "#08519c",
    "gemma": "#6a3d9a",
    "cube": "#006d2c",
    "stored": "#ff7f0e",  # a dump's own output (the model's gamma applied)
}
LANES = {"input": 0, "layernorm": 1, "rmsnorm": 2, "dyt": 3}  # rows of the d = 1 strip
DRAW_ORDER = ("rmsnorm", "dyt", "layernorm")
# At d = 2 LayerNorm's outputs are two points: drawn larger, on top of RMSNorm's circle
MARKER_SIZES = {
    1: {"layernorm": 9, "rmsnorm": 9, "dyt": 7},
    2: {"layernorm": 11, "rmsnorm": 6, "dyt": 6},
    3: {"layernorm": 3.5, "rmsnorm": 3, "dyt": 3},
}
SCENE_HEIGHT = 640
FLAT_HEIGHT = 560


def coordinates(points: np.ndarray, lane: float = 0.0) -> dict:
    """x/y(/z) of ``[..., d]`` points; d = 1 puts ``[N, 1]`` on the horizontal line y = lane."""
    d = points.shape[-1]
    if d == 1:
        return dict(x=points[:, 0], y=np.full(points.shape[0], float(lane)))
    names = ("x", "y", "z")[:d]
    return {name: points[..., i] for i, name in enumerate(names)}


def scatter(d: int, cloud: bool = False, **kwargs):
    """A 3-D trace at d = 3; at d = 2 drawn by WebGL when it carries the cloud (2,000 SVG
    points and 4,000 SVG line segments take seconds to redraw), by SVG otherwise.  The d = 1
    strip stays SVG: WebGL drew its lines' gaps wrongly on the reversed lane axis."""
    if d == 3:
        return go.Scatter3d(**kwargs)
    return go.Scattergl(**kwargs) if cloud and d == 2 else go.Scatter(**kwargs)


def markers(points, d, name, tag, color, size, lane=0.0, opacity=1.0, symbol=None, cloud=False):
    marker = dict(size=size, color=color, opacity=opacity)
    if symbol is not None:
        marker["symbol"] = symbol
    return scatter(
        d,
        cloud,
        **coordinates(points[np.isfinite(points).all(axis=-1)], lane),
        mode="markers",
        marker=marker,
        name=name,
        meta=tag,
        hovertemplate="%{x:.3f}, %{y:.3f}" + (", %{z:.3f}" if d == 3 else "") + "<extra></extra>"
        if d > 1
        else "%{x:.4f}<extra></extra>",
    )


def polyline(points, d, name, tag, color, width=2, dash=None):
    return scatter(
        d,
        **coordinates(points),
        mode="lines",
        line=dict(color=color, width=width, dash=dash),
        name=name,
        meta=tag,
        hoverinfo="skip",
        showlegend=True,
    )


def segments(starts: np.ndarray, ends: np.ndarray, lanes=(0.0, 0.0)) -> np.ndarray:
    """Points ``[3K, d]`` start, end, NaN (a gap) for each finite pair: one trace, K lines."""
    keep = np.isfinite(starts).all(axis=-1) & np.isfinite(ends).all(axis=-1)
    starts, ends = starts[keep], ends[keep]
    if starts.shape[-1] == 1:  # on the d = 1 strip the lane is the second coordinate
        starts = np.column_stack([starts[:, 0], np.full(len(starts), lanes[0])])
        ends = np.column_stack([ends[:, 0], np.full(len(ends), lanes[1])])
    gaps = np.full_like(starts, np.nan)
    return np.stack([starts, ends, gaps], axis=1).reshape(-1, starts.shape[-1])


def shape(mesh: np.ndarray, d: int, name: str, tag: str, color: str, opacity: float):
    """[R, C, d] points drawn as what they are at this d: a surface (R > 1), a curve, or points."""
    if d == 3 and mesh.shape[0] > 1:
        return go.Surface(
            **coordinates(mesh),
            colorscale=[[0, color], [1, color]],
            showscale=False,
            opacity=opacity,
            name=name,
            meta=tag,
            showlegend=True,
            hoverinfo="skip",
        )
    points = mesh.reshape(-1, d)
    if d == 1 or points.shape[0] <= 2 and tag in ("layernorm_set", "layernorm_ellipse"):
        return markers(points, d, name, tag, color, 11, symbol="diamond")
    return polyline(points, d, name, tag, color, width=3)


def strip_shape(points: np.ndarray, name: str, tag: str, color: str, dash=None):
    """d = 1: a set of values drawn as vertical lines across every lane."""
    low, high = min(LANES.values()) - 0.4, max(LANES.values()) + 0.4
    xs, ys = [], []
    for value in points.reshape(-1):
        xs += [value, value, None]
        ys += [low, high, None]
    return go.Scatter(
        x=xs,
        y=ys,
        mode="lines",
        line=dict(color=color, width=2, dash=dash),
        name=name,
        meta=tag,
        hoverinfo="skip",
    )


def reach_of(arrays) -> float:
    values = [np.abs(a[np.isfinite(a)]) for a in arrays]
    largest = max((float(v.max()) for v in values if v.size), default=1.0)
    return 1.08 * max(largest, 1e-6)


def inner_ticks(reach: float) -> list[float]:
    """Round tick values for a 3-D axis from −reach to reach, none in its outer fifth: plotly
    writes each axis's end ticks at the box's corners, where the near corner's labels of
    two axes ran into each other ("−6" on x₁ over "−4" on x₃)."""
    inner = 0.8 * reach
    step = 10 ** math.floor(math.log10(inner))  # 1, 2 or 5 times a power of ten
    step = next(s * step for s in (0.2, 0.5, 1, 2, 5) if inner / (s * step) <= 3)
    count = math.floor(inner / step)
    return [k * step for k in range(-count, count + 1)]


def scene_layout(
    figure: go.Figure, d: int, reach: float, lanes: dict[str, str] | None = None
) -> go.Figure:
    """``lanes`` (d = 1): the rows drawn, lane -> its label on the y axis."""
    legend = legend_below(x=0, itemsizing="constant")
    figure.update_layout(
        margin=dict(l=0, r=0, t=10, b=10),
        legend=legend,
        uirevision="geometry",  # keep the camera and zoom across reruns
    )
    if d == 3:
        axis = dict(range=[-reach, reach], zeroline=False, tickvals=inner_ticks(reach))
        figure.update_layout(
            height=SCENE_HEIGHT,
            scene=dict(
                xaxis=dict(axis, title=INPUT_AXES[0]),
                yaxis=dict(axis, title=INPUT_AXES[1]),
                zaxis=dict(axis, title=INPUT_AXES[2]),
                aspectmode="cube",
                camera=dict(eye=dict(x=1.53, y=-1.4, z=0.86)),  # far enough for x₃'s ticks
            ),
        )
        return figure
    # the margins grow to hold the tick labels and titles (Streamlit's plotly template, the
    # default once streamlit is imported, leaves automargin off): at d = 1 the legend below
    # covered the x ticks and the rows' labels were cut off at the left edge
    figure.update_xaxes(automargin=True)
    figure.update_yaxes(automargin=True)
    figure.update_layout(margin_l=10)  # a little room past the labels' measured width
    if d == 2:
        figure.update_layout(height=FLAT_HEIGHT)
        figure.update_xaxes(range=[-reach, reach], title=INPUT_AXES[0], zeroline=True)
        figure.update_yaxes(
            range=[-reach, reach], title=INPUT_AXES[1], scaleanchor="x", zeroline=True
        )
    else:
        lanes = lanes or {}
        last = max((LANES[lane] for lane in lanes), default=max(LANES.values()))
        figure.update_layout(height=FLAT_HEIGHT // 2 + 120)  # the legend takes its room
        figure.update_xaxes(range=[-reach, reach], title="x", zeroline=True)
        figure.update_yaxes(
            tickvals=[LANES[lane] for lane in lanes],
            ticktext=list(lanes.values()),
            range=[last + 0.6, -0.6],  # the rows drawn
        )
    return figure
