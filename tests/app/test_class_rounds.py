"""A second round, whenever the learner's page sees it: an answer is asked again only if it
dates from an earlier round, whichever run first sees the new round (the page polls every
1.5 s, and a click can come first), and whether or not that round's voting is open."""

from __future__ import annotations

import pytest

from classroom import rules
from classroom.db_refusals import DatabaseBusy
from classroom.store import ClassStore
from tests.app import test_class_pages as pages
from tests.app.test_class_pages import ANSWER, FIRST, WRONG
from ui.classroom import store
from ui.i18n import translate


def test_a_learner_without_a_first_round_vote_is_counted_in_the_second():
    """One joins once the second round is open, one was there and did not answer: each
    commit counts in round 2 (the unlock for a second round took it back before it was
    counted, and the learner saw their answer cleared)."""
    teacher, code, key = pages._instructor()
    present = pages._learner(code)
    pages._commit(pages._learner(code), WRONG)
    pages._button(teacher.run(), "Second round").click().run()
    late = pages._learner(code)
    pages._commit(late, ANSWER)
    pages._commit(present.run(), ANSWER)
    assert store().room(code, key, FIRST).counts[1][ANSWER] == 2
    assert late.radio(key=f"ls_pick_{FIRST}").value == ANSWER  # kept, not asked again
    assert late.session_state["ls_answers"] == [f"{FIRST}.{ANSWER}"]


def test_a_commit_clicked_as_the_second_round_opens_is_counted_in_it():
    """Picked in round 1, committed in the run that first sees round 2 (before the poll's)."""
    teacher, code, key = pages._instructor()
    learner = pages._learner(code)
    learner.radio(key=f"ls_pick_{FIRST}").set_value(ANSWER).run()
    pages._button(teacher.run(), "Second round").click().run()
    learner.button(key=f"ls_commit_{FIRST}").click().run()
    assert learner.session_state["ls_answers"] == [f"{FIRST}.{ANSWER}"]
    assert store().room(code, key, FIRST).counts[1][ANSWER] == 1


def test_a_second_round_closed_before_the_page_saw_it_still_asks_again():
    """Round 2 opened and closed between two runs of the learner's page: their counted
    round-1 vote is not called "not counted unless voting opens again"; it is asked again,
    and a commit made while voting is closed counts when it reopens."""
    teacher, code, key = pages._instructor()
    learner = pages._commit(pages._learner(code), WRONG)
    pages._button(teacher.run(), "Second round").click().run()
    pages._button(teacher.run(), "Close voting").click().run()
    learner.run()
    assert learner.radio(key=f"ls_pick_{FIRST}").value is None
    assert "not counted" not in pages._texts(learner, "caption")
    assert "Voting on this question is closed" in pages._texts(learner, "info")
    pages._commit(learner, ANSWER)  # while closed: said not counted until voting reopens
    assert "unless your instructor opens voting again" in pages._texts(learner, "caption")
    pages._button(teacher.run(), "Reopen voting").click().run()
    learner.run()
    assert learner.radio(key=f"ls_pick_{FIRST}").value == ANSWER  # kept, not asked again
    assert store().room(code, key, FIRST).counts == (
        {**dict.fromkeys("abcd", 0), WRONG: 1},
        {**dict.fromkeys("abcd", 0), ANSWER: 1},
    )


def test_an_answer_seen_while_voting_is_closed_makes_later_predictions_practice():
    """Self-paced, voting closed: a commit shows the answer and is not counted; "Answer
    again" with the answer in mind, then voting reopens: that prediction is practice, not
    counted (it was, and the caption had promised a count)."""
    teacher, code, key = pages._instructor()
    teacher.toggle(key="cl_paced").set_value(False).run()
    pages._button(teacher, "Close voting").click().run()
    learner = pages._commit(pages._learner(code), WRONG)
    said = pages._texts(learner, "caption")
    assert "practice" in said and "unless your instructor opens voting again" not in said
    learner.button(key=f"ls_again_{FIRST}").click().run()
    pages._commit(learner, ANSWER)
    pages._button(teacher.run(), "Reopen voting").click().run()
    assert "Practice only" in pages._texts(learner.run(), "caption")
    assert store().room(code, key, FIRST).answered == (0,)


def test_an_answer_seen_while_voting_is_closed_stays_seen_after_a_reload():
    """Self-paced, voting closed: a commit shows the answer, not counted.  The page forgot
    that at a reload (the mark lived in its session), and a prediction made after voting
    reopened was counted; the class keeps it now (``store.saw_answer``)."""
    teacher, code, key = pages._instructor()
    teacher.toggle(key="cl_paced").set_value(False).run()
    pages._button(teacher, "Close voting").click().run()
    token = rules.new_secret(128)
    pages._commit(pages._learner(code, token=token), WRONG)
    pages._button(teacher.run(), "Reopen voting").click().run()
    reloaded = pages._commit(pages._learner(code, token=token), ANSWER)  # a new session
    assert "Practice only" in pages._texts(reloaded, "caption")
    assert store().room(code, key, FIRST).answered == (0,)


def test_a_second_round_does_not_ask_again_a_learner_who_has_been_shown_the_answer():
    """Round 2 opens, then Paced off and on again (the learner's round-1 vote is marked
    seen): the page asked "commit your prediction again" for a prediction that could not
    count; it keeps the round-1 answer instead, and a new commit is practice."""
    teacher, code, key = pages._instructor()
    learner = pages._commit(pages._learner(code), WRONG)
    pages._button(teacher.run(), "Second round").click().run()
    teacher.toggle(key="cl_paced").set_value(False).run()
    teacher.toggle(key="cl_paced").set_value(True).run()
    learner.run()
    assert learner.radio(key=f"ls_pick_{FIRST}").value == WRONG  # not asked again
    learner.button(key=f"ls_again_{FIRST}").click().run()
    pages._commit(learner, ANSWER)
    assert "Practice only" in pages._texts(learner, "caption")
    assert store().room(code, key, FIRST).answered == (1, 0)


def test_the_first_rounds_option_committed_again_in_the_second_is_counted_there():
    """The page held no answer as round 2 opened ("Answer again" in round 1, or a reload):
    a commit of the round-1 option is this round's (it was dated to round 1 and taken back)."""
    teacher, code, key = pages._instructor()
    learner = pages._commit(pages._learner(code), WRONG)
    learner.button(key=f"ls_again_{FIRST}").click().run()
    pages._button(teacher.run(), "Second round").click().run()
    pages._commit(learner.run(), WRONG)
    assert learner.session_state["ls_answers"] == [f"{FIRST}.{WRONG}"]
    assert store().room(code, key, FIRST).counts[1][WRONG] == 1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_self_paced_class_offers_no_second_round_and_says_why(lang):
    """Self-paced, every learner who committed has seen the answer: Second round is greyed
    out, its help says why and how to get one (Paced on), in the page's language."""
    teacher = pages._open("classroom", {"lang": lang})
    teacher.toggle(key="cl_paced_start").set_value(False).run()  # started self-paced
    pages._button(teacher, translate("classroom.start", lang)).click().run()
    code, key = teacher.query_params["cl_code"], teacher.session_state["cl_key"]
    (button,) = [b for b in teacher.button if b.key == "cl_round"]
    assert button.disabled
    why = {
        "en": "No second round in a self-paced class",
        "zh": "未打开“由讲师控制进度”时没有第二轮",
    }[lang]
    assert why in button.help and not teacher.exception
    store().set_paced(code, key, True)
    (button,) = [b for b in teacher.run().button if b.key == "cl_round"]
    assert not button.disabled and not button.help


@pytest.mark.parametrize("cured", [True, False])
def test_an_answer_shown_while_the_store_was_busy_is_kept_before_any_later_vote(monkeypatch, cured):
    """Self-paced, voting closed: a commit shows the answer, and the class's database is
    busy as the page asks it to keep that (``store.saw_answer``).  That was dropped without
    a word, and once voting reopened the prediction made after the answer was counted.  Now
    the page says so and asks again on its next runs; no vote is sent until the class has
    kept it (``cured``: the database answers again by then)."""
    teacher, code, key = pages._instructor()
    teacher.toggle(key="cl_paced").set_value(False).run()
    pages._button(teacher, "Close voting").click().run()
    keep = ClassStore.saw_answer
    monkeypatch.setattr(
        ClassStore, "saw_answer", lambda *args: (_ for _ in ()).throw(DatabaseBusy())
    )
    learner = pages._commit(pages._learner(code), WRONG)
    assert "The class database is busy" in pages._texts(learner, "warning")
    if cured:
        monkeypatch.setattr(ClassStore, "saw_answer", keep)
    pages._button(teacher.run(), "Reopen voting").click().run()
    learner.button(key=f"ls_again_{FIRST}").click().run()
    pages._commit(learner, ANSWER)
    said = pages._texts(learner, "caption", "warning")
    assert ("Practice only" in said) if cured else ("The class database is busy" in said)
    assert "counted in the class" not in said
    assert store().room(code, key, FIRST).answered == (0,)


def _busy_once(monkeypatch, *methods: str) -> None:
    """Each of ClassStore's ``methods`` refused once (``classroom.busy``), then as before."""
    for name in methods:
        kept, calls = getattr(ClassStore, name), []

        def once(self, *args, kept=kept, calls=calls):
            calls.append(args)
            if len(calls) == 1:
                raise DatabaseBusy()
            return kept(self, *args)

        monkeypatch.setattr(ClassStore, name, once)


@pytest.mark.parametrize("again", [False, True])
def test_a_vote_refused_by_a_busy_database_as_its_answer_showed_is_sent_again(monkeypatch, again):
    """Self-paced, voting open: the commit's vote and the answer's keeping both meet a busy
    database.  The prediction was made before the answer: the next run sends it and it
    counts (it was taken for practice).  Answered again after the answer instead
    (``again``): nothing counts, and the class keeps that the answer was shown."""
    teacher, code, key = pages._instructor()
    teacher.toggle(key="cl_paced").set_value(False).run()
    _busy_once(monkeypatch, "vote", "saw_answer")
    learner = pages._commit(pages._learner(code), WRONG)
    assert "The class database is busy" in pages._texts(learner, "warning")
    if again:
        learner.button(key=f"ls_again_{FIRST}").click().run()
        pages._commit(learner, ANSWER)
        assert "Practice only" in pages._texts(learner, "caption")
        assert store().room(code, key, FIRST).answered == (0,)
    else:
        learner.run()
        assert "counted in the class" in pages._texts(learner, "caption")
        assert store().room(code, key, FIRST).counts[0][WRONG] == 1


def test_an_answer_shown_while_busy_stays_shown_once_the_class_is_paced_again(monkeypatch):
    """Self-paced, voting closed, the database busy as the answer showed; it recovers, the
    instructor paces the class again and reopens voting: the page's next run keeps the
    answer as shown (the store ignored it, paced) and the prediction after it is practice."""
    teacher, code, key = pages._instructor()
    teacher.toggle(key="cl_paced").set_value(False).run()
    pages._button(teacher, "Close voting").click().run()
    _busy_once(monkeypatch, "saw_answer")
    learner = pages._commit(pages._learner(code), WRONG)
    teacher.run().toggle(key="cl_paced").set_value(True).run()
    pages._button(teacher, "Reopen voting").click().run()
    learner.button(key=f"ls_again_{FIRST}").click().run()
    pages._commit(learner, ANSWER)
    assert "counted in the class" not in pages._texts(learner, "caption")
    assert store().room(code, key, FIRST).answered == (0,)
