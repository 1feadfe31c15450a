"""Presenting: a legend under the plot moves down by what the larger axis text takes."""

import plotly.graph_objects as go
import pytest

from ui.presenting import CHART_FONT, _lower_legend


def test_a_bottom_legend_is_lowered_by_the_larger_text():
    figure = go.Figure(go.Scatter(x=[0, 1], y=[1, 2]))
    figure.update_layout(height=420, margin=dict(t=50, b=10), legend=dict(orientation="h", y=-0.18))
    _lower_legend(figure)
    # 2.5 lines' worth of the font's growth (12 -> CHART_FONT px) over the 360 px plot
    assert figure.layout.legend.y == pytest.approx(-0.18 - 2.5 * (CHART_FONT - 12) / 360)


@pytest.mark.parametrize("legend", [dict(orientation="v", y=-0.2), dict(orientation="h", y=1.02)])
def test_other_legends_stay_where_they_are(legend):
    figure = go.Figure(go.Scatter(x=[0, 1], y=[1, 2]))
    figure.update_layout(legend=legend)
    _lower_legend(figure)
    assert figure.layout.legend.y == legend["y"]
