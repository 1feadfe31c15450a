"""Presenting: larger chart text on every axis, and a legend under the plot moved down by
what the larger axis text takes."""

import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from ui.presenting import CHART_FONT, CHART_TICKS, _lower_legend, for_projector


def test_a_bottom_legend_moves_to_the_figure_s_edge_clear_of_the_axis_title():
    figure = go.Figure(go.Scatter(x=[0, 1], y=[1, 2]))
    figure.update_layout(height=420, margin=dict(t=50, b=10), legend=dict(orientation="h", y=-0.18))
    _lower_legend(figure)
    legend = figure.layout.legend
    assert (legend.yref, legend.y, legend.yanchor) == ("container", 0, "bottom")


@pytest.mark.parametrize("legend", [dict(orientation="v", y=-0.2), dict(orientation="h", y=1.02)])
def test_other_legends_stay_where_they_are(legend):
    figure = go.Figure(go.Scatter(x=[0, 1], y=[1, 2]))
    figure.update_layout(legend=legend)
    _lower_legend(figure)
    assert figure.layout.legend.y == legend["y"]


def test_a_projected_figure_enlarges_the_ticks_of_every_axis_and_leaves_the_original():
    figure = make_subplots(rows=1, cols=2)
    figure.add_trace(go.Scatter(x=[0, 1], y=[1, 2]), row=1, col=1)
    figure.add_trace(go.Scatter(x=[0, 1], y=[2, 1]), row=1, col=2)
    shown = for_projector(figure)
    for axis in (shown.layout.xaxis, shown.layout.xaxis2, shown.layout.yaxis, shown.layout.yaxis2):
        assert axis.tickfont.size == CHART_TICKS
    assert shown.layout.legend.font.size == CHART_FONT
    assert figure.layout.xaxis2.tickfont.size is None  # the cached figure is not changed


def test_a_projected_3d_scene_enlarges_its_ticks():
    figure = go.Figure(go.Scatter3d(x=[0, 1], y=[0, 1], z=[0, 1]))
    shown = for_projector(figure)
    assert shown.layout.scene.zaxis.tickfont.size == CHART_TICKS
