"""ui.figures.axes, axes_box and axes_batchnorm: pure builders, checked on engine results and
hand-made masks, their words those of the language they are built in (Chinese here, compared
with the catalog); ui.text.axes: the sentences carry the engine's numbers."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from engine.axes.batch_of_one import batch_of_one
from engine.axes.causal_leak import causal_leak
from engine.axes.limits import MAX_DRAWN_CELLS
from engine.axes.padding import padding_pollution
from engine.axes.sharing import axes_statistics, select_cell
from engine.axes.small_batch import small_batch_noise
from engine.axes.train_eval import train_eval_gap
from engine.config import AxesSpec
from tests.plain_text import plain
from ui.figures import axes_batchnorm as charts
from ui.figures.axes import (
    DIM_MAX,
    HALF_DIM,
    bar_ticks,
    block_mean,
    cell_at,
    cells_figure,
    drawn_grid,
)
from ui.figures.axes_box import box_figure, cuboids
from ui.i18n import catalog
from ui.text import axes as text

ZH = catalog("zh")
PAD, POOLED, CLICKED = (ZH[f"axes.{key}"] for key in ("heatmap.pad", "box.pooled", "box.clicked"))


def _figure(cell=(1, 4, 10), **spec):
    stats = axes_statistics(AxesSpec(**spec))
    selection = select_cell(stats, cell)
    return stats, selection, cells_figure(stats, selection, "zh")


# --- the drawn grid ----------------------------------------------------------------------


def test_small_tensors_are_drawn_cell_by_cell():
    grid = drawn_grid(4, 16, 32)
    assert grid.cell_by_cell and grid.block == (1, 1)
    x, y = grid.centres()
    assert np.array_equal(x, np.arange(32)) and np.array_equal(y, np.arange(64))


@pytest.mark.parametrize("shape", [(8, 64, 128), (64, 32, 32), (1, 512, 128), (64, 512, 2)])
def test_large_tensors_are_summarised_in_blocks_that_keep_sequences_apart(shape):
    batch, tokens, d = shape
    grid = drawn_grid(batch, tokens, d)
    assert not grid.cell_by_cell
    assert len(grid.row_starts) * len(grid.col_starts) <= MAX_DRAWN_CELLS
    rows, _ = grid.block
    assert tokens % rows == 0 or rows % tokens == 0  # no block straddles two sequences
    assert grid.row_starts[0] == 0 and grid.row_starts[-1] < batch * tokens


def test_block_mean_matches_a_hand_computation_with_a_ragged_last_block():
    grid = drawn_grid(2, 6, 130, max_cells=100)  # 130 channels: blocks of 3, the last of 1
    values = np.arange(12 * 130, dtype=float).reshape(12, 130)
    means = block_mean(values, grid)
    rows, cols = grid.block
    assert means[0, 0] == pytest.approx(values[:rows, :cols].mean())
    assert means[-1, -1] == pytest.approx(values[-rows:, 129:].mean())
    assert grid.last_block == (rows, 1)  # what the page says of the last column of bricks


def test_a_click_maps_back_to_its_cell():
    grid = drawn_grid(4, 16, 32)
    x, y = grid.centres()
    assert cell_at(x[20], y[2 * 16 + 7], (4, 16, 32)) == (2, 7, 20)
    assert cell_at(-3.0, 999.0, (4, 16, 32)) == (3, 15, 0)  # clamped into the tensor


# --- the heatmap ---------------------------------------------------------------------------


def test_the_veil_uncovers_exactly_the_shared_cells():
    stats, selection, figure = _figure(kind="groupnorm")
    veil = np.asarray(figure.data[1].z)
    shared = selection.shared.reshape(64, 32)
    assert np.array_equal(veil == 0, shared)
    # GroupNorm: sequence 1's 16 positions x the 8 channels of channel 10's group
    assert np.array_equal(np.argwhere(shared)[[0, -1]], [[16, 8], [31, 15]])
    assert np.allclose(veil[~shared], DIM_MAX)


def test_masked_batchnorm_half_veils_the_pad_cells_of_the_channel():
    stats, selection, figure = _figure(source="padded", kind="batchnorm", mask_padding=True)
    veil = np.asarray(figure.data[1].z)
    column = veil[:, 10]
    real = stats.real.reshape(-1)
    assert np.all(column[real] == 0) and np.allclose(column[~real], HALF_DIM)


def test_pad_rows_clicked_cell_and_outline_are_drawn_on_both_panels():
    stats, selection, figure = _figure(cell=(2, 3, 5), source="padded")
    shapes = figure.layout.shapes
    pad = [s for s in shapes if s.fillcolor]  # only the PAD rows are filled
    assert len(pad) == 2 * 3  # lengths 16, 12, 8, 4: three sequences have PAD, two panels
    at_cell = [i for i, s in enumerate(shapes) if (s.x0, s.y0) == (4.5, 2 * 16 + 3 - 0.5)]
    assert len(at_cell) == 2  # the clicked cell, outlined on each panel in a colour of its own
    clicked = shapes[at_cell[0]].line.color
    assert shapes[at_cell[1]].line.color == clicked
    assert all(s.line.color != clicked for i, s in enumerate(shapes) if i not in at_cell)


def test_the_click_layer_covers_every_cell_with_its_values():
    stats, _, figure = _figure()
    layer = figure.data[-1]
    assert layer.type == "scatter" and len(layer.x) == 64 * 32
    assert layer.marker.maxdisplayed == 1  # one SVG node, every point still clickable
    index = (2 * 16 + 7) * 32 + 20
    assert (layer.x[index], layer.y[index]) == (20, 39)
    sequence, position, x, y = layer.customdata[index]  # as the hover writes them
    assert (sequence, position) == (2, 7)
    assert x == pytest.approx(stats.x[2, 7, 20], rel=1e-6)
    assert y == pytest.approx(stats.y[2, 7, 20], rel=1e-6)
    assert layer.text[index] == ""  # a real token: the hover names PAD only


def test_the_click_layer_names_pad_cells():
    stats, _, figure = _figure(source="padded")
    layer = figure.data[-1]
    assert layer.text[(1 * 16 + 13) * 32] == f" · {PAD}"  # sequence 1 has 12 real tokens
    assert figure.layout.xaxis.title.text == ZH["axes.heatmap.channel"]


def test_summarised_heatmap_draws_blocks():
    stats, _, figure = _figure(batch=8, tokens=64, d=128)
    assert np.asarray(figure.data[0].z).shape == (128, 64)  # blocks of 4 rows x 2 channels
    assert np.asarray(figure.data[0].z)[0, 0] == pytest.approx(stats.x[0, :4, :2].mean())


@pytest.mark.parametrize("source", ["synthetic", "example"])
def test_both_colour_bars_have_ticks_on_either_side_of_zero(source):
    """The SmolLM2 example's bars (±178 on the input, ±3.6 on the output) showed only "0"."""
    _, _, figure = _figure(source=source)
    for axis in (figure.layout.coloraxis, figure.layout.coloraxis2):
        ticks = list(axis.colorbar.tickvals)
        assert len(ticks) == 3 and ticks[1] == 0
        assert axis.cmin <= ticks[0] < 0 < ticks[2] <= axis.cmax
        assert ticks[2] >= 0.9 * axis.cmax  # the end of the bar, to 2 significant digits
        assert "−" in axis.colorbar.ticktext[0]


def test_a_colour_bar_that_values_run_past_says_so_at_its_ends():
    """The example's input bar ended at ±170 beside a caption naming 26,464: its ends now read
    "≤ −170" and "≥ 170" where the data run past them, and plainly where they do not."""
    stats, _, figure = _figure(source="example")
    cut = figure.layout.coloraxis
    assert np.abs(stats.x).max() > cut.cmax
    assert cut.colorbar.ticktext[0].startswith("≤ −") and cut.colorbar.ticktext[2].startswith("≥ ")
    assert bar_ticks(178.0)["ticktext"] == ["−170", "0", "170"]  # nothing past the ends


# --- the box -------------------------------------------------------------------------------


def test_boxes_split_a_mask_into_cuboids():
    mask = np.zeros((3, 4, 5), dtype=bool)
    mask[0, :4, 2] = mask[1, :4, 2] = True  # two samples, same run: one cuboid
    mask[2, :2, 2] = True  # a shorter run: a second cuboid
    assert cuboids(mask) == [(0, 2, 0, 4, 2, 3), (2, 3, 0, 2, 2, 3)]


def test_box_shades_the_pooled_slab_and_the_clicked_cell():
    stats, selection, _ = _figure(source="padded", kind="batchnorm", mask_padding=True)
    figure = box_figure(stats.real, selection, "batchnorm", "zh")
    names = [trace.name for trace in figure.data]
    assert names.count(POOLED) == 3 * 4  # 4 lengths -> 4 cuboids, 3 visible faces each
    assert names.count(CLICKED) == 3
    assert PAD in names
    axes = [plain(a.text) for a in figure.layout.annotations]
    assert ZH["axes.box.channels"].format(n=32) in axes  # each edge named with its size


def test_an_edge_of_one_is_named_in_the_singular():
    stats, selection, _ = _figure(cell=(0, 0, 0), batch=1, tokens=1, d=4)
    axes = [
        plain(a.text)
        for a in box_figure(stats.real, selection, "layernorm", "en").layout.annotations
    ]
    assert {"B = 1 sequence", "T = 1 position", "d = 4 channels"} <= set(axes)


def test_box_shades_nothing_for_dyt():
    stats, selection, _ = _figure(kind="dyt")
    names = [trace.name for trace in box_figure(stats.real, selection, "dyt", "zh").data]
    assert POOLED not in names and names.count(CLICKED) == 3


# --- the experiments' charts ---------------------------------------------------------------


def test_padding_chart_draws_both_statistics():
    result = padding_pollution(AxesSpec())
    mean, std = charts.padding_figure(result, "zh")  # two figures: they stack
    with_pad, real = ZH["axes.padding.with_pad"], ZH["axes.padding.real"]
    assert (with_pad, list(result.mean_with_pad)) in [(t.name, list(t.y)) for t in mean.data]
    assert (real, list(result.std_real)) in [(t.name, list(t.y)) for t in std.data]
    assert mean.layout.title.text == ZH["axes.padding.mean_title"]
    assert std.layout.yaxis.title.text == ZH["axes.padding.std_y"]


def test_small_batch_chart_is_log_log_with_the_theory_line():
    result = small_batch_noise(AxesSpec(), draws=20)
    _, spread = charts.small_batch_figure(result, "zh")
    theory = next(t for t in spread.data if t.name == ZH["axes.small.mean_spread_theory"])
    assert np.allclose(theory.y, 1 / np.sqrt(result.batch_sizes * 16))
    assert spread.layout.xaxis.type == "log" and spread.layout.yaxis.type == "log"


def test_train_eval_chart_marks_the_chosen_shift():
    result = train_eval_gap(AxesSpec(preset="channel_offsets"), shift=2.0, steps=20)
    history, gap = charts.train_eval_figure(result, "zh")
    chosen = next(t for t in gap.data if t.name == ZH["axes.train_eval.chosen"])
    assert (chosen.x[0], chosen.y[0]) == (2.0, result.gap_mean)
    channel = int(np.argmax(np.abs(result.population_mean)))
    title = f"{ZH['axes.train_eval.history_title']} · c = {channel}"
    assert history.layout.title.text == title


def test_batch_of_one_chart_marks_every_nan():
    result = batch_of_one(AxesSpec())
    figure = charts.batch_of_one_figure(result, "zh")
    nan = next(t for t in figure.data if t.name == ZH["axes.one.y_eps0"])
    assert len(nan.x) == result.nan_count_eps0 == 32
    # NaN is no value: its markers sit in their own labelled strip, not at y = 0 of the chart
    assert nan.yaxis == "y2" and figure.layout.yaxis2.ticktext == (ZH["axes.layout.nan_strip"],)
    assert all(t.yaxis in (None, "y") for t in figure.data if t is not nan)
    assert figure.layout.xaxis2.title.text == ZH["axes.one.chart_x"]
    assert figure.layout.xaxis.title.text is None  # the shared axis is named once, below


def test_causal_chart_leaves_the_replaced_token_out():
    result = causal_leak(AxesSpec(), position=9)
    same, _ = charts.causal_figure(result, "zh")
    batchnorm = next(t for t in same.data if t.name == "BatchNorm")
    assert batchnorm.y[9] is None and batchnorm.y[3] == pytest.approx(result.same_sample[2, 3])
    changed = ZH["axes.causal.changed"].format(position=9)
    assert [plain(a.text) for a in same.layout.annotations] == [changed]


# --- sentences -----------------------------------------------------------------------------


def test_legend_writes_the_count_from_the_kinds_table():
    stats = axes_statistics(AxesSpec(kind="instancenorm"))
    lines = [plain(line) for line in text.legend(stats, "en")]
    assert lines[0] == "**InstanceNorm** computes **B·d = 4·32 = 128** (μ, σ) pairs."
    stats = axes_statistics(AxesSpec(kind="batchnorm"))
    assert plain(text.legend(stats, "en")[0]).startswith("**BatchNorm** computes **d = 32**")


def test_legend_counts_one_statistic_and_one_cell_in_the_singular():
    """B = T = 1 under BatchNorm read "computes d = 32 (μ, σ) pairs ... (1 cells)", and one
    token under LayerNorm with d = 1 "computes 1 (μ, σ) pairs ... (1 cells)"."""
    lines = [
        plain(line)
        for line in text.legend(
            axes_statistics(AxesSpec(kind="batchnorm", batch=1, tokens=1)), "en"
        )
    ]
    assert lines[1].endswith("every position (1 cell).")
    one = axes_statistics(AxesSpec(kind="layernorm", batch=1, tokens=1, d=1))
    lines = [plain(line) for line in text.legend(one, "en")]
    assert lines[0].endswith("1** (μ, σ) pair."), lines[0]
    assert lines[1].endswith("(1 cell).")
    assert lines[1] == "Each pools one token's row across its channels, d = 1 (1 cell)."
    group = axes_statistics(AxesSpec(kind="groupnorm", batch=1, tokens=1, d=4, groups=4))
    assert "1 channels" not in plain(text.legend(group, "en")[1])
    assert "（32 个单元格）" in plain(text.legend(axes_statistics(AxesSpec()), "zh")[1])
    assert "(32 cells)" in plain(text.legend(axes_statistics(AxesSpec()), "en")[1])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_groupnorm_states_both_layouts_counts_and_neither_as_an_error(lang):
    stats = axes_statistics(AxesSpec(kind="groupnorm", groups=8))
    sentence = plain(text.groupnorm_layouts(stats, lang))
    assert "B·G = 32" in sentence and "B·T·G = 512" in sentence  # 4·8 and 4·16·8
    assert "nn.GroupNorm" in sentence and "F.group_norm" in sentence
    assert "Correction" not in sentence and "更正" not in sentence
    assert text.groupnorm_layouts(axes_statistics(AxesSpec()), lang) is None


def test_cell_arithmetic_reproduces_the_output():
    stats = axes_statistics(AxesSpec(dtype="float64"))
    selection = select_cell(stats, (0, 0, 0))
    latex = text.cell_arithmetic(stats, selection)
    expected = (selection.x - selection.mean) / math.sqrt(selection.var + 1e-5)
    assert latex.endswith(rf"\\ &= {expected:.4f}\end{{aligned}}")  # the result on its own line


def test_lessons_hold_no_number_of_their_own():
    """Every number in a lesson comes from the engine: the locale strings hold none."""
    allowed = re.compile(r"BatchNorm1d|1/√|√\(2\(n−1\)\)/n|seed 001|种子 001")
    for lang in ("en", "zh"):
        for key, sentence in catalog(lang).items():
            if key.startswith("axes.") and key.endswith(("lesson", "verdict", "collapses")):
                assert not re.search(r"\d", allowed.sub("", sentence)), (lang, key)


def test_one_channel_and_one_value_per_channel_draw_nothing_off_their_axes():
    """B = T = 1, d = 1: the spread chart leaves out the 0 that √(2(n−1))/n is at n = 1 (a
    log axis drew it plunging off the bottom), and the one channel's axis ticks whole numbers."""
    from engine.axes.padding import padding_pollution
    from engine.axes.small_batch import small_batch_noise
    from ui.figures.axes_batchnorm import batch_of_one_figure, padding_figure, small_batch_figure

    spec = AxesSpec(batch=1, tokens=1, d=1)
    _, spread = small_batch_figure(small_batch_noise(spec), "en")
    for trace in spread.data:
        assert all(y is None or y > 0 for y in trace.y), trace.name
    one = batch_of_one_figure(batch_of_one(spec), "en")
    assert one.layout.xaxis.dtick == 1
    for panel in padding_figure(padding_pollution(spec), "en"):
        assert panel.layout.xaxis.dtick == 1
