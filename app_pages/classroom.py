"""Class: an instructor starts a class, shows its join code and QR code, and watches the
room's predictions on each lesson live (close voting, second round, reveal, everyone to a
lesson, CSV).  Learners answer on the Lessons page, from the join link."""

import streamlit as st

from ui import presenting
from ui.i18n import current_language, t
from ui.views import classroom as view
from ui.widgets import classroom as widgets

st.title(t("classroom.title"))
widgets.notice()
klass = widgets.current_class()
room, refused = (None, None) if klass is None else widgets.room(klass, widgets.current_lesson())
if refused is not None:
    st.error(refused, icon=":material/error:")
if room is None:
    st.caption(t("classroom.intro"))
    with presenting.controls("classroom_start"):
        widgets.start()
    st.divider()
    code = widgets.typed_code()
    if code:
        view.join_link(code)
else:
    join, instructor = view.addresses(st.context.url or "", klass.code, klass.key)
    left, right = st.columns([1, 2], gap="large")
    with left:
        view.join_panel(klass.code, join)
    with right:
        widgets.lesson_choice()
        with presenting.controls("classroom"):
            widgets.actions(klass, room)
        view.live(lambda: widgets.room(klass, room.lesson), current_language())
    with presenting.controls("classroom_settings"):
        widgets.settings(klass, room)
    view.private_link(instructor)
