"""A widget inside a page section reruns that section alone, and the URL still follows it.

AppTest runs whole scripts only, so these speak Streamlit's own protocol to a real server
(``benchmarks/streamlit_session.py``), as the browser does: a widget drawn inside a fragment
is changed with its fragment's id, and the server runs that fragment only.  The server is the
worker's own (``server_url``, ``tests/conftest.py``), shared with the browser tests.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs

import pytest

from benchmarks.streamlit_session import AppSession

pytestmark = pytest.mark.slow


async def _open(url: str, page: str, query: str = "lang=en") -> tuple[AppSession, object]:
    session = AppSession(url)
    await session.connect()
    return session, await session.open(page, query)


def _change(url: str, page: str, key: str, value, query: str = "lang=en"):
    async def go():
        session, opened = await _open(url, page, query)
        widgets = dict(session.widgets)
        chosen = value(widgets[key]) if callable(value) else value
        try:
            return opened, widgets, await session.change(key, chosen)
        finally:
            await session.close()

    # in a thread of its own: a browser test run earlier in this process (Playwright's sync
    # API) may hold this thread's event loop
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, go()).result()


def test_a_cell_clicked_reruns_the_cells_section_alone_and_writes_the_url(server_url):
    opened, widgets, run = _change(server_url, "axes", "ax_cell_t", 2.0)
    cells = widgets["ax_cell_t"].fragment
    assert cells and widgets["ax_norm"].fragment != cells  # the tensor's inputs: the page's
    assert run.fragments == {cells}  # nothing of the page, sidebar or title was sent
    assert run.deltas < opened.deltas
    assert parse_qs(run.query_strings[-1])["ax_cell_t"] == ["2"]
    assert not run.exceptions


def test_the_roofline_reruns_without_the_timing_section(server_url):
    _opened, widgets, run = _change(server_url, "kernels", "kn_d", 2048.0)
    roofline, timing = widgets["kn_d"].fragment, widgets["kn_rows"].fragment
    assert roofline and timing and roofline != timing
    assert run.fragments == {roofline}
    assert parse_qs(run.query_strings[-1])["kn_d"] == ["2048"]


def test_a_section_rerun_keeps_the_other_sections_parameters_in_the_url(server_url):
    query = "lang=zh&kn_rows=4096"
    _opened, _widgets, run = _change(server_url, "kernels", "kn_d", 1024.0, query)
    written = parse_qs(run.query_strings[-1])
    assert written["kn_rows"] == ["4096"] and written["lang"] == ["zh"]
    assert written["kn_d"] == ["1024"]


def test_a_lesson_page_widget_outside_any_section_still_reruns_the_page(server_url):
    _opened, widgets, run = _change(server_url, "lessons", "ls_choose", lambda w: w.options[1])
    assert widgets["ls_choose"].fragment == ""
    assert "" in run.fragments
