"""Class mode's instructor view: the join code, link and QR code; the private instructor
link; the live chart of the room's answers with its counts.

The chart is a fragment that reruns on its own every ``REFRESH_S`` seconds, reading the
store through the ``fetch`` it is given (one ``ClassStore.room`` call: two indexed queries),
so what the projector shows is at most about a second old without anyone clicking.
"""

from __future__ import annotations

import html
import ipaddress
import re
from collections.abc import Callable
from urllib.parse import urlsplit

import streamlit as st

from classroom import rules
from classroom.rules import Room
from ui import presenting
from ui.figures.classroom import answers_chart, qr_png
from ui.i18n import t
from ui.lessons.catalog import OPTIONS, lesson
from ui.projected import for_screen
from ui.url.codec import query_string
from ui.url.pages import CLASSROOM, LESSONS_PAGE
from ui.views.lessons import app_root, page_address

REFRESH_S = 1.0
QR_WIDTH = 220  # px; presenting, as wide as its column: read from the back of the room


def addresses(page_url: str, code: str, key: str, lang: str) -> tuple[str, str]:
    """(join link, instructor link) of the class, from the Class page's own address; both in
    the projector's language (a phone set to another still opens the room's; it can switch)."""
    root = app_root(page_url, CLASSROOM.page)
    join = page_address(
        root, LESSONS_PAGE.page, query_string(LESSONS_PAGE, {"ls_class": code}, lang)
    )
    values = {"cl_code": code, "cl_key": key}
    return join, page_address(root, CLASSROOM.page, query_string(CLASSROOM, values, lang))


def title(code: str | None) -> None:
    """The page's title; with a class, its code, large enough to read from the back."""
    if code is None:
        st.title(t("classroom.title"), anchor=False)
    else:  # as wide as its text: the instructor's buttons take the rest of its row
        text = t("classroom.title_code", code=rules.shown_code(code))
        st.title(text, anchor=False, width="content")


def join_panel(join: str) -> None:
    """The join link's QR code and the link itself; a warning where the page was opened at
    this computer's own address (``127.0.0.1``, ``localhost``), which no phone reaches."""
    with st.container(key="cl_join"):
        st.image(qr_png(join), width="stretch" if presenting.presenting() else QR_WIDTH)
        st.caption(t("classroom.join_with"))
        st.html(f'<p class="ns-join-link">{breakable(join)}</p>')
    host = this_computer_only(join)
    if host is not None:
        st.warning(t("classroom.join_loopback", host=host), icon=":material/wifi_off:")


def this_computer_only(address: str) -> str | None:
    """The host of ``address`` if it names the computer the browser runs on, else None."""
    host = urlsplit(address).hostname
    if host is None:
        return None
    if host.rstrip(".") == "localhost" or host.rstrip(".").endswith(".localhost"):
        return host
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:  # a name: the room's DNS may resolve it
        return None
    ip = getattr(ip, "ipv4_mapped", None) or ip  # ::ffff:127.0.0.1
    return host if ip.is_loopback or ip.is_unspecified else None


def breakable(address: str) -> str:
    """``address`` as HTML that wraps after a "/", "?" or "&" (``<wbr>``, which a copy leaves
    out) rather than inside a word: in a projector's narrow column the join link broke inside
    "lessons" (a browser finds no break after "/" before a letter).  Escaped: the address
    holds the host name the browser sent."""
    parts = re.split(r"(?<=[/?&])(?!/)", address)
    return "<wbr>".join(html.escape(part) for part in parts)


def private_link(instructor: str) -> None:
    """The instructor link, kept off the projector."""
    if presenting.presenting():
        return
    with st.expander(t("classroom.private"), icon=":material/key:"):
        st.caption(t("classroom.private_help"))
        st.code(instructor, language=None, wrap_lines=True)


def _counts(room: Room) -> str:
    """How many joined and answered, in one line (the chart keeps the first screen); past
    round 2 (which the store never opens), rounds 1 and 2 still."""
    if len(room.answered) <= 1:
        return t("classroom.counts_one", joined=room.joined, answered=sum(room.answered))
    first, second = room.answered[:2]
    return t("classroom.counts_two", joined=room.joined, first=first, second=second)


def _status(room: Room) -> str:
    state = room.state
    if state.revealed:
        return t("classroom.status_revealed")
    if not state.voting_open:
        return t("classroom.status_closed", number=state.round)
    return t("classroom.status_open", number=state.round)


def live(fetch: Callable[[], tuple[Room | None, str | None]], lang: str) -> None:
    """The room's answers, redrawn from ``fetch`` every ``REFRESH_S`` seconds."""

    @st.fragment(run_every=REFRESH_S)
    def chart() -> None:
        room, error = fetch()
        if room is None:
            st.error(error, icon=":material/error:")
            return
        item = lesson(room.lesson)
        texts = item.texts()
        options = {o: t(f"lessons.{item.id}.options.{o}", **texts) for o in OPTIONS}
        st.markdown(f"**{t(f'lessons.{item.id}.question', **texts)}**")
        with st.container(key="cl_counts"):
            st.markdown(f"{_counts(room)} · {_status(room)}")
        projected = presenting.presenting()
        figure = for_screen(answers_chart(room, options, item.answer, lang, projected=projected))
        st.plotly_chart(figure, key="cl_chart", config={"displayModeBar": False})

    chart()


def class_link() -> None:
    """From the lessons' sheet: the page that starts a class."""
    st.page_link(
        "app_pages/classroom.py", label=t("classroom.start_from_sheet"), icon=":material/groups:"
    )


def join_link(code: str) -> None:
    """A typed code's way into the lessons, counted in its class."""
    st.page_link(
        "app_pages/lessons.py",
        label=t("classroom.join_go"),
        icon=":material/login:",
        query_params={"ls_class": code},
    )
