"""Class mode's instructor view: the join code, link and QR code; the private instructor
link; the live chart of the room's answers with its counts.

The chart is a fragment that reruns on its own every ``REFRESH_S`` seconds, reading the
store through the ``fetch`` it is given (one ``ClassStore.room`` call: two indexed queries),
so what the projector shows is at most about a second old without anyone clicking.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from classroom import rules
from classroom.rules import Room
from ui import presenting
from ui.figures.classroom import answers_chart, qr_png
from ui.formatting import literal
from ui.i18n import t
from ui.lessons.catalog import OPTIONS, lesson
from ui.url import CLASSROOM, LESSONS, query_string
from ui.views.lessons import app_root, page_address

REFRESH_S = 1.0
QR_WIDTH = {False: 200, True: 300}  # px: presenting, it is read from the back of the room


def addresses(page_url: str, code: str, key: str) -> tuple[str, str]:
    """(join link, instructor link) of the class, from the Class page's own address."""
    root = app_root(page_url, CLASSROOM.page)
    join = page_address(root, LESSONS.page, query_string(LESSONS, {"ls_class": code}))
    values = {"cl_code": code, "cl_key": key}
    return join, page_address(root, CLASSROOM.page, query_string(CLASSROOM, values))


def join_panel(code: str, join: str) -> None:
    """The code as people read it aloud, the join link and its QR code."""
    presenting_now = presenting.presenting()
    with st.container(key="cl_join"):
        st.markdown(t("classroom.join_with"))
        st.markdown(f"## `{rules.shown_code(code)}`")
        st.image(qr_png(join), width=QR_WIDTH[presenting_now])
        st.markdown(literal(join, 200))


def private_link(instructor: str) -> None:
    """The instructor link, kept off the projector."""
    if presenting.presenting():
        return
    with st.expander(t("classroom.private"), icon=":material/key:"):
        st.caption(t("classroom.private_help"))
        st.code(instructor, language=None, wrap_lines=True)


def _counts(room: Room) -> None:
    columns = st.columns(1 + len(room.counts))
    columns[0].metric(t("classroom.joined"), room.joined)
    for index, answered in enumerate(room.answered):
        columns[index + 1].metric(t("classroom.answered", number=index + 1), answered)


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
        st.caption(_status(room))
        _counts(room)
        figure = presenting.for_screen(answers_chart(room, options, item.answer, lang))
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
