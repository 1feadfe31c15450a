"""A page section that reruns alone: ``@section`` is ``st.fragment`` that keeps the URL.

A widget inside a section reruns that section only (a Streamlit fragment rerun): the page's
other sections, the sidebar and the navigation are neither run nor sent again, so a click
costs what its own section computes and draws.  A page wraps its body in a section (so
switching its sections or changing its shared inputs skips the sidebar) and each part
with widgets of its own in another, nested one.

The URL: ``app.py`` writes the page's share-link parameters to the address bar after a
whole run (``ui/url/``'s ``publish``), which a fragment rerun does not reach, so a
section that reran alone writes them itself (``republish``).  The sidebar's share box
cannot be drawn from a fragment: while it is open (or its notes change) a changed link
reruns the whole page, so the box shows the link the address bar holds.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from ui import presenting
from ui.url import address_bar
from ui.url.codec import LANGUAGE


def section(body: Callable[..., Any]) -> Callable[..., Any]:
    """``body`` as a fragment that, when it reran alone, writes the page's URL."""

    @wraps(body)
    def run(*args: Any, **kwargs: Any) -> Any:
        result = body(*args, **kwargs)
        ctx = get_script_run_ctx()
        if ctx is not None and ctx.fragment_ids_this_run:  # a fragment rerun, not the page's
            language = st.session_state.get("language", LANGUAGE.default)
            if address_bar.republish(language, presenting.mode()):
                st.rerun(scope="app")
        return result

    return st.fragment(run)
