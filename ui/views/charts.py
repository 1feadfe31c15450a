"""Every chart a page draws goes through ``show``: one place for how charts behave.

plotly's modebar camera saves the chart as a PNG from the browser (twice the screen's pixels,
sharp on a slide), named after the chart.  Views call ``show_chart(figure, key)`` (or with a
column as ``target``) instead of ``st.plotly_chart``.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
import streamlit as st

PNG_SCALE = 2  # the modebar's PNG: twice the drawn size, sharp on a projector or a slide


def chart_config(key: str, **overrides: Any) -> dict[str, Any]:
    """plotly.js config of a chart: the camera button's PNG is named after the chart."""
    config: dict[str, Any] = {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": key, "scale": PNG_SCALE},
    }
    config.update(overrides)
    return config


def show_chart(
    figure: go.Figure, key: str | None, target=None, *, config: dict | None = None, **kwargs
):
    """Draw ``figure`` into ``target`` (``st`` or a column); returns plotly_chart's result.

    ``key`` names the chart (its widget key and its files); ``config`` adds plotly.js options
    (e.g. ``displayModeBar``); other keyword arguments go to ``st.plotly_chart``.
    """
    target = st if target is None else target
    kwargs.setdefault("width", "stretch")
    return target.plotly_chart(
        figure, key=key, config=chart_config(key or "chart", **(config or {})), **kwargs
    )
