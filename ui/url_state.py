"""The address bar as the page's state: ``ui/share.py``'s contract applied to a session.

``app.py`` calls, around every page run: ``seed`` (URL -> widget state, before the widgets
exist), ``show_notices`` (what the URL asked for that was refused), the page, then
``publish`` (widget state -> URL, stable ids, defaults omitted) and ``share_box``.
"""

from __future__ import annotations

import html
from urllib.parse import parse_qsl, urlencode

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ui.errors import shown
from ui.formatting import literal
from ui.i18n import LANGUAGES, language_from_locale, t
from ui.share import PREFIXES
from ui.url_contract import (
    LANGUAGE_PARAM,
    MAX_URL_CHARS,
    MAX_URL_PAIRS,
    PRESENT,
    PRESENT_PARAM,
    PageParams,
    Refusal,
    link_refusal,
    parse,
    serialize,
)

_NOTICES = "_url_notices"  # (page, refusals) of the page being shown
_FIRST_RUN = "_url_first_run"  # (page, whether its link reached the page empty)
NAMED_UNKNOWN = 8  # unknown parameters a notice names (the rest are counted)
# Kept in the address bar by Streamlit whatever the page writes there (``st.query_params``
# hides them, ``from_dict`` keeps them): they count towards the length of the link it writes.
_STREAMLIT_KEEPS = ("embed", "embed_options")


def _query_string() -> str:
    """The query string as the browser sent it (Streamlit has no public accessor for the
    raw text; ``st.query_params`` holds it parsed)."""
    ctx = get_script_run_ctx()
    return getattr(ctx, "query_string", "") or ""


def _link_refused() -> bool:
    return link_refusal(_query_string()) is not None


def initial_language() -> str:
    """The URL's ``lang`` if valid, else the browser's locale, else English."""
    requested = None if _link_refused() else st.query_params.get(LANGUAGE_PARAM)
    if requested in LANGUAGES:
        return requested
    return language_from_locale(st.context.locale)


def initial_present() -> str:
    """The URL's presentation mode if valid (a projector link), else "off"."""
    raw = [] if _link_refused() else st.query_params.get_all(PRESENT_PARAM)
    value, refusal = parse(PRESENT, raw) if raw else (PRESENT.default, None)
    return PRESENT.default if refusal is not None else value


def seed(page: PageParams | None) -> None:
    """Copy the URL's values for ``page`` into widget state; remember what was refused.

    A widget that already exists in this session holds the live value, so only parameters
    whose widget has no state yet are read (a fresh link, a page opened from a lesson).
    A link too long is refused whole, before any value is read.
    """
    name = page.page if page is not None else ""
    if _FIRST_RUN not in st.session_state:  # the session's first page, and whether its link
        #   reached the page empty (as Streamlit passes on a link of too many pairs)
        st.session_state[_FIRST_RUN] = (name, not st.query_params)
    whole = link_refusal(_query_string())
    if whole is not None:
        st.session_state[_NOTICES] = (name, (whole,))
        return
    url = st.query_params
    present = list(url.keys())
    refusals: list[Refusal] = []
    requested_lang = url.get(LANGUAGE_PARAM)
    if requested_lang is not None and requested_lang not in LANGUAGES:
        accepted = ", ".join(LANGUAGES)
        refusals.append(
            Refusal(
                "not_accepted",
                {"param": LANGUAGE_PARAM, "value": requested_lang[:40], "accepted": accepted},
            )
        )
    requested_present = url.get_all(PRESENT_PARAM)
    if requested_present:
        refusal = parse(PRESENT, requested_present)[1]
        if refusal is not None:
            refusals.append(refusal)
    known = {LANGUAGE_PARAM, PRESENT_PARAM}
    if page is not None:
        for param in page.params:
            known.update((param.key, *param.old_keys))
            key = next((k for k in (param.key, *param.old_keys) if k in present), None)
            if key is None or param.key in st.session_state:
                continue
            value, refusal = parse(param, url.get_all(key))
            if refusal is not None:
                refusals.append(refusal)
            if value is not None:  # a list's known items, even beside a refusal
                st.session_state[param.key] = value
    own = page.prefix if page is not None else None
    unknown = [
        key
        for key in present
        if key not in known and (key.split("_")[0] not in PREFIXES or key.split("_")[0] == own)
    ]  # skipped: another page's parameters
    if len(unknown) == 1:
        refusals.append(Refusal("unknown_param", {"param": unknown[0][:40]}))
    elif unknown:
        names = ", ".join(literal(key, 40) for key in unknown[:NAMED_UNKNOWN])
        more = len(unknown) - NAMED_UNKNOWN
        key = "unknown_params_more" if more > 0 else "unknown_params"
        refusals.append(Refusal(key, {"count": len(unknown), "names": names, "more": more}))
    previous = st.session_state.get(_NOTICES)
    if refusals or previous is None or previous[0] != name:
        st.session_state[_NOTICES] = (name, tuple(refusals))


# Streamlit's server drops a query of more than MAX_URL_PAIRS pairs before the page runs, and
# the address bar is rewritten after it: only the document's own navigation entry still holds
# the link that was opened.  The notice is ours, shown by the browser when that link held
# too many pairs (counted as Streamlit counts them).
_DROPPED_LINK = """<div id="ns-dropped-link" class="ns-link-notice" hidden>{message}</div>
<script>
(() => {{
  const entry = performance.getEntriesByType("navigation")[0];
  const query = new URL(entry ? entry.name : window.location.href).search.slice(1);
  const pairs = query ? query.split("&").length : 0;
  const notice = document.getElementById("ns-dropped-link");
  if (notice && pairs > {limit}) {{
    notice.querySelector("[data-pairs]").textContent = pairs.toLocaleString("en");
    notice.hidden = false;
  }}
}})();
</script>"""


def _dropped_link_notice() -> None:
    """The browser's notice for a link Streamlit dropped for its number of pairs."""
    slot = "\x00"  # where the browser writes the link's number of pairs
    text = t("share.too_many_pairs", pairs=slot, limit=f"{MAX_URL_PAIRS:,}")
    message = html.escape(text).replace(slot, "<span data-pairs></span>")
    st.html(
        _DROPPED_LINK.format(message=message, limit=MAX_URL_PAIRS), unsafe_allow_javascript=True
    )


def show_notices() -> None:
    """Warn about every URL value that was refused, naming it and what is accepted; on the
    first page of a session whose link reached it empty, let the browser say whether
    Streamlit dropped it for its number of pairs."""
    name, refusals = st.session_state.get(_NOTICES, ("", ()))
    for refusal in refusals:
        message = t(f"share.{refusal.key}", **shown(refusal.params))
        st.warning(message, icon=":material/link_off:")
    if st.session_state.get(_FIRST_RUN) == (name, True):
        _dropped_link_notice()


def _encoded(wanted: dict[str, list[str]]) -> str:
    return urlencode([(key, value) for key, values in wanted.items() for value in values])


def _kept_by_streamlit() -> int:
    """The characters of the link that Streamlit keeps whatever the page writes (``embed``,
    ``embed_options``), with their "&"."""
    query = _query_string()
    if "embed" not in query.lower():
        return 0
    kept = [(k, v) for k, v in parse_qsl(query) if k.lower() in _STREAMLIT_KEEPS]
    return len(urlencode(kept)) + 1 if kept else 0


def _wanted(
    page: PageParams | None, lang: str, present: str = "off"
) -> tuple[dict[str, list[str]], tuple[str, ...]]:
    """The query this page's state makes, and the text parameters left out for length."""
    wanted: dict[str, list[str]] = {LANGUAGE_PARAM: [lang]}
    if present != PRESENT.default:
        wanted[PRESENT_PARAM] = [present]
    if page is None:
        return wanted, ()
    for param in page.params:
        if param.key in st.session_state:
            value = st.session_state[param.key]
            if value is not None and value != param.default:
                wanted[param.key] = serialize(param, value)
    left_out = []
    texts = sorted(
        (k for k in wanted if page.by_key.get(k) is not None and page[k].kind == "text"),
        key=lambda k: -len(wanted[k][0]),
    )
    extra = _kept_by_streamlit()
    for key in texts:  # a link past the limit would be refused: leave the longest text out
        if len(_encoded(wanted)) + extra <= MAX_URL_CHARS:
            break
        del wanted[key]
        left_out.append(key)
    return wanted, tuple(left_out)


def publish(page: PageParams | None, lang: str, present: str = "off") -> tuple[str, ...]:
    """Write the page's state to the URL; return the keys left out because of length."""
    wanted, left_out = _wanted(page, lang, present)
    url = st.query_params
    current = {key: url.get_all(key) for key in url.keys()}
    if current != wanted:
        url.from_dict(wanted)
    return left_out


def share_link(page: PageParams | None, lang: str, present: str = "off") -> str:
    """The address an instructor copies: this page with its settings (and presentation mode,
    so a link prepared for the projector opens presenting)."""
    wanted, _ = _wanted(page, lang, present)
    query = _encoded(wanted)
    base = st.context.url or ""
    return f"{base}?{query}" if query else base


def share_box(
    page: PageParams | None, lang: str, left_out: tuple[str, ...], present: str = "off"
) -> None:
    """A sidebar expander with the current page's link, ready to copy."""
    # Filled only once opened (a rerun), unless it has a note to give: its code block would
    # make a first view fetch and run the browser's syntax highlighter (1.5 MB of
    # JavaScript) for a closed box.
    box = st.sidebar.expander(
        t("app.share"), icon=":material/link:", key="share_open", on_change="rerun"
    )
    if not box.open and not left_out:
        return
    with box:
        st.caption(t("app.share_help"))
        st.code(share_link(page, lang, present), language=None, wrap_lines=True)
        for key in left_out:
            st.caption(t("share.left_out", param=key, limit=f"{MAX_URL_CHARS:,}"))
