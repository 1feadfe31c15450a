"""Plotly's key-path parser, kept once per path (``ui.figures.key_paths``): installed on the
plotly this project pins, answering exactly as plotly's own, and building the same figures."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest
from plotly import basedatatypes

from ui.figures import key_paths

PATHS = [
    "margin.l",
    "xaxis_title_text",
    "xaxis.title.text",
    "yaxis2.tickvals",
    "error_x.thickness",  # a property whose own name holds "_"
    "marker.colorbar.title_side",
    "annotations[3].font.size",
    "legend.orientation",
    "scene.camera.eye.x",
    "a__b",
    "trailing_",
    "_leading",
    "",
]


def test_the_parser_is_found_and_kept_once_per_path():
    assert key_paths.install()
    parse = getattr(basedatatypes, key_paths.PARSER)
    assert hasattr(parse, "cache_info") and hasattr(parse, "__wrapped__")
    assert key_paths.install()  # a second install wraps nothing again
    assert getattr(basedatatypes, key_paths.PARSER) is parse


@pytest.mark.parametrize("path", PATHS)
def test_a_kept_parse_is_plotlys_own(path):
    parse = getattr(basedatatypes, key_paths.PARSER)
    assert parse(path) == parse.__wrapped__(path)
    assert parse(path) == parse.__wrapped__(path)  # the kept answer, asked again


def _figure() -> go.Figure:
    figure = go.Figure()
    figure.add_scatter(x=[1, 2, 3], y=[1, 10, 100], error_y=dict(array=[0.1, 0.2, 0.3]))
    figure.update_layout(
        height=300,
        margin=dict(l=10, r=10, t=30, b=10),
        xaxis_title_text="token",
        yaxis=dict(type="log", title=dict(text="RMS")),
        legend=dict(orientation="h", yref="container", y=0),
    )
    figure.update_yaxes(tickvals=[1, 10, 100], ticktext=["1", "10", "100"])
    figure.add_annotation(x=2, y=10, text="a", showarrow=False)
    return figure


def test_figures_are_built_as_plotly_builds_them(monkeypatch):
    kept = _figure().to_plotly_json()
    parse = getattr(basedatatypes, key_paths.PARSER)
    monkeypatch.setattr(basedatatypes, key_paths.PARSER, parse.__wrapped__)
    assert _figure().to_plotly_json() == kept
