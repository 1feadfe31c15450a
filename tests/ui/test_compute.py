"""ui.compute: shared results, single-flight, a bounded pool, cancellation of abandoned work.

Run without a Streamlit server (bare mode: progress bars are no-ops), from plain threads
standing in for browser sessions.
"""

from __future__ import annotations

import threading
import time

import pytest

from engine.errors import EngineError
from engine.threads import Cancelled
from ui import compute
from ui.compute import Job


@pytest.fixture(autouse=True)
def _fresh_store():
    compute.clear()
    compute._SLOWDOWN.clear()
    yield
    compute.clear()


def _slow_job(name, key, calls, seconds=1.0, steps=10, step_s=0.03, value=42):
    def run(report, should_stop):
        calls.append(threading.get_ident())
        for i in range(steps):
            if should_stop():
                raise Cancelled("stopped")
            time.sleep(step_s)
            report((i + 1) / steps)
        return value

    return Job(name, key, run, "label", seconds=seconds)


def _in_threads(n, target):
    results = [None] * n
    threads = [
        threading.Thread(target=lambda i=i: results.__setitem__(i, target())) for i in range(n)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


def test_identical_concurrent_requests_compute_once():
    calls = []
    job = _slow_job("test.same", ("spec",), calls)
    assert _in_threads(6, lambda: compute.compute(job)) == [42] * 6
    assert len(calls) == 1
    assert compute.cached(job) == 42  # kept for the next session


def test_different_requests_compute_separately_and_at_most_workers_at_once():
    running, peak, lock = [0], [0], threading.Lock()

    def job_for(k):
        def run(report, should_stop):
            with lock:
                running[0] += 1
                peak[0] = max(peak[0], running[0])
            time.sleep(0.15)
            with lock:
                running[0] -= 1
            return k

        return Job("test.many", k, run, "label", seconds=1.0)

    keys = list(range(2 * compute.WORKERS + 2))
    results = [None] * len(keys)
    threads = [
        threading.Thread(target=lambda k=k: results.__setitem__(k, compute.compute(job_for(k))))
        for k in keys
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert results == keys
    assert peak[0] <= compute.WORKERS  # the rest waited in the queue


def test_a_job_nobody_waits_for_is_cancelled_within_the_grace_period():
    calls, stopped = [], threading.Event()

    def run(report, should_stop):
        calls.append(1)
        for _ in range(400):
            if should_stop():
                stopped.set()
                raise Cancelled("stopped")
            time.sleep(0.01)
        return "finished"

    job = Job("test.abandoned", ("spec",), run, "label", seconds=5.0)
    flight = compute._join(job)  # a page starts waiting ...
    time.sleep(0.1)
    compute._leave(flight)  # ... and its tab is closed
    assert stopped.wait(compute.GRACE_S + 1.5)
    assert compute.cached(job) is None  # nothing half-done is kept


def test_a_waiter_joining_within_the_grace_period_keeps_the_job_alive():
    calls = []
    job = _slow_job("test.rejoin", ("spec",), calls, steps=20)
    first = compute._join(job)
    compute._leave(first)  # a rerun: the page leaves and comes straight back
    assert compute.compute(job) == 42
    assert len(calls) == 1


def test_an_engine_refusal_reaches_the_page():
    def run(report, should_stop):
        raise EngineError("depth.too_large_layers", {"value": 2, "limit": 1, "device": "CPU"})

    job = Job("test.refused", ("spec",), run, "label", seconds=1.0)
    with pytest.raises(EngineError) as refused:
        compute.compute(job)
    assert refused.value.key == "depth.too_large_layers"


def test_cheap_jobs_run_inline_and_are_kept():
    calls = []
    job = _slow_job("test.inline", ("spec",), calls, seconds=0.0, steps=1, step_s=0.0)
    assert compute.compute(job) == 42 and compute.compute(job) == 42
    assert calls == [threading.get_ident()]  # in this thread, once


def test_estimates_learn_how_fast_this_server_runs_each_kind_of_job():
    calls = []
    job = _slow_job("test.slow", ("a",), calls, seconds=0.5, steps=30, step_s=0.05)
    assert compute.expected_seconds(job) == pytest.approx(0.5)
    compute.compute(job)  # takes ~1.5 s: three times the prediction
    assert compute.expected_seconds(job) > 1.0


def test_private_jobs_stay_out_of_the_shared_store_even_on_the_pool():
    import streamlit as st

    calls = []
    job = _slow_job("test.private", ("upload-1",), calls, seconds=1.0)  # runs on a worker
    job = Job(job.name, job.key, job.run, job.label, job.seconds, share=False)
    assert compute.compute(job) == 42 and compute.compute(job) == 42
    assert len(calls) == 1 and calls[0] != threading.get_ident()
    assert "test.private" not in compute._STORE
    kept = [key[:2] for key in st.session_state["_compute_results"] if key[0] == job.name]
    assert kept == [(job.name, job.key)]  # in this session's state, keyed by the job's spec


def test_a_session_keeps_at_most_max_entries_private_results_per_name():
    import streamlit as st

    for index in range(5):
        job = Job("test.uploads", index, lambda r, s, i=index: i, share=False, max_entries=2)
        assert compute.compute(job) == index
    kept = [key[1] for key in st.session_state["_compute_results"] if key[0] == "test.uploads"]
    assert kept == [3, 4]  # the oldest dropped: an upload's bytes are not kept for ever
