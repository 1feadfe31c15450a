"""The Geometry page in a real browser: the 3-D scene holds the sphere, the plane, the axis and
both norms' outputs (read from plotly's own graph); a toggle removes the lines; a row typed in
the Vector Lab opens here through its link; the Chinese page says LayerNorm's two outputs."""

import json
import math

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from tests.e2e.browser import SLOW_MS, address_holds, wait_idle

pytestmark = pytest.mark.e2e

SCENE = ".st-key-ge_chart_scene"
PATH = ".st-key-ge_chart_path"

# The plotly graph of a scene, inside its ui.plotly_frame (same origin)
GRAPH = """((selector) => {
  const frame = document.querySelector(selector + ' iframe');
  const doc = frame && frame.contentDocument;
  return doc ? doc.querySelector('.js-plotly-plot') : null;
})"""
# The meta tag of every trace plotly drew, in order
TAGS_JS = f"""(selector) => {{
  const gd = {GRAPH}(selector);
  return gd && gd._fullData && gd.querySelector('canvas') ? gd._fullData.map(t => t.meta) : null;
}}"""
# The points of the trace tagged ``tag``, as [[x, y, z], ...]
POINTS_JS = f"""([selector, tag]) => {{
  const trace = {GRAPH}(selector)._fullData.find(t => t.meta === tag);
  const xs = Array.from(trace.x), ys = Array.from(trace.y);
  const zs = trace.z ? Array.from(trace.z) : null;
  return xs.map((x, i) => zs ? [x, ys[i], zs[i]] : [x, ys[i]]);
}}"""


def _wait_chart(page, selector: str) -> None:
    page.locator(f"{selector} iframe").first.wait_for(state="visible", timeout=60_000)
    page.wait_for_function(f"() => ({TAGS_JS})({selector!r}) !== null", timeout=60_000)


def test_the_scene_holds_the_expected_traces(page, server_url, screenshot):
    page.goto(server_url + "/geometry?lang=en")
    wait_idle(page)
    _wait_chart(page, SCENE)
    expect(page.get_by_role("heading", name="Geometry", exact=True)).to_be_visible()
    tags = page.evaluate(TAGS_JS, SCENE)
    expected = {"sphere", "plane", "ones_axis", "layernorm_set", "inputs", "layernorm", "rmsnorm"}
    assert expected <= set(tags)
    assert {"lines_layernorm", "lines_rmsnorm"} <= set(tags)
    canvases = page.frame_locator(f"{SCENE} iframe").locator("canvas")
    assert canvases.count() > 0  # drawn by WebGL: a rotatable scene
    layer = page.evaluate(POINTS_JS, [SCENE, "layernorm"])
    assert len(layer) == 500
    for x, y, z in layer[:50]:  # on the plane, inside the sqrt(3) sphere by eps only
        assert abs(x + y + z) < 1e-4
        assert math.sqrt(x * x + y * y + z * z) <= math.sqrt(3) + 1e-4
    assert page.locator("[data-testid='stException']").count() == 0
    screenshot(page, "geometry_scene_en.png", full_page=True)

    page.get_by_text("Input → output lines", exact=True).click()
    wait_idle(page)
    page.wait_for_function(
        f"() => !({TAGS_JS})({SCENE!r}).includes('lines_layernorm')", timeout=SLOW_MS
    )
    address_holds(page, "ge_lines=false")


# The plot area of a scene's graph as [width, height], the graph's height and width, and its
# frame's height and width
SIZES_JS = f"""(selector) => {{
  const gd = {GRAPH}(selector);
  const box = document.querySelector(selector + ' iframe').getBoundingClientRect();
  const full = gd._fullLayout;
  return [full._size.w, full._size.h, full.height, full.width, box.height, box.width];
}}"""
FITTED_JS = f"""(selector) => {{
  const [w, h, height, width, frameHeight, frameWidth] = ({SIZES_JS})(selector);
  return h <= 0.86 * w && Math.abs(width - frameWidth) <= 1;
}}"""


def test_a_phone_sees_the_whole_scene_and_a_wider_window_widens_it(page, server_url):
    """plotly keeps a 3-D view's vertical field of view, so a plot area taller than wide (a
    390 px phone's column: 358 × 449 px) cut x₃'s ticks and title at the left edge."""
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(server_url + "/geometry?lang=en&ge_count=200")
    wait_idle(page)
    _wait_chart(page, SCENE)
    page.wait_for_function(f"() => ({FITTED_JS})({SCENE!r})", timeout=SLOW_MS)
    w, h, height, width, frame_height, _ = page.evaluate(SIZES_JS, SCENE)
    assert h >= 0.8 * w  # the scene shrank only as far as it had to
    assert frame_height == pytest.approx(height, abs=1)  # the frame follows: nothing cut below

    page.set_viewport_size({"width": 1280, "height": 844})  # redrawn at its wider column
    page.wait_for_function(
        f"() => ({FITTED_JS})({SCENE!r}) && ({SIZES_JS})({SCENE!r})[3] > {width + 80}",
        timeout=SLOW_MS,
    )


def test_a_vector_lab_row_opens_here_through_the_link(page, server_url):
    page.goto(server_url + "/?lang=en&vl_text=3%2C+1%2C+2")
    wait_idle(page)
    link = page.get_by_role("link", name="See this vector on the sphere (Geometry page)")
    expect(link).to_be_attached(timeout=60_000)  # a loaded suite once took over 30 s here
    link.scroll_into_view_if_needed()
    link.click()
    wait_idle(page)
    page.wait_for_url("**/geometry?**", timeout=SLOW_MS)
    address_holds(page, "ge_section=vector", "ge_vector=3")
    _wait_chart(page, PATH)
    x = page.evaluate(POINTS_JS, [PATH, "point_x"])
    assert x == [[3, 1, 2]]
    assert page.locator("[data-testid='stException']").count() == 0


def test_the_chinese_page_says_layernorm_has_two_outputs(page, server_url, screenshot):
    page.goto(server_url + "/geometry?lang=zh&ge_d=2")
    wait_idle(page)
    _wait_chart(page, SCENE)
    expect(page.get_by_role("heading", name="几何", exact=True)).to_be_visible()
    expect(
        page.get_by_text(
            "d = 2 时 LayerNorm 把每个输入送到同一条直线上，ε = 0 时只送到其上的两个点。"
        )
    ).to_be_visible()
    tags = page.evaluate(TAGS_JS, SCENE)
    assert "layernorm" in tags and "rmsnorm" in tags
    screenshot(page, "geometry_d2_zh.png", full_page=True)


# Resolves after the scene's window has drawn two animation frames
FRAMES_JS = """(selector) => new Promise((done) => {
  const w = document.querySelector(selector + ' iframe').contentWindow;
  w.requestAnimationFrame(() => w.requestAnimationFrame(done));
})"""
EYE_JS = f"""(selector) => {{
  const eye = {GRAPH}(selector)._fullLayout.scene.camera.eye;
  return [eye.x, eye.y, eye.z];
}}"""


def _turned_by_a_drag(page, start: list[float]) -> bool:
    """Drags across the scene as a reader turns it, one mouse step per frame the scene draws
    (not all at once, as a loaded machine would deliver them); whether plotly recorded a
    turned camera."""
    box = page.locator(f"{SCENE} iframe").bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 3
    for step in range(9):
        if step == 1:
            page.mouse.down()
        page.mouse.move(x + 15 * step, y + 5 * step)
        page.evaluate(FRAMES_JS, SCENE)
        page.wait_for_timeout(60)
    page.mouse.up()
    return _camera_turned(page, start)


def _camera_turned(page, start: list[float]) -> bool:
    """Whether plotly records a camera turned away from ``start`` within 15 s (it applies a
    drag a moment later)."""
    try:
        page.wait_for_function(
            # turned, not merely rounded: plotly rewrites the eye's last digits itself
            f"([s, old]) => ({EYE_JS})(s).some((v, i) => Math.abs(v - old[i]) > 1e-3)",
            arg=[SCENE, start],
            timeout=15_000,
        )
    except PlaywrightTimeoutError:
        return False
    return True


# What a reader's drag does, without the mouse: the scene's WebGL camera turned a quarter turn
# about the vertical axis, then saved as a drag's mouse-up saves it (plotly's
# ``Scene.saveLayout``: the edit ``layout.uirevision`` keeps)
TURN_JS = """(selector) => {
  const gd = document.querySelector(selector + ' iframe').contentDocument
    .querySelector('.js-plotly-plot');
  const scene = gd._fullLayout.scene._scene, full = gd._fullLayout.scene;
  const eye = full.camera.eye;
  const camera = {...full.camera, eye: {x: -eye.y, y: eye.x, z: eye.z}};
  scene.setViewport({...full, camera: camera});
  scene.saveLayout(gd.layout);
}"""
# Whether the scene's own WebGL canvas is what a pointer finds at the centre of its frame
SCENE_UNDER_POINTER_JS = """(selector) => {
  const frame = document.querySelector(selector + ' iframe');
  const box = frame.getBoundingClientRect();
  if (document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 3) !== frame)
    return false;
  const doc = frame.contentDocument;
  const hit = doc.elementFromPoint(box.width / 2, box.height / 3);
  return hit !== null && hit.closest('.js-plotly-plot') !== null;
}"""


def test_a_turned_camera_stays_when_a_slider_moves(page, server_url):
    # On a saturated machine (three busy loops beside three runs of this test) about one run
    # in six left plotly's camera on the pole (eye straight above) without recording it, and
    # every later drag on that page failed too; in the suite, three drags on three fresh
    # pages once all failed so, and once a scripted turn after two lost drags was not
    # recorded either.  So each fresh page gets a drag, then, once the pointer is shown to
    # reach the scene, a turn saved as a drag saves it; a page where neither is recorded is
    # opened again.  The promise checked below, the camera kept across a rerun, is this
    # page's (Plotly.react, layout.uirevision).
    for _ in range(3):
        page.goto(server_url + "/geometry?lang=en&ge_count=200")
        wait_idle(page)
        _wait_chart(page, SCENE)
        start = page.evaluate(EYE_JS, SCENE)
        if _turned_by_a_drag(page, start):
            break
        assert page.evaluate(SCENE_UNDER_POINTER_JS, SCENE), "something covers the scene"
        page.evaluate(TURN_JS, SCENE)
        if _camera_turned(page, start):
            break
    else:
        pytest.fail("three fresh pages recorded neither a drag nor a scripted turn")
    turned = page.evaluate(EYE_JS, SCENE)
    before = page.evaluate(POINTS_JS, [SCENE, "rmsnorm"])
    page.locator(".st-key-ge_shift input[type='range']").press("ArrowRight")
    wait_idle(page)
    page.wait_for_function(
        f"([s, old]) => JSON.stringify(({POINTS_JS})([s, 'rmsnorm'])) !== old",
        arg=[SCENE, json.dumps(before)],
        timeout=SLOW_MS,
    )
    # the scene was updated in place (Plotly.react, layout.uirevision): the camera is kept
    assert page.evaluate(EYE_JS, SCENE) == pytest.approx(turned)


# The two columns of the "One vector" section (the picture, the steps) as [left, top, right,
# bottom], and how far its widest formula overflows its column
COLUMNS_JS = """() => {
  const rect = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const columns = [...document.querySelectorAll('.st-key-ge_path_layout [data-testid="stColumn"]')];
  const overflow = Math.max(0, ...[...columns[1].querySelectorAll('.katex-display')]
    .map(e => e.scrollWidth - e.clientWidth));
  return {columns: columns.map(rect), overflow};
}"""


def test_an_800_px_window_puts_the_steps_under_the_vector(page, server_url):
    """Beside a sidebar, an 800 px window left the steps ~218 px for formulas ~300 px wide."""
    page.set_viewport_size({"width": 800, "height": 1400})
    page.goto(server_url + "/geometry?ge_section=vector")
    wait_idle(page)
    _wait_chart(page, PATH)
    places = page.evaluate(COLUMNS_JS)
    picture, steps = places["columns"]
    assert steps[1] >= picture[3]  # stacked
    assert places["overflow"] <= 2

    page.set_viewport_size({"width": 1280, "height": 1400})  # room for both: side by side
    page.wait_for_timeout(500)
    picture, steps = page.evaluate(COLUMNS_JS)["columns"]
    assert steps[0] >= picture[2]
