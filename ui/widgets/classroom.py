"""The instructor's inputs on the Class page: start a class, which lesson the room is on,
and the actions on its question (close voting, second round, reveal, everyone to this
lesson, paced, CSV, end).

The class is three URL parameters (``ui/url/`` CLASSROOM) kept as plain session values:
``cl_code``, ``cl_key`` (the private key, read from the instructor link) and ``cl_lesson``.
The Class page is what a room looks at, projected with or without presentation mode, so the
key never stays in the address bar (``ui/url/``); the browser keeps it in a cookie for the
class's lifetime instead (``keep``), so a reload, or the other process of a balanced server
after a restart, is still the instructor's page.  Every action goes to the store, which
checks the key; a refusal (a forged key, an expired class) is shown and nothing changes.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import streamlit as st

from classroom import rules
from classroom.rules import Room
from classroom.store import ClassStore
from engine.errors import EngineError
from ui.classroom import (
    INSTRUCTOR_COOKIE,
    attempt,
    client,
    counts_for_people,
    refusal,
    store,
)
from ui.echoes import echoed
from ui.errors import error_text, shown
from ui.i18n import current_language, t
from ui.lessons.catalog import LESSON_IDS
from ui.url.pages import CLASSROOM as P
from ui.widgets.lessons import lesson_picker

NOTICE = "_cl_notice"  # the last action's refusal, shown on the next run
DONE = "_cl_done"  # the last action's confirmation (a class ended), shown on the next run
PACED_START = "cl_paced_start"
MOVED = "_cl_moved"  # (when, from which lesson) this page last took the class to the next
# "Next" is drawn where the next lesson's Reveal then is: a double click's second press, or a
# click right after, would reveal the lesson the class has just reached
SETTLE_S = 1.0
# The join box's length: the browser drops, without a word, a paste longer than this, so it
# is well past a code (a pasted join link fits) and what is not a code gets a message.
TYPED_CHARS = 1_000  # a learner's address holding every lesson's answer: about 500


@dataclass(frozen=True)
class Class:
    """The class this page leads: its code and the instructor's key."""

    code: str
    key: str


def _say(error: str | None) -> None:
    if error is not None:
        st.session_state[NOTICE] = error


def notice(refused: str | None = None) -> None:
    """The last action's refusal or confirmation, once; not a refusal the page shows anyway
    (``refused``: a class ended in another tab refused the action and now the page)."""
    error = st.session_state.pop(NOTICE, None)
    if error is not None and error != refused:
        st.error(error, icon=":material/error:")
    done = st.session_state.pop(DONE, None)
    if done is not None:
        st.success(done, icon=":material/event_busy:")


def _start() -> None:
    paced = st.session_state.get(PACED_START, True)
    new, error = attempt(lambda: store().create_class(client(), paced))
    _say(error)
    if new is not None:
        st.session_state["cl_code"] = new.code
        st.session_state["cl_key"] = new.instructor_key


def start() -> None:
    """Start a class: paced or not, then the button."""
    st.toggle(t("classroom.paced"), value=True, key=PACED_START, help=t("classroom.paced_help"))
    st.button(t("classroom.start"), type="primary", icon=":material/groups:", on_click=_start)


def current_class() -> Class | None:
    """The class named by the URL, or None when the page names none; its key from the URL,
    else from this browser's cookie for the class (``keep``)."""
    code, key = st.session_state.get("cl_code", ""), st.session_state.get("cl_key", "")
    if not code and not key:
        return None
    if code and not key:
        kept = st.context.cookies.get(INSTRUCTOR_COOKIE + (rules.normalize_code(code) or ""))
        if rules.secret_shaped(kept):
            key = st.session_state["cl_key"] = kept
    return Class(rules.normalize_code(code) or code, key)  # "abc-def": its title says ABCDEF


def keep(klass: Class) -> None:
    """This browser keeps the key of the class its page leads (the store accepted it) for
    the class's lifetime, in a first-party cookie: the address bar never shows it."""
    code = rules.normalize_code(klass.code)
    if code is None or not rules.secret_shaped(klass.key):
        return
    name, value = json.dumps(INSTRUCTOR_COOKIE + code), json.dumps(klass.key)
    st.html(
        f"<script>document.cookie = {name} + '=' + {value} + "
        f"'; path=/; max-age={rules.CLASS_LIFETIME_S}; SameSite=Lax';</script>",
        unsafe_allow_javascript=True,
    )


def current_lesson() -> str:
    """The lesson whose question the room is answering (``cl_lesson``)."""
    return st.session_state.get("cl_lesson", P["cl_lesson"].default)


def lesson_choice() -> None:
    """The picker of ``cl_lesson``."""
    # the counts stay where they are: the Lessons page's scroll to the top is not asked for
    lesson_picker(
        t("classroom.lesson"), "cl_pick", "cl_lesson", current_lesson(), opens_at_top=False
    )


def room(klass: Class, lesson: str) -> tuple[Room | None, str | None]:
    """The lesson's room now, or the store's refusal (a code that is none, forged key,
    expired class).  An address with a class code and no key (the instructor's address bar,
    copied) is told where the key is."""
    if not klass.key:
        code, refusal = _attempt(rules.checked_code, klass.code)
        return None, refusal or t("classroom.no_key", code=rules.shown_code(code))
    return _attempt(lambda: store().room(klass.code, klass.key, lesson))


def _act(action, *args) -> None:
    _say(_attempt(action, *args)[1])


def _attempt(action, *args):
    """``attempt`` on the instructor's page: a refusal worded for learners ("The instructor
    ended class …", "the code your instructor shows") is said to the instructor."""
    result, error = refusal(action, *args)
    if error is not None and error.key in FOR_INSTRUCTOR:
        return None, t(FOR_INSTRUCTOR[error.key], **shown(error.params))
    return result, None if error is None else error_text(error)


# the store's refusals in the learners' words, said on the instructor's page in its own: a
# class ended elsewhere, and a link's code (not "the code your instructor shows")
FOR_INSTRUCTOR = {
    "classroom.ended": "classroom.ended_elsewhere",
    "classroom.malformed_code": "classroom.instructor_malformed_code",
    "classroom.no_code": "classroom.instructor_no_code",
}


def _on_lesson(action, code: str, key: str, lesson: str, *args, drawn=None) -> None:
    """``action`` on ``lesson``, the lesson its button was drawn with, only while the picker
    still shows it.  A click sent while the page is being redrawn after another pick comes
    with the picker's new lesson and the callback of the buttons drawn before it (Streamlit
    keeps the last one registered): it would act on a lesson the page no longer shows, so it
    is refused, and said in a toast: a message on the page moved the room's chart down by
    its height, past a 720 px screen's edge.  So is a press within ``SETTLE_S`` of "Next",
    meant for the lesson just left, and one on a lesson whose state is no longer the state
    ``drawn`` with the button (another tab of the instructor's opened a second round: this
    tab's Close voting or Reveal would act on that round, unseen)."""
    shown = st.session_state.get("cl_pick", lesson)
    moved_at, left = st.session_state.get(MOVED, (float("-inf"), None))
    if time.monotonic() - moved_at < SETTLE_S:  # a press meant for the lesson just left
        lesson = left
    if shown in LESSON_IDS and shown != lesson:
        was, now = LESSON_IDS.index(lesson) + 1, LESSON_IDS.index(shown) + 1
        said = t("classroom.lesson_changed", was=was, now=now)
        st.toast(said, icon=":material/sync_problem:", duration="long")
        return
    if drawn is not None:
        now, _ = _attempt(lambda: store().room(code, key, lesson))  # a refusal: the action's own
        if now is not None and now.state != drawn:
            said = t("classroom.state_changed", number=LESSON_IDS.index(lesson) + 1)
            st.toast(said, icon=":material/sync_problem:", duration="long")
            return
    _act(action, code, key, lesson, *args)


def actions(klass: Class, current: Room) -> None:
    """The buttons on the lesson's question (close voting, second round, reveal), each
    enabled when the store would accept it; once the answer is revealed, none of them can
    act, and in their place is the instructor's next step: everyone to the next lesson (at
    1,280 x 720 presenting, the picker's own button was 20 px below the first screen)."""
    state, lesson = current.state, current.lesson
    s = store()
    args = (klass.code, klass.key, lesson)
    with st.container(key="cl_actions", horizontal=True, horizontal_alignment="right"):
        if state.revealed:  # Next where the class is: elsewhere it moved everyone back
            if lesson != LESSON_IDS[-1] and current.class_lesson in (None, lesson):
                following = LESSON_IDS[LESSON_IDS.index(lesson) + 1]
                st.button(
                    t("classroom.next", number=LESSON_IDS.index(following) + 1), key="cl_next",
                    icon=":material/arrow_forward:", type="primary",
                    on_click=_on_lesson, args=(_everyone_to, *args, following),
                )  # fmt: skip
            return
        if state.voting_open:
            st.button(
                t("classroom.close"), key="cl_close", icon=":material/lock:",
                on_click=_on_lesson, args=(s.set_voting, *args, False), kwargs={"drawn": state},
            )  # fmt: skip
        else:
            st.button(
                t("classroom.reopen"), key="cl_reopen", icon=":material/lock_open:",
                on_click=_on_lesson, args=(s.set_voting, *args, True), kwargs={"drawn": state},
            )  # fmt: skip
        st.button(
            t("classroom.second_round"), key="cl_round", icon=":material/forum:",
            disabled=state.round >= rules.ROUNDS or not current.paced,
            help=None if current.paced else t("errors.classroom.second_round_self_paced"),
            on_click=_on_lesson, args=(s.second_round, *args), kwargs={"drawn": state},
        )  # fmt: skip
        st.button(
            t("classroom.reveal"), key="cl_reveal", icon=":material/visibility:", type="primary",
            on_click=_on_lesson, args=(s.reveal, *args), kwargs={"drawn": state},
        )  # fmt: skip


def _everyone_to(code: str, key: str, lesson: str, following: str) -> None:
    """Every learner to ``following``, and this page with them (``lesson``: the one left)."""
    store().move_everyone(code, key, following)
    st.session_state["cl_lesson"] = following
    st.session_state[MOVED] = (time.monotonic(), lesson)


def move(klass: Class, current: Room) -> None:
    """Every learner to the lesson the picker shows."""
    number = LESSON_IDS.index(current.lesson) + 1
    st.button(
        t("classroom.move", number=number), key="cl_move", icon=":material/group_work:",
        on_click=_on_lesson, args=(store().move_everyone, klass.code, klass.key, current.lesson),
    )  # fmt: skip


def _paced() -> None:
    klass = current_class()
    if echoed():  # the switch as this tab showed it before its last run: shown again, not taken
        st.session_state["cl_paced"] = not st.session_state["cl_paced"]
    elif klass is not None:
        _act(store().set_paced, klass.code, klass.key, st.session_state["cl_paced"])


def _counts_file(classes: ClassStore, klass: Class, lang: str) -> str:
    """The CSV at the click (outside the page's run: no message can be drawn), each lesson's
    title in the page's language ``lang`` beside its id (``counts_for_people``).  A class ended
    since, in another tab, has no votes left: its file is the header alone.  Another refusal
    (a database busy past its wait) fails the download, and a second click asks again."""
    try:
        counts = classes.export_csv(klass.code, klass.key)
    except EngineError as error:
        if error.key != "classroom.ended":  # its votes deleted with it
            raise
        counts = rules.counts_csv(classes.options, {}, [])
    return counts_for_people(counts, lang)


def settings(klass: Class, current: Room) -> None:
    """Paced mode, the CSV of every lesson's counts, and ending the class."""
    st.session_state["cl_paced"] = current.paced
    st.toggle(
        t("classroom.paced"), key="cl_paced", help=t("classroom.paced_help"), on_change=_paced
    )
    classes = store()  # the counts are read at the click, not at this run: the chart is
    #   redrawn every second without it, and a late vote is in the file
    lang = current_language()
    st.download_button(
        t("classroom.csv"),
        data=lambda: _counts_file(classes, klass, lang),
        file_name=f"class-{klass.code}.csv",
        mime="text/csv",
        icon=":material/download:",
        on_click="ignore",
        key="cl_csv",
    )
    with st.popover(t("classroom.end"), icon=":material/delete:"):
        st.caption(t("classroom.end_help"))
        st.button(
            t("classroom.end_confirm"), key="cl_end", type="primary",
            on_click=_end, args=(klass,),
        )  # fmt: skip


def _end(klass: Class) -> None:
    ended, error = _attempt(lambda: store().end_class(klass.code, klass.key))
    _say(error)
    if ended is not None:
        st.session_state["cl_code"] = st.session_state["cl_key"] = ""
        st.session_state["cl_lesson"] = P["cl_lesson"].default  # a next class starts at 1
        st.session_state[DONE] = t(
            "classroom.ended",
            code=rules.shown_code(rules.normalize_code(klass.code) or klass.code),
            joined=ended.joined,
            answered=ended.answered,
        )


def typed_code() -> tuple[str | None, str | None]:
    """A learner's code typed by hand (the Class page without a class): (the code, None),
    (None, why it cannot be one and what is accepted), or (None, None) while nothing is
    typed.  Checked as typed, so a malformed code gets no join link; whether a class has
    it is asked only on joining (a wrong code counts as a guess)."""
    typed = st.text_input(
        t("classroom.join_label"), key="cl_typed", max_chars=TYPED_CHARS,
        placeholder="ABC-DEF",
        help=t("classroom.join_help", length=rules.CODE_LENGTH, limit=f"{TYPED_CHARS:,}"),
    ).strip()  # fmt: skip
    if not typed:
        return None, None
    return attempt(rules.checked_code, rules.code_of_link(typed))  # a pasted link: its code
