"""Hostile input, generated: no link and no typed text can raise, and every refusal is named.

``hypothesis`` writes the links: random keys and values for every page, repeated keys, huge
and tiny numbers, unicode, markup; and random text for the vector parser.  Each link is
opened fresh (AppTest); no exception may escape, and every parameter the page refused must
be named in a visible message.  That walk (twelve links per page) is slow; the quick tier
opens one fixed hostile link per page and walks the parser alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from ui.url.codec import parse
from ui.url.pages import PAGES, PREFIXES
from ui.vector_input import VectorInputError, parse_eps, parse_parameter, parse_vectors

APP = str(Path(__file__).resolve().parents[2] / "app.py")

NASTY_TEXT = st.sampled_from(
    [
        "",
        "-1",
        "1e400",
        "1e-400",
        "nan",
        "inf",
        "-0",
        ",,,",
        "[;]",
        "9" * 50,
        "0x10",
        "１２",
        "−3",
        "<script>alert(1)</script>",
        "**bold** [link](https://evil.example)",
        "https://evil.example/login",
        "$\\frac{1}{0}$",
        "true",
        "TRUE",
        "RMSNorm",
        "post,pre,post",
        "a" * 500,
        "\u202e\u0000",
        "类注意力混合器",
    ]
)
VALUES = st.one_of(
    NASTY_TEXT,
    st.text(max_size=30),
    st.integers(min_value=-(10**12), max_value=10**12).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)


def _page_links(page):
    keys = st.sampled_from(
        [p.key for p in page.params] + ["lang", "zz_unknown", "dp_x", f"{page.prefix}_nope"]
    )
    return st.dictionaries(keys, st.lists(VALUES, min_size=1, max_size=3), max_size=4)


def _open(page_name, link) -> AppTest:
    streamlit.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=60)
    for key, values in link.items():
        at.query_params[key] = values if len(values) > 1 else values[0]
    at.switch_page(f"app_pages/{page_name}.py")
    return at.run()


def _refused(page, link) -> set[str]:
    refused = set()
    for key, values in link.items():
        single = key == "lang" or key in page.by_key and page[key].kind != "choices"
        if single and len(set(values)) > 1:  # given twice: the value read is named
            refused.add(key)
        if key == "lang":
            if values[-1] not in ("en", "zh"):
                refused.add(key)
            continue
        param = page.by_key.get(key)
        if param is None:
            prefix = key.split("_")[0]
            if prefix == page.prefix or prefix not in PREFIXES:  # ours, or nobody's
                refused.add(key)
            continue
        if parse(param, list(values))[1] is not None:
            refused.add(key)
    return refused


def _check(page_name, link):
    page = PAGES[page_name]
    at = _open(page_name, link)
    assert not at.exception, at.exception
    shown = " ".join(w.value for w in at.warning)
    for key in _refused(page, link):
        assert key in shown, (key, shown)


SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow  # twelve whole-app runs per page
@pytest.mark.parametrize("page_name", sorted(PAGES))
@SETTINGS
@given(data=st.data())
def test_links_never_raise_and_name_what_they_refuse(page_name, data):
    # Expensive work only shows a button: nothing over 2 s starts from a link.
    _check(page_name, data.draw(_page_links(PAGES[page_name])))


@pytest.mark.parametrize("page_name", sorted(PAGES))
def test_a_hostile_link_opens_its_page_and_names_what_it_refuses(page_name):
    """The quick tier's one whole-app run per page of what the walk above generates."""
    page = PAGES[page_name]
    first, last = page.params[0].key, page.params[-1].key
    _check(
        page_name,
        {first: ["<script>alert(1)</script>"], last: ["1e400", "nan"], "zz_unknown": ["x"]},
    )


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_every_parameter_reads_any_link_value_or_refuses_it_by_name(data):
    """What the page walk checks, on the parser alone: a value or a named refusal, never an
    exception, for every parameter of every page."""
    page = data.draw(st.sampled_from(list(PAGES.values())))
    param = data.draw(st.sampled_from(page.params))
    value, refusal = parse(param, data.draw(st.lists(VALUES, min_size=1, max_size=3)))
    assert value is not None or refusal is not None
    if refusal is not None:
        assert refusal.params["param"] == param.key, refusal


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.text(max_size=200), NASTY_TEXT, st.lists(VALUES).map(", ".join)))
def test_the_vector_parser_accepts_or_refuses_with_a_named_message(text):
    for dtype in ("float32", "float16", "bfloat16"):
        try:
            rows = parse_vectors(text, dtype)
        except VectorInputError as error:
            assert error.key  # a message key the page translates
        else:
            assert rows and rows[0] and all(len(row) == len(rows[0]) for row in rows)
    for parse_one in (parse_eps, lambda t: parse_parameter(t, 4, "γ")):
        try:
            parse_one(text)
        except VectorInputError as error:
            assert error.key
