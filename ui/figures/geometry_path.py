"""Geometry page: one vector step by step — x, its drop along 1 onto the plane <v, 1> = 0
(x - mu 1), LayerNorm's rescaling onto the circle and RMSNorm's along x's own ray onto the
sphere (d = 1, 2 or 3).

Pure function: an ``engine.geometry.path.VectorPath`` and the meshes in, ``go.Figure`` out.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from engine.geometry.meshes import SceneMeshes
from engine.geometry.path import VectorPath
from ui.figures.geometry_traces import (
    COLORS,
    LANES,
    SceneLabels,
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
            shape(meshes.sphere, d, labels.sphere, "sphere", COLORS["sphere"], 0.15),
            shape(meshes.ones_plane, d, labels.plane, "plane", COLORS["plane"], 0.25),
            polyline(
                meshes.ones_axis.points.reshape(-1, d),
                d,
                labels.axis,
                "ones_axis",
                COLORS["axis"],
                dash="dash",
            ),
            shape(
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
        traces.append(strip_shape(meshes.sphere.points, labels.sphere, "sphere", COLORS["sphere"]))
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
        joined = segments(start[None], end[None], (lane_a, lane_b))
        xyz = coordinates(joined) if d > 1 else dict(x=joined[:, 0], y=joined[:, 1])
        traces.append(
            scatter(
                d,
                **xyz,
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
            markers(point[None], d, names[tag], f"point_{tag}", color, 7 if d == 3 else 11, lane)
        )
    figure = go.Figure(traces)
    reach = max(reach_of([x, layer, rms, centered]), meshes.radius * 1.25)
    return scene_layout(figure, d, reach, labels)
