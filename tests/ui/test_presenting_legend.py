"""Presenting: larger chart text on every axis."""

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.presenting import CHART_FONT, CHART_TICKS, for_projector


def test_a_projected_figure_enlarges_the_ticks_of_every_axis_and_leaves_the_original():
    figure = make_subplots(rows=1, cols=2)
    figure.add_trace(go.Scatter(x=[0, 1], y=[1, 2]), row=1, col=1)
    figure.add_trace(go.Scatter(x=[0, 1], y=[2, 1]), row=1, col=2)
    shown = for_projector(figure)
    for axis in (shown.layout.xaxis, shown.layout.xaxis2, shown.layout.yaxis, shown.layout.yaxis2):
        assert axis.tickfont.size == CHART_TICKS
    assert shown.layout.legend.font.size == CHART_FONT
    assert figure.layout.xaxis2.tickfont.size is None  # the cached figure is not changed


def test_a_projected_figure_enlarges_its_subplot_titles_and_its_small_notes():
    """The experiments' two panels kept make_subplots' 16 px titles on a projector, and the
    Axes box its 13 px edge names: a note with a size of its own is at least the chart's
    text; one without takes the chart's (larger) font; a larger one stays."""
    figure = make_subplots(rows=2, cols=1, subplot_titles=("Loss", "KL"))
    figure.add_annotation(x=1, y=2, text="a point's note", font=dict(size=11))
    figure.add_annotation(x=1, y=2, text="a count", font=dict(size=24))
    figure.add_annotation(x=1, y=2, text="a label")
    shown = for_projector(figure)
    sizes = {note.text: note.font.size for note in shown.layout.annotations}
    assert sizes["Loss"] == sizes["KL"] == CHART_FONT + 2
    assert sizes["a point's note"] == CHART_FONT and sizes["a count"] == 24
    assert sizes["a label"] is None and shown.layout.font.size == CHART_FONT
    assert figure.layout.annotations[2].font.size == 11  # the cached figure is not changed


def test_a_projected_3d_scene_enlarges_its_ticks():
    figure = go.Figure(go.Scatter3d(x=[0, 1], y=[0, 1], z=[0, 1]))
    shown = for_projector(figure)
    assert shown.layout.scene.zaxis.tickfont.size == CHART_TICKS


def test_a_projected_3d_scene_keeps_every_other_tick_around_zero():
    """Five ticks from −2 to 2 on each axis ran into each other at the projector's text
    size; projected, an axis keeps every other one around 0, and one of three keeps all."""
    figure = go.Figure(go.Scatter3d(x=[0], y=[0], z=[0]))
    figure.update_layout(
        scene=dict(
            xaxis=dict(tickvals=[-3, -2, -1, 0, 1, 2, 3], ticktext=list("abcdefg")),
            yaxis=dict(tickvals=[-1.0, -0.5, 0.0, 0.5, 1.0]),
            zaxis=dict(tickvals=[-1, 0, 1]),
        )
    )
    shown = for_projector(figure)
    assert list(shown.layout.scene.xaxis.tickvals) == [-2, 0, 2]
    assert list(shown.layout.scene.xaxis.ticktext) == ["b", "d", "f"]  # each with its value
    assert list(shown.layout.scene.yaxis.tickvals) == [-1.0, 0.0, 1.0]
    assert list(shown.layout.scene.zaxis.tickvals) == [-1, 0, 1]
    assert list(figure.layout.scene.xaxis.tickvals) == [-3, -2, -1, 0, 1, 2, 3]  # a copy


def test_a_projected_figure_grows_a_row_for_each_legend_entry_past_the_second():
    """Depth's first chart, five entries below a 420 px figure, kept a 149 px plot at 1,024 px
    while presenting: each entry past the second now brings a row of the projector's type."""
    from ui.figures.style import frame

    figure = go.Figure([go.Scatter(x=[0, 1], y=[0, i], name=f"run {i}") for i in range(5)])
    figure.update_layout(**frame(420))
    figure.add_trace(go.Scatter(x=[0], y=[0], name="run 0", showlegend=False))  # no entry
    assert for_projector(figure).layout.height == 420 + 3 * round(1.5 * CHART_FONT)
    two = go.Figure([go.Scatter(x=[0], y=[0], name=n) for n in "ab"]).update_layout(**frame(420))
    assert for_projector(two).layout.height == 420
    scene = go.Figure([go.Scatter3d(x=[0], y=[0], z=[0], name=n) for n in "abcde"])
    assert for_projector(scene.update_layout(**frame(640))).layout.height == 640
