"""Every page opened in Chinese reads as Chinese: no English sentence left in what it shows,
no half-width comma between Chinese words (``tests/untranslated.py`` says what counts).

The locale files are checked text by text in ``tests/ui/test_i18n.py``; this renders the
pages, so sentences a view puts together (a list of names, a catalog's source, an engine's
note) are checked as a reader sees them.
"""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.app.conftest import APP
from tests.untranslated import problems

PAGES = {
    "lessons": {},
    "vector_lab": {},
    "axes": {"ax_norm": "groupnorm"},
    "geometry": {"ge_d": "2"},
    "depth": {"dp_placements": "pre,peri,olmo2", "dp_init": "fixed"},
    "models": {"md_family": "gpt3"},
    "dumps": {},
    "kernels": {},
    "experiments": {"ex_experiment": "sweep"},
}


def _shown(at: AppTest) -> list[str]:
    """The texts a reader sees: headings, Markdown, captions, alerts, metric labels."""
    kinds = ("title", "header", "subheader", "markdown", "caption")
    alerts = ("success", "info", "warning", "error")
    texts = [element.value for kind in (*kinds, *alerts) for element in at.get(kind)]
    texts += [metric.label for metric in at.metric]
    return texts


@pytest.mark.parametrize("page", PAGES)
def test_each_chinese_page_holds_no_english_sentence_nor_placeholder(page):
    """No English sentence on a Chinese page; and each select box, cleared to search, shows
    its placeholder in Chinese (Streamlit's own, "Choose an option", is English)."""
    st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"lang": "zh", **PAGES[page]})
    at.switch_page(f"app_pages/{page}.py")
    at.run()
    assert not at.exception, at.exception
    shown = _shown(at)
    assert len(shown) > 3
    found = {text[:80]: problems(text) for text in shown if problems(text)}
    assert not found
    boxes = [*at.selectbox, *at.multiselect]
    assert boxes  # the sidebar's language box at least
    english = {box.label: box.proto.placeholder for box in boxes if problems(box.proto.placeholder)}
    empty = [box.label for box in boxes if not box.proto.placeholder.strip()]
    assert not english and not empty
