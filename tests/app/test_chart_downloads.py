"""Every chart a page draws comes with its download menu (``ui.views.charts.show_chart``)."""

import pytest

from ui.views.charts import DOWNLOADS_KEY


def _keys(node, found: set[str]) -> set[str]:
    """The keys of every block under ``node`` (a keyed container's id ends with its key)."""
    for child in getattr(node, "children", {}).values():
        block_id = getattr(getattr(child, "proto", None), "id", "")
        if block_id:
            found.add(block_id.rsplit("-", 1)[-1])
        _keys(child, found)
    return found


@pytest.mark.parametrize("page", ["vector_lab", "axes", "depth", "models", "dumps"])
def test_every_chart_a_page_draws_has_its_download_menu(app, page):
    app.switch_page(f"app_pages/{page}.py").run()
    assert not app.exception
    charts = [chart.proto.id.rsplit("-", 1)[-1] for chart in app.get("plotly_chart")]
    assert charts  # each of these pages draws charts at once
    blocks = _keys(app.main, set())
    assert not [key for key in charts if f"{DOWNLOADS_KEY}{key}" not in blocks]
