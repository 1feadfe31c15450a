"""The Geometry page in a real browser: the 3-D scene holds the sphere, the plane, the axis and
both norms' outputs (read from plotly's own graph); a toggle removes the lines; a row typed in
the Vector Lab opens here through its link; the Chinese page says LayerNorm's two outputs."""

import math

import pytest
from playwright.sync_api import expect

from tests.e2e.browser import wait_idle

pytestmark = pytest.mark.e2e

SCENE = ".st-key-ge_chart_scene .js-plotly-plot"
PATH = ".st-key-ge_chart_path .js-plotly-plot"

# The meta tag of every trace plotly drew, in order
TAGS_JS = """(selector) => {
  const gd = document.querySelector(selector);
  return gd && gd._fullData ? gd._fullData.map(t => t.meta) : null;
}"""

# The points of the trace tagged ``tag``, as [[x, y, z], ...]
POINTS_JS = """([selector, tag]) => {
  const gd = document.querySelector(selector);
  const trace = gd._fullData.find(t => t.meta === tag);
  const xs = Array.from(trace.x), ys = Array.from(trace.y), zs = trace.z ? Array.from(trace.z) : null;
  return xs.map((x, i) => zs ? [x, ys[i], zs[i]] : [x, ys[i]]);
}"""


def _wait_chart(page, selector: str) -> None:
    page.locator(selector).first.wait_for(state="visible", timeout=60_000)
    page.wait_for_function(f"() => ({TAGS_JS})({selector!r}) !== null", timeout=30_000)


def test_the_scene_holds_the_expected_traces(page, server_url, artifacts):
    page.goto(server_url + "/geometry?lang=en")
    wait_idle(page)
    _wait_chart(page, SCENE)
    expect(page.get_by_role("heading", name="Geometry", exact=True)).to_be_visible()
    tags = page.evaluate(TAGS_JS, SCENE)
    expected = {"sphere", "plane", "ones_axis", "layernorm_set", "inputs", "layernorm", "rmsnorm"}
    assert expected <= set(tags)
    assert {"lines_layernorm", "lines_rmsnorm"} <= set(tags)
    assert page.locator(f"{SCENE} canvas").count() > 0  # drawn by WebGL: a rotatable scene
    layer = page.evaluate(POINTS_JS, [SCENE, "layernorm"])
    assert len(layer) == 500
    for x, y, z in layer[:50]:  # on the plane, inside the sqrt(3) sphere by eps only
        assert abs(x + y + z) < 1e-4
        assert math.sqrt(x * x + y * y + z * z) <= math.sqrt(3) + 1e-4
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=str(artifacts / "geometry_scene_en.png"), full_page=True)

    page.get_by_text("Input → output lines", exact=True).click()
    wait_idle(page)
    page.wait_for_function(
        f"() => !({TAGS_JS})({SCENE!r}).includes('lines_layernorm')", timeout=30_000
    )
    assert "ge_lines=false" in page.url


def test_a_vector_lab_row_opens_here_through_the_link(page, server_url):
    page.goto(server_url + "/?lang=en&vl_text=3%2C+1%2C+2")
    wait_idle(page)
    link = page.get_by_role("link", name="See this vector on the sphere (Geometry page)")
    link.scroll_into_view_if_needed()
    link.click()
    wait_idle(page)
    page.wait_for_url("**/geometry?**", timeout=30_000)
    assert "ge_section=vector" in page.url and "ge_vector=3" in page.url
    _wait_chart(page, PATH)
    x = page.evaluate(POINTS_JS, [PATH, "point_x"])
    assert x == [[3, 1, 2]]
    assert page.locator("[data-testid='stException']").count() == 0


def test_the_chinese_page_says_layernorm_has_two_outputs(page, server_url, artifacts):
    page.goto(server_url + "/geometry?lang=zh&ge_d=2")
    wait_idle(page)
    _wait_chart(page, SCENE)
    expect(page.get_by_role("heading", name="几何", exact=True)).to_be_visible()
    expect(page.get_by_text("d = 2 时 LayerNorm 只有两个可能的输出。")).to_be_visible()
    tags = page.evaluate(TAGS_JS, SCENE)
    assert "layernorm" in tags and "rmsnorm" in tags
    page.screenshot(path=str(artifacts / "geometry_d2_zh.png"), full_page=True)
