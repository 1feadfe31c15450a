"""A page name in the address that no page has (``/nopage``): which name, if any.

app.py serves such a name with a hidden page that says so in the page's language, in place
of Streamlit's own dialog ("Page not found", English whatever the language) over the
default page.
"""

from __future__ import annotations

from collections.abc import Collection

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.util import calc_hash

_ASKED = "_ns_missing_page"
NAME_CHARS = 200  # a longer name gets Streamlit's own dialog


def missing_page(known: Collection[str]) -> str | None:
    """The page name that this run's address asks for when no page has it, else None.

    The first run names the page by the address's path; later runs on that page (a widget,
    the language) name it by its hash, which Streamlit takes of a page's ``url_path``: so
    the name is kept in the session.  A name that cannot be a page's path (holding "/",
    spaces at an end, characters that cannot be printed, longer than ``NAME_CHARS``) is
    left to Streamlit's dialog."""
    pages = getattr(get_script_run_ctx(), "pages_manager", None)
    if pages is None:
        return None
    asked = st.session_state.get(_ASKED)
    by_hash = getattr(pages, "intended_page_script_hash", None)
    if by_hash:
        return asked if asked and by_hash == calc_hash(asked) else None
    name = getattr(pages, "intended_page_name", None) or ""
    if (
        name in known
        or len(name) > NAME_CHARS
        or "/" in name
        or name != name.strip()
        or not name.isprintable()
    ):
        return None
    st.session_state[_ASKED] = name
    return name
