"""Where scripts/serve.py sends an address of two path segments or more (``/a/b``): to its
first, relatively and quoted, or nowhere (Streamlit's own answer); and how it answers an
address that Streamlit's path check refuses (a page in words, status 400).  Through a real
server and browser: tests/e2e/test_links_browser.py."""

from __future__ import annotations

import asyncio
import html
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote, unquote

import pytest
from streamlit import file_util
from streamlit.web.server.starlette.starlette_path_security_middleware import (
    PathSecurityMiddleware,
)

from scripts import serve
from scripts.serve import first_segment_target, refusals_in_words
from ui.i18n import translate

STATIC = file_util.get_static_dir()
A_SCRIPT = next((Path(STATIC) / "static" / "js").glob("*.js")).name


@pytest.mark.parametrize(
    ("path", "root", "query", "target"),
    [
        ("/a/b", "", "lang=zh", "../a?lang=zh"),  # from /a/b, "../a" is /a
        ("/a/", "", "lang=zh", "../a?lang=zh"),  # one segment and a slash
        ("/?x/", "", "", "../%3Fx"),  # Streamlit's own redirect went to /?x
        ("/%//", "", "", "../../%25"),  # ... and to /%
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
    ["/a", "/", "//evil.example/x", "/a/_stcore/health", "/a/_stcore/agent/mcp",
     f"/static/js/{A_SCRIPT}"],
)  # fmt: skip
def test_one_segment_a_file_and_streamlits_own_answers_are_left_alone(path):
    assert first_segment_target(path, "", "", STATIC) is None


class _InWords(PathSecurityMiddleware):
    __call__ = refusals_in_words(PathSecurityMiddleware.__call__)


async def _page(scope, receive, send):  # the app behind the check: what an accepted path gets
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"the page"})


def _get(app, path: str, raw: bytes | None = None, **scope) -> tuple[int, dict, bytes]:
    """(status, headers, body) that the ASGI ``app`` answers a GET of ``path`` (decoded, as
    uvicorn decodes ``raw``, the path as sent; by default ``path`` quoted) with; ``scope``:
    more of the request's scope (a method, a query, headers)."""
    sent = []

    async def send(message):
        sent.append(message)

    async def receive():  # the client stays: a file's answer listens for it to leave
        await asyncio.Event().wait()

    scope = {
        "type": "http", "method": "GET", "path": path, "root_path": "", "query_string": b"",
        "raw_path": quote(path).encode() if raw is None else raw, "headers": [],
        "scheme": "http", "server": ("127.0.0.1", 80), **scope,
    }  # fmt: skip
    with ThreadPoolExecutor(1) as thread:  # Playwright may hold this thread's event loop
        thread.submit(asyncio.run, app(scope, receive, send)).result()
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], dict(sent[0]["headers"]), body


def _answer(path: str, query="", method="GET", language="", raw: bytes | None = None) -> tuple:
    """(status, body, headers) that the wrapped check answers ``path`` with."""
    status, headers, body = _get(
        _InWords(_page), path, raw, method=method, query_string=query.encode(),
        headers=[(b"accept-language", language.encode())] if language else [],
    )  # fmt: skip
    return status, body.decode(), headers


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


@pytest.mark.parametrize(
    "raw", [b"/%FF", b"/%80", b"/%", b"/%zz", b"/axes%", b"/axes%2", b"/%C0%AE", b"/%ED%A0%80",
            b"/%E2%82", b"/%FF/x"],
)  # fmt: skip
def test_a_path_whose_percent_encoding_does_not_decode_is_refused_in_words(raw):
    """Streamlit served such an address its page (200), whose script stopped on it ("URI
    malformed") and left the tab blank."""
    status, body, _ = _answer(unquote(raw.decode("ascii")), raw=raw)
    assert status == 400 and translate("app.no_page.refused", "en") in html.unescape(body)


def test_well_formed_encodings_reach_the_app_and_an_absolute_target_links_its_root():
    for raw in (b"/%E2%80%AE", b"/%25", b"/%E4%B8%AD%E6%96%87", b"/no%20page"):
        assert _answer(unquote(raw.decode("ascii")), raw=raw)[:2] == (200, "the page")
    _, body, _ = _answer("/a/b/\x00", raw=b"http://x/a/b/%00")  # "GET http://x/a/b/%00"
    assert 'href="../../?lang=en"' in body


def _static(monkeypatch, path: str) -> tuple:
    """(status, Location or the body's start) that Streamlit's static files, as serve.py
    wraps them, answer a GET of ``path`` (decoded) with."""
    from streamlit.web.server.starlette import starlette_static_routes as routes

    monkeypatch.setattr(
        routes, "create_streamlit_static_handler", routes.create_streamlit_static_handler
    )
    serve._nested_addresses_to_their_page()  # undone by monkeypatch after the test
    handler = routes.create_streamlit_static_handler(directory=STATIC, base_url="")
    status, headers, body = _get(handler, path)
    return status, headers.get(b"location", body[:15]).decode()


def test_a_get_through_stcore_that_no_route_took_is_not_found_even_after_a_question_mark(
    monkeypatch,
):
    """Streamlit's own check cut the path at a decoded "?": ``/%3Fx/_stcore/health`` got the
    page, and the frontend took ``/%3Fx`` for the app's base and never connected."""
    assert _static(monkeypatch, "/?x/_stcore/health") == (404, "Not Found")
    assert _static(monkeypatch, "/a/_stcore/health") == (404, "Not Found")
    assert _static(monkeypatch, "/?x/") == (302, "../%3Fx")
    assert _static(monkeypatch, "/a/b") == (302, "../a")
    assert _static(monkeypatch, "/_stcore/health/")[0] == 301  # the app's own: Streamlit's
    assert _static(monkeypatch, "/axes")[1].startswith("<!")  # the page, as before
