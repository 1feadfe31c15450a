"""Which page names in an address are served by the "no such page" page (ui/url/missing_page.py):
its rules, on the two ways Streamlit names the page a run is for (by the address's path on a
first run, by the page's hash on later runs).  The page itself: tests/e2e/test_links_browser.py."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import streamlit as st
from streamlit.util import calc_hash

from ui.url import missing_page as module

KNOWN = {"", "lessons", "axes", "vector_lab"}


@pytest.fixture
def run(monkeypatch):
    """``run(name=..., by_hash=...)``: missing_page() for a run that asks for that page."""
    monkeypatch.setattr(st, "session_state", {})

    def asked(name: str = "", by_hash: str = "") -> str | None:
        pages = SimpleNamespace(intended_page_name=name, intended_page_script_hash=by_hash)
        monkeypatch.setattr(
            module, "get_script_run_ctx", lambda: SimpleNamespace(pages_manager=pages)
        )
        return module.missing_page(KNOWN)

    return asked


@pytest.mark.parametrize(
    "name",
    [
        "nopage",
        "Lessons",
        "vector-lab",
        "中文",
        " nopage",
        "nopage ",
        "no\u200bpage",
        "a" * module.NAME_CHARS,
    ],
)
def test_a_name_no_page_has_is_served(run, name):
    assert run(name=name) == name


@pytest.mark.parametrize("name", ["", "lessons", "axes", "a/b", "a" * (module.NAME_CHARS + 1)])
def test_a_pages_name_a_nested_one_or_a_very_long_one_is_not(run, name):
    assert run(name=name) is None


@pytest.mark.parametrize("name", ["nopage", "nopage ", " nopage", "  ", "no\u200bpage"])
def test_the_hidden_page_is_at_exactly_the_asked_name(name):
    """Streamlit matches the address's name against each page's ``url_path`` as is and takes
    the page's hash from it; ``st.Page`` strips the ends of a path it is given, so
    ``page_at`` sets the exact one where Streamlit keeps it."""
    page = module.page_at(name, lambda: None, "No such page")
    assert page.url_path == name
    assert page._script_hash == calc_hash(name)


def test_the_name_stays_for_the_session_so_later_runs_and_back_find_its_page(run):
    """Later runs name a page by its hash; Back to the address finds the page only if the
    navigation still holds it: once asked, the hidden page stays."""
    assert run(name="nopage") == "nopage"
    assert run(by_hash=calc_hash("nopage")) == "nopage"  # the language switched, say
    assert run(by_hash=calc_hash("lessons")) == "nopage"  # a click in the navigation
    assert run(name="lessons") == "nopage"  # a page's address
    assert run(name="a/b") == "nopage"
    assert run(name="other") == "other"  # another unknown name: its page in place


def test_streamlit_still_names_the_page_a_run_asks_for_as_read_here():
    """missing_page reads these through getattr (a run without a page manager serves
    nothing): a Streamlit that renamed them would turn the page off without a word."""
    from streamlit.runtime.pages_manager import PagesManager

    for name in ("intended_page_name", "intended_page_script_hash"):
        assert isinstance(getattr(PagesManager, name, None), property), name


def test_no_run_context_serves_nothing(monkeypatch):
    monkeypatch.setattr(module, "get_script_run_ctx", lambda: None)
    assert module.missing_page(KNOWN) is None
