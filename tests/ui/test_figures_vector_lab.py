import math

from ui.figures.vector_lab import input_output_figure
from ui.i18n import catalog

ZH = catalog("zh")


def test_figure_holds_input_and_each_output_series():
    figure = input_output_figure([1, 2, 3, 4], [("LayerNorm", [-1.34, -0.45, 0.45, 1.34])], "zh")
    assert [trace.type for trace in figure.data] == ["bar", "bar"]
    assert list(figure.data[0].y) == [1, 2, 3, 4]
    assert list(figure.data[1].y) == [-1.34, -0.45, 0.45, 1.34]
    assert figure.data[1].name == "LayerNorm"
    assert list(figure.data[1].x) == [1, 2, 3, 4]
    titles = [a.text for a in figure.layout.annotations]  # the two panels'
    assert titles == [ZH["vector_lab.chart_input"], ZH["vector_lab.chart_output"]]
    assert figure.layout.xaxis2.title.text == ZH["vector_lab.chart_index"]


def test_nonfinite_outputs_are_marked_not_dropped_silently():
    figure = input_output_figure([1, 2, 3], [("RMSNorm", [0.5, math.nan, math.inf])], "zh")
    markers = [
        trace for trace in figure.data if trace.type == "scatter" and trace.mode == "markers"
    ]
    assert len(markers) == 1
    assert list(markers[0].x) == [2, 3]
    assert list(markers[0].hovertext) == ["nan", "inf"]
    assert markers[0].name == f"RMSNorm: {ZH['vector_lab.chart_nonfinite']}"
    assert figure.data[1].y[1] is None


def test_wide_vectors_are_drawn_as_lines():
    figure = input_output_figure(list(range(100)), [("y", list(range(100)))], "zh")
    assert {trace.type for trace in figure.data} == {"scatter"}
