"""A learner's prediction in a class, the Lessons page's three hooks: before it (where the
question stands; a second round asks again for an answer of an earlier round; the reveal
shows the counted vote), at its commit (whether the class counts it, once per round), and
whether its answer shows (paced: the reveal; self-paced: the learner's commit).  Joining and
following the class: ``class_learner``."""

from __future__ import annotations

import streamlit as st

from ui.classroom import attempt, refusal, store
from ui.errors import error_text
from ui.i18n import t
from ui.lessons.catalog import LESSON_IDS, Lesson
from ui.widgets.class_learner import Member, committed_answers, drop_answer
from ui.widgets.lessons import JUST_COMMITTED

ORIGINS = "_cl_origins"  # {(class, lesson): (the page's answer, the round it dates from)}
REVEALS_SEEN = "_cl_reveals_seen"  # (class, lesson) whose reveal this session has drawn
SENT = "_cl_sent"  # {(class, lesson, round): the option this tab's vote holds}
UNKEPT_SEEN = "_cl_unkept_seen"  # (class, lesson) shown here whose showing the class refused
UNSENT = "_cl_unsent"  # {(class, lesson): a commit made before its answer showed, vote refused}


def their_vote(member: Member | None, lesson_id: str, option: str | None) -> bool:
    """Whether ``option`` is a vote the class counted from this learner on ``lesson_id`` (the
    lesson shown): such an answer is theirs wherever the page got it (a reload, the reveal)."""
    view = None if member is None else member.view
    return view is not None and view.lesson == lesson_id and option in view.votes


def answer_shown(member: Member | None) -> bool:
    """Whether this learner may see answers now: outside a class or self-paced, once they
    commit; in a paced class once the instructor reveals the lesson, or where the class
    has already shown it to them (``hidden``)."""
    view = None if member is None else member.view
    return view is None or not view.paced or view.state.revealed or view.lesson in view.seen


def voting_open(member: Member | None) -> bool:
    """Whether a new commit replaces this learner's vote on the lesson shown: in a class,
    only while its voting is open and its answer has not been shown to them (paced off, then
    on again: "Answer again replaces your vote" was said, and the store refused it)."""
    return member is not None and member.view.state.voting_open and not member.view.final


def hidden(
    member: Member | None, lesson_id: str, answers: dict[str, str], on_screen: str | None = None
) -> str | None:
    """Why ``lesson_id``'s answer is hidden from this learner (the line that says so), or
    None where it may show: outside a class, once the instructor revealed it, where the class
    has shown it to them (``view.seen``: paced again, it stays shown), and in a self-paced
    class on the lesson ``on_screen`` (None: the sheet) once they committed a prediction
    (``answers``), where ``record`` has the class keep that it showed."""
    if member is None or lesson_id in member.view.revealed or lesson_id in member.view.seen:
        return None
    if member.view.paced:
        return "classroom.hidden_until_reveal"
    if lesson_id not in answers:
        return "classroom.hidden_until_commit"
    return None if lesson_id == on_screen else "classroom.hidden_until_opened"


def hidden_answers(member: Member | None, answers: dict[str, str]) -> dict[str, str]:
    """Every lesson whose answer the sheet hides from this learner, with why (``hidden``)."""
    found = {lesson: hidden(member, lesson, answers) for lesson in LESSON_IDS}
    return {lesson: why for lesson, why in found.items() if why is not None}


def scored(member: Member | None, answers: dict[str, str], on_screen: str) -> dict[str, str]:
    """The committed answers whose verdict the progress bar counts, the lesson ``on_screen``
    shown: only those whose answer shows (a paced class's "right" count would otherwise give
    it away, on any lesson)."""
    return {
        lesson: option
        for lesson, option in answers.items()
        if not hidden(member, lesson, answers, on_screen)
    }


def waiting_words(member: Member | None) -> str:
    """What the course's end says of answers whose verdict is not shown yet: a paced class
    waits for the reveal; a self-paced one shows each answer in its lesson."""
    paced = member is not None and member.view.paced
    return "lessons.wrap_waiting" if paced else "lessons.wrap_unopened"


def before_prediction(member: Member | None, item: Lesson) -> None:
    """Say where the question stands in the class; when a second round opens, unlock this
    learner's answer of an earlier round once, so they commit again; once the answer is
    revealed, show the learner's counted vote if their page holds none."""
    if member is None:
        return
    state, votes = member.view.state, member.view.votes
    key = (member.code, item.id)
    mine = _round_of_answer(member, item.id)
    again = mine is not None and mine[1] < state.round and votes[-1] is None
    if again and not state.revealed and not member.view.final:  # shown: nothing to ask again
        # as the lessons page's "Try again" does, also while this round's voting is closed
        drop_answer(item.id)
        st.session_state[ORIGINS].pop(key)
        mine = None
    if state.revealed and key not in st.session_state.setdefault(REVEALS_SEEN, set()):
        st.session_state[REVEALS_SEEN].add(key)  # once: "Answer again" then clears it
        counted = [(vote, r) for r, vote in enumerate(votes, 1) if vote is not None]
        if mine is None and counted:  # unlocked for a round they did not vote in: the last
            mine = counted[-1]  # counted vote is theirs, and its verdict shows
            st.session_state["ls_answers"] = [*committed_answers(), f"{item.id}.{mine[0]}"]
            st.session_state[f"ls_pick_{item.id}"] = mine[0]
            st.session_state[ORIGINS][key] = mine
            st.rerun()  # the page above (its progress bar) counted the answers without it
    if state.revealed:  # the answer shows with a commit: one never made is asked
        said = "classroom.state_revealed" if mine else "classroom.state_revealed_commit"
        st.info(t(said), icon=":material/visibility:")
    elif not state.voting_open and votes[-1] is None:  # a counted vote's notice says it
        st.info(t("classroom.state_closed"), icon=":material/lock:")
    elif state.round > 1:
        st.info(t("classroom.state_round_two"), icon=":material/forum:")


def _round_of_answer(member: Member, lesson_id: str) -> tuple[str, int] | None:
    """The page's committed answer to ``lesson_id`` and the round it dates from: this round
    for one just committed by a click, else the round this session first saw it in, or, for
    an answer the page came with (a reload), the latest earlier round that counted it.
    Whether to unlock it follows from that, not from which run first saw a new round: a
    commit clicked as the second round opened, or made while its voting was closed, or of
    the first round's option after the page had held none, was taken back."""
    origins = st.session_state.setdefault(ORIGINS, {})
    key = (member.code, lesson_id)
    option = next(
        (a.rpartition(".")[2] for a in committed_answers() if a.startswith(f"{lesson_id}.")), None
    )
    if option is None:
        origins.pop(key, None)
        return None
    fresh = st.session_state.pop(JUST_COMMITTED, None) == (lesson_id, option)
    if fresh or origins.get(key, (None,))[0] != option:
        votes, now = member.view.votes, member.view.state.round
        earlier = [r for r, vote in enumerate(votes[:-1], 1) if vote == option]
        origins[key] = (option, earlier[-1] if earlier and not fresh else now)
    return origins[key]


def record(member: Member | None, item: Lesson, chosen: str | None) -> bool:
    """Count the committed ``chosen`` in the class (once per round; a new choice replaces
    the vote until the lesson's answer has been shown to them, then it is practice); whether
    it is counted.  While its answer waits for the reveal, the locked-in notice
    (``ui.views.lessons.commit_point``) says so; once it shows, a caption here does."""
    if member is None:
        return False
    lesson_key, unsent = (member.code, item.id), st.session_state.setdefault(UNSENT, {})
    if lesson_key in unsent and unsent[lesson_key] != chosen:  # answered again since the
        del unsent[lesson_key]  # answer showed: that prediction is not sent, the answer kept
        st.session_state.setdefault(UNKEPT_SEEN, set()).add(lesson_key)
    unkept = lesson_key in st.session_state.get(UNKEPT_SEEN, ())
    if unkept and not _kept_seen(member, item.id):
        return False  # nothing of theirs on it is sent until the class keeps that it showed
    view = member.view
    round_key = (member.code, item.id, view.state.round)
    sent = st.session_state.setdefault(SENT, {})
    if chosen is None:  # none, or "Answer again": the next commit is a new choice
        sent.pop(round_key, None)
        return False
    origin = st.session_state.get(ORIGINS, {}).get((member.code, item.id))
    counted_before = (  # a round before this one counted it (this one has no vote of theirs)
        origin is not None
        and origin[1] < view.state.round
        and view.votes[origin[1] - 1] == chosen == origin[0]
    )
    if view.votes[-1] != chosen and not counted_before:
        if view.votes[-1] is not None and sent.get(round_key) == chosen:
            # sent from this tab, replaced since from another tab of this browser (the same
            # learner): the later vote stands; each tab's rerun took the vote back for itself
            st.caption(t("classroom.voted_elsewhere", option=view.votes[-1]))
            return False
        if not view.state.voting_open:  # a revealed answer's voting never opens again
            if view.state.revealed:
                said = "classroom.not_counted_revealed"
            elif answer_shown(member):  # self-paced, or paced turned off: it shows now
                # kept by the class, so that no prediction after it is counted once voting
                # reopens, even after a reload (``store.saw_answer``), once
                if item.id not in view.seen and not unkept:
                    _kept_seen(member, item.id)
                said = "classroom.seen_while_closed"
            else:
                said = "classroom.not_counted"
            st.caption(t(said))
            return False
        if view.final or unkept:  # the answer was shown to them: with or without a vote
            kept = any(vote is not None for vote in view.votes)
            st.caption(t("classroom.practice" if kept else "classroom.practice_unvoted"))
            return False
        _, error = refusal(lambda: store().vote(member.code, member.token, f"{item.id}.{chosen}"))
        if error is not None:
            st.warning(error_text(error), icon=":material/how_to_vote:")
            if answer_shown(member) and item.id not in view.seen:  # shown all the same
                if error.key == "classroom.busy":  # committed before the answer: sent again
                    unsent[lesson_key] = chosen  # on the next run, unless answered again
                else:
                    _kept_seen(member, item.id, say=False)  # if refused: said on the next run
            return False
        unsent.pop(lesson_key, None)
    sent[round_key] = chosen
    if answer_shown(member):
        st.caption(t("classroom.counted"))
    return True


def _kept_seen(member: Member, lesson_id: str, say: bool = True) -> bool:
    """Have the class keep that it showed this learner ``lesson_id``'s answer with no vote of
    theirs counted (``store.saw_answer``); whether it did.  Where the store refuses (busy),
    the answer shows all the same: the refusal is said (``say``) and the page tries again on
    each later run (a class page polls every 1.5 s), sending no vote of theirs on the lesson
    meanwhile; a vote sent before it was kept would have counted a prediction made after the
    answer."""
    unkept = st.session_state.setdefault(UNKEPT_SEEN, set())
    _, error = attempt(lambda: store().saw_answer(member.code, member.token, lesson_id))
    if error is None:
        unkept.discard((member.code, lesson_id))
        return True
    unkept.add((member.code, lesson_id))
    if say:
        st.warning(error, icon=":material/how_to_vote:")
    return False
