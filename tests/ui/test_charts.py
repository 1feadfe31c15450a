"""Every chart is drawn through ui/views/charts.py, so every chart downloads the same way."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from ui.figures.export import figure_csv, figure_image, image_export_available, labelled_table
from ui.views.charts import FIGURES_KEPT, PNG_SCALE, built, chart_config, fitting_css


def test_the_modebar_saves_a_named_png_at_twice_the_drawn_size():
    config = chart_config("dp_residual")
    assert config["toImageButtonOptions"] == {
        "format": "png",
        "filename": "dp_residual",
        "scale": PNG_SCALE,
    }
    assert PNG_SCALE >= 2 and config["displaylogo"] is False
    assert chart_config("ax_box", staticPlot=True)["staticPlot"] is True


BUILDS: list[str] = []  # the names _counted_figure was asked to build, in order


def _counted_figure(values: np.ndarray, name: str = "x") -> go.Figure:
    BUILDS.append(name)
    return go.Figure(go.Scatter(y=values, name=name))


def test_a_shared_figure_is_built_once_per_input_and_a_private_one_each_time():
    BUILDS.clear()
    values = np.random.default_rng().normal(size=5)  # an input no other run has kept
    first = built(_counted_figure, values)
    assert built(_counted_figure, values.copy()) is first  # an equal input: the kept figure
    assert built(_counted_figure, values, name="y") is not first  # a keyword counts
    assert built(_counted_figure, values + 1) is not first
    assert BUILDS == ["x", "y", "x"]
    private = [built(_counted_figure, values, shared=False) for _ in range(2)]
    assert private[0] is not private[1] and private[0] is not first  # an upload's: never kept
    assert BUILDS == ["x", "y", "x", "x", "x"]


def test_a_partial_results_figure_is_built_once_and_never_pushes_out_the_kept_ones():
    """Every session following a training run draws its dozens of partial loss curves; each
    is built once, in a cache of its own."""
    BUILDS.clear()
    kept = built(_counted_figure, values := np.random.default_rng().normal(size=5))
    for step in range(FIGURES_KEPT + 4):  # a long run's partial results
        for _ in range(3):  # three sessions following it
            built(_counted_figure, values * step, name="live", live=True)
    assert BUILDS == ["x"] + ["live"] * (FIGURES_KEPT + 4)
    assert built(_counted_figure, values) is kept


# --- the chart's data as CSV, and the chart as an image ---------------------------------------


def test_the_csv_holds_every_drawn_point_of_every_trace():
    figure = go.Figure()
    figure.add_trace(go.Scatter(x=[1, 2, 3], y=[10.0, 20.0, 30.0], name="Pre-Norm"))
    figure.add_trace(go.Scatter(y=[5.0, 6.0], name="no x"))  # plotly draws y against its index
    figure.add_trace(go.Scatter(y=[1.7], name="√d\u00a0=\u00a01.7"))  # bound on the page only
    figure.add_trace(go.Scatter(y=[2.0], name="ε\u00a0=\u00a01e\u20115"))  # e-notation too
    table = pd.read_csv(io.StringIO(figure_csv(figure)))
    assert list(table.columns) == ["trace", "x", "y"]
    assert table[table.trace == "√d = 1.7"].y.tolist() == [1.7]
    assert table[table.trace == "ε = 1e-5"].y.tolist() == [2.0]
    assert table[table.trace == "Pre-Norm"][["x", "y"]].values.tolist() == [
        [1, 10],
        [2, 20],
        [3, 30],
    ]
    assert table[table.trace == "no x"][["x", "y"]].values.tolist() == [[0, 5], [1, 6]]


def test_a_heatmap_becomes_one_row_per_cell_with_its_axis_labels():
    z = np.arange(6, dtype=float).reshape(2, 3)  # 2 rows (y), 3 columns (x)
    figure = go.Figure(go.Heatmap(z=z, x=["a", "b", "c"], y=[10, 20], name="rms"))
    table = labelled_table(figure)
    assert len(table) == 6
    cell = table[(table.x == "c") & (table.y == 20)]
    assert cell.z.tolist() == [5.0]  # z[1, 2]


def test_subplots_and_unnamed_traces_keep_their_points_apart():
    figure = make_subplots(rows=1, cols=2)
    figure.add_trace(go.Bar(x=["LN", "RMS"], y=[7, 4]), row=1, col=1)
    figure.add_trace(go.Scatter(x=[0.5], y=[2.0], mode="markers"), row=1, col=2)
    table = labelled_table(figure)
    assert table.trace.tolist() == ["bar 1", "bar 1", "scatter 2"]
    assert table.y.tolist() == [7, 4, 2.0]


def _read(figure) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(figure_csv(figure)), dtype=str, keep_default_na=False)


def test_the_csv_names_its_columns_by_the_axes_titles_and_its_panels_apart():
    """A shared x axis titled once (under the bottom panel) names both panels' x; each
    panel's values under its own y title, and a column naming the panel; an unnamed trace
    called by its panel's title, not "bar 1"."""
    figure = make_subplots(rows=2, cols=1, shared_xaxes=True, subplot_titles=("Loss", "KL"))
    figure.add_trace(go.Bar(x=[1, 2], y=[7.0, 4.0]), row=1, col=1)
    figure.add_trace(go.Scatter(x=[1, 2], y=[0.5, 0.25], name="changed"), row=2, col=1)
    figure.update_yaxes(title_text="−log p<br>(nats)", row=1, col=1)
    figure.update_yaxes(title_text="KL (nats)", row=2, col=1)
    figure.update_xaxes(title_text="position x<sub>t</sub>", row=2, col=1)
    table = _read(figure)
    assert list(table.columns) == ["trace", "panel", "position x_t", "−log p (nats)", "KL (nats)"]
    assert table.values.tolist() == [
        ["Loss", "Loss", "1.0", "7.0", ""],
        ["Loss", "Loss", "2.0", "4.0", ""],
        ["changed", "KL", "1.0", "", "0.5"],
        ["changed", "KL", "2.0", "", "0.25"],
    ]


def test_one_panel_needs_no_panel_column_and_untitled_axes_keep_x_and_y():
    titled = go.Figure(go.Bar(x=["a"], y=[1.0]), layout=dict(title="Counts", xaxis_title="y"))
    assert _read(titled).values.tolist() == [["Counts", "a", "1.0"]]
    assert list(_read(titled).columns) == ["trace", "y", "y (y)"]  # never two of one name
    heat = go.Figure(go.Heatmap(z=[[1.0]], colorbar=dict(title=dict(text="rms"))))
    assert list(_read(heat).columns) == ["trace", "x", "y", "rms"]
    scene = go.Figure(go.Scatter3d(x=[1], y=[2], z=[3], name="cloud"))
    scene.update_layout(scene=dict(xaxis_title="x₁", yaxis_title="x₂", zaxis_title="x₃"))
    assert list(_read(scene).columns) == ["trace", "x₁", "x₂", "x₃"]


def test_a_figure_without_data_gives_an_empty_table_not_an_error():
    assert labelled_table(go.Figure()).empty


@pytest.mark.slow
@pytest.mark.skipif(not image_export_available(), reason="kaleido or a local Chromium missing")
def test_kaleido_renders_the_chart_as_svg_and_png_offline():
    figure = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]), layout=dict(title="residual RMS"))
    svg = figure_image(figure, "svg")
    assert svg.lstrip().startswith(b"<svg") and b"residual RMS" in svg
    assert figure_image(figure, "png").startswith(b"\x89PNG")
    with pytest.raises(ValueError):
        figure_image(figure, "pdf")


def test_an_export_whose_page_had_not_loaded_its_script_is_tried_once_more(monkeypatch):
    """kaleido under load: "kaleido_scopes is not defined" once; the second try renders."""
    from kaleido.errors import JavascriptError

    from ui.figures import export

    calls = []

    def to_image(self, **options):
        calls.append(options)
        if len(calls) == 1:
            raise JavascriptError("ReferenceError: kaleido_scopes is not defined")
        return b"<svg/>"

    monkeypatch.setattr(export, "_server_started", True)
    monkeypatch.setattr(go.Figure, "to_image", to_image)
    assert figure_image(go.Figure(), "svg") == b"<svg/>" and len(calls) == 2


def _shown(css: str, box: str, width: float) -> set[str]:
    """The parts of ``box`` a column ``width`` px wide shows under ``css``'s container rules."""
    parts = {f"{box}_{i}" for i in range(3)} | {f"{box}_hint"}
    for rule in css.splitlines():
        match = re.match(rf"@container {box} \(width (<|>=) (\d+)px\) \{{ \.st-key-(\w+)[ ,]", rule)
        if match:
            sign, edge, part = match.groups()
            if (width < int(edge)) == (sign == "<"):
                parts.discard(part)
    return parts


def test_a_fitting_chart_shows_the_widest_layout_that_fits_and_says_when_none_does():
    """An 800 px window cut a one-row wiring diagram after its second norm, with no sign
    that the rest scrolled sideways."""
    css = fitting_css("fit_x", [814, 518, 401])
    assert _shown(css, "fit_x", 900) == {"fit_x_0"}
    assert _shown(css, "fit_x", 814) == {"fit_x_0"}
    assert _shown(css, "fit_x", 600) == {"fit_x_1"}
    assert _shown(css, "fit_x", 470) == {"fit_x_2"}
    assert _shown(css, "fit_x", 380) == {"fit_x_2", "fit_x_hint"}
    assert "container: fit_x / inline-size" in css and "min-width: 401px" in css


def _sideways_page():
    import streamlit as st

    from ui.views.charts import sideways

    with sideways("t", 700, "scroll sideways →"):
        st.write("a table 700 px wide")


def test_a_wide_table_says_it_scrolls_only_on_a_column_narrower_than_it():
    """The Model catalog's tables were cut at the column's edge with no sign that they
    scrolled (the catalog at 1,280 px, both tables at 800 px)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_sideways_page).run()
    css = at.get("html")[0].proto.body
    parts = {"fit_t_0", "fit_t_hint"}
    assert _shown(css, "fit_t", 699) & parts == parts
    assert _shown(css, "fit_t", 700) & parts == {"fit_t_0"}
    assert at.caption[0].value == "scroll sideways →"
