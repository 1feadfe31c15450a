"""Helpers for driving a Streamlit page in Playwright: wait for a rerun, read the maths.

Plain functions, imported by the browser tests; the fixtures (server, browser, page) stay
in ``conftest.py``, which nothing imports.
"""

from __future__ import annotations

import re
import time

from scripts.local_app import IDLE


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


def settle(page) -> None:
    """Wait for the run a click or an address started, its fonts and its charts; no exception
    shown."""
    wait_idle(page, 120_000)
    page.wait_for_function(SETTLED, timeout=30_000)
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
