"""The heavy pages' first views, computed once while a fresh server waits for visitors.

Two pages' first view in a process does seconds of work that every later view finds cached
(``ui.compute``): Depth simulates its default stacks, the Activation dumps page reads its
example's report (benchmarks/RESULTS.md, "First render and each page's first view").
``open_first_views()`` opens each of ``WARMED_PAGES`` once, with an empty link, in a session of
its own that no browser holds: the page's script runs as for a first visitor, its results
go to the process's shared caches, the messages it sends are dropped, and the session is
closed.  ``scripts/serve.py`` calls it after the first page view has been served, the
live model's cached load has had its turn and page runs have paused for a few seconds
(``ui.live_model.wait_for_quiet``), so it never slows a first render.

The session is Streamlit's own, made through the API it offers a host
(``Runtime.connect_session``, ``handle_backmsg``, ``close_session``), which runs on the
server's event loop, reached through ``Runtime``'s internal ``_get_async_objs``: a newer
Streamlit that moves it makes this log once and do nothing, and tests/app/test_first_views.py
fails.
"""

from __future__ import annotations

import asyncio
import threading
import time

from streamlit.logger import get_logger
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

WARMED_PAGES = ("depth", "dumps")  # url paths whose first view computes seconds of work
VIEW_TIMEOUT_S = 120.0  # a view that takes longer (a very busy machine) is left to finish
_LOGGER = get_logger(__name__)  # the server's own log, at its level


class _NoBrowser:
    """A session's client that keeps nothing: it only notes when a page run has ended."""

    client_context = None

    def __init__(self) -> None:
        self.finished = threading.Event()

    def write_forward_msg(self, msg: ForwardMsg) -> None:
        if msg.WhichOneof("type") == "script_finished" and msg.script_finished in (
            ForwardMsg.FINISHED_SUCCESSFULLY,
            ForwardMsg.FINISHED_WITH_COMPILE_ERROR,
        ):
            self.finished.set()


def open_first_view(page: str, timeout_s: float = VIEW_TIMEOUT_S) -> bool:
    """Run ``page``'s script (its url path) once as a first visitor with an empty link would,
    in a session no browser holds; True once its run has finished, False past ``timeout_s``
    or where there is no running server."""
    from streamlit import runtime

    if not runtime.exists():
        return False
    server = runtime.get_instance()
    loop = server._get_async_objs().eventloop
    client = _NoBrowser()

    async def connect() -> str:
        session_id = server.connect_session(client=client, user_info={})
        message = BackMsg()
        message.rerun_script.page_name = page
        server.handle_backmsg(session_id, message)
        return session_id

    async def close(session_id: str) -> None:
        server.close_session(session_id)

    session_id = asyncio.run_coroutine_threadsafe(connect(), loop).result(timeout_s)
    try:
        return client.finished.wait(timeout_s)
    finally:
        asyncio.run_coroutine_threadsafe(close(session_id), loop).result(timeout_s)


def open_first_views(pages: tuple[str, ...] = WARMED_PAGES) -> None:
    """``open_first_view`` for each page in turn (``scripts/serve.py``, in its warm-up
    thread); anything that goes wrong is logged, never raised: the pages then compute on
    their first real view, as without this."""
    for page in pages:
        start = time.perf_counter()
        try:
            if not open_first_view(page):
                _LOGGER.warning("The %s page's first view did not finish in time", page)
                continue
        except Exception:
            _LOGGER.exception("Computing the %s page's first view failed", page)
            return
        seconds = time.perf_counter() - start
        _LOGGER.info("The %s page's first view computed in %.1f s", page, seconds)
