"""Workshop mode in a real browser: a walk through every lesson in both languages (screenshots
with ``--screenshots`` in artifacts/e2e/lessons/), a prediction followed to its page, presentation mode, chart
downloads and readable log axes (a projector and a phone: tests/e2e/test_room_browser.py)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.browser import SLOW_MS, address_holds, fresh_page, open_settled, settle, wait_idle
from ui.figures.export import image_export_available
from ui.i18n import translate
from ui.lessons.catalog import LESSON_IDS

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_walk_through_every_lesson(page, server_url, screenshot, lang):
    open_settled(page, server_url, "lessons", f"lang={lang}&ls_lesson={LESSON_IDS[0]}")
    for number, lesson_id in enumerate(LESSON_IDS, 1):
        if number > 1:  # as a learner goes on: the lesson's own button
            page.get_by_role(
                "button", name=translate("lessons.next_lesson", lang), exact=True
            ).click()
            settle(page)
        title = translate(f"lessons.{lesson_id}.title", lang)
        expect(page.get_by_role("heading", name=f"{number}. {title}")).to_be_visible()
        address_holds(page, f"ls_lesson={lesson_id}")
        assert page.locator(".katex-display").count() >= 1
        screenshot(page, f"lessons/{number:02d}_{lesson_id}_{lang}.png", full_page=True)


def test_presenting_next_opens_the_new_lesson_at_its_title(shared_context, server_url):
    """On a projector the navigation sits under the lesson: after Next the room saw the new
    lesson's options, its title and question 400-560 px above the screen's edge."""
    with fresh_page(shared_context(viewport={"width": 1280, "height": 720})) as page:
        query = f"lang=en&present=on&ls_lesson={LESSON_IDS[0]}"
        open_settled(page, server_url, "lessons", query)
        for number, lesson_id in enumerate(LESSON_IDS[1:3], 2):
            forward = page.get_by_role("button", name="Next", exact=True)
            forward.scroll_into_view_if_needed()
            forward.click()
            settle(page)
            title = translate(f"lessons.{lesson_id}.title", "en")
            expect(page.get_by_role("heading", name=f"{number}. {title}")).to_be_in_viewport()


def test_predict_commit_and_follow_the_link_to_the_configured_page(page, server_url, screenshot):
    open_settled(page, server_url, "lessons", "lang=en&ls_lesson=worked_example")
    page.get_by_text("(b) −1.3416").click()
    wait_idle(page)
    page.get_by_role("button", name="Commit").click()
    wait_idle(page)
    expect(page.get_by_text("Right: (b) −1.3416")).to_be_visible()
    address_holds(page, "ls_answers=worked_example.b")
    link = page.get_by_text("Open the Vector Lab with [1, 2, 3, 4] and LayerNorm")
    # its address opens the Vector Lab in a new tab too (Streamlit wrote "?…": /lessons?…)
    address = link.locator("xpath=ancestor::a").evaluate("a => a.href")
    assert address.startswith(f"{server_url}/?") and "vl_eps=0" in address, address
    link.click()
    wait_idle(page, 120_000)
    expect(page.get_by_role("heading", name="Vector Lab", exact=True)).to_be_visible()
    address_holds(page, "vl_eps=0")
    expect(page.locator(".katex-html").filter(has_text="1.3416").first).to_be_visible()
    screenshot(page, "lessons/followed_worked_example.png")
    page.locator("[data-testid='stSidebarNavLink']").filter(has_text="Lessons").click()
    wait_idle(page)
    expect(page.get_by_text("Right: (b) −1.3416")).to_be_visible()  # the learner's place kept
    address_holds(page, "ls_lesson=worked_example", "ls_answers=worked_example.b")


ROOT_FONT = "parseFloat(getComputedStyle(document.documentElement).fontSize)"
# Whether every tick label of the page's charts is drawn at ``px`` (and there is one)
TICKS_ALL_PX = """px => {
  const sizes = [...document.querySelectorAll('.js-plotly-plot .ytick text')]
    .map(t => parseFloat(t.style.fontSize));
  return sizes.length > 0 && sizes.every(size => size === px);
}"""


@pytest.mark.parametrize("mode", ["on", "results"])
def test_presentation_modes_enlarge_the_page_and_results_hides_the_inputs(
    shared_context, server_url, screenshot, mode
):
    """Our stylesheets (ui/styles/) applied: the browser drops a whole <style> it finds
    unsafe, so a sheet that failed would leave the default 16 px; and nothing they hold makes
    the page fetch from anywhere but its own server."""
    with fresh_page(shared_context(viewport={"width": 1280, "height": 720})) as page:
        requested = []
        page.on("request", lambda request: requested.append(request.url))
        open_settled(page, server_url, "", f"lang=en&present={mode}")
        expect(page.locator("[data-testid='stSidebar']")).to_be_hidden()
        controls = expect(page.locator(".st-key-controls_vl"))
        controls.to_be_hidden() if mode == "results" else controls.to_be_visible()
        expect(page.get_by_role("button", name="Exit presentation")).to_be_visible()
        assert page.evaluate(ROOT_FONT) >= 20
        page.set_viewport_size({"width": 1920, "height": 1080})  # a 1080p projector: the type
        assert page.evaluate(ROOT_FONT) == pytest.approx(30, abs=0.1)  # in step, as at 720p
        # the charts' text follows it (the browser reports its type, the page draws again)
        page.wait_for_function(TICKS_ALL_PX, arg=24, timeout=SLOW_MS)  # 16 px × 30 / 20
        page.set_viewport_size({"width": 1280, "height": 720})
        page.wait_for_function(TICKS_ALL_PX, arg=16, timeout=SLOW_MS)
        # the page scrolls below the exit button, whose band holds nothing of the page
        main = page.locator("[data-testid='stMain']")
        assert main.evaluate("m => { m.scrollTo(0, 400); return m.scrollTop; }") > 0
        exit_box = page.locator(".st-key-present_exit").bounding_box()
        main_box = page.locator("[data-testid='stMain']").bounding_box()
        assert exit_box["y"] + exit_box["height"] <= main_box["y"] + 1
        # a blob: address is the page's own memory (the type reporter's inline script)
        own = (server_url, "data:", f"blob:{server_url}/")
        assert [url for url in requested if not url.startswith(own)] == []
        screenshot(page, f"lessons/present_{mode}_vector_lab.png")
        page.get_by_role("button", name="Exit presentation").click()
        wait_idle(page)
        expect(page.locator(".st-key-controls_vl")).to_be_visible()
        expect(page.locator("[data-testid='stSidebar']")).to_be_visible()
        assert page.evaluate(ROOT_FONT) < 20
        assert "present=" not in page.url


def test_a_chart_downloads_its_data_as_csv_and_itself_as_svg(page, server_url):
    open_settled(page, server_url, "", "lang=en")
    page.locator(".st-key-chart_downloads_vl_chart").get_by_role("button").first.click()
    with page.expect_download() as download:
        page.get_by_role("button", name="Data as CSV").click()
    path = download.value.path()
    with open(path, encoding="utf-8") as handle:
        header = handle.readline().strip()
    # columns named as the chart names its axes (two panels: which one each row is from)
    assert header == "trace,panel,channel i,y", header
    assert download.value.suggested_filename == "vl_chart.csv"
    if image_export_available():  # kaleido drives the server's Chromium, offline
        with page.expect_download(timeout=120_000) as download:
            page.get_by_role("button", name="Chart as SVG (vector)").click()
        with open(download.value.path(), encoding="utf-8") as handle:
            assert handle.read(200).lstrip().startswith("<svg")


def test_log_axes_label_decades_not_minor_digits(page, server_url):
    open_settled(page, server_url, "depth", "lang=en")
    ticks = page.locator(".stPlotlyChart").first.locator(".ytick text")
    ticks.first.wait_for()  # the chart's axes are drawn after its frame
    labels = ticks.all_inner_texts()
    assert labels and not set(labels) & {"3", "4", "6", "7", "8", "9"}, labels
