"""Class: an instructor starts a class, shows its join code and QR code, and watches the
room's predictions on each lesson live (close voting, second round, reveal, everyone to a
lesson, CSV).  Learners answer on the Lessons page, from the join link."""

import streamlit as st

from ui import presenting
from ui.errors import show_errors
from ui.i18n import current_language, t
from ui.views import classroom as view
from ui.widgets import classroom as widgets

klass = widgets.current_class()
room, refused = (None, None) if klass is None else widgets.room(klass, widgets.current_lesson())
with st.container(key="cl_top", horizontal=True, vertical_alignment="bottom", gap="medium"):
    view.title(None if room is None else klass.code)
    if room is not None:  # what the instructor presses next, on the first screen presenting
        with presenting.navigation("classroom_actions"):
            widgets.actions(klass, room)
widgets.notice(refused)
if refused is not None:
    st.error(refused, icon=":material/error:")
if room is None:
    st.caption(t("classroom.intro"))
    with presenting.controls("classroom_start", title="classroom.controls.start"):
        widgets.start()
    st.divider()
    code, malformed = widgets.typed_code()
    show_errors([malformed] if malformed else [])
    if code:
        view.join_link(code)
else:
    join, instructor = view.addresses(
        st.context.url or "", klass.code, klass.key, current_language()
    )
    widgets.keep(klass)
    left, right = st.container(key="cl_layout").columns([1, 2], gap="medium")
    with left:
        view.join_panel(join)
    with right:  # what the room looks at first: the question and its answers
        view.live(lambda: widgets.room(klass, room.lesson), current_language())
        with presenting.navigation("classroom_lesson"):
            widgets.lesson_choice()
            widgets.move(klass, room)  # to the lesson just picked
    with presenting.controls("classroom_settings", title="classroom.controls.settings"):
        widgets.settings(klass, room)
    view.private_link(instructor)
