"""A class on two processes: two NormScope servers behind HAProxy on loopback, started by
``scripts/serve_class.py`` with ``deploy/haproxy.cfg`` (the file ``compose.yaml`` uses),
driven by Debian's Chromium.

Which process holds a browser's session is read from HAProxy itself: its runtime API counts
each process's open connections (a Streamlit session is one open websocket), and its cookie
names the process a browser is kept on.
"""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from scripts.serve_class import HAPROXY_INSTALL, haproxy_binary, start_class
from tests.e2e.browser import address_holds, new_context, wait_for_math, wait_idle
from tests.e2e.packets import WIDE_VECTOR, status_in_packets

pytestmark = pytest.mark.e2e

COOKIE = "NORMSCOPE_PROCESS"
VECTORS = "Vectors (one per line)"
LINK = "/?lang=en&vl_text=3%2C+5%2C+7%2C+9"  # μ = 6


@pytest.fixture
def two_processes():
    if haproxy_binary() is None:
        pytest.skip(f"Debian's haproxy is not installed ({HAPROXY_INSTALL}; scripts/test.sh does)")
    server = start_class(2)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def open_tab(browser):
    contexts = []

    def open_(url: str):
        context = new_context(browser, viewport={"width": 1400, "height": 1600}, locale="en-US")
        contexts.append(context)
        page = context.new_page()
        page.goto(url)
        wait_idle(page)
        return page

    yield open_
    for context in contexts:
        context.close()


def process_of(page) -> str:
    """The process HAProxy keeps this browser on ("app1", "app2"), from its cookie."""
    (value,) = [c["value"] for c in page.context.cookies() if c["name"] == COOKIE]
    return value


def open_sessions(server) -> dict[str, int]:
    return {name: current for name, (current, _total) in server.sessions().items()}


def wait_for_sessions(
    server, expected: dict[str, int], timeout_s: float = 30.0, steady_s: float = 1.5
) -> None:
    """Until HAProxy's counts equal ``expected`` for ``steady_s`` on end.  One reading is not
    enough: a browser's short requests count while they are open, so a reconnecting tab's
    health ping beside another tab's websocket reads as two sessions for a moment, before
    its own websocket opens."""
    deadline = time.monotonic() + timeout_s
    steady_since = None
    seen = open_sessions(server)
    while time.monotonic() < deadline:
        seen = open_sessions(server)
        if seen != expected:
            steady_since = None
        elif steady_since is None:
            steady_since = time.monotonic()
        elif time.monotonic() - steady_since >= steady_s:
            return
        time.sleep(0.2)
    assert seen == expected


def test_sessions_spread_over_both_processes_and_each_stays_on_its_own(two_processes, open_tab):
    tabs = [open_tab(two_processes.url + LINK) for _ in range(4)]
    homes = [process_of(tab) for tab in tabs]
    assert sorted(set(homes)) == ["app1", "app2"], "both processes receive sessions"
    expected = {name: homes.count(name) for name in ("app1", "app2")}
    wait_for_sessions(two_processes, expected)  # each session is where its cookie says

    tab, home = tabs[0], homes[0]
    away = "app2" if home == "app1" else "app1"
    for other in tabs[1:]:
        other.context.close()
    wait_for_sessions(two_processes, {home: 1, away: 0})
    away_total = two_processes.sessions()[away][1]
    box = tab.get_by_role("textbox", name=VECTORS, exact=True)
    box.fill("2, 4, 6, 8")
    box.press("Control+Enter")
    wait_idle(tab)
    address_holds(tab, "vl_text=2")  # the run writes the address after it ends
    tab.reload()
    wait_idle(tab)
    expect(tab.get_by_role("textbox", name=VECTORS, exact=True)).to_have_value("2, 4, 6, 8")
    assert process_of(tab) == home
    wait_for_sessions(two_processes, {home: 1, away: 0})  # the reloaded page's new session
    assert two_processes.sessions()[away][1] == away_total, "no request reached the other"
    # A wide vector's link, its request in a network's packets: through HAProxy's buffer too
    answer = status_in_packets(two_processes.url, f"/?lang=en&vl_text={WIDE_VECTOR}")
    assert answer == "HTTP/1.1 200 OK"


def test_when_a_process_stops_its_browsers_come_back_on_the_other(two_processes, open_tab):
    tabs = [open_tab(two_processes.url + LINK) for _ in range(2)]
    homes = [process_of(tab) for tab in tabs]
    assert sorted(homes) == ["app1", "app2"]
    tab = tabs[homes.index("app1")]
    box = tab.get_by_role("textbox", name=VECTORS, exact=True)
    box.fill("2, 4, 6, 8")  # a change of this session's state; the page writes it to the URL
    box.press("Control+Enter")
    wait_idle(tab)
    address_holds(tab, "vl_text=2%2C+4%2C+6%2C+8")

    two_processes.stop_app(0)  # app1, as a crash would
    wait_for_sessions(two_processes, {"app1": 0, "app2": 2}, timeout_s=60.0)
    wait_idle(tab)
    assert process_of(tab) == "app2"
    expect(tab.get_by_role("textbox", name=VECTORS, exact=True)).to_have_value("2, 4, 6, 8")
    assert "=5σ" in wait_for_math(tab, "2+4+6+8")  # recomputed there: μ = (2+4+6+8)/4 = 5
    assert tab.locator("[data-testid='stException']").count() == 0
    other = tabs[homes.index("app2")]
    expect(other.get_by_role("textbox", name=VECTORS, exact=True)).to_have_value("3, 5, 7, 9")
