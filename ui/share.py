"""Share links.  Page widgets are bound to the URL query (``bind="query-params"``); this module
adds the pieces that are not widgets: the language parameter and the link box."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from ui.i18n import LANGUAGES, language_from_locale, t

LANGUAGE_PARAM = "lang"


def initial_language() -> str:
    """The URL's ``lang`` if valid, else the browser's locale, else English."""
    requested = st.query_params.get(LANGUAGE_PARAM)
    if requested in LANGUAGES:
        return requested
    return language_from_locale(st.context.locale)


def keep_language_in_url(lang: str) -> None:
    st.query_params[LANGUAGE_PARAM] = lang


def share_url(base: str | None, params: dict[str, str]) -> str:
    """The page's address with its query: what an instructor copies."""
    query = urlencode(params, doseq=False)
    base = base or ""
    return f"{base}?{query}" if query else base


def share_box() -> None:
    """A sidebar expander with the current page's link, ready to copy."""
    with st.sidebar.expander(t("app.share"), icon=":material/link:"):
        st.caption(t("app.share_help"))
        st.code(
            share_url(st.context.url, st.query_params.to_dict()), language=None, wrap_lines=True
        )
