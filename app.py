"""NormScope: the entry point.  Page config, navigation, the shared sidebar, the URL state.

The page scripts live in ``app_pages/``, not ``pages/``: Streamlit treats a ``pages/`` folder
beside the entry point as a v1 multipage app until ``st.navigation`` first runs, so the first
request of a fresh server to a deep link (``/kernels?...``) would run that page alone,
without this file's sidebar, language or navigation.

Around every page run: ``seed`` copies the page's share-link parameters (``ui/url/``)
into widget state, the page draws, ``publish`` writes them back to the address bar.
"""

# pandas, whole, before any page runs: plotly takes pandas from ``sys.modules`` without an
# import, so a figure built while another session's thread is still importing pandas fails
# ("partially initialized module 'pandas' has no attribute 'Series'" for sessions opening a
# fresh server at once; figures: benchmarks/RESULTS.md, "Load").  An import statement waits.
from pathlib import Path

import pandas  # noqa: F401
import streamlit as st

from engine import describe_backend
from ui import held_downloads, live_model, presenting, projected, sessions
from ui.formatting import literal
from ui.i18n import LANGUAGES, t
from ui.url import address_bar
from ui.url.missing_page import missing_page, page_at
from ui.url.pages import DEFAULT_PAGE, PAGES

# The tab's icon from our own file: a ":material/…:" icon there is fetched from Google's
# servers by every visitor's browser (no other request leaves the app's own address).
ICON = Path(__file__).parent / "ui" / "assets" / "icon.svg"
st.set_page_config(page_title="NormScope", page_icon=str(ICON), layout="wide")

live_model.page_started()  # the server's warm-up waits while pages run (scripts/serve.py)
held_downloads.hold()  # a download's file, written at its click, stays until it is fetched
if "language" not in st.session_state:
    st.session_state["language"] = address_bar.initial_language()
if presenting.STATE_KEY not in st.session_state:
    st.session_state[presenting.STATE_KEY] = address_bar.initial_present()
if address_bar.back_to_written():  # Back or Forward: the entry's language and presentation
    st.session_state["language"] = address_bar.initial_language()
    st.session_state["language_select"] = st.session_state["language"]
    presenting.set_mode(address_bar.initial_present())
presenting.apply()


def _remember_language() -> None:
    st.session_state["language"] = st.session_state["language_select"]


# Below the navigation, the controls first (language, presentation, the share box, which is
# filled after the page has run), then what the app is and what computes it: at a laptop's or
# a projector's 768 px the controls are on the first screen, not under the sidebar's fold.
with st.sidebar:
    st.selectbox(
        t("app.language"),
        list(LANGUAGES),
        index=list(LANGUAGES).index(st.session_state["language"]),
        format_func=LANGUAGES.get,
        key="language_select",
        on_change=_remember_language,
        label_visibility="collapsed",
        placeholder=t("app.choose_one"),
    )
    presenting.chooser()
    projected.measure_type()  # presenting: how large the page's type is on this screen
    share_slot = st.container()
    st.markdown(f"### :material/functions: {t('app.title')}")
    st.caption(t("app.tagline"))
    backend = describe_backend()
    st.badge(
        t("app.labelled", label=t("app.backend"), value=backend.label),
        icon=":material/memory:",
        color="green" if backend.name == "triton" else "blue",
        help=t("app.backend_help"),
    )
    address_bar.root_links()


def _page(name: str, icon: str) -> st.Page:
    default = name == DEFAULT_PAGE  # served at the root address, so its own name is free
    return st.Page(
        f"app_pages/{name}.py",
        title=t(f"app.nav.{name}"),
        icon=icon,
        url_path="" if default else name,
        default=default,
    )


def _to_default_page() -> None:
    """The default page's name typed after the address (``/vector_lab?…``): the same view at
    the root address, its parameters kept, instead of Streamlit's "Page not found"."""
    query = {key: st.query_params.get_all(key) for key in st.query_params}
    st.switch_page(f"app_pages/{DEFAULT_PAGE}.py", query_params=query)


def _no_such_page(name: str, listed: list[st.Page]) -> st.Page:
    """A hidden page at the address's unknown ``name``: it says so, and links every page."""

    def draw() -> None:
        st.header(t("app.no_page.title"))
        st.warning(t("app.no_page.message", name=literal(name)), icon=":material/explore_off:")
        for page in listed:
            st.page_link(page)

    return page_at(name, draw, t("app.no_page.title"))


sections = {
    t("app.nav.learn"): [
        _page("lessons", ":material/school:"),
        _page("classroom", ":material/groups:"),
        _page("vector_lab", ":material/calculate:"),
        _page("axes", ":material/view_in_ar:"),
        _page("geometry", ":material/public:"),
        _page("depth", ":material/stacked_line_chart:"),
    ],
    t("app.nav.real_models"): [
        _page("models", ":material/table_view:"),
        _page("dumps", ":material/upload_file:"),
        _page("experiments", ":material/science:"),
    ],
    t("app.nav.engine"): [_page("kernels", ":material/memory:")],
}
listed = [page for pages in sections.values() for page in pages]
hidden = [
    st.Page(
        _to_default_page,
        title=t(f"app.nav.{DEFAULT_PAGE}"),
        url_path=DEFAULT_PAGE,
        visibility="hidden",
    )
]
missing = missing_page({page.url_path for page in listed + hidden})
if missing is not None:
    hidden.append(_no_such_page(missing, listed))
sections[t("app.nav.engine")] += hidden
navigation = st.navigation(sections)
params = PAGES.get(navigation.url_path or DEFAULT_PAGE)
address_bar.seed(params)
address_bar.show_notices()
presenting.exit_button()
navigation.run()
language, present = st.session_state["language"], presenting.mode()
left_out = address_bar.publish(params, language, present)
address_bar.share_box(share_slot, params, language, left_out, present)
live_model.page_served()  # releases the server's background load of SmolLM2 (scripts/serve.py)
sessions.tidy()  # ends the sessions of tabs closed for good (their uploads with them)
