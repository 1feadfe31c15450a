"""Lessons: a path through the material; each lesson asks for a prediction, then opens the
page that shows the answer, already configured.  The instructor's sheet lists every link."""

import streamlit as st

from ui import presenting
from ui.i18n import current_language, t
from ui.views import lessons as view
from ui.widgets import lessons as widgets

st.title(t("lessons.title"))
st.caption(t("lessons.intro"))
with st.container(key="noprint_lessons_view"):
    chosen_view = widgets.view_choice()
language, present = current_language(), presenting.mode()

if chosen_view == "sheet":
    view.sheet(language, present, st.context.url or "")
else:
    with presenting.controls("lessons"):
        lesson = widgets.lesson_choice()
    view.header(lesson, widgets.answers())
    view.idea(lesson)
    view.question(lesson)
    chosen = widgets.prediction(lesson)
    if chosen is not None:
        view.verdict(lesson, chosen)
    view.link(lesson, language, present)
    view.try_next(lesson)
