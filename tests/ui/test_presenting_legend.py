"""Presenting: larger chart text on every axis."""

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.projected import CHART_FONT, CHART_TICKS, for_projector


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


def test_on_a_larger_screen_every_pixel_size_grows_with_the_pages_type():
    """At 1,920 × 1,080 the presenting page's type is 30 px, 1.5 times 1,280 × 720's: a
    chart's 16 px ticks beside it read as a footnote.  Every size in pixels grows with it:
    text, ticks, notes, the height (a 3-D scene's too), margins, offsets, markers."""
    from ui.figures.style import frame

    figure = go.Figure(go.Scatter(x=[0, 1], y=[1, 2], marker=dict(size=10), name="a"))
    figure.update_layout(**frame(400, top=40), xaxis=dict(tickfont=dict(size=24)))
    figure.add_annotation(x=0, y=1, text="edge", font=dict(size=13), yshift=-12)
    shown = for_projector(figure, 1.5)
    assert shown.layout.font.size == 27 and shown.layout.title.font.size == 36
    assert shown.layout.yaxis.tickfont.size == 24 and shown.layout.xaxis.tickfont.size == 36
    note = shown.layout.annotations[0]
    assert note.font.size == 27 and note.yshift == -18
    assert shown.layout.height == 600 and shown.layout.margin.t == 60
    assert shown.layout.margin.l == 15 and shown.data[0].marker.size == 15
    assert for_projector(figure).to_plotly_json() == for_projector(figure, 1.0).to_plotly_json()
    scene = go.Figure(go.Scatter3d(x=[0], y=[0], z=[0])).update_layout(height=640)
    shown = for_projector(scene, 1.5)
    assert shown.layout.height == 960 and shown.layout.scene.xaxis.tickfont.size == 24
    bars = go.Figure(go.Bar(x=[1], y=[1], text=["3"], textfont=dict(size=24)))
    bars.update_layout(height=300, legend_title=dict(text="votes", font=dict(size=16)))
    shown = for_projector(bars, 2)  # a bar's marker has no size
    assert shown.layout.height == 600 and shown.data[0].textfont.size == 48
    assert shown.layout.legend.title.font.size == 32


def test_the_browsers_report_of_its_type_is_bounded():
    """Any page can send the reporter's state: only a finite number, within bounds, counts."""
    from ui.projected import MAX_TYPE_SCALE, TYPE_PX, reported_type

    assert reported_type(30) == 30.0 and reported_type(12.5) == TYPE_PX
    assert reported_type(1e9) == MAX_TYPE_SCALE * TYPE_PX
    for hostile in (None, "30", float("nan"), float("inf"), True, [30], {"px": 30}):
        assert reported_type(hostile) is None
