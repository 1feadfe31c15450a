"""Geometry page scenes: the cloud and its outputs with the sqrt(d) sphere, the plane <v, 1> = 0,
the all-ones axis and LayerNorm's circle (d = 3 rotatable, d = 2 flat, d = 1 on a line), the
gamma/beta ellipsoid in both parameterisations, DyT's box, and one vector step by step.

Pure functions: engine results in, ``go.Figure`` out; no Streamlit import.  Every word a
reader sees arrives translated in ``SceneLabels``; numbers are the only text made here.  Each
trace carries a stable ``meta`` tag ("sphere", "plane", "layernorm", ...) that tests and the
browser read whatever the language.  The charts of the other sections (the eps curve, DyT's
norms, the high-dimension histograms) are in ``ui.figures.geometry_charts``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from engine.geometry.meshes import Mesh, SceneMeshes
from engine.geometry.path import VectorPath
from engine.geometry.scene import Scene

COLORS = {
    "input": "#7f7f7f",
    "layernorm": "#1f77b4",
    "rmsnorm": "#d62728",
    "dyt": "#2ca02c",
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


@dataclass(frozen=True)
class SceneLabels:
    """Every name the scenes show, already translated (``outputs`` by norm kind)."""

    inputs: str
    outputs: dict  # kind -> "LayerNorm(x)"; the affine scene's names say gamma and beta
    sphere: str  # the sqrt(d) sphere, its radius filled in
    plane: str
    axis: str
    layernorm_set: str
    lines: str  # "input -> output"
    ellipsoid: str  # gamma x_hat + beta
    gemma: str  # (1 + w) x_hat + beta
    layernorm_ellipse: str
    cube: str  # DyT's box (-1, 1)^d
    lane_names: dict  # d = 1: lane id -> name
    path_names: dict  # the vector's steps: "x", "mean", "centered", "drop", ...


def _finite_rows(points: np.ndarray) -> np.ndarray:
    return points[np.isfinite(points).all(axis=-1)]


def _coordinates(points: np.ndarray, lane: float = 0.0) -> dict:
    """x/y(/z) of ``[N, d]`` points; d = 1 puts them on the horizontal line y = lane."""
    d = points.shape[-1]
    if d == 1:
        return dict(x=points[:, 0], y=np.full(points.shape[0], float(lane)))
    names = ("x", "y", "z")[:d]
    return {name: points[:, i] for i, name in enumerate(names)}


def _scatter(d: int, cloud: bool = False, **kwargs):
    """A 3-D trace at d = 3; at d = 2 drawn by WebGL when it carries the cloud (2,000 SVG
    points and 4,000 SVG line segments take seconds to redraw), by SVG otherwise.  The d = 1
    strip stays SVG: WebGL drew its lines' gaps wrongly on the reversed lane axis."""
    if d == 3:
        return go.Scatter3d(**kwargs)
    return go.Scattergl(**kwargs) if cloud and d == 2 else go.Scatter(**kwargs)


def _markers(points, d, name, tag, color, size, lane=0.0, opacity=1.0, symbol=None, cloud=False):
    marker = dict(size=size, color=color, opacity=opacity)
    if symbol is not None:
        marker["symbol"] = symbol
    return _scatter(
        d,
        cloud,
        **_coordinates(_finite_rows(points), lane),
        mode="markers",
        marker=marker,
        name=name,
        meta=tag,
        hovertemplate="%{x:.3f}, %{y:.3f}" + (", %{z:.3f}" if d == 3 else "") + "<extra></extra>"
        if d > 1
        else "%{x:.4f}<extra></extra>",
    )


def _polyline(points, d, name, tag, color, width=2, dash=None, lane=0.0, legend=True):
    return _scatter(
        d,
        **_coordinates(points, lane),
        mode="lines",
        line=dict(color=color, width=width, dash=dash),
        name=name,
        meta=tag,
        hoverinfo="skip",
        showlegend=legend,
    )


def _segments(starts: np.ndarray, ends: np.ndarray, lanes=(0.0, 0.0)) -> np.ndarray:
    """Points ``[3K, d]`` start, end, NaN (a gap) for each finite pair: one trace, K lines."""
    keep = np.isfinite(starts).all(axis=-1) & np.isfinite(ends).all(axis=-1)
    starts, ends = starts[keep], ends[keep]
    if starts.shape[-1] == 1:  # on the d = 1 strip the lane is the second coordinate
        starts = np.column_stack([starts[:, 0], np.full(len(starts), lanes[0])])
        ends = np.column_stack([ends[:, 0], np.full(len(ends), lanes[1])])
    gaps = np.full_like(starts, np.nan)
    return np.stack([starts, ends, gaps], axis=1).reshape(-1, starts.shape[-1])


def _surface(mesh: Mesh, name: str, tag: str, color: str, opacity: float) -> go.Surface:
    points = mesh.points
    return go.Surface(
        x=points[..., 0],
        y=points[..., 1],
        z=points[..., 2],
        colorscale=[[0, color], [1, color]],
        showscale=False,
        opacity=opacity,
        name=name,
        meta=tag,
        showlegend=True,
        hoverinfo="skip",
    )


def _shape(mesh: Mesh, d: int, name: str, tag: str, color: str, opacity: float, dash=None):
    """A mesh drawn as what it is at this d: a surface, a curve, or a few points."""
    if d == 3 and mesh.is_surface:
        return _surface(mesh, name, tag, color, opacity)
    points = mesh.points.reshape(-1, d)
    if d == 1 or points.shape[0] <= 2 and tag in ("layernorm_set", "layernorm_ellipse"):
        return _markers(points, d, name, tag, color, 11, symbol="diamond")
    return _polyline(points, d, name, tag, color, width=3, dash=dash)


def _strip_shape(points: np.ndarray, name: str, tag: str, color: str, dash=None):
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


def _reach(arrays) -> float:
    values = [np.abs(a[np.isfinite(a)]) for a in arrays]
    largest = max((float(v.max()) for v in values if v.size), default=1.0)
    return 1.08 * max(largest, 1e-6)


def _layout(figure: go.Figure, d: int, reach: float, labels: SceneLabels) -> go.Figure:
    below = {3: -0.02, 2: -0.14, 1: -0.3}[d]  # under the flat charts' axis titles
    legend = dict(orientation="h", y=below, yanchor="top", x=0, itemsizing="constant")
    figure.update_layout(
        margin=dict(l=0, r=0, t=10, b=10),
        legend=legend,
        uirevision="geometry",  # keep the camera and zoom across reruns
    )
    if d == 3:
        axis = dict(range=[-reach, reach], zeroline=False)
        figure.update_layout(
            height=SCENE_HEIGHT,
            scene=dict(
                xaxis=dict(axis, title="x₁"),
                yaxis=dict(axis, title="x₂"),
                zaxis=dict(axis, title="x₃"),
                aspectmode="cube",
                camera=dict(eye=dict(x=1.5, y=-1.35, z=0.85)),
            ),
        )
    elif d == 2:
        figure.update_layout(height=FLAT_HEIGHT)
        figure.update_xaxes(range=[-reach, reach], title="x₁", zeroline=True)
        figure.update_yaxes(range=[-reach, reach], title="x₂", scaleanchor="x", zeroline=True)
    else:
        names = labels.lane_names
        figure.update_layout(height=FLAT_HEIGHT // 2 + 60)
        figure.update_xaxes(range=[-reach, reach], title="x", zeroline=True)
        figure.update_yaxes(
            tickvals=list(LANES.values()),
            ticktext=[names.get(lane, lane) for lane in LANES],
            range=[max(LANES.values()) + 0.6, -0.6],
        )
    return figure


def scene_figure(
    scene: Scene,
    shown: tuple[str, ...],
    labels: SceneLabels,
    inputs: bool = True,
    lines: bool = True,
    mode: str = "plain",
) -> go.Figure:
    """The cloud and the chosen norms' outputs with the fixed shapes (d = 1, 2 or 3).

    ``mode``: "plain" (gamma = 1, beta = 0: the sqrt(d) sphere, the plane, the all-ones axis,
    LayerNorm's circle), "affine" (the spec's gamma and beta: the ellipsoid drawn both ways,
    gamma x_hat + beta and Gemma's (1 + w) x_hat + beta) or "dyt" (the sphere and DyT's box).
    """
    cloud, meshes, d = scene.cloud, scene.meshes, scene.cloud.inputs.shape[-1]
    outputs = {
        kind: getattr(cloud, kind).y_affine if mode == "affine" else getattr(cloud, kind).y
        for kind in shown
    }
    traces = _fixed_shapes(scene, labels, mode)
    if inputs:
        traces.append(
            _markers(
                cloud.inputs,
                d,
                labels.inputs,
                "inputs",
                COLORS["input"],
                2.5 if d == 3 else 5,
                opacity=0.55,
                cloud=True,
            )
        )
    for kind, y in outputs.items():
        if lines and inputs:
            joined = _segments(cloud.inputs, y, (LANES["input"], LANES[kind]))
            traces.append(
                _scatter(
                    d,
                    True,
                    **_coordinates(joined) if d > 1 else dict(x=joined[:, 0], y=joined[:, 1]),
                    mode="lines",
                    line=dict(color=COLORS[kind], width=1),
                    opacity=0.25,
                    name=f"{labels.lines} · {labels.outputs[kind]}",
                    meta=f"lines_{kind}",
                    hoverinfo="skip",
                )
            )
    for kind in sorted(outputs, key=DRAW_ORDER.index):  # LayerNorm's few points on top
        size = MARKER_SIZES[d][kind]
        traces.append(
            _markers(
                outputs[kind],
                d,
                labels.outputs[kind],
                kind,
                COLORS[kind],
                size,
                LANES[kind],
                cloud=True,
            )
        )
    figure = go.Figure(traces)
    drawn = [cloud.inputs if inputs else np.zeros((1, d)), *outputs.values()]
    if mode == "affine":
        drawn += [scene.ellipsoids.standard.points, scene.ellipsoids.gemma.points]
    reach = max(_reach(drawn), meshes.radius * 1.25)
    return _layout(figure, d, reach, labels)


def _fixed_shapes(scene: Scene, labels: SceneLabels, mode: str) -> list:
    meshes, d = scene.meshes, scene.meshes.d
    if d == 1:
        return _strip_shapes(scene, labels, mode)
    shapes = []
    if mode == "affine":
        e = scene.ellipsoids
        shapes.append(_shape(e.standard, d, labels.ellipsoid, "ellipsoid", COLORS["sphere"], 0.25))
        gemma = e.gemma.points[::2, ::2] if d == 3 else e.gemma.points
        shapes.append(
            _markers(
                gemma.reshape(-1, d), d, labels.gemma, "gemma", COLORS["gemma"], 2 if d == 3 else 4
            )
        )
        shapes.append(
            _shape(
                e.layernorm_standard,
                d,
                labels.layernorm_ellipse,
                "layernorm_ellipse",
                COLORS["layernorm_set"],
                1.0,
            )
        )
        return shapes
    shapes.append(_shape(meshes.sphere, d, labels.sphere, "sphere", COLORS["sphere"], 0.18))
    if mode == "dyt":
        shapes.append(_polyline(_box_edges(d), d, labels.cube, "cube", COLORS["cube"], width=4))
    else:
        shapes.append(_shape(meshes.ones_plane, d, labels.plane, "plane", COLORS["plane"], 0.3))
    shapes.append(
        _polyline(
            meshes.ones_axis.points.reshape(-1, d),
            d,
            labels.axis,
            "ones_axis",
            COLORS["axis"],
            dash="dash",
        )
    )
    if mode == "plain":
        shapes.append(
            _shape(
                meshes.layernorm_set,
                d,
                labels.layernorm_set,
                "layernorm_set",
                COLORS["layernorm_set"],
                1.0,
            )
        )
    return shapes


def _strip_shapes(scene: Scene, labels: SceneLabels, mode: str) -> list:
    """d = 1: the 'sphere' is the two points +-1 (gamma +- ... in the affine mode)."""
    if mode == "affine":
        points = scene.ellipsoids.standard.points
        return [_strip_shape(points, labels.ellipsoid, "ellipsoid", COLORS["gemma"])]
    shapes = [_strip_shape(scene.meshes.sphere.points, labels.sphere, "sphere", COLORS["sphere"])]
    if mode == "dyt":
        shapes.append(
            _strip_shape(np.array([-1.0, 1.0]), labels.cube, "cube", COLORS["cube"], "dot")
        )
    return shapes


def _box_edges(d: int) -> np.ndarray:
    """The edges of the box [-1, 1]^d (d = 2, 3) as one polyline with gaps: DyT's outputs
    (gamma = 1, beta = 0) lie inside it, its corners on the sqrt(d) sphere."""
    corners = np.array(np.meshgrid(*[[-1.0, 1.0]] * d, indexing="ij")).reshape(d, -1).T
    edges = [
        (a, b)
        for a in range(len(corners))
        for b in range(a + 1, len(corners))
        if np.sum(corners[a] != corners[b]) == 1
    ]
    gap = np.full(d, np.nan)
    return np.array([p for a, b in edges for p in (corners[a], corners[b], gap)])


# --- one vector, step by step ------------------------------------------------------------------


def path_figure(path: VectorPath, meshes: SceneMeshes, labels: SceneLabels) -> go.Figure:
    """x, its drop along 1 onto the plane (x - mu 1), LayerNorm's rescaling onto the circle,
    and RMSNorm's along x's own ray onto the sphere (d = 1, 2 or 3)."""
    d, names = meshes.d, labels.path_names
    origin = np.zeros(d)
    x, centered = path.x, path.centered
    layer, rms = path.layernorm, path.rmsnorm
    traces = (
        []
        if d == 1
        else [
            _shape(meshes.sphere, d, labels.sphere, "sphere", COLORS["sphere"], 0.15),
            _shape(meshes.ones_plane, d, labels.plane, "plane", COLORS["plane"], 0.25),
            _polyline(
                meshes.ones_axis.points.reshape(-1, d),
                d,
                labels.axis,
                "ones_axis",
                COLORS["axis"],
                dash="dash",
            ),
            _shape(
                meshes.layernorm_set,
                d,
                labels.layernorm_set,
                "layernorm_set",
                COLORS["layernorm_set"],
                1.0,
            ),
        ]
    )
    if d == 1:
        traces.append(_strip_shape(meshes.sphere.points, labels.sphere, "sphere", COLORS["sphere"]))
    steps = (
        ("arrow_x", origin, x, COLORS["input"], "solid", LANES["input"], LANES["input"]),
        ("drop", x, centered, COLORS["plane"], "dash", LANES["input"], LANES["layernorm"]),
        (
            "scale_layernorm",
            centered,
            layer,
            COLORS["layernorm"],
            "dot",
            LANES["layernorm"],
            LANES["layernorm"],
        ),
        ("scale_rmsnorm", x, rms, COLORS["rmsnorm"], "dot", LANES["input"], LANES["rmsnorm"]),
    )
    for tag, start, end, color, dash, lane_a, lane_b in steps:
        joined = _segments(start[None], end[None], (lane_a, lane_b))
        coordinates = _coordinates(joined) if d > 1 else dict(x=joined[:, 0], y=joined[:, 1])
        traces.append(
            _scatter(
                d,
                **coordinates,
                mode="lines",
                line=dict(color=color, width=4, dash=dash),
                name=names[tag],
                meta=tag,
                hoverinfo="skip",
            )
        )
    points = (
        ("x", x, COLORS["input"], LANES["input"]),
        ("mean", path.along_ones, COLORS["axis"], LANES["input"]),
        ("centered", centered, COLORS["plane"], LANES["layernorm"]),
        ("layernorm", layer, COLORS["layernorm"], LANES["layernorm"]),
        ("rmsnorm", rms, COLORS["rmsnorm"], LANES["rmsnorm"]),
    )
    for tag, point, color, lane in points:
        traces.append(
            _markers(point[None], d, names[tag], f"point_{tag}", color, 7 if d == 3 else 11, lane)
        )
    figure = go.Figure(traces)
    reach = max(_reach([x, layer, rms, centered]), meshes.radius * 1.25)
    return _layout(figure, d, reach, labels)
