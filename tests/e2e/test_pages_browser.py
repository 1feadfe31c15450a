"""Every page through the sidebar navigation in a real browser: it renders, no exception."""

import pytest
from playwright.sync_api import expect

from tests.e2e.browser import SLOW_MS, address_holds, fresh_page, open_settled, wait_idle

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(
    "link, heading, chart_count",
    [("Depth", "Depth", 4), ("Kernels", "Kernels", 0)],
)
def test_page_renders_from_the_navigation(page, server_url, screenshot, link, heading, chart_count):
    page.goto(server_url + "/?lang=en")
    wait_idle(page)
    page.locator("[data-testid='stSidebarNavLink']").filter(has_text=link).click()
    wait_idle(page)
    expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible()
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator(".stPlotlyChart").count() >= chart_count
    address_holds(page, "lang=en")
    screenshot(page, f"{link.lower()}_en.png", full_page=True)


def test_deep_link_to_a_page_keeps_the_app_shell(page, server_url):
    """A shared link to a page (not the default one) gets the sidebar and the language."""
    page.goto(server_url + "/depth?lang=zh&dp_layers=12")
    wait_idle(page)
    expect(page.get_by_role("heading", name="深度", exact=True)).to_be_visible()
    expect(page.locator("[data-testid='stSidebar']").get_by_text("NormScope")).to_be_visible()
    expect(page.get_by_role("spinbutton", name="层数 L")).to_have_value("12")


def test_the_default_pages_own_name_opens_it_at_the_root(page, server_url):
    """``/vector_lab?…`` typed by hand: the Vector Lab at ``/`` with the typed parameters,
    not Streamlit's "Page not found" dialog."""
    page.goto(server_url + "/vector_lab?lang=zh&vl_text=3%2C+1%2C+4")
    wait_idle(page)
    # Beside three room walks the page's body came more than 5 s after the sidebar (twice)
    expect(page.get_by_role("heading", name="向量实验室", exact=True)).to_be_visible(
        timeout=SLOW_MS
    )
    expect(page.get_by_role("textbox", name="向量（每行一个）")).to_have_value(
        "3, 1, 4", timeout=SLOW_MS
    )
    expect(page.get_by_text("Page not found")).to_have_count(0)
    address_holds(page, "lang=zh", "vl_text=3")
    assert "/vector_lab" not in page.url


# Streamlit drops a number box's − and + buttons where the box is narrower than 7.5rem: the
# Vector Lab's inputs column beside its results is ~15rem wide, and the Axes page's cell boxes
# shared a row with their hint.  1,230 px: about the narrowest window (the sidebar open) in
# which the Vector Lab's inputs still stand beside its results (ui/styles/base.css, 48rem),
# in a column ~225 px wide.
NUMBER_BOXES = {
    ("", "vl_source=random&vl_norm=dyt"): 7,  # d, rows, seed, shift, scale, offset, α
    ("axes", "ax_section=cells"): 7,  # B, T, d, seed and the cell's b, t, c
}


SIDE_BY_SIDE = """() => {
  const row = document.querySelector(
    '.st-key-vl_layout > [data-testid=stLayoutWrapper] > [data-testid=stHorizontalBlock]');
  const [inputs, results] = row.querySelectorAll(':scope > [data-testid=stColumn]');
  return inputs.getBoundingClientRect().top === results.getBoundingClientRect().top;
}"""


def test_every_number_box_keeps_its_step_buttons(shared_context, server_url):
    context = shared_context(viewport={"width": 1230, "height": 2000}, locale="en-US")
    with fresh_page(context) as page:
        for (path, query), count in NUMBER_BOXES.items():
            open_settled(page, server_url, path, f"lang=en&{query}")
            if not path:  # the Vector Lab at its narrowest beside its results
                assert page.evaluate(SIDE_BY_SIDE)
            boxes = page.locator("[data-testid='stMain'] [data-testid='stNumberInput']")
            expect(boxes).to_have_count(count)
            for box in boxes.all():
                expect(box.get_by_test_id("stNumberInputStepUp")).to_be_visible()
                expect(box.get_by_test_id("stNumberInputStepDown")).to_be_visible()


def test_the_kernels_table_of_where_ops_run_fits_a_phone(shared_context, server_url):
    """In Chinese on a phone its unbreakable op names (native_layer_norm) ran the table 32 px
    past its column, its last column cut with no sign that it scrolls."""
    context = shared_context(viewport={"width": 390, "height": 844}, locale="zh-CN")
    with fresh_page(context) as page:
        open_settled(page, server_url, "kernels", "lang=zh")
        page.locator(".st-key-kn_where table").wait_for()  # drawn after the run, at times
        widths = page.locator(".st-key-kn_where").evaluate(
            "box => [box.getBoundingClientRect().width,"
            " box.querySelector('table').getBoundingClientRect().width,"
            " Math.max(...[...box.querySelectorAll('td, th')].map(c => c.scrollWidth"
            " - c.clientWidth))]"
        )
    box, table, overflow = widths
    assert table <= box and overflow <= 1, widths
