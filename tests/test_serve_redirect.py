"""Where scripts/serve.py sends an address of two path segments or more (``/a/b``): to its
first, relatively and quoted, or nowhere (Streamlit's own answer); and how it answers an
address that Streamlit's path check refuses (a page in words, status 400).  Through a real
server and browser: tests/e2e/test_links_browser.py."""

from __future__ import annotations

import asyncio
import html
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

import pytest
from streamlit import file_util
from streamlit.web.server.starlette.starlette_path_security_middleware import (
    PathSecurityMiddleware,
)

from scripts.serve import first_segment_target, refusals_in_words
from ui.i18n import translate

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


class _InWords(PathSecurityMiddleware):
    __call__ = refusals_in_words(PathSecurityMiddleware.__call__)


async def _page(scope, receive, send):  # the app behind the check: what an accepted path gets
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"the page"})


def _answer(path: str, query: str = "", method: str = "GET", language: str = "") -> tuple:
    """(status, body, headers) that the wrapped check answers ``path`` with."""
    sent = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b""}

    scope = {
        "type": "http", "method": method, "path": path, "raw_path": quote(path).encode(),
        "query_string": query.encode(), "root_path": "",
        "headers": [(b"accept-language", language.encode())] if language else [],
    }  # fmt: skip
    with ThreadPoolExecutor(1) as thread:  # Playwright may hold this thread's event loop
        thread.submit(asyncio.run, _InWords(_page)(scope, receive, send)).result()
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], body.decode(), dict(sent[0]["headers"])


@pytest.mark.parametrize(
    "path",
    ["/axes\x00", "/C:x", "/../x", "/static/../x", "//x", "/\\\\x", "/a\nb", "/\r", "/a\x7f"],
)
def test_an_address_streamlit_refuses_is_answered_in_words_still_400(path):
    status, body, headers = _answer(path)
    assert status == 400 and "Bad Request" not in body
    assert translate("app.no_page.refused", "en") in html.unescape(body)
    assert headers[b"content-language"] == b"en"


def test_the_refusal_speaks_the_links_language_or_the_browsers_and_links_the_start_page():
    _, body, _ = _answer("/axes\x00", query="lang=zh")
    assert translate("app.no_page.refused", "zh") in html.unescape(body)
    assert 'href="./?lang=zh"' in body
    _, body, _ = _answer("//x", language="zh-CN,zh;q=0.9")
    assert translate("app.no_page.start", "zh") in body and 'href="../?lang=zh"' in body
    _, body, _ = _answer("/C:x", query="lang=xx", language="zh-CN")  # not a language: the
    assert 'lang="zh"' in body  # browser's


def test_the_refusal_echoes_nothing_of_the_address():
    _, body, _ = _answer("/<script>alert(1)</script>\x00")
    assert "script" not in body and "alert" not in body


def test_accepted_addresses_and_other_methods_are_streamlits_as_before():
    assert _answer("/axes") == (200, "the page", {})
    assert _answer("/_stcore/health")[:2] == (200, "the page")
    assert _answer("/axes\x00", method="POST")[:2] == (400, "Bad Request")
    assert _answer("/a\nb", method="POST")[:2] == (200, "the page")  # only a GET is answered
