"""Closed tabs give their memory back: the sessions Streamlit keeps for a reconnect end.

When a tab closes, Streamlit stores its session for ``server.disconnectedSessionTTL``
(120 s) so that a tab reconnecting in time resumes it.  Past that time the entry expires
from the store, but nothing shuts the session down (Streamlit 1.67: ``MemorySessionStorage``
drops it without a callback), so its uploaded files stay in Streamlit's upload manager for
the life of the process, and its state with them.  A background thread, started once per
process (``tidy()``, from ``app.py``), shuts down every session whose time has passed, as
Streamlit does for a session closed for good (its files and media are released), and
empties its state (Streamlit's message loop may still hold the session object itself).
Then glibc is asked to return freed memory to the system (``malloc_trim``), since a large
upload's pages otherwise stay with the process.  Measured in benchmarks/RESULTS.md
(``benchmarks/bench_upload_memory.py``).

It reads Streamlit's runtime internals (the session manager's store and its lock); if a
newer Streamlit has moved them, the thread logs that once and stops, and
``tests/ui/test_sessions.py`` fails, so the change is seen.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import threading
import time

import streamlit as st

SWEEP_EVERY_S = 30.0  # how often expired sessions are looked for
_LOGGER = logging.getLogger(__name__)


def end_expired_sessions(store, lock, now: float | None = None) -> int:
    """Shut down the sessions whose reconnect time has passed (at ``now``, a
    ``time.monotonic`` reading; None: now); how many."""
    with lock:
        expired = store.expire(now)
    for _, info in expired:
        info.session.shutdown()
        # Streamlit's message loop keeps the last session it flushed in a local variable
        # until another session sends a message (Runtime._loop_coroutine), so a session
        # ended while the server is idle stays referenced: its state is emptied here.
        info.session.session_state.clear()
    return len(expired)


def release_freed_memory() -> None:
    """Collect the ended sessions' reference cycles (a session and its script runner refer
    to each other, so their state waits for a full collection, which an idle server may not
    run for hours), then ask glibc to give freed heap pages back to the system."""
    gc.collect()
    name = ctypes.util.find_library("c")
    if name is None:
        return
    libc = ctypes.CDLL(name)
    if hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


def _sweep_forever() -> None:
    from streamlit import runtime

    if not runtime.exists():  # a test's app, not a server
        return
    try:  # the store of disconnected sessions, and the lock Streamlit holds around it
        manager = runtime.get_instance()._session_mgr
        store, lock = manager._session_storage._cache, manager._storage_lock
    except (AttributeError, RuntimeError) as error:  # not a server, or Streamlit changed
        _LOGGER.warning("sessions of closed tabs are not ended: %s", error)
        return
    while True:
        time.sleep(SWEEP_EVERY_S)
        try:
            if end_expired_sessions(store, lock):
                release_freed_memory()
        except Exception:  # one failed shutdown must not end the sweeping
            _LOGGER.exception("ending an expired session failed")


@st.cache_resource(show_spinner=False)
def tidy() -> threading.Thread:
    """Start the process's one sweeper (later calls return it)."""
    thread = threading.Thread(target=_sweep_forever, name="normscope-sessions", daemon=True)
    thread.start()
    return thread
