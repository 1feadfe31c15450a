"""The Model catalog in a real browser: the table and GPT-3's count, a pasted config (bad, then
good), and "Simulate in Depth" opening the Depth page with the family's placement and norm."""

import json

import pytest
from playwright.sync_api import expect

from engine.models.loader import catalog
from tests.e2e.browser import (
    SETTLED,
    SLOW_MS,
    address_holds,
    open_in_tab,
    open_settled,
    settle,
    wait_idle,
)

pytestmark = pytest.mark.e2e

SMOLLM2 = {
    "model_type": "llama",
    "hidden_size": 576,
    "num_hidden_layers": 30,
    "num_attention_heads": 9,
    "num_key_value_heads": 3,
    "intermediate_size": 1536,
    "vocab_size": 49152,
    "tie_word_embeddings": True,
}


def _metric(page, label: str) -> str:
    metric = page.locator("[data-testid='stMetric']").filter(has_text=label).first
    return metric.locator("[data-testid='stMetricValue']").inner_text()


def _paste(page, text: str) -> None:
    box = page.get_by_role("textbox", name="config.json", exact=True)
    box.fill(text)
    box.press("Control+Enter")
    wait_idle(page)


def test_catalog_table_and_gpt3_count(page, server_url, screenshot):
    page.goto(server_url + "/models?lang=en")
    settle(page)  # the run, its fonts and its chart (a loaded suite's first view took > 20 s)
    expect(page.get_by_role("heading", name="Model catalog", exact=True)).to_be_visible()
    # the catalog and the norm groups (grids load lazily: wait for them)
    expect(page.locator("[data-testid='stDataFrame']")).to_have_count(2, timeout=60_000)
    assert _metric(page, "Norm parameters") == "4,743,168"
    assert _metric(page, "Share of all parameters") == "0.0027\u00a0%"
    # the wiring diagram's one-row layout; its wrapped ones wait, hidden, for a narrow column
    expect(page.locator(".stPlotlyChart:visible")).to_have_count(1)
    assert page.locator("[data-testid='stException']").count() == 0
    screenshot(page, "models_en.png", full_page=True)


def test_pasted_config_bad_then_good(page, server_url):
    page.goto(server_url + "/models?lang=en&md_input=paste")
    wait_idle(page)
    _paste(page, '{"model_type": "llama", "hidden_size": 576')
    alert = page.locator("[data-testid='stAlert']").filter(has_text="not valid JSON")
    expect(alert).to_be_visible()
    _paste(page, json.dumps({"model_type": "llama", "hidden_size": 576}))
    expect(page.get_by_text("num_hidden_layers / n_layer / num_layers")).to_be_visible()
    _paste(page, json.dumps(SMOLLM2))
    assert _metric(page, "Norm parameters") == f"{(2 * 30 + 1) * 576:,}"
    assert "576" not in page.url.split("?")[1]  # the pasted config is not in the link
    assert page.locator("[data-testid='stException']").count() == 0


def test_simulate_this_opens_the_depth_page_with_the_placement_and_norm(page, server_url):
    page.goto(server_url + "/models?lang=zh&md_family=gemma2")
    wait_idle(page)
    page.get_by_role("link", name="在深度页中模拟").click()
    wait_idle(page)
    expect(page.get_by_role("heading", name="深度", exact=True)).to_be_visible()
    address_holds(page, "/depth", "dp_placements=peri")
    address_holds(page, "dp_norm=rmsnorm", "lang=zh")
    placements = page.locator("[data-testid='stMultiSelect']").first
    expect(placements).to_contain_text("Peri-Norm（三明治）")
    expect(placements).not_to_contain_text("Post-Norm")
    assert page.locator("[data-testid='stException']").count() == 0


# Each code cell of the family's facts: how many line boxes it takes (a broken one takes two)
CODE_LINES_JS = """() => [...document.querySelectorAll('.st-key-md_facts td code')]
  .map(code => [code.textContent, code.getClientRects().length])"""


def test_an_800_px_window_keeps_the_facts_identifiers_whole(page, server_url):
    """Beside a sidebar, an 800 px window broke them mid-word: rms_norm_ep|s, LlamaRMSNo|rm."""
    page.set_viewport_size({"width": 800, "height": 1400})
    page.goto(server_url + "/models?lang=zh&md_family=llama3")
    page.locator(".st-key-md_facts td code").first.wait_for(state="attached", timeout=SLOW_MS)
    settle(page)  # its fonts and last layout pass: a loaded machine measured before them once
    lines = page.evaluate(CODE_LINES_JS)
    assert "rms_norm_eps" in [name for name, _ in lines]
    assert [name for name, count in lines if count != 1] == []
    # the story (departures, sources) goes under the facts, which keep the column's width
    facts, story = (
        page.locator(f".st-key-md_detail [data-testid='stColumn'] >> nth={i}").bounding_box()
        for i in (0, 1)
    )
    assert story["y"] >= facts["y"] + facts["height"]


LINES = """cell => { const range = document.createRange(); range.selectNodeContents(cell);
  return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size; }"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_fact_is_one_line_and_the_table_fits_its_column_at_1280(page, server_url, lang):
    """At 1280 px "ε, config class default" and "Norm modules in one layer" wrapped, their
    column squeezed by the values' unbreakable names; DeepNet's update, one code, ran the
    table past its column."""
    page.set_viewport_size({"width": 1280, "height": 1600})
    for number, family in enumerate(("llama3", "gemma3", "deepnet")):
        go = open_settled if number == 0 else open_in_tab
        go(page, server_url, "models", f"lang={lang}&md_family={family}")
        facts = page.locator(".st-key-md_facts [data-testid='stMarkdownContainer']")
        expect(facts.locator("td").first).to_be_visible()
        cells = facts.locator("tr > td:first-child")
        assert [cells.nth(i).evaluate(LINES) for i in range(cells.count())] == [1] * 13
        assert facts.evaluate("box => box.scrollWidth <= box.clientWidth + 1"), family


# A cell whose text runs past its box, the sources' column left out (cut by design, whole in
# each family's detail); and the rows taller than one line of text
CATALOG_CUT = """() => {
  const table = document.querySelector('.st-key-md_table_html table');
  const cut = [...table.querySelectorAll('tbody td:not(:last-child), thead th')]
    .filter(cell => [cell, ...cell.querySelectorAll('*')].some(
      el => el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible'
        || el.getBoundingClientRect().right > cell.getBoundingClientRect().right + 1))
    .map(cell => cell.innerText);
  const line = parseFloat(getComputedStyle(table.querySelector('td p')).lineHeight);
  const tall = [...table.querySelectorAll('tbody tr')]
    .filter(row => row.getBoundingClientRect().height > 2 * line);
  return {cut, tall: tall.length, rows: table.querySelectorAll('tbody tr').length};
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_presenting_at_1080p_no_catalog_cell_is_cut(page, server_url, lang):
    """A 1,920 × 1,080 projector: the data grid drew 26 px text in columns sized for 17.5 px
    ("LayerNor", "layer_norm_ep"); the HTML table's cells hold their text on one line."""
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.goto(server_url + f"/models?lang={lang}&present=on")
    settle(page)
    # under the whole suite the run may not have begun when settle looks: wait for the table
    expect(page.locator(".st-key-md_table_html table")).to_be_visible(timeout=60_000)
    page.wait_for_function(SETTLED, timeout=60_000)
    found = page.evaluate(CATALOG_CUT)
    assert found["rows"] == len(catalog().families), found
    assert found["cut"] == [] and found["tall"] == 0, found
