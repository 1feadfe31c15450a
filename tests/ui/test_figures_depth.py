"""ui.figures.depth and depth_wiring: each chart holds the engine's numbers and the words of
the language it is built in (Chinese here, compared with the catalog)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from engine import DepthSpec, simulate_depth
from engine.config import TrainSpec
from engine.depth import simulator
from engine.depth.placements import PLACEMENT_IDS
from engine.depth.sweep import SweepResult
from engine.depth.theory import pre_ln_band
from engine.models.loader import catalog as model_catalog
from engine.training.loop import TrainStep, summarize
from tests.plain_text import plain
from ui.figures.depth import (
    per_layer_figure,
    residual_figure,
    sweep_figure,
    training_loss_figure,
    x0_weight_figure,
)
from ui.figures.depth_wiring import STREAM_IN, STREAM_OUT, legible_width, wiring_figure
from ui.i18n import catalog
from ui.labels import label
from ui.projected import CHART_FONT, for_projector

ZH = catalog("zh")
NORM = ZH["depth.wiring_norm"]


@pytest.fixture(scope="module")
def series():
    small = dict(layers=6, d=32, tokens=8)
    return [
        ("Pre", simulate_depth(DepthSpec(placement="pre", **small))),
        ("Post", simulate_depth(DepthSpec(placement="post", **small))),
        ("Pre RMS", simulate_depth(DepthSpec(placement="pre", norm="rmsnorm", **small))),
    ]


def test_residual_figure_holds_each_series_and_the_lemma2_band(series):
    figure = residual_figure(series, "zh")
    by_name = {trace.name: trace for trace in figure.data}
    np.testing.assert_allclose(by_name["Pre"].y, series[0][1].residual_ms)
    assert list(by_name["Pre"].x) == list(range(7))
    lo, hi = pre_ln_band(np.arange(7))
    band = [t for t in figure.data if t.name == ZH["depth.band"]]
    assert len(band) == 2 and band[1].fill == "tonexty"
    np.testing.assert_allclose(band[0].y, hi)
    np.testing.assert_allclose(band[1].y, lo)
    # the language's own colon: "Post：进入归一化之前", never an ASCII ": " in Chinese
    before = by_name[f"Post：{ZH['depth.before_norm']}"]
    np.testing.assert_allclose(before.y, series[1][1].pre_norm_ms)
    assert by_name["Pre"].line.color != by_name["Post"].line.color  # a colour per placement
    assert by_name["Pre RMS"].line.color == by_name["Pre"].line.color
    assert by_name["Pre RMS"].line.dash == "dash"  # same placement again: next dash
    assert figure.layout.title.text == ZH["depth.residual_title"]
    assert figure.layout.xaxis.title.text == ZH["depth.residual_x"]
    assert figure.layout.yaxis.type == "log"


def test_the_band_and_the_before_norm_traces_come_only_with_their_placements(series):
    figure = residual_figure(series[2:], "en")  # Pre-Norm alone: the band, no stream norm
    assert [t.name for t in figure.data] == ["Pre RMS", *[catalog("en")["depth.band"]] * 2]
    english = residual_figure(series[1:2], "en")
    assert f"Post: {catalog('en')['depth.before_norm']}" in [t.name for t in english.data]


def test_gradient_update_and_x0_figures_hold_per_layer_values(series):
    grad = per_layer_figure(series, "grad", "zh")
    np.testing.assert_allclose(grad.data[1].y, series[1][1].grad_norm)
    assert list(grad.data[1].x) == [1, 2, 3, 4, 5, 6]
    assert grad.layout.title.text == ZH["depth.grad_title"]
    update = per_layer_figure(series, "update", "zh")
    np.testing.assert_allclose(update.data[0].y, series[0][1].update_ratio)
    cosine = per_layer_figure(series, "cosine", "zh")
    np.testing.assert_allclose(cosine.data[2].y, series[2][1].cosine)
    assert cosine.layout.yaxis.type == "linear" and update.layout.yaxis.type == "log"
    x0 = x0_weight_figure(series, "zh", gain=1.0)
    np.testing.assert_allclose(x0.data[1].y, series[1][1].x0_weight)
    np.testing.assert_allclose(x0.data[-1].y, 2.0 ** (-np.arange(7) / 2))
    assert plain(x0.data[-1].name) == ZH["depth.x0_reference"].format(gain="1")
    small_branch = x0_weight_figure(series, "zh", gain=0.1024)
    np.testing.assert_allclose(small_branch.data[-1].y, 1.1024 ** (-np.arange(7) / 2))
    assert len(x0_weight_figure(series, "zh").data) == len(series)  # no gain: no reference


def test_the_expected_x0_weight_shows_on_the_measured_line_it_follows(series):
    """The thin dashed expectation lay exactly on the Post-Norm line and could not be seen,
    though the legend listed it: the measured lines are drawn wide, the expectation narrower
    and dashed, on top (drawn last)."""
    x0 = x0_weight_figure(series, "zh", gain=1.0)
    *measured, expected = x0.data
    assert expected.line.dash == "dash"
    assert all(trace.line.width >= 2.5 * expected.line.width for trace in measured)
    assert expected.line.width >= 1.5


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("chart", ["grad", "update", "cosine"])
def test_per_layer_titles_write_subscripts_in_the_charts_own_font(chart, lang):
    """ "cos(xₗ₋₁, xₗ)" took its subscripts from a fallback font and read "xʟ₋₁"."""
    result = simulate_depth(DepthSpec(layers=2, d=8, tokens=2))
    figure = per_layer_figure([("x", result)], chart, lang)
    texts = [figure.layout.title.text, figure.layout.yaxis.title.text]
    assert not any(re.search("[\u2090-\u209c]", text) for text in texts)
    if chart == "cosine":
        assert "x<sub>l−1</sub>" in figure.layout.title.text


def test_nonfinite_values_become_gaps():
    result = simulate_depth(DepthSpec(layers=3, d=8, tokens=2))
    broken = type(result)(**{**result.__dict__, "grad_norm": np.array([1.0, np.inf, np.nan])})
    figure = per_layer_figure([("x", broken)], "grad", "zh")
    assert list(figure.data[0].y) == [1.0, None, None]


def test_a_shallow_stack_is_ticked_by_whole_layers_and_its_single_points_drawn():
    """At L = 1 plotly labelled the layer axis 0, 0.2, 0.4, ... (0.5 of a layer), and the
    per-layer charts, one point each, drew nothing: a line needs two points."""
    one = [("Post", simulate_depth(DepthSpec(placement="post", layers=1, d=8, tokens=2)))]
    figures = [residual_figure(one, "en"), x0_weight_figure(one, "en", gain=1.0)]
    figures += [per_layer_figure(one, chart, "en") for chart in ("grad", "update", "cosine")]
    for figure in figures:
        assert figure.layout.xaxis.tickmode == "linear" and figure.layout.xaxis.dtick == 1
        assert figure.layout.xaxis.tick0 == 0
        for trace in figure.data:
            if len(trace.x) == 1:
                assert "markers" in trace.mode, trace.name
    for chart in ("grad", "update", "cosine"):  # layer 1 alone: its tick, not 0 and 2
        assert per_layer_figure(one, chart, "en").layout.xaxis.range == (0.5, 1.5), chart
    deep = [("Pre", simulate_depth(DepthSpec(placement="pre", layers=48, d=8, tokens=2)))]
    assert residual_figure(deep, "en").layout.xaxis.tickmode == "auto"  # plotly's, whole


def test_sweep_figure_prints_fitted_slopes_in_the_legend():
    """The slopes are legend entries, which wrap: a subtitle listing them was cut at the
    chart's right edge with seven placements."""
    layers = np.array([6, 12, 24, 48, 96])
    pre = SweepResult(
        DepthSpec(placement="pre"), layers, 100 / np.sqrt(layers), -0.5, np.log(100), 0.0
    )
    post = SweepResult(DepthSpec(placement="post"), layers, np.full(5, 50.0), 0.0, np.log(50), 0.0)
    figure = sweep_figure([("Pre-Norm", pre), ("Post-Norm", post)], "zh")
    assert figure.layout.title.text == ZH["depth.sweep_title"]  # no subtitle to cut
    shown = [t.name for t in figure.data if t.showlegend is not False]
    # the true minus; each sweep's points carry its fitted slope
    assert "Pre-Norm：拟合斜率 −0.50" in shown and "Post-Norm：拟合斜率 0.00" in shown
    assert figure.layout.xaxis.type == "log" and figure.layout.yaxis.type == "log"
    markers = [t for t in figure.data if t.mode == "markers"]
    np.testing.assert_allclose(markers[0].y, 100 / np.sqrt(layers))
    fit = figure.data[1]
    np.testing.assert_allclose(fit.y, 100 * layers**-0.5)
    assert any(t.name == "Pre-Norm：定理 1 斜率 −0.5" for t in figure.data)
    untheorised = sweep_figure([("Pre-Norm", pre)], "zh", theory=False)
    assert len(untheorised.data) == 2  # the points and their fit
    # without a final norm Post-Norm's slope 0 is still Theorem 1's: its Post-LN has none
    both = sweep_figure([("Pre-Norm", pre), ("Post-Norm", post)], "zh", theory=False)
    theory = [t.name for t in both.data if "定理 1" in (t.name or "")]
    assert theory == ["Post-Norm：定理 1 斜率 0.0"]


def test_training_figure_compares_runs_and_marks_chance():
    spec = TrainSpec()
    steps = [TrainStep(i, 2.3 / i, 0.1, 1e-3, 1.0) for i in range(1, 6)]
    runs = [("Pre-LN", summarize(spec, steps)), ("Post-LN", summarize(spec, steps[:3]))]
    figure = training_loss_figure(runs, "zh")
    assert [t.name for t in figure.data] == ["Pre-LN", "Post-LN", ZH["depth.chance"]]
    np.testing.assert_allclose(figure.data[0].y, [2.3 / i for i in range(1, 6)])
    assert list(figure.data[1].x) == [1, 2, 3]
    assert figure.data[2].y[0] == pytest.approx(np.log(10))
    # a run stalled at chance hides the dashed line: the chart names it on its line too
    (label,) = [a for a in figure.layout.annotations if a.text == ZH["depth.chance"]]
    assert label.y == pytest.approx(np.log10(np.log(10)))  # log10(y) on a log axis
    # the last step, a tick at the plot's right edge ("300"), keeps room for half its label
    assert figure.layout.margin.r >= 20


def _texts(figure) -> str:
    return " ".join(a.text for a in figure.layout.annotations)


@pytest.mark.parametrize("rows", [1, 2, 3])
@pytest.mark.parametrize("final_norm", [True, False])
@pytest.mark.parametrize("placement", PLACEMENT_IDS)
def test_wiring_draws_exactly_the_norms_the_simulator_applies(
    placement, final_norm, rows, monkeypatch
):
    """The diagram and the simulator read one table: count the simulator's norm calls (in
    one row, or wrapped onto two or three for a narrow column)."""
    calls = []
    real_norm = simulator.Stack.norm

    def counted(self, x):
        calls.append(x.shape)
        return real_norm(self, x)

    monkeypatch.setattr(simulator.Stack, "norm", counted)
    spec = DepthSpec(
        placement=placement, sublayer="transformer", layers=1, d=8, tokens=4, final_norm=final_norm
    )
    simulate_depth(spec)  # one layer of attention + MLP, graphs kept: no layer is re-run
    figure = wiring_figure(placement, "zh", final_norm, rows=rows)
    assert _texts(figure).count(NORM) == len(calls)


@pytest.mark.parametrize("placement", PLACEMENT_IDS)
def test_wiring_names_the_real_modules_of_each_placement(placement):
    figure = wiring_figure(placement, "zh")
    texts = _texts(figure)
    names = model_catalog().placement_names(placement)
    for name in (*names.attention, *names.mlp, names.final):
        if name is not None:
            assert name in texts
    identity = [t for t in figure.data if t.name == ZH["depth.wiring_identity"]]
    assert len(identity) == 1 and identity[0].line.width >= 6
    name = label("placement", placement, "zh")
    # a placement no model family uses, or named after its family (OLMo 2: it read
    # "OLMo 2 — OLMo 2"), is titled by its name alone
    alone = not names.family or names.family == name
    assert figure.layout.title.text == (name if alone else f"{name} — {names.family}")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_wiring_of_no_norm_has_no_dangling_dash_in_its_title(lang):
    """No model family uses "No norm": its title read "No norm — —"."""
    title = wiring_figure("none", lang).layout.title.text
    assert title == label("placement", "none", lang) and "—" not in title
    assert wiring_figure("post", lang).layout.title.text.endswith(" — BERT")


def test_wiring_names_llama_and_gemma_modules_correctly():
    llama = _texts(wiring_figure("pre", "zh"))
    assert "ln_2 / post_attention_layernorm" in llama  # Llama's is the MLP's Pre-Norm
    assert "ln_f / norm" in llama and "ln_1 / input_layernorm" in llama
    gemma = _texts(wiring_figure("peri", "zh"))
    for name in (
        "input_layernorm",
        "post_attention_layernorm",
        "pre_feedforward_layernorm",
        "post_feedforward_layernorm",
    ):
        assert name in gemma
    assert _texts(gemma_figure := wiring_figure("peri", "zh")).count(NORM) == 5
    assert gemma_figure.layout.title.text.endswith("Gemma 2")
    assert _texts(wiring_figure("pre", "zh", final_norm=False)).count(NORM) == 2


@pytest.mark.parametrize(
    "placement, final_norm, last",
    [
        ("post", True, STREAM_OUT),
        ("pre", True, ZH["depth.wiring_output"]),
        ("pre", False, STREAM_OUT),
    ],
)
def test_wiring_ends_on_the_next_layer_or_after_the_final_norm_on_the_output(
    placement, final_norm, last
):
    figure = wiring_figure(placement, "zh", final_norm)
    texts = [a.text for a in figure.layout.annotations if a.text]
    assert STREAM_IN in texts and last in texts
    # the model's output is no x_{l+1}
    assert (STREAM_OUT in texts) != (ZH["depth.wiring_output"] in texts)
    assert not any("_" in text or "{" in text for text in texts if "<i>" not in text)


@pytest.mark.parametrize("placement", PLACEMENT_IDS)
def test_wiring_writes_the_streams_subscripts_in_the_labels_own_font(placement):
    """Unicode's subscript letters (xₗ, xₗ₊₁) come from a fallback font and were drawn far
    smaller than the box labels; plotly's <sub> scales the label's own font."""
    texts = [a.text for a in wiring_figure(placement, "en").layout.annotations if a.text]
    assert STREAM_IN in texts and "x<sub>l</sub>" in STREAM_IN and "<sub>l+1</sub>" in STREAM_OUT
    assert not any(re.search("[\u2080-\u209c]", text) for text in texts)


def _text_px(annotation, layout_font: float) -> list[float]:
    """The sizes (px) an annotation's text is drawn at: its font's, or the layout's, times each
    relative span inside it."""
    size = annotation.font.size or layout_font
    spans = [float(em) for em in re.findall(r"font-size:([\d.]+)em", annotation.text)]
    return [size, *(size * em for em in spans)]


@pytest.mark.parametrize("placement", PLACEMENT_IDS)
def test_wiring_labels_are_legible_and_grow_with_presentations_chart_font(placement):
    """Labels at 12 px and module names at 10 px, which presentation mode left as they were,
    were hard to read on a projector."""
    figure = wiring_figure(placement, "zh")
    shown = for_projector(figure)
    for drawn, least in ((figure, 12), (shown, 0.85 * CHART_FONT)):
        font = drawn.layout.font.size
        sizes = [px for a in drawn.layout.annotations if a.text for px in _text_px(a, font)]
        assert min(sizes) >= least
    # a box holds two lines (label, module name) at the projected size
    plot_px = shown.layout.height - shown.layout.margin.t - shown.layout.margin.b
    low, high = shown.layout.yaxis.range
    box = next(s for s in shown.layout.shapes if s.type == "rect")
    assert (box.y1 - box.y0) * plot_px / (high - low) >= 2 * 1.2 * CHART_FONT
    assert legible_width(shown) > legible_width(figure)  # wider boxes for larger labels
