"""The address bar as the page's state: ``seed`` (URL -> widget state, before the widgets
exist; ``from_link`` / ``drawn``: whether a value is still the link's), ``show_notices``,
``publish`` / ``republish`` (widget state -> URL, stable ids, defaults omitted), the
sidebar's ``share_box``, and ``root_links`` (page links to the root page that work when
copied or opened in a new tab).
"""

from __future__ import annotations

import html
from copy import copy
from dataclasses import replace
from urllib.parse import parse_qsl, urlencode

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ui.errors import shown
from ui.formatting import literal
from ui.i18n import language_from_locale, t
from ui.url.codec import (
    AT,
    AT_PARAM,
    LANDINGS,
    LANGUAGE,
    LANGUAGE_PARAM,
    MAX_URL_CHARS,
    MAX_URL_PAIRS,
    PRESENT,
    PRESENT_PARAM,
    PageParams,
    Param,
    Refusal,
    encode_pairs,
    link_refusal,
    parse,
    query_pairs,
    serialize,
)
from ui.url.pages import KEPT_ON_BACK, PAGES, PREFIXES, SECRET_KEYS

_NOTICES = "_url_notices"  # (page, refusals, the link read) of the page being shown
_FIRST_RUN = "_url_first_run"  # (page, whether its link reached the page empty)
_PUBLISHED = "_url_published"  # (page, text parameters left out) the last whole run wrote
SHARE_KEY = "share_open"  # the sidebar's share box: open or not
_LAST_PAGE = "_url_last_page"  # the page of the previous run: a new one is a link followed
LANDING = "_url_landing"  # the place this page's link asked for, until ui.landing scrolls there
NAMED_UNKNOWN = 8  # unknown parameters a notice names (the rest are counted)
# Kept in the address bar by Streamlit whatever the page writes there (``st.query_params``
# hides them, ``from_dict`` keeps them): they count towards the length of the link it writes.
_STREAMLIT_KEEPS = ("embed", "embed_options")


def _query_string() -> str:
    """The query string as the browser sent it (Streamlit has no public accessor for the
    raw text; ``st.query_params`` holds it parsed)."""
    ctx = get_script_run_ctx()
    return getattr(ctx, "query_string", "") or ""


def _history_navigation() -> bool:
    """Whether this run is the browser's Back or Forward: Streamlit marks the run that a
    history entry's address started (its frontend then replaces the address, never pushing)."""
    ctx = get_script_run_ctx()
    return bool(getattr(ctx, "is_history_navigation", False))


def back_to_written() -> bool:
    """Whether the browser's Back or Forward returned to an address this app wrote (every
    one holds ``lang``): its settings are read again (``seed``), its language and
    presentation mode too (app.py).  An entry the app did not write, such as the bare page
    Streamlit pushes when the page changes, before the page writes its settings, says
    nothing of them: the page keeps its state there."""
    return _history_navigation() and LANGUAGE_PARAM in st.query_params


def _linked(param: Param, *, even_refused: bool = False):
    """The link's value of the app-wide ``param`` if valid, else None: None in a link
    refused whole for its length, unless ``even_refused``."""
    refused = not even_refused and link_refusal(_query_string())
    raw = [] if refused else st.query_params.get_all(param.key)
    return parse(param, raw)[0] if raw else None


def initial_language() -> str:
    """The URL's ``lang`` if valid, else the browser's locale, else English.  A link
    refused whole for its length still gives its language: the refusal is said in it."""
    return _linked(LANGUAGE, even_refused=True) or language_from_locale(st.context.locale)


def initial_present() -> str:
    """The URL's presentation mode if valid (a projector link), else "off"."""
    return _linked(PRESENT) or PRESENT.default


def _landing(page: str, raw: list[str]) -> str | None:
    """The place ``raw`` (the link's ``at`` values) names on ``page``, or None."""
    value = parse(AT, raw)[0] if raw else None
    return value if value in LANDINGS.get(page, ()) else None


def _repeated(
    key: str, raw: list[str], given: tuple[str, ...] = (), single: bool = True
) -> Refusal | None:
    """A setting the link gives more than once: under its older names too (``given``, the
    first is read), or, for a setting of one value (``single``), with different values, of
    which the page reads the last (as ``st.query_params[key]`` does).  Named with the value
    read; the same value written twice loses nothing and is read silently, as a list's
    repeated item is."""
    if not raw:
        return None
    value = raw[-1] if single else ",".join(raw)
    if len(given) > 1:
        names = ", ".join(literal(name, 40) for name in given[1:])
        return Refusal("repeated_names", {"param": key, "names": names, "value": value})
    if not single or len(set(raw)) < 2:
        return None
    return Refusal("repeated", {"param": key, "count": f"{len(raw):,}", "value": value})


# The keys whose value the link gave and whose widget has not been drawn since: a value
# past what a view holds is said as the link's (its key) while its key is here, else as the
# box's own (its label: typed, or left past the end by another box's change).
LINKED = "url.linked"


def from_link(key: str) -> bool:
    return key in st.session_state.get(LINKED, ())


def drawn(key: str) -> None:
    """``key``'s widget has been drawn: its value is the box's now, not the link's."""
    st.session_state.get(LINKED, set()).discard(key)


def seed(page: PageParams | None) -> None:
    """Copy the URL's values for ``page`` into widget state; remember what was refused.

    A widget that already exists in this session holds the live value, so only parameters
    whose widget has no state yet are read (a fresh link, a page opened from a lesson);
    except on the browser's Back or Forward, where the address is the entry a settings
    change (or a page) left in the history: every parameter is read again, and one the
    address leaves out is its default, so one Back undoes one change (not a committed
    prediction or a class: ``KEPT_ON_BACK``).  The page would otherwise write its current
    state over the entry, and Back would seem to do nothing.
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
    if st.session_state.get(_LAST_PAGE) != name:  # arrived: where does the link land?
        st.session_state[_LAST_PAGE] = name
        st.session_state[LANDING] = _landing(name, url.get_all(AT_PARAM))
    present = list(url.keys())
    refusals: list[Refusal] = []
    # ``at`` names a place on this page (another page's place is refused by name, not dropped)
    here = replace(AT, choices=("top", *LANDINGS.get(name, ())))
    for app_wide in (LANGUAGE, PRESENT, here):
        raw = url.get_all(app_wide.key)
        refusal = parse(app_wide, raw)[1] if raw else None
        for found in (_repeated(app_wide.key, raw), refusal):
            if found is not None:
                refusals.append(found)
    known = {LANGUAGE_PARAM, PRESENT_PARAM, AT_PARAM}
    again = back_to_written()
    # a text the last address left out for its length: the entries lack it too, and say
    # nothing of it
    kept = KEPT_ON_BACK.union(st.session_state.get(_PUBLISHED, (None, ()))[1])
    if page is not None:
        for param in page.params:
            known.update((param.key, *param.old_keys))
            given = tuple(k for k in (param.key, *param.old_keys) if k in present)
            back = again and param.key not in kept
            if back and not given and param.key in st.session_state:
                st.session_state[param.key] = copy(param.default)  # the entry left it out
            if not given or (param.key in st.session_state and not back):
                continue
            key, raw = given[0], url.get_all(given[0])
            # a list's items may come as repeated keys
            repeated = _repeated(key, raw, given, single=param.kind != "choices")
            if repeated is not None:
                refusals.append(repeated)
            value, refusal = parse(param, raw)
            if refusal is not None:  # named as the link names it (an older link: its old key)
                refusals.append(Refusal(refusal.key, {**refusal.params, "param": key}))
            if value is not None:  # a list's known items, even beside a refusal
                st.session_state[param.key] = value
                if not again:  # a value the app wrote, returned to, is no link's
                    st.session_state.setdefault(LINKED, set()).add(param.key)
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
    link = tuple((key, tuple(url.get_all(key))) for key in present)
    if previous is not None and previous[:1] == (name,) and previous[2:] == (link,):
        # the same link read again: a value it gave is in the widget's state now and was
        # not read twice, so its refusal (a repeated key, a list's unknown item) stays
        refusals = [*previous[1], *(r for r in refusals if r not in previous[1])]
    if refusals or previous is None or previous[0] != name:
        st.session_state[_NOTICES] = (name, tuple(refusals), link)


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


# A page link to the default page, which Streamlit serves at the root, has the address
# "?query": a click is routed by Streamlit, but "open in a new tab" or "copy link address"
# resolved it against the page showing it (/lessons?vl_text=…: the lessons, the settings
# dropped).  The browser writes such addresses "./?query" (the root, under any base path)
# as they appear; once per tab.
_ROOT_LINKS = """<span class="ns-landmark"></span>
<script>
(() => {
  if (window.nsRootLinks) return;
  window.nsRootLinks = true;
  const fix = () => document.querySelectorAll('a[data-testid="stPageLink-NavLink"]')
    .forEach(a => {
      const href = a.getAttribute("href");
      if (href !== null && href.startsWith("?")) a.setAttribute("href", "./" + href);
    });
  fix();
  new MutationObserver(fix).observe(document.body, {subtree: true, childList: true,
    attributes: true, attributeFilter: ["href"]});
})();
</script>"""


def root_links() -> None:
    """Give the page links to the default page an address that opens it wherever it is used."""
    st.html(_ROOT_LINKS, unsafe_allow_javascript=True)


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
    name, refusals = st.session_state.get(_NOTICES, ("", ()))[:2]
    for refusal in refusals:
        message = t(f"share.{refusal.key}", **shown(refusal.params))
        st.warning(message, icon=":material/link_off:")
    if st.session_state.get(_FIRST_RUN) == (name, True):
        _dropped_link_notice()


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
    wanted = query_pairs(page, st.session_state, lang, present)
    for key in SECRET_KEYS:  # a page that may be projected never shows a secret in its address
        wanted.pop(key, None)
    if page is None:
        return wanted, ()
    left_out = []
    texts = sorted(
        (k for k in wanted if page.by_key.get(k) is not None and page[k].kind == "text"),
        key=lambda k: -len(wanted[k][0]),
    )
    extra = _kept_by_streamlit()
    for key in texts:  # a link past the limit would be refused: leave the longest text out
        if len(encode_pairs(wanted)) + extra <= MAX_URL_CHARS:
            break
        del wanted[key]
        left_out.append(key)
    return wanted, tuple(left_out)


def describes(page: PageParams | None, current: dict, wanted: dict) -> bool:
    """Whether the address's ``current`` query already states the state ``wanted`` states:
    the same pairs, or the same values with defaults written out (as a lesson's link writes
    them), each as this app writes it (an older spelling is rewritten).

    Each rewrite of the address is a new entry in the browser's history (Streamlit pushes
    one when a run changes the query), so an address that already says the right thing is
    left alone: Back after following a link returns in one press."""
    for key in current.keys() | wanted.keys():
        if current.get(key) == wanted.get(key):
            continue
        param = page.by_key.get(key) if page is not None else None
        if param is None:
            return False
        have = parse(param, current[key]) if key in current else (param.default, None)
        want = parse(param, wanted[key]) if key in wanted else (param.default, None)
        if have[1] is not None or want[1] is not None or have[0] != want[0]:
            return False
        if key in current and current[key] != serialize(param, have[0]):
            return False
    return True


def _write(page: PageParams | None, wanted: dict[str, list[str]]) -> bool:
    """Put ``wanted`` in the address bar unless it already says it (``describes``); True if
    it changed."""
    url = st.query_params
    current = {key: url.get_all(key) for key in url.keys()}
    if page is not None and _landing(page.page, current.get(AT_PARAM, [])) is not None:
        wanted[AT_PARAM] = current[AT_PARAM][-1:]  # where it landed, kept while on its page
    if describes(page, current, wanted):
        return False
    url.from_dict(wanted)
    return True


def publish(page: PageParams | None, lang: str, present: str = "off") -> tuple[str, ...]:
    """Write the page's state to the URL, unless it already says it (``describes``); return
    the keys left out because of length."""
    wanted, left_out = _wanted(page, lang, present)
    _write(page, wanted)
    st.session_state[_PUBLISHED] = (page.page if page is not None else None, left_out)
    return left_out


def republish(lang: str, present: str = "off") -> bool:
    """After a page section reran alone (``ui/sections.py``): write the state of the page
    the last whole run published to the URL.  True when the sidebar's share box, drawn by
    that run, no longer tells the truth (it is open, or its notes of parameters left out for
    length changed) and the whole page must run again to redraw it."""
    name, shown = st.session_state.get(_PUBLISHED, (None, ()))
    page = PAGES.get(name)
    wanted, left_out = _wanted(page, lang, present)
    changed = _write(page, wanted)
    return changed and (bool(st.session_state.get(SHARE_KEY)) or left_out != shown)


def share_link(page: PageParams | None, lang: str, present: str = "off") -> str:
    """The address an instructor copies: this page with its settings (and presentation mode,
    so a link prepared for the projector opens presenting)."""
    wanted, _ = _wanted(page, lang, present)  # never a secret
    query = encode_pairs(wanted)
    base = st.context.url or ""
    return f"{base}?{query}" if query else base


def share_box(
    where, page: PageParams | None, lang: str, left_out: tuple[str, ...], present: str = "off"
) -> None:
    """An expander in ``where`` (the sidebar's place for it) with the current page's link,
    ready to copy."""
    # Filled only once opened (a rerun), unless it has a note to give: its code block would
    # make a first view fetch and run the browser's syntax highlighter (1.5 MB of
    # JavaScript) for a closed box.
    box = where.expander(t("app.share"), icon=":material/link:", key=SHARE_KEY, on_change="rerun")
    if not box.open and not left_out:
        return
    with box:
        st.caption(t("app.share_help"))
        st.code(share_link(page, lang, present), language=None, wrap_lines=True)
        for key in left_out:
            st.caption(t("share.left_out", param=key, limit=f"{MAX_URL_CHARS:,}"))
