"""Heavy work in a real browser: it waits for a click, shows progress, and stops when nobody
waits for it any more (Cancel pressed, or the tab closed)."""

from __future__ import annotations

import os
import time

import pytest
from playwright.sync_api import expect

from tests.e2e.browser import SLOW_MS, new_context, wait_idle

pytestmark = pytest.mark.e2e

# About 700x the work of the default settings (a page starts 20x on its own): two stacks, each
# about 10 s of one core on an idle 2-core machine.
HEAVY = "/depth?lang=en&dp_layers=400&dp_d=512&dp_tokens=512&dp_placements=pre,post"
CLOCK = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(stat_path: str) -> float:
    """User + system CPU time of a process or one of its threads, from /proc."""
    try:
        fields = open(stat_path).read().rsplit(")", 1)[1].split()
    except FileNotFoundError:  # the thread has ended
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLOCK


def _busiest_thread_seconds(pid: int, window_s: float) -> float:
    """CPU seconds of the server's busiest thread over a window.  Per thread, not per process:
    the job runs on one thread (``threads=1``), and the other sessions a shared test server
    still serves (timed reruns, closing sockets) spread over the others."""
    tasks = [f"/proc/{pid}/task/{task}/stat" for task in os.listdir(f"/proc/{pid}/task")]
    before = {path: _cpu_seconds(path) for path in tasks}
    time.sleep(window_s)
    return max(_cpu_seconds(path) - start for path, start in before.items())


def _start(page, server_url):
    page.goto(server_url + HEAVY)
    wait_idle(page)
    button = page.get_by_role("button", name="Simulate", exact=True)
    expect(button).to_be_visible(timeout=SLOW_MS)
    assert page.locator(".st-key-dp_residual").count() == 0  # nothing computed from a link
    button.click()
    expect(page.get_by_test_id("stProgress")).to_be_visible(timeout=SLOW_MS)


def test_cancel_stops_the_work_and_offers_the_button_again(page, server_url):
    _start(page, server_url)
    page.get_by_role("button", name="Cancel").click()
    wait_idle(page)
    expect(page.get_by_role("button", name="Simulate", exact=True)).to_be_visible(timeout=SLOW_MS)
    assert page.get_by_test_id("stProgress").count() == 0
    assert page.locator(".st-key-dp_residual").count() == 0


def test_closing_the_tab_stops_the_work_within_seconds(browser, server):
    url, process = server
    context = new_context(browser, viewport={"width": 1400, "height": 1200}, locale="en-US")
    page = context.new_page()
    _start(page, url)
    page.wait_for_timeout(1000)
    context.close()  # the user closes the tab mid-computation
    closed = time.monotonic()
    # The server sees the socket close and the run stops at its next check: within a second on
    # an idle machine; a loaded one may notice later, so the quiet window may come later, but
    # the uninterrupted run would keep one thread busy for another 19 s or more.
    windows = []
    while time.monotonic() - closed < 8.0:
        windows.append(_busiest_thread_seconds(process.pid, 2.0))
        if windows[-1] < 0.5:
            return
    pytest.fail(f"the server kept computing: its busiest thread used {windows} CPU s per 2 s")
