"""The Experiments page's charts as CSV: columns named by the axes' titles (units included),
the logit lens's two panels apart, and every series by its name, not plotly's "bar 1"."""

from __future__ import annotations

import io
from types import SimpleNamespace as Run

import numpy as np
import pandas as pd
import pytest

from ui.figures import experiments as figures
from ui.figures.export import figure_csv
from ui.i18n import translate


def _csv(figure) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(figure_csv(figure)), dtype=str, keep_default_na=False)


def _tr(key: str, lang: str) -> str:
    """The text as the CSV writes it: a bound expression's spaces as spaces."""
    return translate(f"experiments.{key}", lang).replace("\u00a0", " ")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_lens_csv_keeps_entropy_and_kl_apart_under_their_axis_titles(lang):
    variants = ("own_scale", "final_scale", "no_norm")
    rng = np.random.default_rng(0)
    result = Run(
        variants=variants,
        entropy=rng.random((3, 4, 2)),
        mean_entropy=rng.random((3, 4)) + 1,
        kl_to_model=rng.random((3, 4, 2)) + 0.1,
    )
    table = _csv(figures.lens_figure(Run(result=result), lang))
    entropy, kl = _tr("lens_result.chart_y", lang), _tr("chart.kl_y", lang)
    point = _tr("lens_result.chart_x", lang)
    assert list(table.columns) == ["trace", "panel", point, entropy, kl]
    panels = [_tr("lens_result.chart", lang), _tr("lens_result.chart_kl", lang)]
    assert sorted(set(table.panel)) == sorted(panels)
    top, bottom = (table[table.panel == panel] for panel in panels)
    assert len(top) == len(bottom) == 12 and (top[kl] == "").all() and (bottom[entropy] == "").all()
    names = {_tr(f"options.lens.{variant}", lang) for variant in variants}
    assert set(table.trace) == names
    first = _tr("options.lens.own_scale", lang)
    means = top[top.trace == first][entropy].astype(float)
    np.testing.assert_allclose(means, result.mean_entropy[0])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_single_series_charts_name_their_series_and_columns(lang):
    sweep = Run(
        result=Run(
            perplexity_ratio=np.array([1.01, 3.0, 1.02]),
            layers=(0, 1, None),
            tolerated=(True, False, True),
            spec=Run(tolerance=0.05),
        )
    )
    table = _csv(figures.sweep_figure(sweep, lang))
    ratio = _tr("sweep_result.chart_y", lang)
    assert list(table.columns) == ["trace", _tr("sweep_result.chart_x", lang), ratio]
    assert set(table.trace) == {ratio} and table[ratio].astype(float).tolist() == [1.01, 3, 1.02]
    half = Run(
        result=Run(stream_error=np.array([[1e-4, 2e-4], [3e-3, 1e-3]]), spec=Run(divergence=0.01))
    )
    table = _csv(figures.half_figure(half, lang))
    error = _tr("half_result.chart_y", lang)
    assert list(table.columns) == ["trace", _tr("lens_result.chart_x", lang), error]
    assert set(table.trace) == {error}
    massive = Run(result=Run(count=np.array([0, 3, 1]), point=1))
    table = _csv(figures.massive_figure(massive, lang))
    count = _tr("massive.chart_y", lang)
    assert list(table.columns) == ["trace", _tr("massive.chart_x", lang), count]
    assert set(table.trace) == {count}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_block_by_block_chart_keeps_its_ticks_level_and_its_height_for_the_bars(lang):
    """31 bars at 1,280 px: with a long last tick ("the final norm") plotly turned every tick
    upright and the plot area shrank to ~140 px under an empty top margin."""
    layers = (*range(30), None)
    sweep = Run(
        result=Run(
            perplexity_ratio=np.linspace(1, 3, 31),
            layers=layers,
            tolerated=(True,) * 31,
            spec=Run(tolerance=0.05),
        )
    )
    figure = figures.sweep_figure(sweep, lang)
    assert figure.layout.xaxis.tickangle == 0 and figure.layout.margin.t <= 30
    assert max(len(tick) for tick in figure.data[0].x) <= 5
    assert figure.data[0].customdata[-1] == _tr("sweep_result.final", lang)
    # every other block named, and the final norm two places after the last one named
    final = _tr("sweep_result.final_tick", lang)
    assert list(figure.layout.xaxis.tickvals) == [*map(str, range(0, 30, 2)), final]
    odd = Run(result=Run(**{**vars(sweep.result), "layers": (*range(31), None),
                            "perplexity_ratio": np.linspace(1, 3, 32), "tolerated": (True,) * 32}))  # fmt: skip
    assert list(figures.sweep_figure(odd, lang).layout.xaxis.tickvals) == [
        *map(str, range(1, 31, 2)),
        final,
    ]  # 31 blocks: the last named block is 29, not 30 beside the final norm


def test_the_massive_entries_chart_counts_in_whole_entries():
    """Two entries at one stream point: ticks 0, 1, 2, never "1.5 entries"."""
    few = figures.massive_figure(Run(result=Run(count=np.array([0, 2, 1]), point=1)), "en")
    assert few.layout.yaxis.dtick == 1
    many = figures.massive_figure(Run(result=Run(count=np.array([0, 69, 1]), point=1)), "en")
    assert many.layout.yaxis.dtick is None


@pytest.mark.parametrize("ratios", [[1.01, 3.0, 1.02], [0.9, 1.2, np.inf], [1.0, 1.0, 1.0]])
def test_the_sweeps_bars_rise_from_just_under_one(ratios):
    """A ratio's bar starts at the axis's bottom, set just under ×1 (or the smallest ratio
    under it), not where plotly's autorange put it for bars on a log axis (10⁻³)."""
    sweep = Run(
        result=Run(
            perplexity_ratio=np.array(ratios),
            layers=(0, 1, None),
            tolerated=(True, False, True),
            spec=Run(tolerance=0.05),
        )
    )
    low, high = figures.sweep_figure(sweep, "en").layout.yaxis.range
    finite = [r for r in ratios if np.isfinite(r)]
    assert 0.8 * min(1.0, *finite) < 10**low < min(1.0, *finite)
    assert max(1.05, *finite) < 10**high < 1.3 * max(1.05, *finite)


def test_a_two_token_texts_one_position_is_drawn_and_its_axis_counts_whole_positions():
    """One next-token loss: a line through one point draws nothing, so the points are drawn;
    the position axis ticks 0, 1, 2, never 0.5."""
    effect = Run(nll=np.array([3.2]), kl=np.array([0.078, 0.0]))
    run = Run(result=Run(effect=effect), tokens=2, token_texts=("a", "."), baseline_nll=[3.1])
    figure = figures.effect_figure(run, "en")
    assert all("markers" in trace.mode for trace in figure.data)
    assert figure.layout.xaxis.dtick == 1 and figure.layout.xaxis2.dtick == 1
    long = Run(
        result=Run(effect=Run(nll=np.ones(99), kl=np.ones(100))),
        tokens=100,
        token_texts=("a",) * 100,
        baseline_nll=np.ones(99),
    )
    assert all(trace.mode == "lines" for trace in figures.effect_figure(long, "en").data)


def test_the_legend_of_the_top_panels_lines_sits_above_it():
    """The two-panel charts' legend names the top panel's lines: it is at the figure's top,
    where a projector's first screen shows it with that panel (it was under the bottom one)."""
    effect = Run(nll=np.array([3.2, 1.0]), kl=np.array([0.078, 0.01, 0.0]))
    run = Run(
        result=Run(effect=effect), tokens=3, token_texts=("a", "b", "."), baseline_nll=[3.1, 1]
    )
    figure = figures.effect_figure(run, "en")
    legend = figure.layout.legend
    assert (legend.yref, legend.y, legend.yanchor) == ("container", 1, "top")
    # headed by the top panel's title: as an annotation a phone's three rows covered it
    assert legend.title.text == "Loss of each next token" and legend.title.side == "top"
    shown = [note.text for note in figure.layout.annotations if note.visible is not False]
    assert shown == ["KL(original ‖ changed) per position"]


@pytest.mark.parametrize(
    ("kl", "said"),
    [
        (np.full(4, np.inf), "KL is not finite anywhere"),
        (np.zeros(4), "KL is 0 everywhere"),
        (np.array([0.0, np.inf, np.nan, 0.0]), "KL is 0 or not finite everywhere"),
    ],
)
def test_a_kl_panel_with_no_point_says_why_on_no_impossible_axis(kl, said):
    """Every KL infinite (a model broken on the text), or 0: the panel held no point on an axis
    from −1 to 4 (autoscaled over nothing; KL is never negative).  It now says why, in the
    panel, and its CSV is as before."""
    effect = Run(nll=np.full(3, np.inf), kl=kl)
    run = Run(
        result=Run(effect=effect), tokens=4, token_texts=tuple("abcd"), baseline_nll=[1, 2, 3]
    )
    figure = figures.effect_figure(run, "en")
    notes = [n.text for n in figure.layout.annotations if n.visible is not False]
    assert any(note.startswith(said) for note in notes), notes
    assert tuple(figure.layout.yaxis2.range) == (0, 1) and figure.layout.yaxis2.type != "log"
    assert list(_csv(figure).columns)[-1] == _tr("chart.kl_y", "en")
    drawn = Run(result=Run(effect=Run(nll=np.ones(3), kl=np.array([0.1, 0.0, np.inf, 0.0]))),
                tokens=4, token_texts=tuple("abcd"), baseline_nll=[1, 2, 3])  # fmt: skip
    assert figures.effect_figure(drawn, "en").layout.yaxis2.type == "log"


def test_the_kl_csv_holds_the_zeros_and_infinities_the_log_axis_leaves_out():
    """KL 0 (a position the change did not reach) and ∞ have no point on a log axis; the
    CSV held empty cells there, as if nothing had been measured."""
    kl = np.array([0.0, 0.25, np.inf, 0.0])  # positions 0-2 predict tokens 1-3; 3: past the text
    effect = Run(nll=np.array([1.0, 2.0, np.inf]), kl=kl)
    run = Run(result=Run(effect=effect), tokens=4, token_texts=tuple("abcd"), baseline_nll=[1] * 3)
    table = _csv(figures.effect_figure(run, "en"))
    column = _tr("chart.kl_y", "en")
    assert table[table.trace == "KL"][column].astype(float).tolist() == [0.0, 0.25, np.inf]
    variants = ("own_scale", "final_scale", "no_norm")
    lens = Run(variants=variants, entropy=np.ones((3, 2, 1)), mean_entropy=np.ones((3, 2)),
               kl_to_model=np.zeros((3, 2, 1)))  # fmt: skip
    table = _csv(figures.lens_figure(Run(result=lens), "en"))
    kl_cells = table[table.panel == _tr("lens_result.chart_kl", "en")][column]
    assert kl_cells.astype(float).tolist() == [0.0] * 6


def test_a_chinese_pages_csv_names_its_trace_and_panel_columns_in_chinese():
    from ui.figures.export import figure_csv

    variants = ("own_scale", "final_scale", "no_norm")
    lens = Run(variants=variants, entropy=np.ones((3, 2, 1)), mean_entropy=np.ones((3, 2)),
               kl_to_model=np.ones((3, 2, 1)))  # fmt: skip
    headers = {name: translate(f"app.chart.{name}", "zh") for name in ("trace", "panel")}
    text = figure_csv(figures.lens_figure(Run(result=lens), "zh"), headers)
    assert text.splitlines()[0].startswith("曲线,面板,")
