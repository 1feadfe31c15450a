"""A negative number on a page is written with the true minus "−" (U+2212) where people read it,
in both languages, while a chart's CSV download keeps the ASCII "-" every program reads
(``ui.formatting.true_minus`` is the one place the sign is changed)."""

from __future__ import annotations

import io
import re

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from engine.norms.precision_presets import PRESET_NAMES, preset_rows
from tests.app.conftest import APP
from ui.figures.export import figure_csv
from ui.i18n import translate
from ui.widgets.vector_lab import example_states, preset_label_params


def _open(page: str, query: dict) -> AppTest:
    st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params.update(query)
    at.switch_page(f"app_pages/{page}.py")
    at.run()
    assert not at.exception, at.exception
    return at


def _prose(at: AppTest) -> str:
    """What a reader sees as text: Markdown and captions (LaTeX is KaTeX's, left out)."""
    return "\n".join(e.value for kind in ("markdown", "caption") for e in at.get(kind))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_geometry_affine_table_and_summary_write_the_true_minus(lang):
    query = {"lang": lang, "ge_section": "affine", "ge_gamma_x": "0.5", "ge_beta_y": "-1.25"}
    at = _open("geometry", query)
    table = at.table[0].value
    gemma = next(column for column in table.columns if "Gemma" in column)  # γ − 1
    assert list(table[gemma]) == ["−0.5", "0", "0"]
    assert list(table["β"]) == ["0", "−1.25", "0"]
    prose = _prose(at)
    assert "[0, −1.25, 0]" in prose and "-1.25" not in prose  # the ellipsoid's centre


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_vector_lab_shows_the_true_minus_and_its_chart_csv_keeps_ascii(lang, calls):
    charts = calls("ui.views.vector_lab.show_chart")
    at = _open("vector_lab", {"lang": lang, "vl_text": "-0.5, 2, -3.25, 1"})
    assert at.query_params["vl_text"] == "-0.5, 2, -3.25, 1"  # the link keeps what was typed
    cells = at.table[0].value.to_numpy().ravel().tolist()  # y, its length, ..., its ratios
    assert not [cell for cell in cells if "-" in cell]
    assert sum("−" in cell for cell in cells) >= 3  # LayerNorm's y and ratios, RMSNorm's y
    assert "−" in _prose(at)
    (figure, key), *_ = charts
    assert key == "vl_chart"
    csv = figure_csv(figure)
    assert "−" not in csv  # what a spreadsheet or pandas reads back as numbers
    table = pd.read_csv(io.StringIO(csv))
    assert table["y"].dtype == float
    assert table["y"].tolist()[:4] == [-0.5, 2.0, -3.25, 1.0]  # the input, drawn first
    assert (table["y"][4:] < 0).any()  # and the outputs, negative ones among them


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_vector_lab_examples_menus_write_the_true_minus(lang):
    """The examples' names quote their rows ("[−300, 300, −300, 300]"), as the lesson that
    asks for one does, in both menus (the full names and the example row's short ones)."""
    presets = {name: preset_rows(name) for name in PRESET_NAMES}
    names = [
        translate(f"vector_lab.{menu}.{name}", lang, **preset_label_params(name, presets))
        for name in example_states(presets)
        for menu in ("presets", "preset_short")
        if menu == "presets" or name in PRESET_NAMES
    ]
    assert any("−300" in name for name in names)
    assert not [name for name in names if re.search(r"(?<![eE\w])-\d", name)]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_vector_lab_examples_menus_group_four_digits(lang):
    """A width or an entry of four digits or more is grouped in the menus' names ("4,096
    entries", "one 1,000"), as every sentence of the page writes it."""
    presets = {name: preset_rows(name) for name in PRESET_NAMES}
    names = [
        translate(f"vector_lab.{menu}.{name}", lang, **preset_label_params(name, presets))
        for name in PRESET_NAMES
        for menu in ("presets", "preset_short")
    ]
    assert any("4,096" in name for name in names) and any("1,000" in name for name in names)
    assert not [name for name in names if re.search(r"\d{4}", name)]
