"""Experiments page charts: the changed model against the unmodified one, position by
position, and each experiment's own view (massive entries per point, the sweep, the logit
lens, float16's distance from float32)."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.figures.style import log_axis
from ui.formatting import finite_or_none, format_power, literal, plot_text
from ui.i18n import translate
from ui.text.dumps import token_text

UNMODIFIED, CHANGED = "#7f7f7f", "#d62728"
LENS_COLORS = {"own_scale": "#1f77b4", "final_scale": "#d62728", "no_norm": "#2ca02c"}
HEIGHT = 360
FEW_POSITIONS = 32  # up to this many positions, each one's point is drawn


def _tr(key: str, lang: str, **params) -> str:
    return translate(f"experiments.{key}", lang, **params)


def _two_rows(top: str, bottom: str, lang: str) -> go.Figure:
    """Two panels sharing the x axis, titled ``experiments.<top>`` and ``<bottom>``."""
    titles = (_tr(top, lang), _tr(bottom, lang))
    return make_subplots(
        rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12, subplot_titles=titles
    )


def _kl_drawn(kl: np.ndarray) -> np.ndarray:
    """The KL a log axis can draw: finite and above 0; the rest NaN (no point)."""
    return np.where(np.isfinite(kl) & (kl > 0), kl, np.nan)


def _nothing_drawn(kl: np.ndarray, lang: str) -> str | None:
    """Why the KL panel holds no point (0 everywhere, ∞ everywhere, or each of the two), or
    None when some point is drawn: said in the panel, whose axis would otherwise run from an
    impossible −1 to 4."""
    if np.isfinite(_kl_drawn(kl)).any():
        return None
    if (kl == 0).all():
        return _tr("chart.kl_all_zero", lang)
    return _tr("chart.kl_none_finite" if not np.isfinite(kl).any() else "chart.kl_none", lang)


def _finish_rows(figure: go.Figure, y: str, kl: str, x: str, empty: str | None = None) -> go.Figure:
    """Axis titles; the bottom panel's KL on a log axis, or, where none of it is drawn, a
    line in the panel saying why (``empty``)."""
    figure.update_yaxes(title_text=y, row=1, col=1)
    figure.update_yaxes(title_text=kl, row=2, col=1)  # drawn or not: the CSV's column name
    if empty is None:
        log_axis(figure, "y", row=2, col=1, title_text=kl)
    else:
        figure.update_yaxes(range=[0, 1], showticklabels=False, showgrid=False, row=2, col=1)
        figure.add_annotation(
            text=empty, x=0.5, y=0.5, xref="x2 domain", yref="y2 domain", showarrow=False
        )
    figure.update_xaxes(title_text=x, row=2, col=1)
    # the legend names the top panel's lines: above it, not under the bottom panel (a
    # projector's screen held the top panel alone, with no key to its colours), headed by
    # the panel's title: drawn as an annotation above the plot, a phone's legend of three
    # rows covered it (the legend's rows push the plot down; an annotation stays in their
    # way).  The annotation stays, hidden: the CSV names the panel by it.
    top = figure.layout.annotations[0]
    figure.update_annotations(visible=False, selector=dict(text=top.text))
    legend = dict(orientation="h", yref="container", y=1, yanchor="top", x=0)
    legend["title"] = dict(text=top.text, side="top", font=dict(size=top.font.size))
    figure.update_layout(height=2 * HEIGHT + 35, margin=dict(t=75, b=40), legend=legend)
    return figure


def _titled(figure: go.Figure, x: str, y: str, **layout) -> go.Figure:
    figure.update_layout(xaxis_title=x, yaxis_title=y, height=HEIGHT, **layout)
    return figure


def effect_figure(run, lang: str) -> go.Figure:
    """Top: each next token's loss −log p, unmodified and changed; bottom: KL(original ‖
    changed) per position, on a log axis (positions with KL = 0 are left out)."""
    effect = run.result.effect
    positions = np.arange(1, run.tokens)  # the token each loss is for
    figure = _two_rows("chart.nll", "chart.kl", lang)
    # a short text's points drawn each (a line through one point draws nothing)
    mode = "lines+markers" if len(positions) <= FEW_POSITIONS else "lines"
    hover = [plot_text(f"{p}: {token_text(run.token_texts[p])}") for p in positions]
    for name, values, color in (
        (_tr("chart.unmodified", lang), run.baseline_nll, UNMODIFIED),
        (_tr("chart.changed", lang), effect.nll, CHANGED),
    ):
        figure.add_scatter(
            x=positions,
            y=finite_or_none(values),
            name=name,
            mode=mode,
            line=dict(color=color, width=1.2),
            text=hover,
            hovertemplate="%{text}<br>%{y:.3g}<extra>" + name + "</extra>",
            row=1,
            col=1,
        )
    kl = np.asarray(effect.kl[:-1], dtype=float)  # position t predicts token t+1
    shown = _kl_drawn(kl)
    figure.add_scatter(
        x=positions,
        y=finite_or_none(shown),
        name="KL",
        mode=mode,
        line=dict(color=CHANGED, width=1),
        text=hover,
        hovertemplate="%{text}<br>%{y:.3g}<extra>KL</extra>",
        showlegend=False,
        meta={"values": {"y": kl}},  # the CSV: 0 and ∞ too, which a log axis cannot draw
        row=2,
        col=1,
    )
    y, kl_y, x = (_tr(f"chart.{key}", lang) for key in ("nll_y", "kl_y", "position"))
    if len(positions) <= 10:  # whole positions only, never "0.5"
        figure.update_xaxes(tick0=0, dtick=1)
    return _finish_rows(figure, y, kl_y, x, _nothing_drawn(kl, lang))


def massive_figure(run, lang: str) -> go.Figure:
    result = run.result
    points = np.arange(len(result.count))
    figure = go.Figure(
        go.Bar(
            x=points,
            y=result.count,
            name=_tr("massive.chart_y", lang),
            marker_color=[CHANGED if p == result.point else UNMODIFIED for p in points],
        )
    )
    title, x, y = (_tr(f"massive.{key}", lang) for key in ("chart", "chart_x", "chart_y"))
    if max(result.count, default=0) <= 10:  # a count of entries: never a tick at "1.5"
        figure.update_yaxes(dtick=1)
    return _titled(figure, x, y, title=title)


CROWDED_BARS = 20  # past this many bars, a projector's chart names every other block


def sweep_figure(run, lang: str) -> go.Figure:
    """Perplexity ratio of each single freeze on a log axis; tolerated bars marked.  Ticks
    stay level (the final norm's is short; its full name in the hover): a rotated long one
    took the plot's height, leaving its bars ~140 px."""
    sweep = run.result
    ratios = sweep.perplexity_ratio
    names = [
        _tr("sweep_result.final_tick", lang) if layer is None else str(layer)
        for layer in sweep.layers
    ]
    full = [
        _tr("sweep_result.final", lang)
        if layer is None
        else _tr("sweep_result.block", lang, block=layer)
        for layer in sweep.layers
    ]
    capped = np.where(np.isfinite(ratios), ratios, np.nan)
    figure = go.Figure(
        go.Bar(
            x=names,
            y=finite_or_none(capped),
            name=_tr("sweep_result.chart_y", lang),
            marker_color=[UNMODIFIED if ok else CHANGED for ok in sweep.tolerated],
            customdata=full,
            hovertemplate="%{customdata}: ×%{y:.4g}<extra></extra>",
        )
    )
    figure.add_hline(y=1 + sweep.spec.tolerance, line_dash="dash", line_color="#333")
    # the bars rise from just under ×1 (no change): plotly's own range for bars on a log axis
    # reached down to 10⁻³, so a ×1.05 bar looked as tall as a ×3 one
    shown = [*capped[np.isfinite(capped)], 1.0, 1 + sweep.spec.tolerance]
    low, high = math.log10(min(shown)), math.log10(max(shown))
    pad = 0.05 * (high - low or 0.1)
    log_axis(figure, "y", values=shown, range=[low - pad, high + pad])
    x, y = _tr("sweep_result.chart_x", lang), _tr("sweep_result.chart_y", lang)
    figure.update_xaxes(tickangle=0)
    if len(names) > CROWDED_BARS:  # every other block named: at 1,024 px "29" met "最终"
        last = max(layer for layer in sweep.layers if layer is not None)  # never named:
        ticks = [  # the final norm's tick is named beside it
            n for n, layer in zip(names, sweep.layers) if layer is None or (last - layer) % 2
        ]
        figure.update_xaxes(tickvals=ticks, ticktext=ticks)
    return _titled(figure, x, y, xaxis_type="category", margin=dict(t=24, b=48))


def lens_figure(run, lang: str) -> go.Figure:
    """Mean entropy (top) and mean KL to the model's output (bottom) of each lens per point."""
    r = run.result
    points = np.arange(r.entropy.shape[1])
    figure = _two_rows("lens_result.chart", "lens_result.chart_kl", lang)
    kl = r.kl_to_model.mean(-1)  # [3, L+1]
    for index, variant in enumerate(r.variants):
        name = _tr(f"options.lens.{variant}", lang)
        color = LENS_COLORS[variant]
        figure.add_trace(
            go.Scatter(x=points, y=r.mean_entropy[index], name=name, line=dict(color=color)),
            row=1,
            col=1,
        )
        values = _kl_drawn(kl[index])
        figure.add_scatter(
            x=points,
            y=finite_or_none(values),
            name=name,
            showlegend=False,
            line=dict(color=color),
            meta={"values": {"y": kl[index]}},  # the CSV: 0 and ∞ too (the chart: no point)
            row=2,
            col=1,
        )
    y, kl_y = _tr("lens_result.chart_y", lang), _tr("chart.kl_y", lang)
    x = _tr("lens_result.chart_x", lang)
    return _finish_rows(figure, y, kl_y, x, _nothing_drawn(kl, lang))


def _probability(p: float) -> str:
    """0.42 to two decimals; one under 0.01 with two significant digits (3.1×10⁻⁵), not as a
    column of "0.00" where a lens's distribution is nearly flat."""
    return f"{p:.2f}" if p >= 0.005 else format_power(float(p), 2)


def lens_table(run, lang: str) -> dict[str, list[str]]:
    """Each point's ``top_k`` most likely next tokens at the last decoded position, with their
    probabilities, per lens (a table).  ``st.table`` reads its cells as Markdown: each token
    is a code span, so a "-" token is no list bullet and two "$" are no formula."""
    r = run.result
    texts = r.token_texts  # the top ids decoded, by id
    rows: dict[str, list[str]] = {
        _tr("lens_result.point", lang): [str(p) for p in range(r.top_ids.shape[1])]
    }
    for index, variant in enumerate(r.variants):
        top = r.top_ids[index, :, -1]  # [points, k]
        probs = r.top_probs[index, :, -1]
        rows[_tr(f"options.lens.{variant}", lang)] = [
            " · ".join(
                f"{literal(token_text(texts[int(i)]))} {_probability(p)}" for i, p in zip(ids, ps)
            )
            for ids, ps in zip(top, probs)
        ]
    return rows


def half_figure(run, lang: str) -> go.Figure:
    r = run.result
    error = np.where(np.isfinite(r.stream_error), r.stream_error, np.nan).max(-1)  # [L+1]
    points = np.arange(len(error))
    shown = np.where(error > 0, error, np.nan)
    figure = go.Figure(
        go.Scatter(
            x=points,
            y=finite_or_none(shown),
            name=_tr("half_result.chart_y", lang),
            mode="lines+markers",
            line=dict(color=CHANGED),
        )
    )
    figure.add_hline(y=r.spec.divergence, line_dash="dash", line_color="#333")
    if np.isfinite(shown).any():
        log_axis(figure, "y", values=[*shown[np.isfinite(shown)], r.spec.divergence])
    x, y = _tr("lens_result.chart_x", lang), _tr("half_result.chart_y", lang)
    return _titled(figure, x, y, title=_tr("half_result.chart", lang))
