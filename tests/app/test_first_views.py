"""A fresh server opens the heavy pages once itself (``ui/first_views.py``), so their first
visitor finds the work done: checked on a real server, through Streamlit's own protocol."""

from __future__ import annotations

import asyncio
import re
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from benchmarks.streamlit_session import AppSession
from scripts.local_app import free_port, start_server, wait_healthy
from ui.first_views import WARMED_PAGES, open_first_view

pytestmark = pytest.mark.slow

DONE = re.compile(r"The (\w+) page's first view computed in [0-9.]+ s")


def test_without_a_server_it_opens_nothing():
    assert open_first_view("depth", timeout_s=1.0) is False


def _open(url: str, page: str):
    async def go():
        session = AppSession(url)
        await session.connect()
        try:
            return await session.open(page, "lang=en")
        finally:
            await session.close()

    with ThreadPoolExecutor(1) as thread:  # Playwright may hold this thread's event loop
        return thread.submit(asyncio.run, go()).result()


def test_after_the_first_page_view_the_server_opens_depth_and_dumps_itself():
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as folder:
        log_path = Path(folder) / "server.log"
        with log_path.open("w") as log:
            process = start_server(port, log, warm=True)
            try:
                wait_healthy(url, process, 120.0)
                time.sleep(1.0)
                assert not DONE.search(log_path.read_text())  # it waits for a first view
                first = _open(url, "")
                assert not first.exceptions
                deadline = time.monotonic() + 240
                while set(DONE.findall(log_path.read_text())) != set(WARMED_PAGES):
                    assert time.monotonic() < deadline, log_path.read_text()[-2000:]
                    assert process.poll() is None, log_path.read_text()[-2000:]
                    time.sleep(0.5)
                for page in WARMED_PAGES:  # and the pages still draw for a visitor, from the caches
                    assert not _open(url, page).exceptions
                assert "Traceback" not in log_path.read_text()
            finally:
                process.terminate()
                process.wait(30)
