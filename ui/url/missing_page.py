"""A page name in the address that no page has (``/nopage``): which name, if any.

app.py serves such a name with a hidden page that says so in the page's language, in place
of Streamlit's own dialog ("Page not found", English whatever the language) over the
default page.
"""

from __future__ import annotations

from collections.abc import Collection

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

_ASKED = "_ns_missing_page"
NAME_CHARS = 200  # a longer name gets Streamlit's own dialog


def missing_page(known: Collection[str]) -> str | None:
    """The page name that this session's address asked for when no page had it, else None.

    A first run names its page by the address's path, so a name no page has is seen there
    and kept in the session; the hidden page then stays in the navigation, so that later runs
    (a widget, the language: they name a page by its hash, which Streamlit takes of a page's
    ``url_path``) and the browser's Back to that address find it.  A name that cannot be a
    page's path (holding "/", spaces at an end, characters that cannot be printed, longer
    than ``NAME_CHARS``) is left to Streamlit's dialog."""
    pages = getattr(get_script_run_ctx(), "pages_manager", None)
    if pages is None:
        return None
    name = getattr(pages, "intended_page_name", None) or ""
    by_hash = getattr(pages, "intended_page_script_hash", None)
    if not by_hash and name and _could_be_a_path(name) and name not in known:
        st.session_state[_ASKED] = name
    return st.session_state.get(_ASKED)


def _could_be_a_path(name: str) -> bool:
    return (
        len(name) <= NAME_CHARS and "/" not in name and name == name.strip() and name.isprintable()
    )
