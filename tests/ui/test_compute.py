"""ui.compute: identical requests computed once, at most one heavy job per core, the click rule,
results private to a session, and the Streamlit internals it relies on.

Concurrency runs from plain threads standing in for browser sessions (bare mode: no page to
draw on); what a page shows runs through AppTest.
"""

from __future__ import annotations

import threading
import time

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from engine.errors import EngineError
from engine.threads import Cancelled
from ui import cache_keys, compute

CALLS: list = []  # what the engine stand-ins below were called with, in order


@pytest.fixture(autouse=True)
def _fresh():
    st.cache_resource.clear()
    CALLS.clear()
    yield
    st.cache_resource.clear()


def slow_square(x, progress=None, should_stop=None, threads=None):
    """An engine stand-in: 0.3 s of work, reporting progress and polling ``should_stop``."""
    CALLS.append(x)
    for step in range(10):
        should_stop and should_stop()
        time.sleep(0.03)
        progress and progress((step + 1) / 10)
    return x * x


def _instant(x, progress=None, should_stop=None, threads=None):
    CALLS.append(x)
    return x


def refuse(x):
    CALLS.append(x)
    raise EngineError("depth.too_large_layers", {"value": x, "limit": 1, "device": "CPU"})


def _refusing(x, progress=None, should_stop=None, threads=None):
    """An engine stand-in refusing from inside its run: the page is left as it was then."""
    progress and progress(0.5)
    refuse(x)


def _stopped(x, progress=None, should_stop=None, threads=None):
    """An engine stand-in stopped mid-run (a click elsewhere): the page is left as it was."""
    CALLS.append(x)
    raise Cancelled


def _in_threads(n, target):
    results = [None] * n
    threads = [
        threading.Thread(target=lambda i=i: results.__setitem__(i, target(i))) for i in range(n)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


def test_identical_concurrent_requests_compute_once():
    assert _in_threads(6, lambda _: compute.compute(slow_square, 7)) == [49] * 6
    assert CALLS == [7]
    assert compute.compute(slow_square, 7) == 49 and CALLS == [7]  # kept for the next one


def test_equal_arguments_are_one_request_however_they_were_built():
    from engine.config import DumpSpec

    shared = DumpSpec()  # its "auto" texts are one object; from a link they are two
    built = DumpSpec(axes="".join(["au", "to"]), stream="".join(["au", "to"]))
    assert compute.compute(_instant, shared) is compute.compute(_instant, built)
    assert CALLS == [shared]
    compute.compute(_instant, DumpSpec(axes="BTd"))
    assert len(CALLS) == 2


def test_heavy_requests_run_at_most_one_per_core_and_identical_ones_once():
    running, peak, lock = [0], [0], threading.Lock()

    def counted(x, progress=None, should_stop=None, threads=None):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.15)
        with lock:
            running[0] -= 1
        CALLS.append(x)
        return x

    keys = [i // 2 for i in range(2 * (2 * compute.CORES + 2))]  # every key asked twice
    found = _in_threads(len(keys), lambda i: compute.run_heavy(counted, [(keys[i],)], ["x"]))
    assert found == [[k] for k in keys]
    assert peak[0] <= compute.CORES  # the rest waited for a core
    assert sorted(CALLS) == sorted(set(keys))  # each key computed once


def test_an_engine_refusal_reaches_the_page_and_is_not_kept():
    for _ in range(2):
        with pytest.raises(EngineError) as refused:
            compute.compute(refuse, 3)
        assert refused.value.key == "depth.too_large_layers"
    assert CALLS == [3, 3]


def test_a_recorded_heavy_result_is_still_kept():
    """The record of computed heavy results (no click needed) names only kept ones."""
    for x in range(compute.HEAVY_KEPT + 8):
        compute.run_heavy(_instant, [(x,)], ["x"])
    done = compute._computed()
    recorded = [
        x
        for x in range(compute.HEAVY_KEPT + 8)
        if any(m[1] == cache_keys.digest((x,)) for m in done)
    ]
    CALLS.clear()
    for x in recorded:
        compute.run_heavy(_instant, [(x,)], ["x"])
    assert len(recorded) == compute.HEAVY_KEPT // 2 and CALLS == []


# --- through AppTest: what a page shows --------------------------------------------------


def _heavy_page(slow_square):
    """A page with one heavy request: 400x its default's work unless ``work`` says less."""
    import streamlit as st

    from ui.compute import run_heavy

    work = st.query_params.get("work", "400")
    found = run_heavy(
        slow_square,
        [(int(st.query_params.get("x", "3")),)],
        ["Squaring"],
        button="Square",
        widget_key="square",
        work=lambda x: float(work) if x else 1.0,  # the default request: x = 0
        default=(0,),
        always_ask=st.query_params.get("ask") == "1",
        again=st.query_params.get("again", ""),
    )
    st.write(f"result {found[0]}" if found else "waiting")


def _page(query: dict, script=_heavy_page) -> AppTest:
    """``script`` run as a page (it gets this module's engine stand-ins)."""
    stand_ins = {
        "slow_square": slow_square,
        "instant": _instant,
        "refusing": _refusing,
        "failing": _failing,
        "stopped": _stopped,
    }
    names = script.__code__.co_varnames[: script.__code__.co_argcount]
    at = AppTest.from_function(script, default_timeout=30, args=tuple(stand_ins[n] for n in names))
    at.query_params.update(query)
    return at.run()


def _shown(at) -> str:
    return " ".join(str(m.value) for m in at.markdown)


def test_work_over_the_factor_waits_for_a_click_and_says_why():
    at = _page({})
    assert not at.exception and "waiting" in _shown(at) and CALLS == []
    assert "about 400× the work of the default settings" in at.caption[0].value
    at.button(key="square").click().run()
    assert "result 9" in _shown(at) and CALLS == [3]
    at.run()  # the click is remembered for this request: no button, no work
    assert "result 9" in _shown(at) and CALLS == [3] and not at.button
    near = _page({"work": str(compute.AUTO_START_FACTOR), "x": "4"})  # at the factor: at once
    assert "result 16" in _shown(near) and not near.button


def _stopped_page(stopped):
    from ui.compute import run_heavy

    run_heavy(stopped, [(3,)], ["Squaring"], button="Square", widget_key="square", always_ask=True)


def _refusing_page(refusing):
    import streamlit as st

    from engine.errors import EngineError
    from ui.compute import run_heavy

    private = st.query_params.get("private") == "1"
    try:
        run_heavy(refusing, [(3,)], ["Squaring"], button="Square", widget_key="square",
                  always_ask=True, private=private)  # fmt: skip
    except EngineError:
        st.write("refused")


@pytest.mark.parametrize("private", ["0", "1"])
def test_the_start_button_is_disabled_while_its_job_runs(private):
    """A click on an active start button mid-run reruns the page, which stops the job and
    starts it again from zero: from the click until the job ends the button is disabled
    (here, as a job stopped mid-run left the page) and Cancel is the only way to stop it.
    A refusal ends the request: the button is active again beside the message, and the next
    run does not run the job unasked."""
    running = _page({}, _stopped_page)  # the page as a job leaves it mid-run
    running.button(key="square").click().run()
    assert [(b.key, b.disabled) for b in running.button] == [("square", True)] and CALLS == [3]
    CALLS.clear()
    at = _page({"private": private}, _refusing_page)
    assert [(b.key, b.disabled) for b in at.button] == [("square", False)]
    at.button(key="square").click().run()
    assert not at.exception and "refused" in _shown(at) and CALLS == [3]
    assert [(b.label, b.disabled) for b in at.button] == [("Square", False)]
    at.run()  # refused: the next run does not run the job unasked
    assert [(b.key, b.disabled) for b in at.button] == [("square", False)] and CALLS == [3]
    at.button(key="square").click().run()
    retry = at.button[0]
    assert (retry.label, retry.disabled) == ("Square", False) and CALLS == [3, 3]
    retry.click().run()  # the button beside the message asks again
    assert "refused" in _shown(at) and CALLS == [3, 3, 3]


def _failing(x, progress=None, should_stop=None, threads=None):
    CALLS.append(x)
    raise MemoryError("out of memory")  # torch.OutOfMemoryError, a RuntimeError, a bug


def _failing_page(failing):
    import streamlit as st

    from ui.compute import run_heavy

    try:
        run_heavy(failing, [(3,)], ["Squaring"], button="Square", widget_key="square",
                  always_ask=True)  # fmt: skip
    except MemoryError:
        st.write("failed")
    st.checkbox("other setting", key="other")


def test_a_failed_job_gives_its_button_back_and_does_not_run_again_unasked():
    """Not only a refusal: a job that fails (out of memory, a bug) ends its request too, or
    every later click anywhere on the page would run it again, failing each time."""
    at = _page({}, _failing_page)
    at.button(key="square").click().run()
    assert "failed" in _shown(at) and CALLS == [3]
    at.checkbox(key="other").check().run()
    at.checkbox(key="other").uncheck().run()
    assert CALLS == [3] and [(b.key, b.disabled) for b in at.button] == [("square", False)]


def test_a_result_another_session_computed_needs_no_click():
    first = _page({"ask": "1"})
    assert "starts only when you press the button" in first.caption[0].value
    first.button(key="square").click().run()
    second = _page({"ask": "1"})
    assert "result 9" in _shown(second) and not second.button and CALLS == [3]


def test_again_computes_a_new_value_for_every_session_at_once():
    """A timing's "Measure again": the kept value dropped and computed anew on the click, no
    second click asked for; the next session sees the new value, without a click."""
    first = _page({"ask": "1", "again": "Square again"})
    assert [b.key for b in first.button] == ["square"]  # nothing to do again before a value
    first.button(key="square").click().run()
    assert "result 9" in _shown(first) and CALLS == [3]
    first.button(key="square_again").click().run()
    assert not first.exception and "result 9" in _shown(first) and CALLS == [3, 3]
    assert first.button(key="square_again").label == "Square again"
    second = _page({"ask": "1", "again": "Square again"})
    assert "result 9" in _shown(second) and CALLS == [3, 3]


def test_a_result_drawn_with_progress_is_shown_again_from_the_cache():
    """The bar is drawn outside Streamlit's record of the cached call: a hit replays
    nothing (drawn inside, the next hit raises CacheReplayClosureError)."""
    at = _page({"work": "1"})
    assert "result 9" in _shown(at)
    again = _page({"work": "1"})  # another session: a hit
    assert not again.exception and "result 9" in _shown(again) and CALLS == [3]


def _private_heavy_page(slow_square):
    import streamlit as st

    from ui.compute import run_heavy

    found = run_heavy(slow_square, [(3,)], ["Squaring"], button="Square", widget_key="square",
                      always_ask=True, private=True)  # fmt: skip
    st.write(f"result {found[0]}" if found else "waiting")


def test_a_private_result_leaves_no_start_button():
    at = _page({}, _private_heavy_page)
    at.button(key="square").click().run()
    assert "result 9" in _shown(at) and not at.button
    at.run()  # the click is remembered: the kept value, no button and no work
    assert "result 9" in _shown(at) and not at.button and CALLS == [3]


def _private_page(instant):
    import streamlit as st

    from ui.compute import compute

    st.write(f"private {compute(instant, 5, private=True)}")


def test_private_results_stay_in_their_session(monkeypatch):
    # AppTest gives every session one id; a server gives each browser its own
    session = ["first"]
    monkeypatch.setattr(
        "streamlit.runtime.caching.cache_resource_api.get_session_id_or_throw",
        lambda: session[0],
    )
    first = _page({}, _private_page)
    first.run()
    assert "private 5" in _shown(first) and CALLS == [5]  # kept for this session
    session[0] = "second"
    second = _page({}, _private_page)
    assert "private 5" in _shown(second) and CALLS == [5, 5]  # not seen by another


def _fragment_page(instant, slow_square):
    import streamlit as st

    from ui.compute import compute, run_heavy

    @st.fragment
    def section():
        st.write(f"light {compute(instant, 2)}")
        found = run_heavy(slow_square, [(3,)], ["Squaring"], button="Square", widget_key="sq",
                          always_ask=True)  # fmt: skip
        st.write(f"heavy {found[0]}" if found else "waiting")

    section()


def test_compute_and_run_heavy_work_inside_a_fragment():
    at = _page({}, _fragment_page)
    assert not at.exception and "light 2" in _shown(at) and "waiting" in _shown(at)
    at.button(key="sq").click().run()
    assert not at.exception and "heavy 9" in _shown(at)


def _stop_check_page():
    import streamlit as st
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_run_yield_check

    check = get_run_yield_check()
    check()  # nothing asked this run to stop: it returns
    st.write(f"yield check {callable(check)}")


def test_a_page_run_has_the_yield_check_that_stops_heavy_work():
    """Cancel and a closed tab stop a heavy job through the run's yield check (a Streamlit
    internal; tests/e2e/test_heavy_work_browser.py shows it stopping)."""
    at = _page({}, _stop_check_page)
    assert not at.exception and "yield check True" in _shown(at)


def test_a_click_waiting_in_a_section_stops_its_job_and_a_timed_rerun_does_not():
    """Streamlit lets a fragment's rerun wait for the running one; ``_section_rerun_waiting``
    reads the waiting request (a Streamlit internal, pinned here)."""
    from streamlit.runtime.scriptrunner_utils.script_requests import RerunData, ScriptRequests

    from ui.compute import _section_rerun_waiting

    requests = ScriptRequests()
    assert not _section_rerun_waiting(requests)  # nothing waits
    requests.request_rerun(RerunData(fragment_id_queue=["section"], is_auto_rerun=True))
    assert not _section_rerun_waiting(requests)  # a timed poll
    requests = ScriptRequests()
    requests.request_rerun(RerunData(fragment_id_queue=["section"]))
    assert _section_rerun_waiting(requests)  # Cancel or a new setting in the section
    assert requests.on_scriptrunner_yield() is None  # which Streamlit would not interrupt for
    assert not _section_rerun_waiting(None)
