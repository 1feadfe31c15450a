"""Every chart is drawn through ui/views/charts.py, so every chart downloads the same way."""

from __future__ import annotations

from pathlib import Path

from ui.views.charts import PNG_SCALE, chart_config

ROOT = Path(__file__).resolve().parents[2]


def test_no_module_but_the_chart_helper_calls_plotly_chart():
    callers = [
        path.relative_to(ROOT).as_posix()
        for folder in ("ui", "app_pages")
        for path in (ROOT / folder).rglob("*.py")
        if ".plotly_chart(" in path.read_text(encoding="utf-8")
    ]
    assert callers == ["ui/views/charts.py"]


def test_the_modebar_saves_a_named_png_at_twice_the_drawn_size():
    config = chart_config("dp_residual")
    assert config["toImageButtonOptions"] == {
        "format": "png",
        "filename": "dp_residual",
        "scale": PNG_SCALE,
    }
    assert PNG_SCALE >= 2 and config["displaylogo"] is False
    assert chart_config("ax_box", staticPlot=True)["staticPlot"] is True
