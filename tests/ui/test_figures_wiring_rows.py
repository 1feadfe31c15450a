"""The wiring diagram wrapped onto two or three rows for a narrow column: the same boxes and
words, about half the width, the identity path one unbroken line from x_l to the end."""

from __future__ import annotations

import pytest

from engine.depth.placements import PLACEMENT_IDS
from ui.figures.depth_wiring import STREAM_IN, legible_width, wiring_figure
from ui.i18n import catalog

ZH = catalog("zh")


def _labels(figure) -> list[str]:
    return sorted(a.text for a in figure.layout.annotations if a.text)


def _identity(figure):
    (path,) = [t for t in figure.data if t.name == ZH["depth.wiring_identity"]]
    return list(zip(path.x, path.y))


@pytest.mark.parametrize("rows", [2, 3])
@pytest.mark.parametrize("placement", PLACEMENT_IDS)
def test_wrapped_rows_draw_the_same_boxes_and_words(placement, rows):
    one, wrapped = (wiring_figure(placement, "zh", rows=n) for n in (1, rows))
    assert _labels(wrapped) == _labels(one)
    assert len([s for s in wrapped.layout.shapes if s.type == "rect"]) == len(
        [s for s in one.layout.shapes if s.type == "rect"]
    )
    assert len(wrapped.data[1].x) == len(one.data[1].x) == 2  # both ⊕


@pytest.mark.parametrize("placement", ["pre", "post", "peri", "olmo2", "deepnorm", "pre_scaled"])
def test_two_rows_take_well_under_the_width_of_one_and_three_less_with_a_final_norm(placement):
    """An 800 px window beside the sidebar gives the chart ~470 px: one row of a Pre-Norm
    layer needs 814."""
    widths = [legible_width(wiring_figure(placement, "zh", rows=n)) for n in (1, 2, 3)]
    assert widths[1] < 0.7 * widths[0]
    assert widths[2] <= widths[1]
    assert legible_width(wiring_figure("pre", "zh", rows=3)) < 470
    unwrapped = wiring_figure(placement, "zh", final_norm=False, rows=3)
    assert legible_width(unwrapped) == legible_width(wiring_figure(placement, "zh", False, rows=2))


@pytest.mark.parametrize("rows", [1, 2, 3])
@pytest.mark.parametrize("placement", PLACEMENT_IDS)
def test_the_identity_path_is_one_line_of_straight_runs_from_x_l_to_the_end(placement, rows):
    figure = wiring_figure(placement, "zh", rows=rows)
    path = _identity(figure)
    for (x0, y0), (x1, y1) in zip(path, path[1:]):
        assert x0 == x1 or y0 == y1  # across or down, never slanted
    start = next(a for a in figure.layout.annotations if a.text == STREAM_IN)
    assert path[0][1] == start.y and path[0][0] > start.x
    # the stream runs rightwards along each row, and back left only in a turn between rows
    streams = {y0 for (x0, y0), (x1, y1) in zip(path, path[1:]) if y0 == y1 and x1 > x0}
    final = ZH["depth.wiring_output"] in _labels(figure)
    assert len(streams) == (rows if final else min(rows, 2))
    assert set(figure.data[1].y) <= streams  # each ⊕ sits on a stream
    assert path[-1][1] == min(streams)  # the layer ends on the lowest row
    low, high = figure.layout.yaxis.range
    assert low < path[-1][1] - 0.5 and high > path[0][1] + 1.5
    # the rows below the first make the figure taller, not the text smaller
    assert figure.layout.height >= 280 + 100 * (len(streams) - 1)
