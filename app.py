"""NormScope: the entry point.  Page config, navigation, the shared sidebar; nothing else.

The page scripts live in ``app_pages/``, not ``pages/``: Streamlit treats a ``pages/`` folder
beside the entry point as a v1 multipage app until ``st.navigation`` first runs, so the first
request of a fresh server to a deep link (``/kernels?...``) would run that page alone,
without this file's sidebar, language or navigation.
"""

import streamlit as st

from engine import describe_backend
from ui.i18n import LANGUAGES, t
from ui.share import initial_language, keep_language_in_url, share_box

st.set_page_config(page_title="NormScope", page_icon=":material/functions:", layout="wide")

if "language" not in st.session_state:
    st.session_state["language"] = initial_language()


def _remember_language() -> None:
    st.session_state["language"] = st.session_state["language_select"]


with st.sidebar:
    st.markdown(f"### :material/functions: {t('app.title')}")
    st.caption(t("app.tagline"))
    st.selectbox(
        t("app.language"),
        list(LANGUAGES),
        index=list(LANGUAGES).index(st.session_state["language"]),
        format_func=LANGUAGES.get,
        key="language_select",
        on_change=_remember_language,
        label_visibility="collapsed",
    )
    backend = describe_backend()
    st.badge(
        f"{t('app.backend')}: {backend.label}",
        icon=":material/memory:",
        color="green" if backend.name == "triton" else "blue",
        help=t("app.backend_help"),
    )
keep_language_in_url(st.session_state["language"])

pages = {
    t("app.nav.learn"): [
        st.Page(
            "app_pages/vector_lab.py",
            title=t("app.nav.vector_lab"),
            icon=":material/calculate:",
            default=True,
        ),
        st.Page(
            "app_pages/depth.py", title=t("app.nav.depth"), icon=":material/stacked_line_chart:"
        ),
    ],
    t("app.nav.engine"): [
        st.Page("app_pages/kernels.py", title=t("app.nav.kernels"), icon=":material/memory:"),
    ],
}
page = st.navigation(pages)
share_box()
page.run()
