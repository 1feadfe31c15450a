"""Kernels page charts: LayerNorm vs RMSNorm timings here, recorded GPU bandwidth."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from ui.figures.style import NORM_COLORS, framed, log_axis
from ui.i18n import translate
from ui.labels import NORM_NAMES, label

PASS_DASH = {"forward": "solid", "forward+backward": "dash"}
PROVIDER_COLORS = ("#1f77b4", "#7f7f7f", "#2ca02c", "#d62728", "#9467bd")


def timing_figure(timings: Sequence[dict], lang: str) -> go.Figure:
    """Median µs per call vs row width, one line per (kind, pass); log-log axes; error bars
    from the first to the third quartile of each timing's samples (its spread)."""
    figure = go.Figure()
    series: dict[tuple[str, str], list[dict]] = {}
    for row in timings:
        series.setdefault((row["kind"], row["pass"]), []).append(row)
    for (kind, pass_), rows in series.items():
        rows = sorted(rows, key=lambda r: r["width"])
        figure.add_scatter(
            x=[r["width"] for r in rows],
            y=[r["median_us"] for r in rows],
            error_y=dict(
                type="data",
                symmetric=False,
                array=[r["q3_us"] - r["median_us"] for r in rows],
                arrayminus=[r["median_us"] - r["q1_us"] for r in rows],
                color=NORM_COLORS[kind],
                thickness=1,
            ),
            mode="lines+markers",
            name=f"{NORM_NAMES[kind]} · {label('pass', pass_, lang)}",
            line=dict(color=NORM_COLORS[kind], dash=PASS_DASH[pass_]),
            customdata=[(r["gbps"], r["q1_us"], r["q3_us"]) for r in rows],
            hovertemplate=(
                "%{x}: %{y:.1f} µs [%{customdata[1]:.1f}, %{customdata[2]:.1f}] "
                "(%{customdata[0]:.1f} GB/s)<extra>%{fullData.name}</extra>"
            ),
        )
    widths = sorted({row["width"] for row in timings})
    width = translate("kernels.axis_width", lang)
    log_axis(figure, "x", sampled=widths, title_text=width)  # each timed width labelled
    log_axis(figure, "y", title_text=translate("kernels.axis_time", lang))
    return framed(figure, 380)


def recorded_bandwidth_figure(rows: Sequence[dict], lang: str) -> go.Figure:
    """Recorded GPU GB/s per case (op · pass · dtype · M×N), one bar per provider."""
    figure = go.Figure()
    providers = list(dict.fromkeys(r["provider"] for r in rows))
    for provider, color in zip(providers, PROVIDER_COLORS * 4):
        mine = [r for r in rows if r["provider"] == provider]
        figure.add_bar(
            x=[
                f"{r['op']} · {r['pass']} · {r['dtype']} · {int(r['M'])}×{int(r['N'])}"
                for r in mine
            ],
            y=[r["GB/s"] for r in mine],
            name=str(provider),
            marker_color=color,
        )
    legend = dict(orientation="h", y=1.08)
    y_title = translate("kernels.recorded_axis", lang)
    return framed(figure, 420, barmode="group", yaxis_title=y_title, legend=legend)
