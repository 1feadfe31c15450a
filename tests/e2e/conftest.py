"""A real Chromium (Debian's), as a user would have it (the server: ``tests/conftest.py``).

Fixtures only; the helpers the tests call (``wait_idle``, ...) are in ``browser.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from scripts.local_app import CHROMIUM, CHROMIUM_ARGS
from tests.e2e.browser import SLOW_MS, fresh_page, new_context

# What a page shows may take a loaded machine's time to come: every ``expect`` waits up to
# SLOW_MS (Playwright's own default is 5 s), as every locator of a shared context does.
expect.set_options(timeout=SLOW_MS)

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "e2e"


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (scripts/test.sh installs it as root)")
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed browser test's report shows what its page showed: the address and the start
    of the main area's text (CI prints the report, not the screenshots)."""
    report = yield
    page = getattr(item, "funcargs", {}).get("page")
    if report.when == "call" and report.failed and page is not None:
        try:
            shown = page.locator("[data-testid='stMain']").inner_text(timeout=5_000)
        except Exception as error:  # noqa: BLE001 - the page may be gone
            shown = f"(the page's text could not be read: {error})"
        report.sections.append(("the page at the failure", f"{page.url}\n{shown[:2000]}"))
    return report


@pytest.fixture(scope="session")
def shared_context(browser):
    """``shared_context(**options)``: one browser context per set of ``new_context`` options,
    kept for the whole run; ``fresh_page`` gives each test its tab, cleared."""
    contexts = {}

    def get(**options):
        key = repr(sorted(options.items()))
        if key not in contexts:
            contexts[key] = new_context(browser, **options)
        return contexts[key]

    yield get
    for context in contexts.values():
        context.close()


@pytest.fixture
def page(shared_context):
    with fresh_page(
        shared_context(viewport={"width": 1400, "height": 2400}, locale="en-US")
    ) as page:
        yield page


@pytest.fixture(scope="session")
def screenshot(pytestconfig):
    """``screenshot(page, "room/name.png", **options)``: what the page shows, saved under
    artifacts/e2e/ when the run asks for it (``--screenshots``), for a person to look at; no
    test reads it.  Off by default: a screenshot costs Chromium 0.1-1.4 CPU s (the first after
    a page's load the most), about a tenth of a room walk's time (benchmarks/RESULTS.md, "The
    test suite")."""
    wanted = pytestconfig.getoption("screenshots")

    def save(page, name: str, **options) -> None:
        if wanted:
            path = ARTIFACTS / name
            path.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(path), **options)

    return save
