"""The Axes page in a real browser: click a heatmap cell, see the cells sharing its statistic
change with the chosen norm; the experiments section renders; a hostile link is refused."""

import time

import pytest
from playwright.sync_api import expect

from tests.e2e.browser import SLOW_MS, address_holds, wait_idle

pytestmark = pytest.mark.e2e

HEATMAP = ".st-key-ax_heatmap .js-plotly-plot"

# Page coordinates of heatmap cell (channel x, row y) on the input panel (plotly's own axes)
CELL_POSITION_JS = """([x, y]) => {
  const gd = document.querySelector('.st-key-ax_heatmap .js-plotly-plot');
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
  const box = gd.getBoundingClientRect();
  return [box.left + xa._offset + xa.l2p(x), box.top + ya._offset + ya.l2p(y)];
}"""

# The unveiled cells of the input panel (veil opacity 0), as [row, channel] pairs
LIT_CELLS_JS = """() => {
  const gd = document.querySelector('.st-key-ax_heatmap .js-plotly-plot');
  const z = gd._fullData[1].z, lit = [];
  for (let r = 0; r < z.length; r++) for (let c = 0; c < z[r].length; c++)
    if (z[r][c] === 0) lit.push([r, c]);
  return lit;
}"""


def _open(page, url: str) -> None:
    page.goto(url)
    wait_idle(page)
    page.locator(HEATMAP).locator(".main-svg").first.wait_for(state="visible", timeout=SLOW_MS)
    page.locator(".st-key-ax_norm [role='radio']").first.wait_for(state="visible")


def _click_cell(page, channel: int, row: int) -> None:
    x, y = page.evaluate(CELL_POSITION_JS, [channel, row])
    page.mouse.move(x, y)
    page.mouse.click(x, y)
    wait_idle(page)
    page.locator(HEATMAP).locator(".main-svg").first.wait_for(state="visible")


def _lit(page) -> set[tuple[int, int]]:
    return {tuple(cell) for cell in page.evaluate(LIT_CELLS_JS)}


def _lit_becomes(page, expected: set, timeout_s: float = 15.0) -> set[tuple[int, int]]:
    """The lit cells once they equal ``expected``, or after ``timeout_s``: on a loaded
    machine the idle state can still be the last run's when a click's rerun has not begun."""
    deadline = time.monotonic() + timeout_s
    while (lit := _lit(page)) != expected and time.monotonic() < deadline:
        page.wait_for_timeout(200)
    return lit


def test_click_a_cell_and_the_shared_set_follows_the_norm(page, server_url, screenshot):
    _open(page, server_url + "/axes?lang=en")
    expect(page.get_by_role("heading", name="Axes", exact=True)).to_be_visible()
    b, t, c, tokens, d = 2, 7, 20, 16, 32  # the defaults: B = 4, T = 16, d = 32
    row = b * tokens + t
    _click_cell(page, c, row)
    try:  # the page's first click, under the whole suite's load, was once lost: again
        address_holds(page, "ax_cell_b=2", "ax_cell_t=7", "ax_cell_c=20")
    except AssertionError:
        _click_cell(page, c, row)
        address_holds(page, "ax_cell_b=2", "ax_cell_t=7", "ax_cell_c=20")
    assert page.get_by_text("Cell (b = 2, t = 7, c = 20)").is_visible()
    # LayerNorm: the clicked cell's row, all d channels
    assert _lit(page) == {(row, channel) for channel in range(d)}

    page.get_by_role("radio", name="BatchNorm", exact=True).click()
    wait_idle(page)
    # BatchNorm: the clicked cell's channel over all B·T rows
    expected = {(r, c) for r in range(4 * tokens)}
    assert _lit_becomes(page, expected) == expected

    page.get_by_role("radio", name="InstanceNorm", exact=True).click()
    wait_idle(page)
    expected = {(b * tokens + p, c) for p in range(tokens)}  # its sequence's positions
    assert _lit_becomes(page, expected) == expected

    page.get_by_role("radio", name="GroupNorm", exact=True).click()
    wait_idle(page)
    group = range(16, 24)  # G = 4 groups of 8 channels: channel 20 is in the third
    expected = {(b * tokens + p, ch) for p in range(tokens) for ch in group}
    assert _lit_becomes(page, expected) == expected
    assert page.locator("[data-testid='stException']").count() == 0
    screenshot(page, "axes_groupnorm_en.png", full_page=True)

    _click_cell(page, 3, 5)  # another click under GroupNorm: sequence 0, first group
    expected = {(p, ch) for p in range(tokens) for ch in range(8)}
    assert _lit_becomes(page, expected) == expected


# Where the heatmap, its colour bars, the box and the box's axis names are drawn (px)
PLACES_JS = """() => {
  const rect = (e) => { const r = e.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom]; };
  const map = document.querySelector('.st-key-ax_heatmap .js-plotly-plot');
  const box = document.querySelector('.st-key-ax_box .js-plotly-plot');
  return {map: rect(map), box: rect(box),
    bars: [...map.querySelectorAll('.colorbar .cbfills')].map(e => rect(e)),
    names: [...box.querySelectorAll('.annotation')].map(e => rect(e))};
}"""


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_an_800_px_window_puts_the_box_under_the_heatmap(page, server_url):
    """Beside a sidebar, an 800 px window left the heatmap ~290 px: colour bars a few px long
    with their ticks run together, the box's axis names on top of each other."""
    page.set_viewport_size({"width": 800, "height": 1400})
    _open(page, server_url + "/axes?lang=zh")
    places = page.evaluate(PLACES_JS)
    assert places["box"][1] >= places["map"][3]  # stacked
    assert [round(bar[2] - bar[0]) >= 80 for bar in places["bars"]] == [True, True]
    names = places["names"]
    assert len(names) == 3
    assert not any(_overlap(a, b) for i, a in enumerate(names) for b in names[i + 1 :])

    page.set_viewport_size({"width": 1280, "height": 1400})  # room for both: side by side
    page.wait_for_timeout(500)
    places = page.evaluate(PLACES_JS)
    assert places["box"][0] >= places["map"][2]


def test_batchnorm_failures_render_in_chinese(page, server_url, screenshot):
    page.goto(server_url + "/axes?lang=zh&ax_section=batchnorm")
    wait_idle(page)
    expect(page.get_by_role("heading", name="5. BatchNorm 泄露未来信息")).to_be_visible()
    expect(page.locator(".stPlotlyChart")).to_have_count(
        9, timeout=90_000
    )  # four pairs of panels and one chart (11 s alone; over 30 s under the suite's load)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.get_by_text("批大小为 1 时方差为零", exact=False).is_visible()
    screenshot(page, "axes_batchnorm_zh.png", full_page=True)


def test_a_hostile_link_is_refused_with_messages(page, server_url):
    page.goto(server_url + "/axes?lang=en&ax_d=0&ax_groups=5&ax_norm=groupnorm&ax_lengths=x")
    wait_idle(page)
    alerts = " ".join(page.locator("[data-testid='stAlert']").all_inner_texts())
    assert "ax_d" in alerts and "1 … 1,024" in alerts  # d = 0 refused, the default shown
    assert "5 does not divide 32" in alerts  # the engine's refusal, translated
    assert page.locator("[data-testid='stException']").count() == 0
