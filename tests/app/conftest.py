import functools
import importlib
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import ui.widgets.dumps as dump_widgets
from engine.dumps.sources import Upload
from ui import i18n
from ui.widgets.dumps import upload_source

APP = str(Path(__file__).resolve().parents[2] / "app.py")

# Every test here runs the whole app script (AppTest), a few tenths of a CPU second each and
# half the quick tier's time before this rule: they are the slow tier, except these, which
# keep one whole-app run per page, the URL parser and the first view in the quick tier.
QUICK = (
    "test_hostile_links.py::test_a_hostile_link_opens_its_page_and_names_what_it_refuses",
    "test_hostile_links.py::test_every_parameter_reads_any_link_value_or_refuses_it_by_name",
    "test_hostile_links.py::test_the_vector_parser_accepts_or_refuses_with_a_named_message",
    "test_first_view.py::",
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        where = item.nodeid.removeprefix("tests/app/")
        if where != item.nodeid and not where.startswith(QUICK):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _fresh_results():
    """Every page test starts with nothing computed (``ui.compute`` keeps results in
    ``st.cache_resource``, process-wide)."""
    st.cache_resource.clear()


@pytest.fixture(autouse=True)
def _plain_spaces(monkeypatch):
    """The pages' texts with spaces where the app binds an expression with no-break spaces
    (``ui/i18n.py``; tests/ui/test_i18n.py checks that binding): a page test reads what the
    page says, and writes it with spaces."""
    monkeypatch.setattr(i18n, "_bound", lambda text: text)


@pytest.fixture(autouse=True)
def _empty_class_data(tmp_path, monkeypatch):
    """Every page test on an empty class database of its own (``ui.classroom.store`` opens
    it on first use, after ``_fresh_results`` has dropped the previous test's), never the
    repository's ``data/``: a link with a class code joins, or counts a wrong guess."""
    monkeypatch.setenv("NORMSCOPE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("NORMSCOPE_DATABASE_URL", raising=False)


@pytest.fixture
def app() -> AppTest:
    """The whole app as a user opens it (English), caches cleared."""
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["lang"] = "en"
    return at.run()


@pytest.fixture
def browser_session(monkeypatch):
    """``browser_session(name)``: later page runs are that browser session's.  AppTest gives
    every session one id, so without this a result kept per session (``ui.compute``'s
    ``private=True``) would be seen by every AppTest session."""
    current = ["first"]
    monkeypatch.setattr(
        "streamlit.runtime.caching.cache_resource_api.get_session_id_or_throw",
        lambda: current[0],
    )
    return lambda name: current.__setitem__(0, name)


@pytest.fixture
def calls(monkeypatch):
    """``calls(target)``: the arguments each later call of the function at ``target`` (a
    dotted path, patched there) gets, in order."""

    def spy(target: str) -> list:
        module, _, name = target.rpartition(".")
        real = getattr(importlib.import_module(module), name)
        seen: list = []

        @functools.wraps(real)  # its name too: ui.compute keys its results by it
        def counted(*args, **kwargs):
            seen.append(args)
            return real(*args, **kwargs)

        monkeypatch.setattr(target, counted)
        return seen

    return spy


@pytest.fixture
def upload(monkeypatch):
    """``upload(name, data, file_id)`` puts a file in the page's uploader (None: empty)."""
    current: dict = {"file": None}
    monkeypatch.setattr(dump_widgets, "uploaded_dump", lambda: current["file"])

    def put(name: str | None, data: bytes = b"", file_id: str = "f1") -> None:
        current["file"] = None if name is None else upload_source(file_id, Upload(name, data))

    return put


def scrolls_to(at: AppTest, place: str) -> bool:
    """Whether the run asked the browser to scroll ``place`` into view (``ui.landing.shown``)."""
    return any(f'data-shown="{place}"' in h.proto.body for h in at.get("html"))


def fragment_ids(at: AppTest) -> list[str]:
    """The fragments ``at``'s page has registered (Streamlit keeps no public list)."""
    return list(at._fragment_storage._fragments)


@pytest.fixture
def timer_rerun(monkeypatch):
    """``timer_rerun(at, fragment)``: ``at`` reruns only ``fragment`` (one of
    ``fragment_ids(at)``), as a fragment's ``run_every`` timer asks the server, carrying every
    widget value ``at`` holds (AppTest's own runs are whole ones)."""
    import streamlit.testing.v1.local_script_runner as runner

    whole = runner.RerunData

    def run(at: AppTest, fragment: str) -> AppTest:
        monkeypatch.setattr(
            runner, "RerunData", lambda **kw: whole(**kw, fragment_id_queue=[fragment])
        )
        try:
            return at.run()
        finally:
            monkeypatch.setattr(runner, "RerunData", whole)

    return run
