"""Heavy work in a real browser: it waits for a click, shows progress, and stops when nobody
waits for it any more (Cancel pressed, or the tab closed)."""

from __future__ import annotations

import os
import time

import pytest
from playwright.sync_api import expect

from tests.e2e.browser import wait_idle

pytestmark = pytest.mark.e2e

# About 350x the work of the default settings (a page starts 20x on its own): seconds of work.
HEAVY = "/depth?lang=en&dp_layers=400&dp_d=512&dp_tokens=512&dp_placements=pre"
CLOCK = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its threads, from /proc."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK


def _start(page, server_url):
    page.goto(server_url + HEAVY)
    wait_idle(page)
    button = page.get_by_role("button", name="Simulate", exact=True)
    expect(button).to_be_visible(timeout=30_000)
    assert page.locator(".st-key-dp_residual").count() == 0  # nothing computed from a link
    button.click()
    expect(page.get_by_test_id("stProgress")).to_be_visible(timeout=30_000)


def test_cancel_stops_the_work_and_offers_the_button_again(page, server_url):
    _start(page, server_url)
    page.get_by_role("button", name="Cancel").click()
    wait_idle(page)
    expect(page.get_by_role("button", name="Simulate", exact=True)).to_be_visible(timeout=30_000)
    assert page.get_by_test_id("stProgress").count() == 0
    assert page.locator(".st-key-dp_residual").count() == 0


def test_closing_the_tab_stops_the_work_within_seconds(browser, server):
    url, process = server
    context = browser.new_context(viewport={"width": 1400, "height": 1200}, locale="en-US")
    page = context.new_page()
    _start(page, url)
    page.wait_for_timeout(1000)
    context.close()  # the user closes the tab mid-computation
    time.sleep(3.0)  # the server sees the socket close; the run stops at its next check
    before = _cpu_seconds(process.pid)
    time.sleep(2.0)
    busy = _cpu_seconds(process.pid) - before
    assert busy < 0.5, f"the server kept computing: {busy:.2f} CPU seconds in 2 s"
