import math

import pytest
from plotly.subplots import make_subplots

from ui.figures.vector_lab import ROW_HEIGHTS, SPACING, input_output_figure
from ui.i18n import catalog

ZH = catalog("zh")


def test_figure_holds_input_and_each_output_series():
    figure = input_output_figure(
        [1, 2, 3, 4], [("LayerNorm", [-1.34, -0.45, 0.45, 1.34], "layernorm")], "zh"
    )
    assert [trace.type for trace in figure.data] == ["bar", "bar"]
    assert list(figure.data[0].y) == [1, 2, 3, 4]
    assert list(figure.data[1].y) == [-1.34, -0.45, 0.45, 1.34]
    assert figure.data[1].name == "LayerNorm"
    assert list(figure.data[1].x) == [1, 2, 3, 4]
    titles = [a.text for a in figure.layout.annotations]  # the two panels'
    assert titles == [ZH["vector_lab.chart_input"], ZH["vector_lab.chart_output"]]
    assert figure.layout.xaxis2.title.text == ZH["vector_lab.chart_index"]


def test_nonfinite_outputs_are_marked_not_dropped_silently():
    figure = input_output_figure(
        [1, 2, 3], [("RMSNorm", [0.5, math.nan, math.inf], "rmsnorm")], "zh"
    )
    markers = [
        trace for trace in figure.data if trace.type == "scatter" and trace.mode == "markers"
    ]
    assert len(markers) == 1
    assert list(markers[0].x) == [2, 3]
    assert list(markers[0].hovertext) == ["nan", "inf"]
    assert markers[0].name == f"RMSNorm: {ZH['vector_lab.chart_nonfinite']}"
    assert figure.data[1].y[1] is None


def test_the_nonfinite_marks_sit_below_another_norms_outputs_of_zero():
    """The float16 textbook row: LayerNorm all NaN, RMSNorm all 0; the ✕ row is drawn apart
    from RMSNorm's zeros and inside the panel's range."""
    d = 4096
    figure = input_output_figure(
        [100.0] * d,
        [("RMSNorm", [0.0] * d, "rmsnorm"), ("LayerNorm", [math.nan] * d, "layernorm")],
        "en",
    )
    (marks,) = [t for t in figure.data if t.type == "scatter" and t.mode == "markers"]
    low, high = figure.layout.yaxis2.range
    assert set(marks.y) == {-0.5} and low < -0.5 < 0 < high


def test_wide_vectors_are_drawn_as_lines():
    figure = input_output_figure(list(range(100)), [("y", list(range(100)), "dyt")], "zh")
    assert {trace.type for trace in figure.data} == {"scatter"}


def test_a_line_leaves_room_before_channel_one_and_after_the_last():
    """A spike in channel 1 (the massive-activation preset) is drawn off the y axis's line."""
    x = [1000.0] + [1.0] * 4095
    figure = input_output_figure(x, [("y", [0.0] * 4096, "rmsnorm")], "en")
    for axis in (figure.layout.xaxis, figure.layout.xaxis2):
        low, high = axis.range
        assert low < 1 - 50 and high > 4096 + 50  # more than 1 % of d on each side


def test_the_two_panels_are_the_layout_plotlys_make_subplots_writes():
    """The layout is written as data (one validation); plotly's own ``make_subplots`` with
    the same rows, shared channel axis and titles is the oracle for its axes and titles."""
    for d in (4, 40):  # a tick per channel up to 16
        figure = input_output_figure(list(range(d)), [("RMSNorm", [1.0] * d, "rmsnorm")], "zh")
        oracle = make_subplots(
            rows=2,
            cols=1,
            shared_xaxes=True,
            vertical_spacing=SPACING,
            row_heights=list(ROW_HEIGHTS),
            subplot_titles=(ZH["vector_lab.chart_input"], ZH["vector_lab.chart_output"]),
        )
        ours = figure.layout.to_plotly_json()
        for name in ("xaxis", "yaxis", "xaxis2", "yaxis2"):
            axis = oracle.layout[name].to_plotly_json()
            drawn = {key: ours[name][key] for key in axis}
            assert drawn == axis, name
        assert [a.to_plotly_json() for a in figure.layout.annotations] == [
            a.to_plotly_json() for a in oracle.layout.annotations
        ]
        assert [(t.xaxis, t.yaxis) for t in figure.data] == [("x", "y"), ("x2", "y2")]


def test_each_norm_keeps_its_colour_whichever_is_chosen():
    """The chosen norm first, the comparison after: LayerNorm stays blue and RMSNorm red, as
    on every other page (the chosen one was blue, so picking RMSNorm turned LayerNorm orange)."""
    from ui.figures.style import NORM_COLORS

    for order in (("rmsnorm", "layernorm"), ("layernorm", "rmsnorm")):
        outputs = [(kind, [0.0, 1.0], kind) for kind in order]
        figure = input_output_figure([1, 2], outputs, "en")
        colours = {trace.name: trace.marker.color for trace in figure.data[1:]}
        assert colours == {kind: NORM_COLORS[kind] for kind in order}


def test_an_output_of_zeros_says_so_in_its_empty_panel():
    """float16 LayerNorm of [-300, 300, -300, 300]: σ² overflows, rstd = 0, y = 0 — bars of
    height 0, which drew an empty panel."""
    figure = input_output_figure([-300, 300], [("LayerNorm", [0.0, 0.0], "layernorm")], "en")
    assert "Every output of LayerNorm is 0" in [a.text for a in figure.layout.annotations]
    figure = input_output_figure([1, 2], [("LayerNorm", [-1.0, 1.0], "layernorm")], "en")
    assert not any("is 0" in a.text for a in figure.layout.annotations)


@pytest.mark.parametrize(
    "outputs",
    [
        [("LayerNorm", [math.nan] * 4, "layernorm"), ("RMSNorm", [0.0] * 4, "rmsnorm")],
        [("LayerNorm", [0.0] * 3, "layernorm"), ("RMSNorm", [1.0] * 3, "rmsnorm")],
        [("LayerNorm", [0.0, 0.0], "layernorm"), ("RMSNorm", [-2.0, math.inf], "rmsnorm")],
    ],
)
def test_the_all_zero_note_sits_in_a_band_above_every_bar_and_mark(outputs):
    """1e20 × 4: LayerNorm NaN (✕ at 0), RMSNorm all 0: the note in the panel's middle ran over
    the ✕ marks, and over another norm's bars (a constant row: LayerNorm 0, RMSNorm 1). It now
    hangs from the top of the outputs' axis, over a free band of at least a fifth of it."""
    figure = input_output_figure([1.0] * len(outputs[0][1]), outputs, "zh")
    note = next(a for a in figure.layout.annotations if "0" in a.text and a.yref == "y2")
    low, top = figure.layout.yaxis2.range
    drawn = [v if math.isfinite(v) else 0.0 for _, values, _ in outputs for v in values]
    assert note.y == top and note.yanchor == "top"
    assert low <= min(drawn) and (top - max(drawn)) / (top - low) >= 0.2
