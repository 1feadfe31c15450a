"""Class mode through AppTest: a learner's answers on the Lessons page when the join link is
opened again or shared: a link's answer that is not this learner's vote is asked again, the
learner's own vote is shown, locked in, and an answer the class did not count stays."""

from __future__ import annotations

import pytest

from classroom import rules
from tests.app.test_class_pages import (
    ANSWER,
    FIRST,
    WRONG,
    _button,
    _commit,
    _counts,
    _instructor,
    _learner,
    _texts,
)
from ui.classroom import store
from ui.lessons.catalog import LESSON_IDS, lesson
from ui.widgets import class_learner


def test_an_answer_in_a_link_is_asked_again_not_counted_and_a_reloads_own_vote_stays():
    """A learner's address (and so a shared link) holds their answer: a classmate who opens
    it is asked, and nothing is counted without their click; the learner's own reload (same
    browser token) keeps the answer it voted, counted once."""
    teacher, code, key = _instructor()
    answered = {"ls_answers": f"{FIRST}.{WRONG}"}
    classmate = _learner(code, **answered)
    assert not classmate.exception
    assert classmate.radio(key=f"ls_pick_{FIRST}").value is None  # asked, not locked in
    assert "Locked in" not in _texts(classmate, "info")
    assert "· 0 answered" in classmate.get("progress")[0].proto.text  # in that same run
    assert "This page held an answer to one lesson that this class has not counted" in _texts(
        classmate, "info"
    )  # said, as every other dropped link value is
    assert sum(store().room(code, key, FIRST).counts[0].values()) == 0
    assert _counts(teacher.run()).startswith("**1** joined · **0** answered")
    token = rules.new_secret(128)
    _commit(_learner(code, token=token), WRONG)
    again = _learner(code, token=token, **answered)  # the same browser reloads its address
    assert again.radio(key=f"ls_pick_{FIRST}").value == WRONG
    assert "Locked in and counted in the class" in _texts(again, "info")
    assert "This page held" not in _texts(again, "info")  # its own vote: nothing dropped
    assert store().room(code, key, FIRST).counts[0][WRONG] == 1
    assert "Answer again replaces your vote" in _texts(again, "info")  # and it does:
    again.button(key=f"ls_again_{FIRST}").click().run()
    _commit(again, ANSWER)
    assert store().room(code, key, FIRST).counts[0] == {**dict.fromkeys("abcd", 0), ANSWER: 1}


def test_a_learner_back_through_the_join_link_sees_the_vote_the_class_counts():
    """The same browser opening the join link again (no answers in it) showed the lesson
    unanswered and "Commit" while its vote was counted; it now shows the vote, locked in,
    and "Answer again" still clears it."""
    teacher, code, key = _instructor()
    token = rules.new_secret(128)
    _commit(_learner(code, token=token), WRONG)
    back = _learner(code, token=token)  # the join link alone, as a QR code gives it
    assert back.radio(key=f"ls_pick_{FIRST}").value == WRONG
    assert "Locked in and counted in the class" in _texts(back, "info")
    assert "· 1 answered" in back.get("progress")[0].proto.text
    assert _counts(teacher.run()).startswith("**1** joined · **1** answered")
    back.button(key=f"ls_again_{FIRST}").click().run()
    assert back.radio(key=f"ls_pick_{FIRST}").value is None  # cleared, not looked up again
    _commit(back, ANSWER)
    assert store().room(code, key, FIRST).counts[0] == {**dict.fromkeys("abcd", 0), ANSWER: 1}


def test_a_links_answers_for_other_lessons_are_checked_once_on_joining():
    """The classmate's link holds an answer to lesson 2 while the page shows lesson 1: it is
    not counted in their progress; the learner's own address, reloaded on lesson 2, keeps
    its lesson-1 vote."""
    teacher, code, _ = _instructor()
    second = LESSON_IDS[1]
    classmate = _learner(code, ls_answers=f"{second}.{lesson(second).answer}")
    assert "· 0 answered" in classmate.get("progress")[0].proto.text
    token = rules.new_secret(128)
    _commit(_learner(code, token=token), WRONG)
    again = _learner(code, token=token, ls_lesson=second, ls_answers=f"{FIRST}.{WRONG}")
    assert "· 1 answered" in again.get("progress")[0].proto.text


@pytest.mark.parametrize("how", ["voting closed", "practice"])
def test_a_reload_keeps_an_answer_its_class_did_not_count(how):
    """Committed after voting closed (not counted), or again after a self-paced answer showed
    (practice): the learner's own address, reloaded, keeps that answer."""
    teacher, code, _ = _instructor()
    token = rules.new_secret(128)
    learner = _learner(code, token=token)
    if how == "voting closed":
        _button(teacher.run(), "Close voting").click().run()
        _commit(learner.run(), ANSWER)
    else:
        teacher.toggle(key="cl_paced").set_value(False).run()
        _commit(learner.run(), WRONG)
        learner.button(key=f"ls_again_{FIRST}").click().run()
        _commit(learner, ANSWER)
    again = _learner(code, token=token, ls_answers=f"{FIRST}.{ANSWER}")
    assert again.radio(key=f"ls_pick_{FIRST}").value == ANSWER


def test_a_second_class_in_the_same_tab_takes_the_learner_to_its_lesson():
    """A learner leaves one class and joins another in the same tab: the second class's
    "everyone to lesson N" is followed, though its move count equals the first's."""
    first, first_code, _ = _instructor()
    learner = _learner(first_code)
    first.selectbox(key="cl_pick").set_value(LESSON_IDS[2]).run()
    _button(first, "Everyone to lesson 3").click().run()
    assert learner.run().session_state["ls_lesson"] == LESSON_IDS[2]
    learner.button(key="cl_leave").click().run()
    second, code, _ = _instructor()
    second.selectbox(key="cl_pick").set_value(LESSON_IDS[4]).run()
    _button(second, "Everyone to lesson 5").click().run()
    learner.session_state[class_learner.BROWSER + code] = {"token": rules.new_secret(128)}
    learner.session_state["ls_class"] = code  # the Class page's join box, in the same tab
    assert learner.run().session_state["ls_lesson"] == LESSON_IDS[4]


def test_answers_committed_before_joining_in_the_same_tab_are_asked_again():
    """A learner tries lesson 1 alone (the answer shows; they try again and pick the right
    one), then joins a class in the same tab, or joins, leaves, does the same and joins it
    again: that answer is not counted, and is asked."""
    teacher, code, key = _instructor()
    alone = _learner("")  # the Lessons page outside any class
    _commit(alone, WRONG)
    alone.button(key=f"ls_again_{FIRST}").click().run()
    _commit(alone, ANSWER)
    alone.session_state[class_learner.BROWSER + code] = {"token": rules.new_secret(128)}
    alone.session_state["ls_class"] = code  # the Class page's join box, in the same tab
    alone.run()
    assert store().room(code, key, FIRST).answered == (0,)
    assert "this class has not counted" in _texts(alone, "info")
    assert alone.radio(key=f"ls_pick_{FIRST}").value is None
    _commit(alone, ANSWER)  # now, in the class
    assert store().room(code, key, FIRST).answered == (1,)
    alone.button(key="cl_leave").click().run()
    alone.button(key=f"ls_again_{FIRST}").click().run()  # alone again
    _commit(alone, WRONG)
    alone.session_state["ls_class"] = code
    alone.run()
    assert store().room(code, key, FIRST).counts[0][ANSWER] == 1  # the class's vote, not this
    assert alone.radio(key=f"ls_pick_{FIRST}").value is None


def test_a_classmates_link_after_the_reveal_is_called_the_links_answer():
    """Opened after the reveal, a link holding a classmate's answer shows its verdict as the
    link's ("The link carried …"), not as the learner's own choice; a learner's own vote,
    reloaded, is still theirs."""
    teacher, code, key = _instructor()
    token = rules.new_secret(128)
    _commit(_learner(code, token=token), WRONG)
    store().reveal(code, key, FIRST)
    shared = _learner(code, ls_answers=f"{FIRST}.{WRONG}")
    said = _texts(shared, "error")
    assert "The link carried" in said and "You chose" not in said
    own = _learner(code, token=token, ls_answers=f"{FIRST}.{WRONG}")
    assert "You chose" in _texts(own, "error")


def test_two_tabs_of_one_learner_do_not_take_the_vote_back_from_each_other():
    """One browser, two tabs (the QR code scanned twice): the later commit is the vote; the
    other tab's rerun does not send its own again, and says where the vote now is; "Answer
    again" there and a commit make it the vote."""
    teacher, code, key = _instructor()
    token = rules.new_secret(128)
    first, second = _learner(code, token=token), _learner(code, token=token)
    _commit(first, WRONG)
    _commit(second, ANSWER)
    first.run()  # the older tab reruns (a poll after a change of the class)
    assert store().room(code, key, FIRST).counts[0] == {**dict.fromkeys("abcd", 0), ANSWER: 1}
    assert f"is now ({ANSWER}), committed in another tab" in _texts(first, "caption")
    first.button(key=f"ls_again_{FIRST}").click().run()
    _commit(first, WRONG)
    assert store().room(code, key, FIRST).counts[0] == {**dict.fromkeys("abcd", 0), WRONG: 1}


def test_a_learner_whose_class_ran_out_of_time_is_told_so_not_to_check_the_code(monkeypatch):
    """A class ends 24 hours after it starts: a learner who had joined was told "No open class
    has the code …: check the code with your instructor", though their code was right."""
    _, code, _ = _instructor()
    learner = _learner(code)
    assert not learner.error
    later = store().clock() + rules.CLASS_LIFETIME_S + 60
    monkeypatch.setattr(store(), "clock", lambda: later)
    learner.run()
    said = _texts(learner, "info")
    assert f"Class **{rules.shown_code(code)}** is over: a class ends 24 hours" in said
    assert "Check the code" not in _texts(learner, "error")
