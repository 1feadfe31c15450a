"""Widgets whose options are named in the page's language follow a language switch.

Streamlit sends a select box, multiselect or radio its value as the option's name and keeps
the name it showed when only the names change (a select box went on showing "Plain
Gaussian" on a Chinese page).  ``bound.named_in_page_language`` sets the value again after a
switch, so the browser is sent the name in the new language.
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page():
    import streamlit as st

    from ui.url.pages import AXES, DEPTH
    from ui.widgets import bound

    st.session_state.setdefault("language", "en")
    bound.selectbox(AXES["ax_preset"], "preset")
    bound.multiselect(DEPTH["dp_placements"], "placements")


def _sent(at: AppTest) -> tuple:
    """What the last run sent the browser: the select box's and multiselect's set value."""
    box, many = at.selectbox(key="ax_preset").proto, at.multiselect(key="dp_placements").proto
    return (
        box.raw_value if box.set_value else None,
        tuple(many.raw_values) if many.set_value else None,
    )


def test_a_language_switch_sends_the_chosen_names_in_the_new_language():
    at = AppTest.from_function(_page, default_timeout=30).run()
    assert not at.exception and _sent(at) == (None, None)  # nothing set: the defaults stand
    at.multiselect(key="dp_placements").set_value(["pre", "peri"]).run()
    at.run()
    assert _sent(at) == (None, None)  # a rerun in the same language sends nothing again
    at.session_state["language"] = "zh"
    at.run()
    assert _sent(at) == ("标准高斯", ("Pre-Norm", "Peri-Norm（三明治）"))
    assert at.selectbox(key="ax_preset").value == "gaussian"  # the value itself is kept
    # (no further run here: AppTest names the kept value with the widget's format_func
    # outside the page's run, where the page's language is not known)
