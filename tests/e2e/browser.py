"""Helpers for driving a Streamlit page in Playwright: a page of its own, wait for a rerun,
read the maths.

Plain functions, imported by the browser tests; the fixtures (server, browser, page) stay
in ``conftest.py``, which nothing imports.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from scripts.local_app import IDLE

# How long a chart or a page's first run may take to appear: under the whole suite on two
# cores a page's charts took over 30 s to draw (an Axes heatmap, in CI)
SLOW_MS = 60_000


def new_context(browser, **options):
    """A browser context (``Browser.new_context``'s options) whose waits last ``SLOW_MS``: a
    new tab compiles Streamlit's JavaScript before its load event, and a process's first run
    of a page imports the engine; on two busy cores either took longer than Playwright's
    30 s (a locator's fill timed out in CI)."""
    context = browser.new_context(**options)
    context.set_default_navigation_timeout(SLOW_MS)
    context.set_default_timeout(SLOW_MS)
    return context


def wait_idle(page, timeout: float = 60_000) -> None:
    """Wait until Streamlit has finished the current script run."""
    page.wait_for_timeout(300)
    page.locator(IDLE).wait_for(state="attached", timeout=timeout)
    page.wait_for_timeout(200)


# Every font the page asked for loaded and every chart drawn: what a layout check measures
SETTLED = """() => document.fonts.status === 'loaded' && [...document.querySelectorAll(
  '.js-plotly-plot')].every(plot => plot.querySelector('.main-svg') !== null)"""


def open_settled(page, server_url: str, path: str, query: str) -> None:
    """Open ``path?query``, wait for the run, its fonts and its charts; no exception shown."""
    page.goto(f"{server_url}/{path}?{query}")
    settle(page)


# How many runs this tab's app has begun: a counter the page keeps from its first call (an
# observer of Streamlit's run state, held by the window, watching the whole body in case the
# app's element is replaced), so a run that begins and ends between two polls still counts.
_RUNS_BEGUN = """() => {
  const state = () => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState;
  if (window.__runsBegun === undefined) {
    window.__runsBegun = 0;
    let was = state();
    window.__runWatch = new MutationObserver(() => {
      const now = state();
      if (now !== was && now !== 'notRunning') window.__runsBegun += 1;
      was = now;
    });
    window.__runWatch.observe(document.body, {subtree: true, childList: true, attributes: true,
      attributeFilter: ['data-test-script-state']});
  }
  return window.__runsBegun;
}"""
# A history entry, then ``popstate``: what the browser's Back and Forward do; Streamlit's
# frontend answers it with a run of that address's page and query (history navigation).
_HISTORY_GO = """address => { history.pushState(null, '', address);
  dispatchEvent(new PopStateEvent('popstate')); }"""


def open_in_tab(page, server_url: str, path: str, query: str) -> None:
    """Open ``path?query`` in the app the tab already runs, as Back and Forward do, and wait
    as ``open_settled`` does.  The page is drawn from the address as a fresh link draws it
    (``seed`` in ``ui/url/address_bar.py`` reads every setting again on such a run) for about
    two thirds of the machine's CPU (browser and server): Streamlit's frontend is not started
    again (benchmarks/RESULTS.md, "The test suite").  Where no run is seen 10 s later (a short
    run of the same page can come and go without its state ever drawn as running), the
    address is opened afresh, so that a test never reads the view before."""
    begun = page.evaluate(_RUNS_BEGUN)
    page.evaluate(_HISTORY_GO, f"/{path}?{query}")
    try:
        page.wait_for_function("n => window.__runsBegun > n", arg=begun, timeout=10_000)
    except PlaywrightTimeout:
        open_settled(page, server_url, path, query)
        return
    settle(page)


def settle(page) -> None:
    """Wait for the run a click or an address started, its fonts and its charts; no exception
    shown."""
    wait_idle(page, 120_000)
    page.wait_for_function(SETTLED, timeout=SLOW_MS)
    page.wait_for_timeout(300)  # the last layout pass after the charts took their height
    assert page.locator("[data-testid='stException']").count() == 0


def math_text(page) -> str:
    """The rendered maths with KaTeX's layout whitespace removed ("μ = 2.5" -> "μ=2.5")."""
    return re.sub(r"[\s\u200b]+", "", "".join(page.locator(".katex-html").all_inner_texts()))


def wait_for_math(page, fragment: str, timeout_s: float = 30.0) -> str:
    """The rendered maths once it contains ``fragment`` (layout whitespace removed), polling."""
    deadline = time.monotonic() + timeout_s
    while True:
        math = math_text(page)
        if fragment in math or time.monotonic() > deadline:
            return math
        page.wait_for_timeout(200)


def address_holds(page, *fragments: str, timeout_s: float = 15.0) -> None:
    """Wait until the page's address holds every one of ``fragments`` (Playwright's
    ``to_have_url``, one lookahead each); fail if it does not.  A page writes its address
    after the run that changed it, so it is awaited, not read at once."""
    every = "".join(f"(?=.*{re.escape(fragment)})" for fragment in fragments)
    expect(page).to_have_url(re.compile(every), timeout=timeout_s * 1000)


@contextmanager
def fresh_page(context) -> Iterator:
    """The tab of ``context`` for one test, as a new context would give it: afterwards every
    other page the test opened is closed, what a page keeps for the next one is cleared
    (cookies, and the origin's ``localStorage``, where Streamlit keeps the sidebar's state),
    the viewport is put back and the tab goes to ``about:blank``, which ends the test's
    Streamlit session.  The tab is kept because a new one starts a new renderer process that
    compiles Streamlit's JavaScript again: about twice Chromium's CPU to open a page
    (benchmarks/RESULTS.md, "The test suite")."""
    open_pages = [p for p in context.pages if not p.is_closed()]
    page = open_pages[0] if open_pages else context.new_page()
    size = page.viewport_size
    try:
        yield page
    finally:
        _forget(context, page, size)


def _forget(context, kept, size) -> None:
    for opened in context.pages:
        try:
            if opened.url.startswith("http"):
                opened.evaluate("() => localStorage.clear()")
        except Exception:  # noqa: BLE001 - a page the test left broken is closed all the same
            pass
        if opened is not kept:
            opened.close()
    context.clear_cookies()
    if not kept.is_closed():
        kept.set_viewport_size(size)
        kept.goto("about:blank")
