"""The one way a page runs engine work: computed once, bounded, shown, cancellable.

A workshop is thirty browsers on one server process: light work (``compute``, well under a
second: ``benchmarks/bench_links.py``) runs in the page's own thread, work that may take
seconds (``run_heavy``) in a core slot, at most ``CORES`` at once (``docs/architecture.md``,
"The compute path": the auto-start rule, ``private=True``).  The cache key goes to Streamlit
as a digest of its pickle (``ui/cache_keys.py`` says why).  Streamlit holds one lock per key,
so identical requests, concurrent ones included, are computed once: a second caller waits
for the first one's value (of a heavy job, following its progress bar and partial results,
and able to cancel its wait).  A private heavy result may hold an upload's bytes, so a
session keeps six of those at most.

Stopping needs no timer: a heavy job's ``should_stop`` calls the page run's own yield check,
which raises Streamlit's ``RerunException`` when the page reruns (Cancel, a new setting) and
``StopException`` when its tab has closed; the exception ends the job at its next check and
nothing half-done is kept.  The progress bar is drawn through the context copied before the
cached call, where Streamlit's ``in_cached_function`` flag is off: drawn inside, it would be
recorded and replayed on the next hit, which fails (``CacheReplayClosureError``).  Both are
Streamlit internals; ``tests/ui/test_compute.py`` pins them.
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType
from streamlit.runtime.scriptrunner_utils.script_run_context import (
    get_run_yield_check,
    get_script_run_ctx,
)

from engine.threads import Cancelled
from ui.cache_keys import digest, function_name
from ui.i18n import current_language, t, translate

CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
AUTO_START_FACTOR = 20  # a request starts on its own up to this many times the default's work
HEAVY_KEPT = 64  # heavy results kept process-wide
POLL_S = 0.1  # how often a queued job looks for a free core (and whether to stop)
RECENT_S = 10  # how long ``compute(..., recent=True)`` keeps a result
_SLOTS = threading.BoundedSemaphore(CORES)  # at most one heavy job per core
_LOCK = threading.Lock()
_REQUESTED = "_compute_requested"  # session state: the heavy requests clicked for
# (name, key) of the shared heavy jobs sessions hold: (the fraction done, None while queued;
# the latest partial result, None before the first), which sessions waiting on it draw
_RUNNING: dict[tuple, tuple[float | None, Any]] = {}
FOLLOW_S = 0.5  # how often a session waiting on another's job looks at that job's progress


# ``name`` and ``key`` are hashed; ``_call`` (a leading underscore: not hashed) computes it.
# Memory: a light result is at most ~2 MB (a DyT sweep or the Axes statistics at their
# maxima), a heavy one ~10 MB shared (a given prompt's capture and report); a private heavy
# result may hold an upload's bytes (200 MB) or a typed prompt's capture (~90 MB).
@st.cache_resource(max_entries=256, show_spinner=False)
def _shared(name: str, key: Any, _call: Callable[[], Any]) -> Any:
    return _call()


@st.cache_resource(max_entries=HEAVY_KEPT, show_spinner=False)
def _heavy(name: str, key: Any, _call: Callable[[], Any]) -> Any:
    return _call()


# What may change under the app while it runs (the files in an operator's folders): kept for
# ``RECENT_S`` seconds, in a cache of its own so it never pushes the others' entries out.
@st.cache_resource(ttl=RECENT_S, max_entries=16, show_spinner=False)
def _recent(name: str, key: Any, _call: Callable[[], Any]) -> Any:
    return _call()


@st.cache_resource(max_entries=32, show_spinner=False, scope="session")
def _private(name: str, key: Any, _call: Callable[[], Any]) -> Any:
    return _call()


# A file's open, layout and report, and a capture: what a session reads at once, and no more.
@st.cache_resource(max_entries=6, show_spinner=False, scope="session")
def _private_heavy(name: str, key: Any, _call: Callable[[], Any]) -> Any:
    return _call()


@st.cache_resource(show_spinner=False)
def _computed() -> dict:
    """(name, key) of the heavy results any session computed, newest last.  At most half
    ``HEAVY_KEPT``, and refreshed with each use as ``_heavy``'s entries are (both least
    recently used first out), so each is still in ``_heavy``: a class opening the
    instructor's link sees the result at once, with no click and no work."""
    return {}


def _remember(done: dict, marker: tuple) -> None:
    with _LOCK:
        done.pop(marker, None)
        done[marker] = True
        while len(done) > HEAVY_KEPT // 2:
            done.pop(next(iter(done)))


def compute(
    fn: Callable, *args, key: Any = None, private: bool = False, recent: bool = False
) -> Any:
    """``fn(*args)``, computed once for these arguments (or ``key``) and kept (``recent``:
    for ``RECENT_S`` seconds, for what changes outside the app).  Raises what ``fn`` raises
    (``EngineError`` for a refusal), which is not kept."""
    cache = _private if private else (_recent if recent else _shared)
    return cache(function_name(fn), digest(args if key is None else key), lambda: fn(*args))


def run_heavy(
    fn: Callable,
    calls: Sequence[tuple],
    labels: Sequence[str],
    *,
    keys: Sequence[Any] | None = None,
    private: bool = False,
    button: str = "",
    widget_key: str = "",
    work: Callable[..., float] | None = None,
    default: tuple = (),
    always_ask: bool = False,
    on_partial: Callable[[list], None] | None = None,
    again: str = "",
) -> list | None:
    """``[fn(*args, progress=, should_stop=, threads=1) for args in calls]``, or None while
    the request waits for a click.

    The auto-start rule: the request starts on its own while ``work`` summed over the calls
    is at most ``AUTO_START_FACTOR`` times ``work(*default)``, the same computation at the
    page's defaults (in each unit, where ``work`` counts in several); beyond that, and always
    with ``always_ask`` (training runs, timings, the precision comparison), it waits for a
    click on ``button``, remembered in this session for these calls only, so a new setting
    asks again.  A result another session computed needs no click.  Without ``work`` (a file
    read, bounded by the upload limit) it never waits.
    ``labels[i]`` is shown while ``calls[i]`` runs; ``on_partial(found)`` draws the results
    so far and the running call's partial result (the training lab's live chart).  ``again``
    labels a button in the start button's place, once a shared result is shown, that computes
    it anew in place of the kept one (a timing, which the machine's load moves).
    """
    name = function_name(fn)
    keys = [digest(key) for key in (calls if keys is None else keys)]
    done = _computed()
    with _LOCK:
        waiting = tuple((name, key) for key in keys if private or (name, key) not in done)
    heavy = always_ask or (work is not None and _ratio(work, calls, default) > AUTO_START_FACTOR)
    start, cancel = st.empty(), st.empty()
    if waiting and heavy:
        requested = st.session_state.setdefault(_REQUESTED, set())
        _button(start, button, widget_key, waiting)
        if waiting not in requested:  # say why it waits
            if always_ask:
                st.caption(t("compute.always_on_request"))
            else:
                ratio = f"{round(_ratio(work, calls, default)):,}"
                st.caption(t("compute.on_request", ratio=ratio, factor=AUTO_START_FACTOR))
            return None
        cancel.button(
            t("compute.cancel"),
            key=f"{widget_key}_cancel",
            on_click=requested.discard,
            args=(waiting,),
            icon=":material/stop:",
        )
    try:
        found: list = []
        for args, key, label in zip(calls, keys, labels):
            draw = None if on_partial is None else (lambda partial: on_partial([*found, partial]))
            found.append(_run(fn, name, args, key, label, private, draw))
            if not private:
                _remember(done, (name, key))
        if again and not private:  # a new value for every session, this one computing it
            start.button(
                again,
                key=f"{widget_key}_again",
                on_click=_forget,
                args=(name, keys),
                icon=":material/refresh:",
            )
        else:  # the next run asks for no click either: the button goes now
            start.empty()
        return found
    except Cancelled:  # a click in its section waits: that rerun draws what follows
        return None
    except Exception:  # refused, or failed: the button comes back, not the job unasked
        if waiting and heavy:
            st.session_state[_REQUESTED].discard(waiting)
            # active at once beside the message (its key: this run holds the disabled one)
            _button(start, button, f"{widget_key}_retry", waiting)
        raise
    finally:
        cancel.empty()


def _button(place, label: str, key: str, waiting: tuple) -> None:
    """The start button for the ``waiting`` request, in ``place``.  Once clicked (its callback
    runs before the page does), disabled until the job ends: a click on it mid-run would
    rerun the page, stopping the job and starting it anew.  The same key from run to run, so
    the button changes in place (under a new key Streamlit left the old one drawn); within
    the run a refusal ended, the active one drawn again in ``place`` takes ``key + "_retry"``
    (a key drawn twice in one run is an error), and the next run's replaces it in place."""
    requested = st.session_state.setdefault(_REQUESTED, set())
    place.button(
        label,
        key=key,
        type="primary",
        icon=":material/play_arrow:",
        on_click=requested.add,
        args=(waiting,),
        disabled=waiting in requested,
    )


def _forget(name: str, keys: Sequence[Any]) -> None:
    """Drop the kept values of ``keys`` and ask for them at once (``again``'s click): the
    next run finds them all waiting, and this click as the one they wait for."""
    done = _computed()
    with _LOCK:
        for key in keys:
            _heavy.clear(name, key, None)
            done.pop((name, key), None)
    st.session_state.setdefault(_REQUESTED, set()).add(tuple((name, key) for key in keys))


def _ratio(work: Callable[..., Any], calls: Sequence[tuple], default: tuple) -> float:
    """The calls' work over the default's; where ``work`` counts in several units (a tuple:
    the Depth simulator's draws and multiply-adds), the largest of the units' ratios."""
    counts = [np.atleast_1d(work(*args)) for args in calls]
    return float(np.max(np.sum(counts, axis=0) / np.maximum(np.atleast_1d(work(*default)), 1)))


def _claim(marker: tuple) -> bool:
    """Mark a shared heavy request as this session's; False where another session holds it."""
    with _LOCK:
        if marker in _RUNNING:
            return False
        _RUNNING[marker] = (None, None)  # queued until its job has a core
        return True


def _section_rerun_waiting(requests) -> bool:
    """Whether a click in a page section (``ui/sections.py``) waits to rerun it.  Streamlit
    lets a fragment's rerun wait for the running one rather than interrupt it, so Cancel or a
    new setting in the section of a running job ends the job here (``Cancelled``); a timed
    rerun (``run_every``) does not.  Reads Streamlit's pending request (an internal, pinned
    by ``tests/ui/test_compute.py``)."""
    if requests is None or requests._state != ScriptRequestType.RERUN:
        return False
    return not requests._rerun_data.is_auto_rerun


def _run(fn, name, args, key, label, private, on_partial):
    """One heavy call: in a core slot, with a spinner, its progress bar and partial results."""
    bar = st.empty()
    outer = contextvars.copy_context()  # drawing from here is not recorded for cache replay
    check = get_run_yield_check() or (lambda: None)
    requests = getattr(get_script_run_ctx(), "script_requests", None)
    queued = t("compute.queued", label=label)
    marker = (name, key)

    # Streamlit's own elapsed-time counter (the spinner's ``show_time``) writes English only:
    # on a page in another language the bar's text says it (updated as the work reports,
    # or as a waiting session looks at another session's job).
    lang, began = current_language(), time.monotonic()
    own_clock = lang != "en"

    def elapsed(whole: bool = False) -> str | None:
        spent = time.monotonic() - began
        seconds = str(int(spent)) if whole else f"{spent:.1f}"  # whole: the seconds gone by
        return translate("compute.elapsed", lang, seconds=seconds) if own_clock else None

    def progress(fraction: float, partial: Any = None) -> None:
        fraction = min(max(float(fraction), 0.0), 1.0)
        if not private:
            with _LOCK:
                if marker in _RUNNING:  # never brings back a mark its owner has removed
                    kept = _RUNNING[marker][1] if partial is None else partial
                    _RUNNING[marker] = (fraction, kept)
        outer.run(bar.progress, fraction, text=elapsed())
        if partial is not None and on_partial is not None:
            outer.run(on_partial, partial)

    def should_stop() -> bool:
        check()  # raises Streamlit's RerunException or StopException
        return _section_rerun_waiting(requests)

    def call():
        if not _SLOTS.acquire(blocking=False):
            outer.run(bar.progress, 0.0, text=queued)  # drawn once: it stays until a core frees
            while not _SLOTS.acquire(timeout=POLL_S):
                check()
        if not private:
            with _LOCK:
                if marker in _RUNNING:
                    _RUNNING[marker] = (0.0, None)  # running: followers leave the queued text
        try:
            return fn(*args, progress=progress, should_stop=should_stop, threads=1)
        finally:
            _SLOTS.release()

    try:
        with st.spinner(label, show_time=not own_clock):
            if private:
                return _private_heavy(name, key, call)
            if marker in _computed():  # stored already: read at once, nothing to follow
                return _heavy(name, key, call)
            # Another session computes this: its progress, and a Cancel that works, until it
            # has stored its value (then ``_heavy`` returns it) or was stopped (then this
            # session computes it).  The mark is held until the value is stored.  The bar is
            # sent again only when what it shows has changed (its clock in whole seconds),
            # and a partial result drawn once (the training lab's loss curves so far): thirty
            # tabs following one job send little more than what its own tab is sent.
            shown = drawn = None
            while not _claim(marker):
                with _LOCK:
                    if marker not in _RUNNING:  # just stored, or stopped: claim it again
                        continue
                    fraction, partial = _RUNNING[marker]
                now = (fraction or 0.0, queued if fraction is None else elapsed(whole=True))
                if now != shown:
                    bar.progress(*now)
                    shown = now
                if partial is not None and partial is not drawn and on_partial is not None:
                    on_partial(partial)
                    drawn = partial
                if should_stop():
                    raise Cancelled
                time.sleep(FOLLOW_S)
            try:
                return _heavy(name, key, call)
            finally:
                with _LOCK:
                    _RUNNING.pop(marker, None)
    finally:
        bar.empty()
