"""The one way a page runs engine work: cached, single-flight, bounded, visible, cancellable.

A workshop is thirty browsers on one server.  Every engine call a page makes goes through
``compute(job)``:

- results are kept in a process-wide store keyed by ``(job.name, job.key)``: the key is a
  frozen spec holding no user data, so thirty identical clicks compute once.  Jobs marked
  ``share=False`` (uploads) are keyed by the browser session as well, and kept in that
  session's state, so they are never visible to another session and die with it;
- identical requests in flight are computed once (single-flight): the second waits for the
  first's result and shows its progress;
- jobs predicted to take more than ``INLINE_S`` run on a pool of as many worker threads as
  the machine has cores; the rest wait in its queue, shown as "queued";
- a waiting page shows a progress bar; a worker whose last waiter has gone (tab closed,
  Cancel pressed, a new setting chosen) is told to stop within ``GRACE_S`` seconds, through
  the engine's ``StopCheck`` (``engine.threads``).

``run_on_request`` adds the rule for heavy work: a page run (a link opened, a setting changed)
starts at most ``AUTO_START_S`` of predicted work through it without a click, all its
requests together; past that the page shows the estimate and a button.
Predictions come from the engine's cost models (calibrated on a quiet machine), scaled by
how fast this server has recently run each kind of job (``expected_seconds``): a busy
workshop server shows busy-server estimates.

Engine code never sees Streamlit: a job's ``run(report, should_stop)`` gets two callbacks.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from engine.threads import Cancelled
from ui.formatting import format_number
from ui.i18n import t

INLINE_S = 0.25  # jobs predicted faster than this run in the page's own thread
AUTO_START_S = 1.0  # what one page run starts without a click, all its requests together
GRACE_S = 1.0  # a job nobody waits for is cancelled after this long
POLL_S = 0.1  # how often a waiting page redraws its progress
LEARN_FROM_S = 0.5  # jobs predicted at least this long teach the estimates this server's speed
WORKERS = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)

Report = Callable[..., None]  # report(fraction, partial=None)
_UNCLICKED = "_compute_unclicked_s"  # predicted seconds this page run started without a click


@dataclass(frozen=True, eq=False)
class Job:
    """One engine call: ``run(report, should_stop)`` computes what ``(name, key)`` names."""

    name: str  # the kind of work, e.g. "depth.simulate"; results are kept per name
    key: Hashable  # the frozen spec the result depends on (nothing else)
    run: Callable[[Report, Callable[[], bool]], Any]
    label: str = ""  # translated text over the progress bar
    seconds: float = 0.0  # predicted wall time on this server (the cost model)
    share: bool = True  # False: the result belongs to this browser session only
    max_entries: int = 64  # results of this name kept


@dataclass(eq=False)
class _Flight:
    """A job running (or queued) on the pool, and who waits for it."""

    job: Job
    order: int
    store_key: tuple
    future: Future | None = None
    fraction: float = 0.0
    partial: Any = None
    waiters: int = 0
    started: threading.Event = field(default_factory=threading.Event)
    cancel: threading.Event = field(default_factory=threading.Event)

    def report(self, fraction: float, partial: Any = None) -> None:
        self.fraction = min(max(float(fraction), 0.0), 1.0)
        if partial is not None:
            self.partial = partial


_LOCK = threading.Lock()
_SLOWDOWN: dict[str, float] = {}  # per job name: measured / predicted time, smoothed
_STORE: dict[str, OrderedDict] = {}
_FLIGHTS: dict[tuple, _Flight] = {}
_ORDER = itertools.count()
_POOL = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="normscope-job")


def _session_token() -> str:
    """A per-browser-session id that keys ``share=False`` work."""
    if "_compute_session" not in st.session_state:
        st.session_state["_compute_session"] = f"s{next(_ORDER)}-{time.time_ns()}"
    return st.session_state["_compute_session"]


def _store_key(job: Job) -> tuple:
    return (job.name, job.key) if job.share else (job.name, job.key, _session_token())


def cached(job: Job):
    """The stored result of ``job``, or None."""
    if not job.share:
        return st.session_state.get("_compute_results", {}).get(_store_key(job))
    with _LOCK:
        entries = _STORE.get(job.name)
        if entries is None or job.key not in entries:
            return None
        entries.move_to_end(job.key)
        return entries[job.key]


def _keep_private(job: Job, value, session_results: dict, key: tuple) -> None:
    """Keep a ``share=False`` result in its session, at most ``job.max_entries`` per name.

    The bound matters for uploads: a result may hold the uploaded bytes (a dump's report
    reads from them), so a session that uploads file after file keeps only its last few.
    ``key`` is ``_store_key(job)``, taken in the page's thread (a worker has no session).
    """
    session_results.pop(key, None)
    session_results[key] = value  # the newest last: dicts keep insertion order
    same_name = [k for k in list(session_results) if k[0] == job.name]
    for old in same_name[: -job.max_entries]:
        session_results.pop(old, None)


def _keep(job: Job, value, session_results: dict | None, key: tuple) -> None:
    if not job.share:
        if session_results is not None:
            _keep_private(job, value, session_results, key)
        return
    with _LOCK:
        entries = _STORE.setdefault(job.name, OrderedDict())
        entries[job.key] = value
        entries.move_to_end(job.key)
        while len(entries) > job.max_entries:
            entries.popitem(last=False)


def clear() -> None:
    """Forget every stored result and learned slowdown (tests; a server keeps them)."""
    with _LOCK:
        _STORE.clear()
        _SLOWDOWN.clear()


def expected_seconds(job: Job) -> float:
    """The job's predicted time on this server now: the cost model times recent slowdown."""
    return job.seconds * _SLOWDOWN.get(job.name, 1.0)


def _timed_run(job: Job, report, should_stop):
    start = time.perf_counter()
    value = job.run(report, should_stop)
    elapsed = time.perf_counter() - start
    if job.seconds >= LEARN_FROM_S:  # short runs measure fixed overheads, not the machine
        ratio = min(max(elapsed / job.seconds, 0.5), 5.0)
        with _LOCK:
            previous = _SLOWDOWN.get(job.name, ratio)
            _SLOWDOWN[job.name] = 0.7 * previous + 0.3 * ratio
    return value


def _work(flight: _Flight, session_results: dict | None):
    flight.started.set()
    try:
        if flight.cancel.is_set():
            raise Cancelled("nobody waited for this job any more")
        value = _timed_run(flight.job, flight.report, flight.cancel.is_set)
        _keep(flight.job, value, session_results, flight.store_key)
        return value
    finally:
        with _LOCK:
            if _FLIGHTS.get(flight.store_key) is flight:
                del _FLIGHTS[flight.store_key]


def _join(job: Job) -> _Flight:
    key = _store_key(job)
    session_results = None if job.share else st.session_state.setdefault("_compute_results", {})
    with _LOCK:
        flight = _FLIGHTS.get(key)
        if flight is None or flight.cancel.is_set():
            flight = _Flight(job, next(_ORDER), key)
            _FLIGHTS[key] = flight
            flight.future = _POOL.submit(_work, flight, session_results)
        flight.waiters += 1
        return flight


def _leave(flight: _Flight) -> None:
    with _LOCK:
        flight.waiters -= 1
        if flight.waiters > 0 or flight.future.done():
            return

    def cancel_if_abandoned() -> None:
        with _LOCK:
            if flight.waiters == 0 and not flight.future.done():
                flight.cancel.set()

    timer = threading.Timer(GRACE_S, cancel_if_abandoned)
    timer.daemon = True
    timer.start()


def _queued_ahead(flight: _Flight) -> int:
    with _LOCK:
        return sum(
            1
            for other in _FLIGHTS.values()
            if other.order < flight.order and not other.started.is_set()
        )


def compute(job: Job, on_partial: Callable[[Any], None] | None = None):
    """``job``'s result: stored, joined in flight, or computed now with progress shown.

    ``on_partial(partial)`` is called in the page's thread whenever the job reported a new
    partial result (e.g. the training lab's losses so far), so the page can draw it live.
    Raises whatever the job raised (``EngineError`` for refusals).
    """
    value = cached(job)
    if value is not None:
        return value
    if expected_seconds(job) < INLINE_S:
        value = _timed_run(job, lambda *_: None, lambda: False)
        session = None if job.share else st.session_state.setdefault("_compute_results", {})
        _keep(job, value, session, _store_key(job))
        return value
    for _attempt in range(3):  # a flight cancelled just as we joined it is started afresh
        try:
            return _wait(job, _join(job), on_partial)
        except Cancelled:
            continue
    raise Cancelled(f"{job.name} was cancelled three times while waited for")


def _wait(job: Job, flight: _Flight, on_partial):
    status = st.empty()
    shown_partial = None
    try:
        while True:
            try:
                return flight.future.result(timeout=POLL_S)
            except FutureTimeout:
                pass
            if flight.started.is_set():
                status.progress(flight.fraction, text=job.label)
            else:
                ahead = _queued_ahead(flight)
                status.progress(0.0, text=t("compute.queued", label=job.label, ahead=ahead))
            partial = flight.partial
            if on_partial is not None and partial is not None and partial is not shown_partial:
                shown_partial = partial
                on_partial(partial)
    finally:
        _leave(flight)
        status.empty()


def new_page_run() -> None:
    """Called by ``app.py`` before each page run: the run may again start ``AUTO_START_S``
    of work without a click."""
    st.session_state[_UNCLICKED] = 0.0


def estimate_text(seconds: float) -> str:
    """A predicted duration as the pages write it."""
    if seconds < 1.0:
        return t("compute.under_a_second")
    return t("compute.about_seconds", seconds=format_number(seconds, 1 if seconds < 10 else 0))


def run_on_request(
    jobs: list[Job], start_label: str, widget_key: str, on_partial=None, always_ask=False
):
    """The jobs' results if stored or cheap together; else a button with the estimate.

    Heavy work (the jobs not yet stored, with what this page run already started without a
    click, over ``AUTO_START_S``; or any work with ``always_ask``) never starts from a link
    or a rerun alone: it needs a click in this session, remembered for these jobs only, so a
    changed setting asks again.  While it runs, a Cancel button stops it.  Returns the
    results in order, or None while waiting for the click.  ``on_partial(index, partial)``
    draws a running job's partial result.
    """
    missing = [job for job in jobs if cached(job) is None]
    seconds = sum(expected_seconds(job) for job in missing)
    requested = st.session_state.setdefault("_compute_requested", set())
    marker = tuple((job.name, job.key) for job in missing)
    started = st.session_state.get(_UNCLICKED, 0.0)  # by this page run, without a click
    cancel_slot = st.empty()
    if missing and not always_ask and started + seconds <= AUTO_START_S:
        st.session_state[_UNCLICKED] = started + seconds
    elif missing:
        clicked = st.button(
            f"{start_label} ({estimate_text(seconds)})",
            key=widget_key,
            type="primary",
            icon=":material/play_arrow:",
        )
        if clicked:
            requested.add(marker)
        if marker not in requested:
            if started + seconds > AUTO_START_S:  # why it waits; a lab's button needs no reason
                estimate, limit = estimate_text(seconds), f"{AUTO_START_S:g}"
                st.caption(t("compute.on_request", estimate=estimate, limit=limit))
            return None
        cancel_slot.button(
            t("compute.cancel"),
            key=f"{widget_key}_cancel",
            on_click=lambda: requested.discard(marker),
            icon=":material/stop:",
        )
    try:
        results = []
        for index, job in enumerate(jobs):
            draw = None if on_partial is None else (lambda p, i=index: on_partial(i, p))
            results.append(compute(job, draw))
        return results
    finally:
        cancel_slot.empty()
