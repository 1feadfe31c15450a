"""A page name in the address that no page has (``/nopage``): which name, if any, and the
hidden page at exactly that address.

app.py serves such a name with a hidden page that says so in the page's language, in place
of Streamlit's own dialog ("Page not found", English whatever the language) over the
default page.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

_ASKED = "_ns_missing_page"
# A longer name gets Streamlit's own dialog: the hidden page stays in the session's navigation,
# which every later run sends again (a typo is a few characters; this is garbage).
NAME_CHARS = 2000


def missing_page(known: Collection[str]) -> str | None:
    """The page name that this session's address asked for when no page had it, else None.

    A first run names its page by the address's path, so a name no page has is seen there
    and kept in the session; the hidden page then stays in the navigation, so that later runs
    (a widget, the language: they name a page by its hash, which Streamlit takes of a page's
    ``url_path``) and the browser's Back to that address find it.  A name holding "/" (sent to
    its first segment by scripts/serve.py) or longer than ``NAME_CHARS`` is left to
    Streamlit's dialog."""
    pages = getattr(get_script_run_ctx(), "pages_manager", None)
    if pages is None:
        return None
    name = getattr(pages, "intended_page_name", None) or ""
    by_hash = getattr(pages, "intended_page_script_hash", None)
    if not by_hash and name and _servable(name) and name not in known:
        st.session_state[_ASKED] = name
    return st.session_state.get(_ASKED)


def _servable(name: str) -> bool:
    return len(name) <= NAME_CHARS and "/" not in name


def page_at(name: str, draw: Callable[[], None], title: str) -> st.Page:
    """A hidden page served at exactly the address's ``name``.

    Streamlit finds a run's page by comparing the address's name with each page's path as
    is, but ``st.Page`` strips spaces from the ends of a path it is given: ``/nopage%20``
    matched no page and got Streamlit's dialog.  The page is made at the stripped name and
    then given the exact one (``_url_path``, from which Streamlit also takes the page's hash;
    ``tests/ui/test_url_missing_page.py`` checks that Streamlit still does both)."""
    page = st.Page(draw, title=title, url_path=name.strip() or "_", visibility="hidden")
    page._url_path = name
    return page
