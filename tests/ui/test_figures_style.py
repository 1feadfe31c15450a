"""Log axes that read from the back of a room: decades and sampled values, never minor digits."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from engine import DepthSpec, simulate_depth
from ui.figures.depth import per_layer_figure, residual_figure
from ui.figures.style import MAX_TICKS, log_axis, log_ticks, tick_text, tick_texts


def _is_round(value: float) -> bool:
    """1, 2, 5 (or 3) times a power of ten."""
    mantissa = value / 10.0 ** math.floor(math.log10(value) + 1e-9)
    return any(math.isclose(mantissa, m, rel_tol=1e-9) for m in (1, 2, 3, 5, 10))


@pytest.mark.parametrize(
    "low, high, expected",
    [
        (1.0, 1e6, [1, 10, 100, 1e3, 1e4, 1e5, 1e6]),  # decades only
        (1.0, 50.0, [1, 2, 5, 10, 20, 50]),  # under two decades: 1-2-5
        (0.15, 1.1, [0.1, 0.2, 0.5, 1, 2]),  # and one past each end the data overrun
        (25.0, 220.0, [20, 50, 100, 200, 500]),  # a sweep's gradients: 220 no longer unlabelled
        (0.0017, 2.5, [1e-3, 1e-2, 0.1, 1, 10]),  # a loss from chance (2.3) down to 0.002
        (180.0, 240.0, [180, 200, 220, 240]),  # narrower than 2x: round linear steps
    ],
)
def test_ticks_are_decades_then_one_two_five_then_round_linear_values(low, high, expected):
    ticks = log_ticks(np.geomspace(low, high, 50))
    assert ticks == pytest.approx(expected)


def test_a_range_of_many_decades_keeps_at_most_eight_ticks():
    ticks = log_ticks([1e-30, 1e30])
    assert 2 <= len(ticks) <= 8 and all(_is_round(v) for v in ticks)


def test_ticks_of_a_wide_range_are_evenly_spaced_and_start_at_the_data():
    """The Depth page's no-norm stack (1 to 2.5×10¹⁴): 10⁻², 10², …, 10¹⁴ then 10¹⁶ had an
    uneven last gap and a first tick two decades below the data."""
    for low, high in ((1.0, 2.5e14), (0.5, 2.5e14), (1e-30, 1e30), (1e-8, 5e3)):
        exponents = [round(math.log10(v), 9) for v in log_ticks([low, high])]
        gaps = {b - a for a, b in zip(exponents, exponents[1:])}
        assert len(gaps) == 1 and len(exponents) <= 8, (low, high, exponents)
        assert exponents[0] <= math.log10(low) < exponents[0] + gaps.pop()


def test_a_sweep_labels_exactly_its_sampled_depths():
    ticks = log_ticks([6, 200], sampled=[6, 12, 24, 48, 96, 192])
    assert ticks == [6, 12, 24, 48, 96, 192]


def test_labels_use_one_notation_per_axis():
    assert tick_texts([0.01, 0.1, 1, 10, 1000]) == ["0.01", "0.1", "1", "10", "1,000"]
    assert tick_texts([1e-7, 1e-4, 0.1]) == ["10⁻⁷", "10⁻⁴", "10⁻¹"]
    assert tick_text(2e-5, plain=False) == "2×10⁻⁵" and tick_text(1e6, plain=False) == "10⁶"


def test_the_depth_charts_have_no_minor_digit_ticks():
    results = [
        simulate_depth(DepthSpec(placement=p, layers=24, d=64, tokens=8)) for p in ("post", "pre")
    ]
    series = [(p, r) for p, r in zip(("Post", "Pre"), results)]
    for figure in (
        residual_figure(series, "en"),
        per_layer_figure(series, "grad", "en"),
    ):
        axis = figure.layout.yaxis
        assert axis.type == "log" and axis.tickmode == "array"
        assert 2 <= len(axis.tickvals) <= 8
        assert all(_is_round(v) or len(axis.tickvals) <= 5 for v in axis.tickvals)
        ys = [np.asarray(tr.y, dtype=object).ravel() for tr in figure.data if tr.y is not None]
        drawn = [float(v) for y in ys for v in y if v is not None and v > 0]
        # every value drawn lies between two labelled ticks, and the axis reaches both
        assert min(axis.tickvals) <= min(drawn) and max(axis.tickvals) >= max(drawn)
        low, high = axis.range if axis.range is not None else (-math.inf, math.inf)
        assert low <= math.log10(min(axis.tickvals)) and high >= math.log10(max(axis.tickvals))


@pytest.mark.parametrize("low, high", [(1e-30, 1e30), (3e-7, 0.7), (2.0, 3.0), (0.9, 1e4)])
def test_the_ticks_enclose_every_value(low, high):
    ticks = log_ticks(np.geomspace(low, high, 50))
    assert ticks[0] <= low and ticks[-1] >= high
    assert 2 <= len(ticks) <= MAX_TICKS + 2


def test_the_axis_range_reaches_a_tick_past_the_data():
    figure = go.Figure(go.Scatter(x=[0, 300], y=[2.3, 0.0017]))
    log_axis(figure, "y")
    axis = figure.layout.yaxis
    assert list(axis.tickvals) == pytest.approx([1e-3, 1e-2, 0.1, 1, 10])
    assert axis.range[0] <= -3 and axis.range[1] >= 1  # log10 of the end ticks


def test_a_subplot_axis_reads_only_its_own_traces():
    figure = make_subplots(rows=1, cols=2)
    figure.add_trace(go.Scatter(x=[1, 2], y=[1e-6, 1e6]), row=1, col=1)
    figure.add_trace(go.Scatter(x=[1, 2], y=[1.0, 50.0]), row=1, col=2)
    log_axis(figure, "y", row=1, col=2)
    assert list(figure.layout.yaxis2.tickvals) == [1, 2, 5, 10, 20, 50]
    assert figure.layout.yaxis.type != "log"


def test_log_ticks_at_the_ends_of_float64_stay_finite():
    """A dump of ±1.7e308 (float64's largest decade) drew 10.0**309, an OverflowError."""
    top = log_ticks([1e300, 1.7e308])
    assert top and all(math.isfinite(t) and t > 0 for t in top) and max(top) <= 1.7e308
    bottom = log_ticks([5e-324, 1e-300])
    assert bottom and all(math.isfinite(t) and t > 0 for t in bottom)


def test_an_axis_plotly_labels_writes_grouped_numbers_and_powers_of_ten():
    """A linear axis of 0 to 300,000 read "300k", and a hover on Depth's log axis "249.4497T":
    every figure's template groups its numbers and writes 10⁶ and more as powers of ten."""
    import plotly.graph_objects as go
    import plotly.io as pio

    import ui.figures.style  # noqa: F401  (registers the template)

    # one merged template: a "streamlit+normscope_numbers" default was merged again for every
    # figure built (9.85 ms against 0.62 ms each, measured)
    assert pio.templates.default == "normscope"
    axis = go.Figure(go.Bar(y=[1e5, 3e5])).layout.template.layout.yaxis
    assert axis.separatethousands and axis.exponentformat == "power" and axis.minexponent == 5
    heatmap = go.Figure(go.Heatmap(z=[[1e4, 2e4]])).layout.template.data.heatmap[0]
    assert heatmap.colorbar.separatethousands  # a trace's own colour bar ("20k" before)
