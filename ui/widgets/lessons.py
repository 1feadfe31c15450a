"""Lessons page inputs: which view, which lesson, and the learner's committed predictions.

Progress lives in two URL parameters (``ui/url/pages.py`` LESSONS_PAGE) kept as plain
session values, not widget state, so they outlive a visit to the page a lesson opens
(Streamlit forgets the state of widgets that a run does not draw): ``ls_lesson`` (where the
learner is) and ``ls_answers`` (each committed prediction, "<lesson>.<option>").  The lesson
picker and the answer radios are widgets of their own that only write into those values.
"""

from __future__ import annotations

from collections.abc import Collection

import streamlit as st

from ui import landing, presenting
from ui.echoes import echoed
from ui.i18n import current_language, join, t
from ui.lessons.catalog import (
    LESSON_IDS,
    OPTIONS,
    Lesson,
    answers_by_lesson,
    lesson,
    unanswered,
)
from ui.url.pages import LESSONS_PAGE as P
from ui.widgets import bound

PICKER = "ls_choose"  # the lesson selectbox; ls_lesson is the value that lasts


def view_choice() -> str:
    return bound.section(P["ls_view"], t("lessons.view"), "lessons.view_", width="content")


def current_lesson() -> Lesson:
    return lesson(st.session_state.get("ls_lesson", P["ls_lesson"].default))


def _go(lesson_id: str) -> None:
    st.session_state["ls_lesson"] = lesson_id
    st.session_state[PICKER] = lesson_id
    landing.moved()  # the new lesson opens at its title, wherever the button was


def _numbered(lesson_id: str) -> str:
    """A lesson as the course lists it: "3. The [1, 2, 3, 4] worked example"."""
    return f"{LESSON_IDS.index(lesson_id) + 1}. {t(f'lessons.{lesson_id}.title')}"


def lesson_picker(
    text: str,
    picker: str,
    lasting: str,
    current: str,
    answered: Collection[str] = (),
    opens_at_top: bool = True,
) -> None:
    """A select box of the lessons by title that writes into the session value ``lasting``;
    it shows ``current`` (a fresh link, a returning learner, a move: it follows ``lasting``).
    The lessons in ``answered`` say so in words (the page's font lacks ✓), so a learner sees
    what is left; the instructor's picker gives none.  The current lesson is not marked: the
    box shows its name in a one-line input, where the longest title and the mark did not fit
    a phone, and the lesson below it shows its own answer.  ``opens_at_top``: the page
    shows the lesson picked, opened at its title (``landing.moved``)."""
    st.session_state[picker] = current
    titles = {
        i: t("lessons.picker_answered", title=_numbered(i))
        if i in answered and i != current
        else _numbered(i)
        for i in LESSON_IDS
    }

    def picked() -> None:
        # the browser's lesson of before a move is shown again, not taken; so is a label
        # this run no longer lists (a mark added since the browser drew the menu)
        if echoed() or st.session_state[picker] not in LESSON_IDS:
            st.session_state[picker] = st.session_state.get(lasting, current)
        else:
            st.session_state[lasting] = st.session_state[picker]
            if opens_at_top:
                landing.moved()

    st.selectbox(
        text,
        LESSON_IDS,
        key=picker,
        format_func=titles.get,
        on_change=picked,
        placeholder=t("app.choose_one"),
    )


def lesson_choice(answers: dict[str, str]) -> Lesson:
    """A table-of-contents selectbox with Previous / Next, the lessons of ``answers`` marked
    answered; returns the current lesson."""
    current = current_lesson().id
    index = LESSON_IDS.index(current)
    # a row of its own: a long title is not cut in a narrow box
    lesson_picker(t("lessons.choose"), PICKER, "ls_lesson", current, answers)
    back, forward = st.columns(2)
    back.button(
        t("lessons.previous"),
        key="ls_previous",
        icon=":material/arrow_back:",
        disabled=index == 0,
        on_click=_go,
        args=(LESSON_IDS[max(index - 1, 0)],),
        width="stretch",
    )
    forward.button(
        t("lessons.next_lesson"),
        key="ls_next",
        icon=":material/arrow_forward:",
        disabled=index == len(LESSON_IDS) - 1,
        on_click=_go,
        args=(LESSON_IDS[min(index + 1, len(LESSON_IDS) - 1)],),
        width="stretch",
    )
    return lesson(current)


def to_unanswered(answers: dict[str, str]) -> None:
    """Under the course's wrap-up, a button to each lesson not in ``answers``: it moves
    there as Previous and Next do (navigation: shown while presenting)."""
    left = unanswered(answers)
    if not left:  # no empty row under the closing line
        return
    with presenting.navigation("lessons_unanswered"), st.container(horizontal=True):
        for lesson_id in left:
            st.button(
                _numbered(lesson_id),
                key=f"ls_goto_{lesson_id}",
                icon=":material/arrow_back:",
                on_click=_go,
                args=(lesson_id,),
            )


def answers() -> dict[str, str]:
    """The learner's committed predictions: ``{lesson id: option}``.  A link that gives one
    lesson several answers is said, and read as its last (as a setting given twice is)."""
    committed = list(st.session_state.get("ls_answers", P["ls_answers"].default))
    chosen = answers_by_lesson(committed)
    for lesson_id, option in chosen.items():
        given = [a.rpartition(".")[2] for a in committed if a.rpartition(".")[0] == lesson_id]
        if len(given) > 1:
            st.warning(
                t(
                    "share.answers_repeated",
                    number=LESSON_IDS.index(lesson_id) + 1,
                    count=len(given),
                    answers=join((f"({g})" for g in given), current_language()),
                    value=f"({option})",
                ),
                icon=":material/link_off:",
            )
    if len(committed) > len(chosen):  # the link now holds what the page read
        st.session_state["ls_answers"] = [f"{lesson_id}.{o}" for lesson_id, o in chosen.items()]
    return chosen


def _others(lesson_id: str) -> list[str]:
    """The committed answers of every lesson but ``lesson_id``."""
    committed = st.session_state.get("ls_answers", P["ls_answers"].default)
    return [a for a in committed if a.rpartition(".")[0] != lesson_id]


COMMITTED_HERE = "_ls_committed_here"  # lessons committed by a click in this session (a
#   link's ``ls_answers`` may be someone else's: a class counts only these)
JUST_COMMITTED = "_ls_just_committed"  # (lesson, option) of the click this run follows (a
#   class dates the answer to its current round: ``class_learner``)


def committed_here(lesson_id: str) -> bool:
    """Whether this session's Commit button made the lesson's answer (not a link)."""
    return lesson_id in st.session_state.get(COMMITTED_HERE, set())


def _commit(lesson_id: str) -> None:
    option = st.session_state.get(f"ls_pick_{lesson_id}")
    if option in OPTIONS:  # a new list: publish compares it with the URL
        st.session_state["ls_answers"] = [*_others(lesson_id), f"{lesson_id}.{option}"]
        st.session_state.setdefault(COMMITTED_HERE, set()).add(lesson_id)
        st.session_state[JUST_COMMITTED] = (lesson_id, option)
        landing.to_show(f"verdict_{lesson_id}")  # now, or at a paced class's reveal


def _forget(lesson_id: str) -> None:
    st.session_state["ls_answers"] = _others(lesson_id)
    landing.forget(f"verdict_{lesson_id}")  # a paced class's reveal would scroll to nothing
    st.session_state[f"ls_pick_{lesson_id}"] = None  # not popped: the browser would keep its tick


def _picked(lesson_id: str) -> None:
    """A run sets a pick only to None (Try again, a class's second round), so a pick that
    changed with a fragment's rerun is the browser's tick of before that run: cleared again."""
    if echoed():
        st.session_state[f"ls_pick_{lesson_id}"] = None


def committed(item: Lesson) -> str | None:
    """The learner's committed option for ``item``, or None before the commit."""
    return answers().get(item.id)


def prediction(item: Lesson, revealed: bool, from_link: bool = False) -> None:
    """The options and Commit (the commit point); once committed, the choice locked and,
    when ``revealed``, the right option marked, and a wrong one as the learner's or, when it
    came with the link (``from_link``), as the link's."""
    chosen = committed(item)
    texts = item.texts()
    labels = {o: f"({o}) {t(f'lessons.{item.id}.options.{o}', **texts)}" for o in OPTIONS}
    if chosen is not None and revealed:  # once revealed, the list itself shows the answer
        # a badge in Streamlit's own green on the right option (red on the learner's wrong
        # one): an icon (the characters ✓ and ✗ are missing from the page's font, and its
        # fallback draws ✗ as an italic X) and words, which a screen reader reads instead of
        # the icon's name
        labels[item.answer] += f" :green-badge[:material/check: {t('lessons.mark_right')}]"
        if chosen != item.answer:
            whose = t("lessons.mark_link" if from_link else "lessons.mark_wrong")
            labels[chosen] += f" :red-badge[:material/close: {whose}]"
    key = f"ls_pick_{item.id}"
    shown = chosen if chosen is not None else st.session_state.get(key)
    if shown in OPTIONS:  # told to the browser every run, as its option id
        # the browser keeps a tick as the label it showed: after a language switch that
        # label is not among the new ones, and it would clear the tick while this session
        # kept it (Commit enabled, then committing the browser's empty pick)
        st.session_state[key] = shown
    picked = st.radio(
        t("lessons.answer_label"),
        OPTIONS,
        index=None if chosen is None else OPTIONS.index(chosen),
        key=key,
        format_func=labels.get,
        disabled=chosen is not None,
        on_change=_picked,
        args=(item.id,),
    )
    if chosen is None:
        st.button(
            t("lessons.commit"),
            key=f"ls_commit_{item.id}",
            type="primary",
            icon=":material/lock:",
            disabled=picked is None,
            help=t("lessons.commit_help"),
            on_click=_commit,
            args=(item.id,),
        )
    else:
        st.button(
            t("lessons.try_again"),
            key=f"ls_again_{item.id}",
            icon=":material/replay:",
            on_click=_forget,
            args=(item.id,),
        )
