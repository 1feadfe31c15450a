"""The Geometry page's jobs: the scene, one vector, ε, DyT, high dimension, real activations."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ui.compute import Job
from ui.i18n import t

# --- the Geometry page: the scene's calls take milliseconds (benchmarks/RESULTS.md, Geometry)


def _scene_only(spec):
    """``spec`` with the settings wide vectors ignore (per-axis gamma, beta) at their
    defaults, so the high-dimension results are shared whatever the scene's sliders say."""
    from engine.config import GeometrySpec

    plain = GeometrySpec()
    names = [f"{name}_{axis}" for name in ("gamma", "beta") for axis in ("x", "y", "z")]
    return replace(spec, **{name: getattr(plain, name) for name in names})


def geometry_scene(spec) -> Job:
    """The cloud, its three norms' outputs, the sphere, plane, axis and ellipsoid (d <= 3)."""
    from engine.geometry.scene import build_scene

    def run(report, should_stop):
        return build_scene(spec, threads=1)

    return Job("geometry.scene", spec, run, max_entries=64)


def geometry_two_dimensions(spec) -> Job:
    """LayerNorm at d = 2: its two outputs, counted."""
    from engine.geometry.two_dimensions import two_dimensional_layernorm

    def run(report, should_stop):
        return two_dimensional_layernorm(spec, threads=1)

    return Job("geometry.two_dimensions", spec, run, max_entries=32)


def geometry_vector_path(vector: tuple[float, ...], spec) -> Job:
    """One vector step by step (any width; the engine refuses what it does not take), with
    the sphere, plane and axis sized to reach it when it can be drawn (d <= 3), else None."""
    from engine.config import GEOMETRY_SCENE_MAX_D
    from engine.geometry.meshes import scene_meshes
    from engine.geometry.path import vector_path

    def run(report, should_stop):
        path = vector_path(vector, spec, threads=1)
        d = len(vector)
        if d > GEOMETRY_SCENE_MAX_D:
            return path, None
        drawn = np.concatenate([path.x, path.centered, path.layernorm, path.rmsnorm])
        reach = max(1.5 * math.sqrt(d), 1.2 * float(np.abs(drawn[np.isfinite(drawn)]).max()))
        return path, scene_meshes(d, reach)

    return Job("geometry.path", (vector, spec), run, max_entries=64)


def geometry_eps_curve(spec) -> Job:
    """||y|| against the input scale at the spec's eps: the formula and measured norms."""
    from engine.geometry.eps_curve import eps_curve

    def run(report, should_stop):
        return eps_curve(spec, threads=1)

    return Job("geometry.eps_curve", spec, run, max_entries=32)


def geometry_dyt_sweep(spec) -> Job:
    """The cloud through DyT at the engine's alphas (the chosen alpha is not part of it)."""
    from engine.config import GeometrySpec
    from engine.geometry.dyt_sweep import DEFAULT_ALPHAS, dyt_sweep

    sweep_spec = replace(spec, dyt_alpha=GeometrySpec().dyt_alpha)

    def run(report, should_stop):
        return dyt_sweep(sweep_spec, DEFAULT_ALPHAS, threads=1)

    return Job("geometry.dyt_sweep", sweep_spec, run, max_entries=16)


def geometry_high_dimension(spec) -> Job:
    """Histograms, their spread over eps and the identity check (d up to 8192)."""
    from engine.geometry.cost import report_seconds
    from engine.geometry.high_dimension import DEFAULT_EPS_VALUES, high_dimension_report

    wide = _scene_only(spec)

    def run(report, should_stop):
        return high_dimension_report(wide, DEFAULT_EPS_VALUES, report, should_stop, threads=1)

    label = t("geometry.high.running", d=f"{wide.d:,}")
    seconds = report_seconds(wide, len(DEFAULT_EPS_VALUES))
    return Job("geometry.high", wide, run, label, seconds, max_entries=16)


def geometry_plane_view(spec, method: str, axes: tuple[int, int]) -> Job:
    """Inputs and outputs projected onto two directions (PCA, two axes, or 1 and the plane)."""
    from engine.geometry.cost import view_seconds
    from engine.geometry.views import plane_view

    wide = _scene_only(spec)

    def run(report, should_stop):
        return plane_view(wide, method, axes, threads=1)

    label = t("geometry.view_running", d=f"{wide.d:,}")
    key = (wide, method, axes)
    return Job("geometry.view", key, run, label, view_seconds(wide), max_entries=32)


def geometry_real_activations() -> Job:
    """The shipped SmolLM2 dump's norm inputs and outputs, measured (5 norms x 96 tokens)."""
    from engine.geometry.real_activations import real_activations

    def run(report, should_stop):
        return real_activations(threads=1)

    return Job("geometry.real", (), run, max_entries=1)
