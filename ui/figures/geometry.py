"""Geometry page scenes: the cloud and its outputs with the sqrt(d) sphere, the plane <v, 1> = 0,
the all-ones axis and LayerNorm's circle (d = 3 rotatable, d = 2 flat, d = 1 on a line), the
gamma/beta ellipsoid in both parameterisations, and DyT's box; and one vector step by step:
x, its drop along 1 onto the plane <v, 1> = 0 (x - mu 1), LayerNorm's rescaling onto the circle
and RMSNorm's along x's own ray onto the sphere.

Words are ``geometry.trace.*`` and ``geometry.path_trace.*``.  The trace builders are in
``ui.figures.geometry_traces``, the other sections' charts in ``ui.figures.geometry_charts``.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from engine.geometry.meshes import SceneMeshes
from engine.geometry.path import VectorPath
from engine.geometry.scene import Scene
from ui.figures.geometry_traces import (
    COLORS,
    DRAW_ORDER,
    LANES,
    MARKER_SIZES,
    coordinates,
    markers,
    polyline,
    reach_of,
    scatter,
    scene_layout,
    segments,
    shape,
    strip_shape,
)
from ui.formatting import format_number
from ui.i18n import translate
from ui.labels import NORM_NAMES

# the traces named in geometry.trace.* (and the sphere, named with its radius)
SHAPES = "inputs plane axis layernorm_set lines ellipsoid gemma layernorm_ellipse cube".split()


def _names(meshes: SceneMeshes, lang: str) -> dict[str, str]:
    """The traces' names (``geometry.trace.*``), the sphere's with its radius."""
    names = {key: translate(f"geometry.trace.{key}", lang) for key in SHAPES}
    radius = format_number(meshes.radius)
    names["sphere"] = translate("geometry.trace.sphere", lang, radius=radius)
    return names


def scene_figure(
    scene: Scene,
    shown: tuple[str, ...],
    lang: str,
    inputs: bool = True,
    lines: bool = True,
    mode: str = "plain",
) -> go.Figure:
    """The cloud and the chosen norms' outputs with the fixed shapes (d = 1, 2 or 3).

    ``mode``: "plain" (gamma = 1, beta = 0: the sqrt(d) sphere, the plane, the all-ones axis,
    LayerNorm's circle), "affine" (the spec's gamma and beta: the ellipsoid drawn both ways,
    gamma x_hat + beta and Gemma's (1 + gamma_Gemma) x_hat + beta) or "dyt" (the sphere and
    DyT's box).
    """
    cloud, meshes, d = scene.cloud, scene.meshes, scene.cloud.inputs.shape[-1]
    names = _names(meshes, lang)
    affine = " · γ, β" if mode == "affine" else ""  # the outputs with the spec's γ and β
    output_names = {kind: f"{NORM_NAMES[kind]}(x){affine}" for kind in shown}
    outputs = {
        kind: getattr(cloud, kind).y_affine if mode == "affine" else getattr(cloud, kind).y
        for kind in shown
    }
    traces = _fixed_shapes(scene, names, mode)
    if inputs:
        size = 2.5 if d == 3 else 5
        traces.append(
            markers(
                cloud.inputs,
                d,
                names["inputs"],
                "inputs",
                COLORS["input"],
                size,
                opacity=0.55,
                cloud=True,
            )
        )
    for kind, y in outputs.items():
        if lines and inputs:
            joined = segments(cloud.inputs, y, (LANES["input"], LANES[kind]))
            traces.append(
                scatter(
                    d,
                    True,
                    **coordinates(joined),
                    mode="lines",
                    line=dict(color=COLORS[kind], width=1),
                    opacity=0.25,
                    name=f"{names['lines']} · {output_names[kind]}",
                    meta=f"lines_{kind}",
                    hoverinfo="skip",
                )
            )
    for kind in sorted(outputs, key=DRAW_ORDER.index):  # LayerNorm's few points on top
        name, size = output_names[kind], MARKER_SIZES[d][kind]
        traces.append(
            markers(outputs[kind], d, name, kind, COLORS[kind], size, LANES[kind], cloud=True)
        )
    figure = go.Figure(traces)
    drawn = [cloud.inputs if inputs else np.zeros((1, d)), *outputs.values()]
    if mode == "affine":
        drawn += [scene.ellipsoids.standard, scene.ellipsoids.gemma]
    reach = max(reach_of(drawn), meshes.radius * 1.25)
    lanes = {"input": names["inputs"]} if inputs else {}
    return scene_layout(figure, d, reach, {**lanes, **output_names})


def _fixed_shapes(scene: Scene, names: dict[str, str], mode: str) -> list:
    meshes, d = scene.meshes, scene.meshes.d
    if d == 1:
        return _strip_shapes(scene, names, mode)
    if mode == "affine":
        e = scene.ellipsoids
        gemma = e.gemma[::2, ::2] if d == 3 else e.gemma
        return [
            _shape(e.standard, d, names, "ellipsoid", 0.25, "sphere"),
            markers(
                gemma.reshape(-1, d),
                d,
                names["gemma"],
                "gemma",
                COLORS["gemma"],
                2 if d == 3 else 4,
            ),
            _shape(e.layernorm_standard, d, names, "layernorm_ellipse", 1.0, "layernorm_set"),
        ]
    if mode == "dyt":
        cube = polyline(_box_edges(d), d, names["cube"], "cube", COLORS["cube"], width=4)
        return [_shape(meshes.sphere, d, names, "sphere", 0.18), cube, _ones_axis(meshes, names)]
    return _plain_shapes(meshes, names, 0.18, 0.3)


def _shape(mesh, d: int, names: dict[str, str], tag: str, opacity: float, color: str = ""):
    """``mesh`` drawn as the trace named ``names[tag]``, in ``COLORS[color or tag]``."""
    return shape(mesh, d, names[tag], tag, COLORS[color or tag], opacity)


def _ones_axis(meshes: SceneMeshes, names: dict[str, str]):
    points = meshes.ones_axis.reshape(-1, meshes.d)
    return polyline(points, meshes.d, names["axis"], "ones_axis", COLORS["axis"], dash="dash")


def _plain_shapes(meshes: SceneMeshes, names: dict[str, str], sphere: float, plane: float):
    """The sphere, the plane ⟂ 1, the all-ones axis and LayerNorm's circle (d = 2, 3)."""
    d = meshes.d
    return [
        _shape(meshes.sphere, d, names, "sphere", sphere),
        _shape(meshes.ones_plane, d, names, "plane", plane),
        _ones_axis(meshes, names),
        _shape(meshes.layernorm_set, d, names, "layernorm_set", 1.0),
    ]


def _strip_shapes(scene: Scene, names: dict[str, str], mode: str) -> list:
    """d = 1: the 'sphere' is the two points +-1 (gamma +- ... in the affine mode)."""
    if mode == "affine":
        points = scene.ellipsoids.standard
        return [strip_shape(points, names["ellipsoid"], "ellipsoid", COLORS["gemma"])]
    shapes = [strip_shape(scene.meshes.sphere, names["sphere"], "sphere", COLORS["sphere"])]
    if mode == "dyt":
        shapes.append(
            strip_shape(np.array([-1.0, 1.0]), names["cube"], "cube", COLORS["cube"], "dot")
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


def path_figure(path: VectorPath, meshes: SceneMeshes, lang: str) -> go.Figure:
    """x, its drop along 1 onto the plane (x - mu 1), LayerNorm's rescaling onto the circle,
    and RMSNorm's along x's own ray onto the sphere (d = 1, 2 or 3)."""
    d, names = meshes.d, _names(meshes, lang)
    origin = np.zeros(d)
    x, centered = path.x, path.centered
    layer, rms = path.layernorm, path.rmsnorm
    if d == 1:
        traces = [strip_shape(meshes.sphere, names["sphere"], "sphere", COLORS["sphere"])]
    else:
        traces = _plain_shapes(meshes, names, 0.15, 0.25)
    steps = (  # tag, start, end, colour, dash, the start's and the end's lane (d = 1)
        ("arrow_x", origin, x, "input", "solid", "input", "input"),
        ("drop", x, centered, "plane", "dash", "input", "layernorm"),
        ("scale_layernorm", centered, layer, "layernorm", "dot", "layernorm", "layernorm"),
        ("scale_rmsnorm", x, rms, "rmsnorm", "dot", "input", "rmsnorm"),
    )
    for tag, start, end, color, dash, lane_a, lane_b in steps:
        joined = segments(start[None], end[None], (LANES[lane_a], LANES[lane_b]))
        traces.append(
            scatter(
                d,
                **coordinates(joined),  # at d = 1 the lanes are the points' second column
                mode="lines",
                line=dict(color=COLORS[color], width=4, dash=dash),
                name=translate(f"geometry.path_trace.{tag}", lang),
                meta=tag,
                hoverinfo="skip",
            )
        )
    points = (  # tag, point, colour, lane (d = 1)
        ("x", x, "input", "input"),
        ("mean", path.along_ones, "axis", "input"),
        ("centered", centered, "plane", "layernorm"),
        ("layernorm", layer, "layernorm", "layernorm"),
        ("rmsnorm", rms, "rmsnorm", "rmsnorm"),
    )
    for tag, point, color, lane in points:
        name = translate(f"geometry.path_trace.{tag}", lang)
        size = 7 if d == 3 else 11
        traces.append(
            markers(point[None], d, name, f"point_{tag}", COLORS[color], size, LANES[lane])
        )
    figure = go.Figure(traces)
    reach = max(reach_of([x, layer, rms, centered]), meshes.radius * 1.25)
    lanes = {"input": "x", "layernorm": "LayerNorm(x)", "rmsnorm": "RMSNorm(x)"}
    return scene_layout(figure, d, reach, lanes)
