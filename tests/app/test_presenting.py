"""Presentation mode through AppTest: a link turns it on, it travels with links, it enlarges
charts, the Exit button leaves it, and a bad value is named.  What its stylesheets do (larger
text, no sidebar, the controls hidden) is tested in a browser: tests/e2e/test_lessons_browser.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _open(query: dict, page: str | None = None) -> AppTest:
    st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(query)
    if page is not None:
        at.switch_page(f"app_pages/{page}.py")
    return at.run()


def _chart_font(at, key: str) -> float | None:
    chart = next(c for c in at.get("plotly_chart") if key in c.proto.id)
    return json.loads(chart.proto.spec)["layout"].get("font", {}).get("size")


def test_a_present_link_enlarges_text_and_charts_and_keeps_the_mode_in_the_url():
    at = _open({"lang": "en", "present": "on"})
    assert not at.exception and not at.warning
    assert at.button(key="present_exit") is not None
    assert at.query_params["present"] == "on"
    assert _chart_font(at, "vl_chart") == 18


def test_results_mode_is_kept_in_the_url_with_its_way_out():
    at = _open({"lang": "en", "present": "results"}, "depth")
    assert not at.exception
    assert at.button(key="present_exit") is not None
    assert at.query_params["present"] == "results"


def test_the_exit_button_leaves_presentation_mode_and_the_url_forgets_it():
    at = _open({"lang": "en", "present": "on"})
    at.button(key="present_exit").click().run()
    assert not at.exception
    assert "present" not in at.query_params
    assert _chart_font(at, "vl_chart") is None  # plotly's own default again


def test_an_unknown_mode_is_named_with_what_is_accepted():
    at = _open({"lang": "en", "present": "loud"})
    assert not at.exception
    warning = " ".join(w.value for w in at.warning)
    assert "present" in warning and "loud" in warning and "`off`, `on`, `results`" in warning
    assert "present" not in at.query_params


def _controls(node) -> list:
    """The blocks keyed ``controls_*`` under ``node``: what results mode hides."""
    found = []
    for child in getattr(node, "children", {}).values():
        if "-controls_" in (getattr(getattr(child, "proto", None), "id", "") or ""):
            found.append(child)
        found += _controls(child)
    return found


def _widgets(node) -> int:
    inputs = ("Selectbox", "Multiselect", "Slider", "SelectSlider", "NumberInput", "ButtonGroup")
    return sum(
        (type(child).__name__ in inputs) + _widgets(child)
        for child in getattr(node, "children", {}).values()
    )


@pytest.mark.parametrize("page", ["vector_lab", "axes", "depth", "kernels", "models", "dumps"])
def test_every_page_marks_its_inputs_as_controls_results_mode_hides(page):
    at = _open({"lang": "en", "present": "results"}, page)
    assert not at.exception
    assert sum(_widgets(block) for block in _controls(at.main)) >= 1


# --- present=results: the inputs hidden, never the navigation -------------------------------

INPUTS = {  # widgets a learner sets; buttons (run, cancel, downloads) are actions, not inputs
    "number_input", "selectbox", "multiselect", "slider", "select_slider", "text_input",
    "text_area", "toggle", "checkbox", "radio", "button_group", "file_uploader",
}  # fmt: skip


def _inputs_by_place(node, places=()) -> list[tuple[str, str]]:
    """(widget key, "controls" / "nav" / "") for every input under ``node``: which kind of
    container, if any, holds it."""
    found = []
    for child in getattr(node, "children", {}).values():
        key = getattr(getattr(child, "proto", None), "id", "") or ""
        name = key.rpartition("-")[2]
        here = places + tuple(p for p in ("controls_", "nav_") if name.startswith(p))
        if child.type in INPUTS:
            found.append((name, here[-1].rstrip("_") if here else ""))
        found += _inputs_by_place(child, here)
    return found


RESULTS_VIEWS = [
    ("vector_lab", {}),
    *[("depth", {"dp_section": s}) for s in ("stack", "sweep", "wiring", "training")],
    *[("axes", {"ax_section": s}) for s in ("cells", "batchnorm")],
    *[("geometry", {"ge_section": s}) for s in ("scene", "vector", "eps", "affine", "high")],
    ("kernels", {}),
    ("models", {}),
    ("lessons", {}),
]


@pytest.mark.slow
@pytest.mark.parametrize("page, query", RESULTS_VIEWS, ids=lambda v: str(v))
def test_results_mode_hides_every_input_and_keeps_the_navigation(page, query):
    at = _open({"lang": "en", "present": "results", **query}, page)
    assert not at.exception
    places = _inputs_by_place(at.main)
    loose = [key for key, place in places if place == "" and key not in NOT_INPUTS]
    assert not loose  # an input results mode would still show
    assert not [key for key, place in places if place == "controls" and key in NAVIGATION]


NAVIGATION = {"ls_choose", "dp_section", "ax_section", "ge_section", "du_section", "md_family"}
NOT_INPUTS = {
    "ls_pick_why_normalize",  # the lesson's options are its question, shown to the room
}


def test_presenting_puts_a_page_s_inputs_in_a_closed_settings_box():
    at = _open({"lang": "en", "present": "on"}, "depth")
    assert not at.exception
    boxes = list(at.main.expander)  # the stack's section holds its own (a fragment)
    assert [b.label for b in boxes] == ["Settings"]
    assert not boxes[0].proto.expanded  # the chart, not the inputs, comes first
    assert any(getattr(w, "key", None) == "dp_layers" for w in boxes[0].number_input)
    off = _open({"lang": "en"}, "depth")
    assert not list(off.main.expander)


def _frames(node) -> list[dict]:
    """The arguments of every chart drawn in place (``ui.plotly_frame``) under ``node``."""
    found = []
    for child in getattr(node, "children", {}).values():
        if child.type == "component_instance":
            found.append(json.loads(child.proto.json_args))
        found += _frames(child)
    return found


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_presenting_geometry_titles_each_settings_box_by_what_it_holds(lang):
    """The scene's two boxes (the cloud's settings, what the scene draws) were both titled
    "Settings", one above the other."""
    at = _open({"lang": lang, "present": "on"}, "geometry")
    assert not at.exception
    labels = [box.label for box in at.main.expander]
    assert len(labels) == 2 and len(set(labels)) == 2
    assert not {"Settings", "设置"} & set(labels)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    "page, query, count",
    [("axes", {}, 2), ("axes", {"ax_section": "batchnorm"}, 4), ("kernels", {}, 2)],
)
def test_presenting_titles_every_settings_box_on_a_page_with_several(lang, page, query, count):
    """Axes' tensor settings above the section switch and its cell picker below it were two
    closed boxes both titled "Settings"; the failures' three and Kernels' two likewise."""
    at = _open({"lang": lang, "present": "on", **query}, page)
    assert not at.exception
    labels = [box.label for box in at.main.expander if box.proto.label]
    labels = [label for label in labels if label.startswith(("Settings", "设置"))]
    assert len(labels) == count and len(set(labels)) == count, labels
    assert not {"Settings", "设置"} & set(labels)


def test_presenting_enlarges_the_3d_scenes_text_as_every_other_chart():
    at = _open({"lang": "en", "present": "on"}, "geometry")
    layout = json.loads(_frames(at.main)[0]["spec"])["layout"]
    assert layout["legend"]["font"]["size"] == 18
    assert layout["scene"]["xaxis"]["tickfont"]["size"] == 16
    off = _open({"lang": "en"}, "geometry")
    assert "font" not in json.loads(_frames(off.main)[0]["spec"])["layout"]["legend"]


def test_a_tables_texts_are_written_as_they_are_in_html():
    """st.table reads its cells, headers and index as Markdown: a dump's names (its keys)
    are shown as the grid drew them, never a link, an image, a formula or an icon."""

    def page():
        import pandas as pd
        import streamlit as st

        from ui import presenting

        st.session_state[presenting.STATE_KEY] = "on"
        names = ["![](http://tracker.example/x.png)", "[x](http://e.com) $a$ :streamlit:"]
        frame = pd.DataFrame(
            {"**hdr**": names, "rms": [1.5, 2.0], "ok": pd.array([True, None], "boolean")},
            index=["$i$", "*j*"],
        )
        presenting.table(frame.rename_axis("_name_"), 5, writers={"rms": "{:.2f}".format})

    at = AppTest.from_function(page).run()
    (shown,) = at.table
    cells = shown.proto.arrow_data.styler.display_values  # Arrow bytes: the cells' texts
    assert b"\\!\\[\\]\\(http:\xe2\x81\xa0//tracker" in cells and b"\\$a\\$" in cells
    assert b":\xe2\x81\xa0streamlit:\xe2\x81\xa0" in cells and b"1.50" in cells
    # headers and index labels come from the data itself, not the Styler's texts
    assert list(shown.value.columns) == ["\\*\\*hdr\\*\\*", "rms", "ok"]
    assert b"yes" in cells and b"<NA>" not in cells  # a missing yes/no: empty
    assert list(shown.value.index) == ["\\$i\\$", "\\*j\\*"]
    assert shown.value.index.name == "\\_name\\_"


def test_presenting_writes_a_table_as_html_whose_text_grows_with_the_page():
    """The data grid draws its text at 14 px whatever the page's type; presenting, a table
    (``ui.presenting.table``) is HTML, in the page's larger type: the dumps' outlier tokens
    (a yes/no column in words, not "True"), the Vector Lab's statistics (with their channel
    numbers, and past a screen's rows)."""
    for present in ("off", "on"):
        at = _open({"lang": "en", "present": present, "du_section": "stream"}, "dumps")
        assert not at.exception
        grids = [t for t in at.dataframe if "first layer flagged" in t.value.columns]
        html = [t for t in at.table if "first layer flagged" in t.value.columns]
        assert (len(grids), len(html)) == ((0, 1) if present == "on" else (1, 0))
    (outliers,) = html
    shown = outliers.proto.arrow_data.styler.display_values  # Arrow bytes: the cells' texts
    assert b"yes" in shown and b"True" not in shown and outliers.proto.hide_index
    at = _open({"lang": "en", "present": "on", "vl_norm": "batchnorm"}, "vector_lab")
    (stats,) = [t for t in at.table if "rstd" in t.value.columns]
    assert stats.value.index.name == "channel" and list(stats.value.index) == [1, 2, 3, 4]
    # past a screen's rows too (present.css scrolls it under its header), up to HTML_ROWS
    query = {"vl_source": "random", "vl_d": "64", "vl_rows": "4"}
    at = _open({"lang": "en", "present": "on", "vl_norm": "batchnorm", **query}, "vector_lab")
    (stats,) = [t for t in at.table if "rstd" in t.value.columns]
    assert len(stats.value) == 64 and not [g for g in at.dataframe if "rstd" in g.value.columns]
