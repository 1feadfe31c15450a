"""ui.figures.geometry and geometry_charts: each figure holds the engine's numbers, the shapes
are where the algebra puts them, words are the language's (Chinese here, compared with the
catalog), log axes label decades only."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.config import GeometrySpec
from engine.geometry.dyt_sweep import dyt_sweep
from engine.geometry.eps_curve import eps_curve
from engine.geometry.high_dimension import Measures, high_dimension_report
from engine.geometry.meshes import scene_meshes
from engine.geometry.path import vector_path
from engine.geometry.scene import build_scene
from engine.geometry.views import plane_view
from tests.plain_text import plain
from ui.figures import geometry_charts as charts
from ui.figures.geometry import _box_edges, path_figure, scene_figure
from ui.formatting import format_number
from ui.i18n import catalog

ZH = catalog("zh")


def _by_tag(figure) -> dict:
    return {trace.meta: trace for trace in figure.data}


def _xyz(trace) -> np.ndarray:
    parts = [
        np.asarray(getattr(trace, n), dtype=float)
        for n in ("x", "y", "z")
        if hasattr(trace, n) and getattr(trace, n) is not None
    ]
    return np.column_stack(parts)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_the_scene_draws_each_output_as_the_engine_computed_it(d):
    scene = build_scene(GeometrySpec(d=d, count=50, shift=0.5))
    figure = scene_figure(scene, ("layernorm", "rmsnorm", "dyt"), "zh")
    traces = _by_tag(figure)
    assert {"inputs", "layernorm", "rmsnorm", "dyt", "sphere"} <= set(traces)
    sphere = ZH["geometry.trace.sphere"].format(radius=format_number(math.sqrt(d)))
    assert traces["rmsnorm"].name == "RMSNorm(x)" and traces["sphere"].name == sphere
    if d > 1:
        np.testing.assert_allclose(_xyz(traces["rmsnorm"]), scene.cloud.rmsnorm.y)
        np.testing.assert_allclose(_xyz(traces["inputs"]), scene.cloud.inputs)
    else:  # the strip: values on x, one lane per norm
        np.testing.assert_allclose(traces["rmsnorm"].x, scene.cloud.rmsnorm.y[:, 0])
        assert set(np.asarray(traces["rmsnorm"].y)) == {2.0}
        rows = [ZH["geometry.trace.inputs"], "LayerNorm(x)", "RMSNorm(x)", "DyT(x)"]
        assert list(figure.layout.yaxis.ticktext) == rows
    # LayerNorm's few points drawn last, over RMSNorm's
    order = [trace.meta for trace in figure.data]
    assert order.index("layernorm") > order.index("rmsnorm")


def test_the_d1_strip_labels_the_rows_drawn_and_keeps_its_ticks_clear_of_the_legend():
    """Under Streamlit's plotly template (no automargin) the legend below the strip covered
    its x ticks and the rows' labels fell off the left edge: the margins grow to hold them."""
    import streamlit.elements.plotly_chart  # noqa: F401  the template the pages draw with

    scene = build_scene(GeometrySpec(d=1, count=50))
    figure = scene_figure(scene, ("rmsnorm",), "en")
    assert figure.layout.xaxis.automargin and figure.layout.yaxis.automargin
    assert list(figure.layout.yaxis.ticktext) == ["inputs x", "RMSNorm(x)"]
    assert list(figure.layout.yaxis.tickvals) == [0, 2]
    assert figure.layout.yaxis.range == (2.6, -0.6)  # no empty rows below the last
    path = path_figure(vector_path((1.0,), GeometrySpec()), scene.meshes, "en")
    assert list(path.layout.yaxis.ticktext) == ["x", "LayerNorm(x)", "RMSNorm(x)"]
    assert path.layout.xaxis.automargin


def test_the_d3_scene_is_a_rotatable_cube_with_surfaces_and_gaps_between_lines():
    scene = build_scene(GeometrySpec(d=3, count=20))
    figure = scene_figure(scene, ("layernorm",), "zh", inputs=True, lines=True)
    traces = _by_tag(figure)
    assert traces["sphere"].type == "surface" and traces["plane"].type == "surface"
    assert figure.layout.scene.aspectmode == "cube" and figure.layout.uirevision == "geometry"
    lines = _xyz(traces["lines_layernorm"])  # start, end, gap for each of 20 inputs
    assert lines.shape == (60, 3) and np.isnan(lines[2::3]).all()
    np.testing.assert_allclose(lines[0::3], scene.cloud.inputs)
    np.testing.assert_allclose(lines[1::3], scene.cloud.layernorm.y)
    for axis in (figure.layout.scene.xaxis, figure.layout.scene.yaxis, figure.layout.scene.zaxis):
        low, high = axis.range  # no tick in the outer fifth: none at the box's corners
        assert 0 in axis.tickvals and len(axis.tickvals) >= 3
        assert max(abs(v) for v in axis.tickvals) <= 0.8 * high and low == -high


def test_toggles_leave_out_inputs_and_lines():
    scene = build_scene(GeometrySpec(d=3, count=20))
    tags = set(_by_tag(scene_figure(scene, ("rmsnorm",), "zh", inputs=False, lines=True)))
    assert "inputs" not in tags and "lines_rmsnorm" not in tags and "rmsnorm" in tags


def test_the_gemma_points_sit_on_the_standard_ellipsoid():
    spec = GeometrySpec(d=3, count=20, gamma_x=2.0, gamma_y=-0.5, beta_z=1.0)
    scene = build_scene(spec)
    traces = _by_tag(scene_figure(scene, ("layernorm",), "zh", False, False, "affine"))
    assert traces["layernorm"].name == "LayerNorm(x) · γ, β"  # the spec's γ and β applied
    gemma = _xyz(traces["gemma"])
    gamma, beta = np.array([2.0, -0.5, 1.0]), np.array([0.0, 0.0, 1.0])
    # the ellipsoid sum(((p - beta) / gamma)^2) = d, written independently of the meshes
    np.testing.assert_allclose((((gemma - beta) / gamma) ** 2).sum(axis=1), 3.0, rtol=1e-9)
    assert traces["ellipsoid"].type == "surface" and "sphere" not in traces


@pytest.mark.parametrize("d, edges", [(2, 4), (3, 12)])
def test_dyts_box_has_the_edges_of_a_square_or_a_cube(d, edges):
    points = _box_edges(d)
    assert points.shape == (3 * edges, d)
    corners = points[~np.isnan(points).any(axis=1)]
    assert set(np.abs(corners).ravel()) == {1.0}
    starts, ends = points[0::3], points[1::3]
    assert (np.sum(starts != ends, axis=1) == 1).all()  # each edge changes one coordinate


@pytest.mark.parametrize("vector", [(1.0, 2.0, 6.0), (3.0, 1.0), (2.0,)])
def test_the_path_shows_x_its_drop_and_both_results(vector):
    spec = GeometrySpec()
    path = vector_path(vector, spec)
    d = len(vector)
    figure = path_figure(path, scene_meshes(d, 8.0), "zh")
    traces = _by_tag(figure)
    assert {"drop", "point_x", "point_centered", "point_layernorm", "point_rmsnorm"} <= set(traces)
    assert traces["drop"].name == ZH["geometry.path_trace.drop"]
    if d > 1:
        np.testing.assert_allclose(_xyz(traces["point_centered"])[0], path.centered)
        drop = _xyz(traces["drop"])
        np.testing.assert_allclose(drop[0], path.x)
        np.testing.assert_allclose(drop[1], path.centered)
        # the drop is parallel to the all-ones axis
        step = drop[1] - drop[0]
        np.testing.assert_allclose(step, np.full(d, step[0]))


def test_eps_curve_has_log_decades_and_the_formula_over_the_points():
    curve = eps_curve(GeometrySpec(d=3, count=100, spread=0.003, eps=1e-5))
    figure = charts.eps_curve_figure(curve, "zh")
    assert figure.layout.xaxis.type == "log" and figure.layout.xaxis.dtick == 1
    assert figure.data[-1].meta == "formula"
    np.testing.assert_allclose(figure.data[-1].y, curve.predicted)
    vline = [s for s in figure.layout.shapes if s.x0 == s.x1]
    assert vline and vline[0].x0 == pytest.approx(math.sqrt(1e-5))  # data units on a log axis
    # its label sits at the line: annotations on a log axis take log10 units
    label = next(a for a in figure.layout.annotations if a.text == "√ε = 0.003162")  # 4 digits
    assert label.x == pytest.approx(math.log10(math.sqrt(1e-5))) and label.yref == "paper"
    assert figure.layout.title.text == ZH["geometry.eps_curve.title"]
    assert figure.data[-1].name == ZH["geometry.eps_curve.formula"]


def test_dyt_norms_mark_the_chosen_alpha_and_label_decades():
    sweep = dyt_sweep(GeometrySpec(d=3, count=50))
    figure = charts.dyt_norms_figure(sweep, 2.0, "zh")
    assert figure.layout.xaxis.dtick == 1 and figure.layout.xaxis.type == "log"
    assert any(s.x0 == 2.0 for s in figure.layout.shapes)
    low, high = figure.layout.xaxis.range
    assert low < math.log10(sweep.alphas[0]) and high > math.log10(sweep.alphas[-1])
    median = _by_tag(figure)["median"]
    np.testing.assert_allclose(median.y, np.median(sweep.norm, axis=1))
    assert figure.layout.yaxis2.title.text == ZH["geometry.dyt.saturated"]
    assert figure.layout.yaxis2.showgrid is False  # one set of gridlines, not two misaligned
    assert figure.layout.yaxis2.ticktext[-1] == "100\u00a0%"  # as the sentences write a share
    chosen = next(a for a in figure.layout.annotations if a.text == ZH["geometry.dyt.chosen"])
    assert chosen.x == pytest.approx(math.log10(2.0))


def test_shared_bins_keep_a_spike_in_one_bin():
    jitter = 27.7128 + np.random.default_rng(0).normal(0, 1e-6, 500)
    edges = charts.shared_bins([jitter], scale=27.7)
    counts, _ = np.histogram(jitter, bins=edges)
    assert counts.max() == 500  # float32 jitter does not split the spike
    assert edges[-1] - edges[0] == pytest.approx(charts.MIN_RANGE_SHARE * 27.7)
    assert charts.shared_bins([np.array([np.nan])], scale=1.0) is None


def test_a_panel_of_cosines_stays_within_their_bounds():
    """Cosines of 1 (RMSNorm keeps every direction) drew an axis from 0.96 to 1.04: the
    window, as wide as before, now ends at 1, and a spike at -1 starts at -1."""
    for value, inside in ((1.0, lambda e: e[-1] == 1.0), (-1.0, lambda e: e[0] == -1.0)):
        edges = charts.shared_bins([np.full(50, value)], scale=1.0, bounds=(-1.0, 1.0))
        assert inside(edges) and edges[-1] - edges[0] == pytest.approx(charts.MIN_RANGE_SHARE)
        counts, _ = np.histogram(np.full(50, value), bins=edges)
        assert counts.sum() == 50  # np.histogram's last bin holds its right edge
    spread = charts.shared_bins([np.array([0.2, 0.9])], scale=1.0, bounds=(-1.0, 1.0))
    assert (spread[0], spread[-1]) == (0.2, 0.9)  # a range inside them is left as it is


def test_cosine_error_bars_stop_at_one_and_norm_bars_at_zero():
    """A mean cosine near 1 with a spread: ± std would draw a cosine above 1."""
    spread = high_dimension_report(GeometrySpec(d=8, count=300, shift=1.0), threads=1).spread
    figure = charts.spread_figure(spread, "en")
    for trace in figure.data:
        top = np.asarray(trace.y) + np.asarray(trace.error_y.array)
        bottom = np.asarray(trace.y) - np.asarray(trace.error_y.arrayminus)
        finite = np.isfinite(top)
        if trace.meta.endswith("_2"):  # the cosine panel
            assert np.all(top[finite] <= 1 + 1e-12) and np.all(bottom[finite] >= -1 - 1e-12)
        assert np.all(bottom[np.isfinite(bottom)] >= -1e-12) or trace.meta.endswith("_2")
    rms_cos = next(t for t in figure.data if t.meta == "rmsnorm_2")
    assert np.nanmax(np.asarray(rms_cos.y) + spread.rmsnorm.cos_std) > 1  # it was cut
    assert "10⁻⁵" in list(rms_cos.x) and not [e for e in rms_cos.x if "e" in e]  # as the slider
    # one notation along the axis: never 10⁻⁵ beside 0.0001
    assert not [e for e in rms_cos.x if "." in e] and "10⁻⁴" in list(rms_cos.x)


def test_histograms_count_every_finite_value_of_every_series():
    report = high_dimension_report(GeometrySpec(d=64, count=300, shift=1.0), threads=1)
    found = report.histograms
    series = [(k, k, getattr(found, k)) for k in ("layernorm", "rmsnorm", "dyt")]
    figure = charts.histograms_figure(series, ("a", "b", "c"), (found.sqrt_d, 64.0, 1.0), 8.0)
    traces = _by_tag(figure)
    for kind in ("layernorm", "rmsnorm", "dyt"):
        for column in (1, 2, 3):
            assert sum(traces[f"{kind}_{column}"].y) == 300
    assert max(traces["layernorm_1"].y) == 300  # the spike at sqrt(d)
    assert [a.text for a in figure.layout.annotations][-1] == "√d = 8"


def test_input_lengths_spanning_decades_are_binned_in_log10():
    norms = np.array([100.0, 150.0, 200.0, 26000.0])
    measures = Measures(norms, np.zeros(4), np.ones(4))
    figure = charts.histograms_figure(
        [("x", "input", measures)], ("‖x‖", "⟨x, 1⟩"), (None, None), log_first=True
    )
    bars = _by_tag(figure)["input_1"]
    assert bars.x[0] < 2.1 and bars.x[-1] > 4.3  # log10 of the lengths
    assert list(figure.layout.xaxis.ticktext) == [
        "10<sup>2</sup>",
        "10<sup>3</sup>",
        "10<sup>4</sup>",
        "10<sup>5</sup>",
    ]


def test_plane_view_projects_every_kind_with_equal_scales():
    view = plane_view(GeometrySpec(d=16, count=100, shift=2.0), "ones", threads=1)
    figure = charts.plane_view_figure(view, "zh", ("layernorm", "rmsnorm"))
    traces = _by_tag(figure)
    assert traces["inputs"].name == ZH["geometry.trace.inputs"]
    assert plain(figure.layout.title.text) == ZH["geometry.view_title"].format(rows=100, d=16)
    np.testing.assert_allclose(traces["layernorm"].x, view.layernorm[:, 0])
    np.testing.assert_allclose(traces["layernorm"].x, 0.0, atol=1e-5)  # orthogonal to 1
    assert figure.layout.yaxis.scaleanchor == "x" and "dyt" not in traces


def test_lengths_within_a_decade_stay_on_a_linear_axis():
    norms = np.array([2.0, 2.5, 3.0, 3.9])
    measures = Measures(norms, np.zeros(4), np.ones(4))
    figure = charts.histograms_figure(
        [("x", "input", measures)], ("‖x‖", "⟨x, 1⟩"), (None, None), log_first=True
    )
    bars = _by_tag(figure)["input_1"]
    assert bars.x[0] >= 2.0 - 1e-9 and bars.x[-1] <= 3.9
    assert figure.layout.xaxis.ticktext is None


def test_the_length_panel_leaves_room_past_the_spike_at_sqrt_d():
    """LayerNorm's and RMSNorm's lengths all equal sqrt(d), the panel's largest value: its bar,
    dashed line and label sat on the plot's right edge, half cut."""
    report = high_dimension_report(GeometrySpec(d=64, count=200), threads=1)
    found = report.histograms
    series = [(k, k, getattr(found, k)) for k in ("layernorm", "rmsnorm", "dyt")]
    figure = charts.histograms_figure(series, ("a", "b", "c"), (found.sqrt_d, 64.0, 1.0), 8.0)
    low, high = figure.layout.xaxis.range
    spike = _by_tag(figure)["layernorm_1"]
    right = max(spike.x) + spike.width / 2  # the last bar's right side
    assert high - max(right, 8.0) >= 0.05 * (high - low)
    assert low < min(_by_tag(figure)["dyt_1"].x)


def test_coinciding_spread_curves_both_show():
    """||y|| / sqrt(d) of LayerNorm and RMSNorm coincide for zero-mean inputs: the curve drawn
    second hid the first, whose legend entry then matched nothing visible."""
    spread = high_dimension_report(GeometrySpec(d=64, count=100), threads=1).spread
    figure = charts.spread_figure(spread, "zh")
    under, over = (t for t in figure.data if t.meta.endswith("_1"))  # in drawing order
    assert np.allclose(under.y, over.y, atol=0.01)  # they coincide on the chart
    assert over.line.width < under.line.width and over.marker.size < under.marker.size
    assert over.line.dash not in (None, "solid")


def test_the_sqrt_d_label_ends_left_of_the_spike_bar():
    """The label "√d = 27.7128" ended at the dashed line and touched the spike's bar, which
    reaches half a bin left of √d: it now ends left of that bar's left edge."""
    report = high_dimension_report(GeometrySpec(d=64, count=300), threads=1)
    found = report.histograms
    series = [(k, k, getattr(found, k)) for k in ("layernorm", "rmsnorm", "dyt")]
    figure = charts.histograms_figure(series, ("a", "b", "c"), (found.sqrt_d, 64.0, 1.0), 8.0)
    label = next(a for a in figure.layout.annotations if a.text.startswith("√d"))
    spike = _by_tag(figure)["rmsnorm_1"]
    tallest = int(np.argmax(spike.y))
    left_edge = spike.x[tallest] - spike.width / 2
    assert label.xanchor == "right" and label.x <= left_edge + 1e-9 and label.xshift < 0
