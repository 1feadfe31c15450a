"""Where a link lands: a page marks its places (``landmark``), and a link whose ``at``
parameter names one (``ui/url/`` LANDINGS) opens scrolled there, once, on arrival; a move
within a page to a new piece of it (the next lesson) opens at its top (``to_top``); a piece a
click made appear is scrolled into view (``to_show``, ``shown``).

A lesson promises a part of a page ("the memory section", "experiment 4"); opening the page
at its top left the learner to find it ~3,000 px down.  Streamlit scrolls to a heading's
anchor only for an address's #fragment, which a page link cannot carry, so the browser is
told here, on the run that follows the link.
"""

from __future__ import annotations

import streamlit as st

from ui.url.address_bar import LANDING

# The mark itself takes no room (base.css hides its element); the browser scrolls to what
# follows it, now and again while charts above the place are still taking their height.
_SCROLL = """<span id="ns-at-{place}" class="ns-landmark"></span>
<script>
(() => {{
  const go = () => {{
    const mark = document.getElementById("ns-at-{place}");
    const box = mark && mark.closest('[data-testid="stElementContainer"]');
    const next = box && box.nextElementSibling;
    if (!next) return;
    next.style.scrollMarginTop = "4rem";  /* clear of the app's header */
    next.scrollIntoView({{block: "start"}});
  }};
  for (const ms of [0, 400, 1200]) setTimeout(go, ms);
}})();
</script>"""


def landmark(place: str) -> None:
    """Mark ``place`` (one of the page's ``LANDINGS``) here; scroll to it when the link that
    opened the page asked for it."""
    if st.session_state.get(LANDING) != place:
        return
    st.session_state[LANDING] = None  # once: a rerun leaves the reader where they are
    st.html(_SCROLL.format(place=place), unsafe_allow_javascript=True)


# The page's scroll box back to its top; ``{mark}`` names the piece moved to, so that a
# second move in a row is a new element, whose script the browser runs again.
_TOP = """<span class="ns-landmark" data-moved-to="{mark}"></span>
<script>
(() => {{
  const go = () => document.querySelector('[data-testid="stMain"]')?.scrollTo(0, 0);
  for (const ms of [0, 400]) setTimeout(go, ms);
}})();
</script>"""
MOVED = "landing.moved"
SHOW = "landing.show"  # a place a control made appear, to scroll into view once drawn


def moved() -> None:
    """Call where a control moves the page to a new piece of it (a button's callback): the
    next run opens that piece at its top, not where the control was scrolled to (a
    verdict waiting to be shown, ``to_show``, is no longer asked for: the move wins)."""
    st.session_state[MOVED] = True
    st.session_state.pop(SHOW, None)


def to_top(mark: str) -> None:
    """Scroll the page to its top where ``moved`` was called since the last run: on a
    projector the lesson's navigation sits under the lesson, and after "Next" the room saw
    the new lesson's options with its title and question above the screen's edge."""
    if st.session_state.pop(MOVED, False):
        st.html(_TOP.format(mark=mark), unsafe_allow_javascript=True)


# What was drawn just before the mark, scrolled into view by as little as shows it whole.
_NEAREST = """<span class="ns-landmark" data-shown="{place}"></span>
<script>
(() => {{
  const go = () => {{
    const mark = document.querySelector('[data-shown="{place}"]');
    const box = mark && mark.closest('[data-testid="stElementContainer"]');
    box?.previousElementSibling?.scrollIntoView({{block: "nearest"}});
  }};
  for (const ms of [0, 400]) setTimeout(go, ms);
}})();
</script>"""


def to_show(place: str) -> None:
    """Call where a control makes ``place`` appear (a button's callback): the run that draws
    it next scrolls it into view (``shown``), unless a move (``moved``) or ``forget`` came
    first."""
    st.session_state[SHOW] = place


def forget(place: str) -> None:
    """``place`` will not appear after all (the answer taken back): no scroll to it later."""
    if st.session_state.get(SHOW) == place:
        del st.session_state[SHOW]


def shown(place: str) -> None:
    """Right after drawing ``place``: scroll it into view if a control asked for it
    (``to_show``).  A lesson's verdict: on a projector it came under the screen's edge, and
    the room saw no change after Commit but two small marks on the options."""
    if st.session_state.get(SHOW) == place:
        del st.session_state[SHOW]
        st.html(_NEAREST.format(place=place), unsafe_allow_javascript=True)
