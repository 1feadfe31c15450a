"""ui.compute, what a page shows while a heavy job runs: its clock in the page's language, a
job queued for a core, and a session following another session's job (its progress, then
its partial results, then its value)."""

from __future__ import annotations

import threading
import time

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.ui.test_compute import (
    CALLS,
    _fresh,  # noqa: F401  (autouse: fresh caches for each test)
    _page,
    _shown,
    slow_square,
)
from ui import cache_keys, compute


def _page_in(slow_square):
    import streamlit as st

    from ui.compute import run_heavy

    st.session_state.language = st.query_params["lang"]
    found = run_heavy(slow_square, [(3,)], ["Squaring"], button="Square", widget_key="square")
    st.write(f"result {found[0]}")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_time_spent_is_counted_in_the_pages_language(monkeypatch, lang):
    """Streamlit's spinner counts seconds in English only ("(2.4 seconds)"): a page in
    another language counts them itself, in the progress bar's text."""
    from contextlib import contextmanager

    from streamlit.delta_generator import DeltaGenerator

    texts, clocks = [], []
    progress = DeltaGenerator.progress
    monkeypatch.setattr(
        DeltaGenerator,
        "progress",
        lambda self, value, text=None: texts.append(text) or progress(self, value, text),
    )

    @contextmanager
    def spinner(text, show_time=False, **kwargs):
        clocks.append(show_time)
        yield

    monkeypatch.setattr(st, "spinner", spinner)
    at = _page({"lang": lang}, _page_in)
    assert not at.exception and "result 9" in _shown(at)
    counted = [text for text in texts if text]
    if lang == "en":
        assert clocks == [True] and counted == []
    else:
        assert clocks == [False] and counted and all("已用时" in text for text in counted)


def _recording_progress(monkeypatch) -> list:
    """Every progress bar a page draws, as (value, text)."""
    from streamlit.delta_generator import DeltaGenerator

    shown = []
    progress = DeltaGenerator.progress
    monkeypatch.setattr(
        DeltaGenerator,
        "progress",
        lambda self, value, text=None: shown.append((value, text)) or progress(self, value, text),
    )
    return shown


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_session_waiting_on_another_sessions_job_follows_its_progress(monkeypatch, lang):
    """While another session computes the same result, a page shows that job's state: queued
    for a core, then its progress (in Chinese with the whole seconds it has waited), then the
    value the job stored; it computes nothing itself, and sends the bar again only when what
    it shows has changed."""
    shown = _recording_progress(monkeypatch)
    monkeypatch.setattr(compute, "FOLLOW_S", 0.02)
    marker = (cache_keys.function_name(slow_square), cache_keys.digest((3,)))
    compute._RUNNING[marker] = (None, None)  # the other session's job, waiting for a core

    def other_session_runs_then_ends():
        time.sleep(0.3)
        compute._RUNNING[marker] = (0.4, None)  # it has a core, and is 40 % done
        time.sleep(1.2)
        compute._heavy(*marker, lambda: 9)  # its value stored, then its mark gone
        compute._RUNNING.pop(marker)

    other = threading.Thread(target=other_session_runs_then_ends)
    other.start()
    try:
        at = _page({"lang": lang}, _page_in)
    finally:
        other.join(5)
        compute._RUNNING.pop(marker, None)
    assert not at.exception and "result 9" in _shown(at) and CALLS == []
    queued = "正在等待本服务器上的空闲核心" if lang == "zh" else "waiting for a free core"
    assert shown[0][0] == 0.0 and queued in shown[0][1]
    followed = [text for value, text in shown if value == 0.4]
    if lang == "en":  # Streamlit's spinner counts the time: the bar is sent once
        assert followed == [None]
    else:  # its own clock, in whole seconds: sent again once a second
        assert followed == ["已用时 0 秒", "已用时 1 秒"]


def test_a_job_queued_for_a_core_draws_its_queued_bar_once(monkeypatch):
    """A job waiting for a core says so once, not at every look for a free core."""
    shown = _recording_progress(monkeypatch)
    monkeypatch.setattr(compute, "POLL_S", 0.01)
    slots = threading.BoundedSemaphore(1)
    monkeypatch.setattr(compute, "_SLOTS", slots)
    slots.acquire()  # every core busy
    threading.Timer(0.5, slots.release).start()
    at = _page({"lang": "en"}, _page_in)
    assert not at.exception and "result 9" in _shown(at) and CALLS == [3]
    assert [text for _, text in shown if text and "free core" in text] == [
        "Squaring — waiting for a free core on this server"
    ]


def _page_drawing_partials(slow_square):
    import streamlit as st

    from ui.compute import run_heavy

    found = run_heavy(
        slow_square,
        [(3,)],
        ["Squaring"],
        button="Square",
        widget_key="square",
        on_partial=lambda done: st.write(f"so far {done[-1]}"),
    )
    st.write(f"result {found[0]}")


def test_a_session_waiting_on_another_sessions_job_draws_its_partial_results():
    """The training lab's live loss curves reach every session following the job, each
    partial result drawn once, however often the follower looks."""
    marker = (cache_keys.function_name(slow_square), cache_keys.digest((3,)))
    compute._RUNNING[marker] = (0.0, None)

    def other_session_runs_then_ends():
        for fraction, partial in ((0.2, "a"), (0.5, "ab"), (0.8, "ab")):
            time.sleep(0.3)
            previous = compute._RUNNING[marker][1]
            compute._RUNNING[marker] = (fraction, previous if partial == previous else partial)
        time.sleep(0.3)
        compute._heavy(*marker, lambda: 9)
        compute._RUNNING.pop(marker)

    other = threading.Thread(target=other_session_runs_then_ends)
    other.start()
    try:
        at = AppTest.from_function(_page_drawing_partials, default_timeout=30, args=(slow_square,))
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(compute, "FOLLOW_S", 0.02)
            at.run()
    finally:
        other.join(5)
        compute._RUNNING.pop(marker, None)
    assert not at.exception and "result 9" in _shown(at) and CALLS == []
    drawn = [m.value for m in at.markdown if m.value.startswith("so far")]
    assert drawn == ["so far a", "so far ab"]
