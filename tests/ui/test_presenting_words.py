"""Presenting: the words drawn by CSS where Streamlit writes English (``page_words``)."""

from __future__ import annotations

import re

import pytest

from ui import presenting
from ui.presenting import STREAMLIT_WORDS, css_string, page_words

HOSTILE = 'a "quoted" \\ word\non two lines</style><img src=x onerror=alert(1)>'


def _unescaped(inside: str) -> str:
    """A CSS string's inside as a browser reads it: "\\<hex> " one character, "\\x" x."""
    escape = r"\\([0-9a-fA-F]{1,6}) ?|\\(.)"
    return re.sub(escape, lambda m: chr(int(m[1], 16)) if m[1] else m[2], inside)


@pytest.mark.parametrize("text", [HOSTILE, "按 Ctrl+Enter 应用", "Press Enter to apply", "\t\x7f"])
def test_a_css_string_holds_no_quote_line_break_or_tag_and_reads_back_whole(text):
    inside = css_string(text)
    assert not re.search(r'(?<!\\)"|[\n\r\f<>]', inside)
    assert _unescaped(inside) == text


def test_the_page_words_keep_a_locale_word_inside_its_string_and_the_style(monkeypatch):
    """A translator's quote, backslash or line break ended the CSS string (the rule dropped,
    the button left blank by its font-size 0), and "</style>" ended the style element."""
    monkeypatch.setattr(presenting, "t", lambda key: HOSTILE)
    css = page_words()
    assert "<" not in css and ">" not in css.replace("] > span", "")
    contents = re.findall(r'content: "((?:[^"\\\n]|\\.)*)";', css)
    assert len(contents) == len(STREAMLIT_WORDS)
    assert all(_unescaped(inside) == HOSTILE for inside in contents)
