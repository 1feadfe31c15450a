"""ui.figures.dumps: each chart holds the report's numbers (checked against torch / numpy
computed here), marks what it says it marks, and leaves gaps where a value is missing."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from safetensors.torch import save

from engine.dumps.dump import open_dump
from engine.dumps.norm_views import compare_norms
from engine.dumps.report import report
from engine.dumps.sources import Upload
from tests.dumps import dump_files as files
from tests.plain_text import plain
from ui.figures import dumps as figures
from ui.figures import dumps_channels as channel_figures
from ui.figures.export import labelled_table
from ui.figures.style import tick_texts
from ui.i18n import catalog
from ui.projected import CHART_TICKS

ZH = catalog("zh")
X = files.stream(layers=5, batch=2, tokens=7, d=16)  # 2500 on token 0, channel 3, layers 2+


def _upload(tensors: dict) -> Upload:
    return Upload("d.safetensors", save({k: v.clone() for k, v in tensors.items()}))


@pytest.fixture(scope="module")
def rep():
    return report(_upload(files.hf_names(X)))


@pytest.fixture(scope="module")
def pairs_rep():
    return report(_upload(files.module_names(files.stream(layers=3, batch=1, tokens=9, d=16))))


def _trace(figure, name):
    return next(trace for trace in figure.data if plain(trace.name or "") == name)


def _read_tick(text: str) -> float:
    """A tick label's number: "1,000", "0.01", "10⁻⁶"."""
    text = text.replace(",", "").replace("−", "-")
    exponent = text[2:]
    if text.startswith("10") and exponent and set(exponent) <= set("⁻⁰¹²³⁴⁵⁶⁷⁸⁹"):
        return 10.0 ** int(exponent.translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")))
    return float(text)


def test_heatmap_is_log10_of_each_tokens_rms_and_marks_the_first_and_outlier_tokens(rep):
    figure = figures.rms_heatmap(rep.residual.rms[:, 1], rep.labels, "zh", True, [(4, 2)])
    expected = X[:, 1].double().pow(2).mean(-1).sqrt().numpy()  # [L, T]
    np.testing.assert_allclose(10 ** figure.data[0].z, expected, rtol=1e-6)
    assert list(_trace(figure, ZH["dumps.first_token"]).x) == [0] * 5
    outlier = _trace(figure, ZH["dumps.outlier_token"])
    assert list(outlier.x) == [4] and list(outlier.y) == [2]
    assert figure.layout.title.text == ZH["dumps.heatmap_title"]
    ticks = figure.data[0].colorbar.ticktext  # at its powers of ten, as every log axis writes them
    powers = [10.0**p for p in figure.data[0].colorbar.tickvals]
    assert [_read_tick(tick) for tick in ticks] == pytest.approx(powers) and len(ticks) >= 2
    assert tick_texts([1e-6, 1e-5]) == ["10⁻⁶", "10⁻⁵"]  # never "1e-06"
    linear = figures.rms_heatmap(rep.residual.rms[:, 1], rep.labels, "zh", log=False)
    np.testing.assert_allclose(linear.data[0].z, expected, rtol=1e-6)


def test_heatmap_leaves_non_finite_and_zero_rms_as_gaps():
    rms = np.array([[0.0, 1.0], [np.inf, 100.0]])
    z = figures.rms_heatmap(rms, ["a", "b"], "zh").data[0].z
    assert np.isnan(z[0, 0]) and np.isnan(z[1, 0]) and z[1, 1] == pytest.approx(2.0)


def test_lines_draw_the_first_token_and_the_fitted_growth(rep):
    figure = figures.rms_lines(rep.residual, 0, "zh", outlier_tokens=[0, 5, 6])
    first = X[:, 0, 0].double().pow(2).mean(-1).sqrt().numpy()  # [L]
    np.testing.assert_allclose(_trace(figure, ZH["dumps.first_token"]).y, first, rtol=1e-6)
    fit = next(g for g in rep.residual.growth if g.basis == "median_token")  # it follows a curve
    np.testing.assert_allclose(
        _trace(figure, ZH["dumps.fit"]).y, fit.intercept * fit.rate ** np.arange(5), rtol=1e-9
    )
    tracked = [ZH["dumps.token_n"].format(token=token) for token in (5, 6)]
    outliers = [t.line.color for t in figure.data if t.name in tracked]
    assert len(set(outliers)) == len(outliers) == 2  # each tracked token its own colour
    token_0 = ZH["dumps.token_n"].format(token=0)
    assert not any(t.name == token_0 for t in figure.data)  # token 0 is drawn as the first
    assert figure.layout.yaxis.type == "log"


def test_massive_figure_puts_the_threshold_on_the_ratio_scale(rep):
    mas = rep.massive
    figure = figures.massive_figure(mas, "zh")
    top = _trace(figure, ZH["dumps.top_rank"].format(rank=1))
    np.testing.assert_allclose(top.y, mas.top3[:, 0] / mas.median_abs)
    threshold = _trace(figure, ZH["dumps.threshold"])
    np.testing.assert_allclose(threshold.y, mas.threshold / mas.median_abs)
    assert max(top.y[2:]) == pytest.approx(2500 / mas.median_abs[2:].min())


def test_token_norms_figure_draws_both_outputs_and_their_difference(rep):
    dump = open_dump(_upload(files.hf_names(X)))
    norms = compare_norms(dump, 3, [7], eps=1e-5)  # sequence 1, token 0
    figure = figures.token_norms_figure(norms, "zh")
    token = X[3, 1, 0].double()
    ln = torch.nn.functional.layer_norm(token, (16,), eps=1e-5)
    rms = torch.nn.functional.rms_norm(token, (16,), eps=1e-5)
    np.testing.assert_allclose(_trace(figure, "LayerNorm(x)").y, ln.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_trace(figure, "RMSNorm(x)").y, rms.numpy(), rtol=1e-5, atol=1e-6)
    difference = _trace(figure, ZH["dumps.ln_minus_rms"])
    np.testing.assert_allclose(difference.y, (ln - rms).numpy(), atol=1e-5)


def test_channel_figures_show_each_channels_statistics_and_outliers(rep):
    ratio = rep.channels.ratio
    heatmap = channel_figures.channel_heatmap(ratio, "zh")
    np.testing.assert_allclose(heatmap.data[0].z, np.log10(ratio), rtol=1e-9)
    assert heatmap.data[0].zmid == 0.0  # 1x the median channel sits at the middle colour
    detail = channel_figures.channel_detail(rep.channels, 3, "a <b>", "zh")
    title = ZH["dumps.detail_title"].format(layer=3, entry="a &lt;b&gt;")  # the name as typed
    assert detail.layout.title.text == title
    values = X[3].double().reshape(-1, 16)  # [B*T, d]
    outliers = [t for t in detail.data if t.name == ZH["dumps.outlier_channel"]]
    assert list(outliers[0].x) == [3]  # the massive channel, and only it
    np.testing.assert_allclose(outliers[0].y, [values[:, 3].mean().item()], rtol=1e-6)
    usual = _trace(detail, ZH["dumps.channel_std"])
    assert 3 not in list(usual.x)
    np.testing.assert_allclose(
        usual.y, values.std(dim=0, unbiased=False).numpy()[list(usual.x)], rtol=1e-5
    )


def test_dyt_figure_draws_the_fitted_tanh(pairs_rep):
    fit = pairs_rep.dyt[1]
    figure = channel_figures.dyt_figure(fit, "zh")
    points = _trace(figure, ZH["dumps.dyt_points"].format(count=fit.points))
    np.testing.assert_array_equal(points.x, fit.x)
    curve = _trace(figure, "γ·tanh(αx)")
    expected = fit.gamma * torch.tanh(fit.alpha * torch.tensor(curve.x, dtype=torch.float64))
    np.testing.assert_allclose(curve.y, expected.numpy(), rtol=1e-12)
    assert curve.x[0] == fit.x.min() and curve.x[-1] == fit.x.max()


def test_a_few_far_values_of_the_bulk_are_drawn_at_the_edges_not_setting_the_scale(pairs_rep):
    """A real dump's layer 12: 0.5 % of the fitted values lie from |x| = 107 to 808; drawn
    where they are, they squeezed the curve into an eighth of the axis."""
    bulk = np.linspace(-2.0, 2.0, 1990)
    far = np.array([-808.0, -300.0, 150.0, 120.0, 110.0, 100.0, -90.0, 95.0, 99.0, -97.0])
    x = np.concatenate([bulk, far])
    fit = dataclasses.replace(pairs_rep.dyt[1], x=x, y=np.tanh(x), alpha=1.0, gamma=1.0, outliers=0)
    figure = channel_figures.dyt_figure(fit, "en")
    reach = max(float(np.quantile(np.abs(x), 0.995)), 4.0)
    margin = 0.04 * 2 * reach
    assert figure.layout.xaxis.range == (-reach - margin, reach + margin)
    points = _trace(figure, catalog("en")["dumps.dyt_points"].format(count=fit.points))
    assert np.abs(points.x).max() <= reach
    marked = next(t for t in figure.data if "fitted: at the edge" in t.name)
    assert len(points.x) + len(marked.x) == x.size  # every value drawn, once
    assert set(np.abs(marked.x)) == {reach}
    assert sorted(row[0] for row in marked.customdata) == sorted(v for v in x if abs(v) > reach)
    assert "808" in marked.name and "10 of the 2,000 drawn" in plain(marked.name)
    assert figure.layout.height > channel_figures.DYT_HEIGHT  # room for the longer legend
    table = labelled_table(figure)  # the CSV: their own values, not where they are drawn
    far_x, far_y = table[table.trace == plain(marked.name)].iloc[:, 1:].T.values  # x, y
    assert sorted(far_x) == sorted(v for v in x if abs(v) > reach)
    np.testing.assert_allclose(sorted(far_y), sorted(np.tanh(x[np.abs(x) > reach])))
    curve = _trace(figure, "γ·tanh(αx)")
    assert curve.x[0] == -reach and curve.x[-1] == reach


def test_the_tail_of_a_smooth_distribution_is_drawn_where_it_lies(pairs_rep):
    """Only values far past the rest cut the axis: a normal sample's largest values lie just
    past its 99.5th percentile, and nothing of it is moved to an edge."""
    x = np.random.default_rng(0).standard_normal(2000)
    for alpha in (2.0, 5.0):
        fit = dataclasses.replace(
            pairs_rep.dyt[1], x=x, y=np.tanh(alpha * x), alpha=alpha, gamma=1.0, outliers=0
        )
        figure = channel_figures.dyt_figure(fit, "en")
        assert figure.layout.xaxis.range is None
        assert not any("at the edge" in trace.name for trace in figure.data)
        assert figure.layout.height == channel_figures.DYT_HEIGHT


def test_dyt_figure_scales_to_the_bulk_and_marks_the_outliers_at_its_edges(pairs_rep):
    fit = dataclasses.replace(
        pairs_rep.dyt[1],
        outliers=2,
        bulk_limit=50.0,
        outlier_x=np.array([23_000.0, -900.0]),
        outlier_y=np.array([4.0, -1.0]),
    )
    figure = channel_figures.dyt_figure(fit, "en")
    low, high = min(float(fit.x.min()), 0.0), max(float(fit.x.max()), 0.0)
    margin = 0.04 * (high - low)  # the bulk's own extent on each side, not a symmetric one
    assert figure.layout.xaxis.range == (low - margin, high + margin)
    marked = next(t for t in figure.data if "left out of the fit" in t.name)
    top = float(np.abs(fit.y).max())
    assert list(marked.x) == [high, low] and list(marked.y) == [min(4.0, top), max(-1.0, -top)]
    assert [list(row) for row in marked.customdata] == [[23_000.0, 4.0], [-900.0, -1.0]]
    assert "23,000" in marked.name and "past |x| = 50" in plain(marked.name)  # as sentences
    unfitted = channel_figures.dyt_figure(pairs_rep.dyt[1], "en")
    assert unfitted.layout.xaxis.range is None and len(unfitted.data) == 2


def test_a_small_dumps_heatmap_ticks_whole_layers_and_tokens_only():
    """Rows are layers and columns tokens: a 2 × 4 dump gets one tick per row and column
    (plotly's own step would write 0.5 and 1.5); a long one keeps plotly's step."""
    small = figures.rms_heatmap(np.ones((2, 4)), ["a", "b"], "en")
    for axis in (small.layout.xaxis, small.layout.yaxis):
        assert axis.dtick == 1 and axis.tickmode in (None, "linear")  # "auto" ignores dtick
    large = figures.rms_heatmap(np.ones((31, 24)), [str(i) for i in range(31)], "en")
    assert large.layout.xaxis.dtick is None and large.layout.yaxis.dtick is None


def test_a_heatmap_of_named_tokens_has_a_layout_whose_names_fit_a_phone():
    """24 token names at −60° were drawn over one another in a 390 px phone's column (358 px):
    a second layout names every other token, and each layout's least width leaves every name
    it writes its own room."""
    names = [f"word{i}" for i in range(24)]
    variants = figures.rms_heatmaps(
        np.ones((31, 24)), [str(i) for i in range(31)], "en", True, (), names
    )
    assert len(variants) == 2 and variants[0][1] > variants[1][1]
    (full, wide), (sparse, narrow) = variants
    assert list(full.layout.xaxis.tickvals) == list(range(24))
    assert list(sparse.layout.xaxis.tickvals) == list(range(0, 24, 2))
    assert sparse.layout.xaxis.ticktext[1] == "2 word2" and narrow <= 358
    for figure, width in variants:
        named = len(figure.layout.xaxis.ticktext)
        assert width >= figures.HEATMAP_FRAME_PX + figures.NAMED_TICK_PX * named
    few = figures.rms_heatmaps(np.ones((3, 8)), ["a", "b", "c"], "en", True, (), names[:8])
    unnamed = figures.rms_heatmaps(np.ones((3, 24)), ["a", "b", "c"], "en")
    assert len(few) == len(unnamed) == 1


def test_a_projected_heatmap_leaves_each_token_name_the_room_of_its_larger_text():
    """Presenting writes ticks at 16 px, not 12: the plain widths put the full layout on a
    560 px screen and 12 names on a phone, which ran into each other there."""
    names = [f"word{i}" for i in range(24)]
    rms, layers = np.ones((31, 24)), [str(i) for i in range(31)]
    plain = figures.rms_heatmaps(rms, layers, "en", True, (), names)
    projected = figures.rms_heatmaps(rms, layers, "en", True, (), names, projected=True)
    assert len(projected) == 2
    for figure, width in projected:
        named = len(figure.layout.xaxis.ticktext)
        pitch = (width - figures.PROJECTED_FRAME_PX) / named
        assert pitch >= figures.NAMED_TICK_PX * CHART_TICKS / 12  # the tick text's growth
    assert projected[0][1] > plain[0][1]
    assert projected[-1][1] <= 350  # a phone's column while presenting


def test_the_divergence_label_sits_on_its_line_of_the_log_axis():
    """The label "10 %: diverged" marks the dashed line at 10⁻¹: on a log axis an annotation's y is in
    log10 units, so it is −1 (add_hline's own label took 0.1, and sat by the "1" gridline)."""
    from types import SimpleNamespace

    from engine.dumps.live_precision import HALF_DIVERGENCE
    from ui.figures.dumps_real import precision_figure

    run = SimpleNamespace(dtype="float16", relative_error=np.array([[1e-3, 2e-3], [5e-3, 1e-2]]))
    comparison = SimpleNamespace(labels=("hidden_states.0", "hidden_states.1"), runs=(run,))
    figure = precision_figure(comparison, "en")
    (label,) = [a for a in figure.layout.annotations if "diverged" in a.text]
    assert label.yref == "y" and label.y == pytest.approx(np.log10(HALF_DIVERGENCE))
    assert figure.layout.yaxis.type == "log"
    # the house's log ticks, in one notation (plotly's own wrote "2, 5, 10⁻³, 2, 5, 10⁻²")
    assert list(figure.layout.yaxis.ticktext) == ["0.002", "0.005", "0.01", "0.02", "0.05", "0.1"]


def test_the_token_band_s_edges_are_rms_values_tokens_have():
    """16 tokens, two of them 100× the others: the 90th percentile interpolated halfway to
    them (≈ 50), an RMS no token had, above the line of all tokens; each edge is now a
    token's own RMS, so the band holds the fourteen ordinary tokens at 1."""
    tensors = {f"layers.{i}": torch.ones((1, 16, 8)) for i in range(3)}
    for tensor in tensors.values():
        tensor[0, 14:] = 100.0
    rep16 = report(Upload("two_massive.safetensors", save(tensors)))
    band = [
        t
        for t in figures.rms_lines(rep16.residual, 0, "en").data
        if t.fill or t.name == "10–90\u00a0% of tokens"
    ]
    assert band and all(max(t.y) == pytest.approx(1.0) for t in band)


def test_the_token_band_of_two_tokens_runs_from_the_lower_to_the_higher():
    tensors = {f"layers.{i}": torch.ones((1, 2, 8)) for i in range(3)}
    for tensor in tensors.values():
        tensor[0, 1] = 4.0
    rep2 = report(Upload("two_tokens.safetensors", save(tensors)))
    upper, lower = [t for t in figures.rms_lines(rep2.residual, 0, "en").data][:2]
    assert all(low <= high for low, high in zip(lower.y, upper.y))
