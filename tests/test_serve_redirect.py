"""Where scripts/serve.py sends an address of two path segments or more (``/a/b``): to its
first, relatively and quoted, or nowhere (Streamlit's own answer).  Through a real server and
browser: tests/e2e/test_links_browser.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit import file_util

from scripts.serve import first_segment_target

STATIC = file_util.get_static_dir()
A_SCRIPT = next((Path(STATIC) / "static" / "js").glob("*.js")).name


@pytest.mark.parametrize(
    ("path", "root", "query", "target"),
    [
        ("/a/b", "", "lang=zh", "../a?lang=zh"),  # from /a/b, "../a" is /a
        ("/a/b/", "", "", "../../a"),  # from /a/b/, one level more
        ("/a/b/c", "", "q=1", "../../a?q=1"),
        ("/axes/b", "/normscope", "", "../axes"),  # a base path: not at the root
        ("/normscope/axes/b", "/normscope", "lang=en", "../axes?lang=en"),
        ("/a?x/b", "", "q=1", "../a%3Fx?q=1"),  # a decoded "?" stays in the name
        ("/a#x/b", "", "", "../a%23x"),
        ("/a%/b", "", "", "../a%25"),
        ("/中文/b", "", "", "../%E4%B8%AD%E6%96%87"),
    ],
)
def test_a_nested_address_goes_to_its_first_segment(path, root, query, target):
    assert first_segment_target(path, root, query, STATIC) == target


@pytest.mark.parametrize(
    "path",
    ["/a", "/a/", "/", "//evil.example/x", "/a/_stcore/health", "/a/_stcore/agent/mcp",
     f"/static/js/{A_SCRIPT}"],
)  # fmt: skip
def test_one_segment_a_file_and_streamlits_own_answers_are_left_alone(path):
    assert first_segment_target(path, "", "", STATIC) is None
