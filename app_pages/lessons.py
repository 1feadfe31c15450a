"""Lessons: a path through the material; each lesson asks for a prediction, then opens the
page that shows the answer, already configured.  The instructor's sheet lists every link."""

import streamlit as st

from ui import presenting
from ui.i18n import current_language, t
from ui.views import classroom as class_view
from ui.views import lessons as view
from ui.widgets import class_learner
from ui.widgets import lessons as widgets

st.title(t("lessons.title"))
st.caption(t("lessons.intro"))
with st.container(key="noprint_lessons_view"):
    chosen_view = widgets.view_choice()
language, present = current_language(), presenting.mode()

if chosen_view == "sheet":
    class_view.class_link()
    view.sheet(language, present, st.context.url or "")
else:
    member = class_learner.membership()  # a class's join link: counted, maybe paced
    shown = class_learner.answer_shown(member)
    with presenting.controls("lessons"):
        lesson = widgets.lesson_choice()
    view.header(lesson, class_learner.scored(member, widgets.answers()))
    view.idea(lesson)
    view.question(lesson)
    class_learner.before_prediction(member, lesson)
    chosen = widgets.prediction(lesson, reveal=shown)
    class_learner.record(member, lesson, chosen)
    if chosen is not None and shown:
        view.verdict(lesson, chosen)
    if shown:
        view.link(lesson, language, present)
    view.try_next(lesson)
