"""Lessons: a path through the material; each lesson sets up a question, asks for a committed
prediction, then explains the answer and opens the page that shows it, already configured.
The instructor's sheet lists every link."""

import streamlit as st

from ui import presenting
from ui.i18n import current_language, t
from ui.landing import to_top
from ui.lessons.catalog import LESSON_IDS
from ui.views import classroom as class_view
from ui.views import lessons as view
from ui.widgets import class_learner, class_vote
from ui.widgets import lessons as widgets

language, present = current_language(), presenting.mode()
heading = st.container()
member = class_learner.membership()  # a class's join link: counted, maybe paced
with st.container(key="noprint_lessons_view"):  # presenting: no click from every answer
    chosen_view = widgets.view_choice()
# presenting, the lesson's own title is the first thing on the screen; in a class, the
# class's banner and then the lesson (a phone put the question two screens down)
lesson_first = present != "off" or class_learner.linked()
if not lesson_first:
    with heading:
        st.title(t("lessons.title"))
        st.caption(t("lessons.intro"))
answers = widgets.answers()
if chosen_view == "sheet":  # in a class, an answer shows only where the lesson shows it
    if member is None:  # a learner in a class is not the one to start one
        class_view.class_link()
    hidden = class_vote.hidden_answers(member, answers)
    view.sheet(language, present, st.context.url or "", hidden)
else:
    above, body, below = st.container(), st.container(), st.container()
    with below if lesson_first else above:  # navigation: under the lesson there
        with presenting.navigation("lessons"):
            lesson = widgets.lesson_choice(answers)
        scored = class_vote.scored(member, answers, lesson.id)  # in a class, none it hides
        view.progress(lesson, answers, scored)
    with body:
        to_top(lesson.id)  # moved to another lesson: its title, not where Next was
        with view.setup(lesson, present):  # the prediction under the question
            class_vote.before_prediction(member, lesson)  # may reopen it for a second round
            chosen = widgets.committed(lesson)
            # an answer no Commit here made came with the link: maybe not theirs (nor their vote)
            from_link = chosen is not None and not widgets.committed_here(lesson.id)
            from_link = from_link and not class_vote.their_vote(member, lesson.id, chosen)
            # in a paced class the answer waits for the instructor's reveal
            revealed = chosen is not None and class_vote.answer_shown(member)
            widgets.prediction(lesson, revealed, from_link)
            counted = class_vote.record(member, lesson, chosen)
            open_vote = class_vote.voting_open(member)
            view.commit_point(lesson, chosen, revealed, counted, open_vote, from_link, not member)
        if revealed:
            view.explanation(lesson, language, present)
            if lesson.id == LESSON_IDS[-1]:  # the course's end: what is done, what is left
                linked = 0 if member else sum(not widgets.committed_here(a) for a in answers)
                view.wrap_up(answers, scored, linked, class_vote.waiting_words(member))
                widgets.to_unanswered(answers)
