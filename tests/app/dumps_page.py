"""The Activation dumps page opened in AppTest, as its two test modules read it: a new
visitor's link, the page's text, its subheaders (each test starts with Streamlit's shared
caches empty: ``tests/app/conftest.py``)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.app.conftest import APP

PAGE = "app_pages/dumps.py"


def deep_link(query: dict, lang: str = "en") -> AppTest:
    """The page opened fresh from a link, as a new visitor does."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"lang": lang, **query})
    at.switch_page(PAGE)
    return at.run()


def page_text(app) -> str:
    """The page's text, without the marks that keep right-to-left tokens in their order."""
    parts = [m.value for m in app.markdown] + [c.value for c in app.caption]
    parts += [e.value for kind in ("info", "warning", "error") for e in app.get(kind)]
    return "\n".join(parts).replace("\u200e", "")


def subheaders(app) -> list[str]:
    return [s.value for s in app.subheader]
