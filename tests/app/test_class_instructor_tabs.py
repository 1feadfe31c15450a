"""The instructor's page against what another tab of theirs, the class and the address did:
a code written another way, an action on a state this tab did not draw, a refusal said
once, Next only where the class is."""

from __future__ import annotations

import pytest

from classroom import rules
from tests.app import test_class_pages as pages
from tests.app.test_class_pages import ANSWER, FIRST, WRONG
from ui.classroom import store
from ui.lessons.catalog import LESSON_IDS
from ui.widgets import classroom as widgets


def _tab(code: str, key: str):
    return pages._open("classroom", {"lang": "en", "cl_code": code, "cl_key": key})


def test_a_code_written_another_way_is_titled_and_linked_as_the_class_writes_it():
    """``abc-def`` in lower case, as a person may type it: accepted, and the title, the
    join link and the private link carry the class's own code (the title read "Class x5x--wqz")."""
    _, code, key = pages._instructor()
    at = _tab(f"{code[:3]}-{code[3:]}".lower(), key)
    assert at.title[0].value == f"Class {rules.shown_code(code)}"
    assert f"cl_code={code}&" in pages._texts(at, "code")  # the private link (and the join link's)


def test_an_action_on_a_state_another_tab_changed_is_refused():
    """Tab A opens a second round; tab B, drawn in round 1, presses Close voting: it would
    close round 2 unseen; refused, said in a toast, and the page shows round 2."""
    a, code, key = pages._instructor()
    b = _tab(code, key)
    a.button(key="cl_round").click().run()
    b.button(key="cl_close").click().run()
    assert store().room(code, key, FIRST).state == rules.LessonState(2, True, False)
    assert "changed in another tab" in pages._texts(b, "toast")
    b.button(key="cl_close").click().run()  # now drawn with round 2: taken
    assert not store().room(code, key, FIRST).state.voting_open


def test_a_refusal_that_the_page_shows_is_not_said_twice():
    a, code, key = pages._instructor()
    b = _tab(code, key)
    a.button(key="cl_end").click().run()
    b.button(key="cl_reveal").click().run()
    assert len(b.error) == 1
    # said to the instructor, whose other tab ended it: not the learners' "The instructor ended"
    said = b.error[0].value
    assert "has been ended, from another tab or browser of yours" in said
    assert "instructor ended" not in said


def test_next_shows_only_on_the_lesson_the_class_is_on(monkeypatch):
    """Revealed lesson 1, then lesson 2, Next each time: the class is on lesson 3. Lesson 1,
    picked again to look at, offers no Next (it sent the class back to lesson 2)."""
    monkeypatch.setattr(widgets, "SETTLE_S", 0.0)
    teacher, code, key = pages._instructor()
    for _ in range(2):
        teacher.button(key="cl_reveal").click().run()
        teacher.button(key="cl_next").click().run()
    teacher.selectbox(key="cl_pick").set_value(FIRST).run()
    assert not [b for b in teacher.button if b.key == "cl_next"]
    assert store().room(code, key, FIRST).class_lesson == LESSON_IDS[2]


def test_paced_off_then_on_promises_no_replacement_the_class_refuses():
    """A vote, paced off (the answer shows), paced on again: the page does not say "Answer
    again replaces your vote" (the class keeps the vote made before the answer showed)."""
    teacher, code, key = pages._instructor()
    learner = pages._commit(pages._learner(code), WRONG)
    teacher.run().toggle(key="cl_paced").set_value(False).run()
    learner.run()
    teacher.toggle(key="cl_paced").set_value(True).run()
    assert "Answer again replaces your vote" not in pages._texts(learner.run(), "info")
    learner.button(key=f"ls_again_{FIRST}").click().run()
    pages._commit(learner, ANSWER)
    assert store().room(code, key, FIRST).counts[0][WRONG] == 1


def test_no_second_round_where_a_learner_saw_the_answer_while_self_paced():
    """A vote, Paced off (the answer shows with it) and on again: a second round would count
    an answer given after it; it is refused in words, and round 1 stays."""
    teacher, code, key = pages._instructor()
    pages._commit(pages._learner(code), WRONG)
    teacher.run().toggle(key="cl_paced").set_value(False).run()
    teacher.toggle(key="cl_paced").set_value(True).run()
    teacher.button(key="cl_round").click().run()
    said = pages._texts(teacher, "error", "warning")
    assert "Learners who have been shown this question's answer" in said, said
    assert store().room(code, key, FIRST).state.round == 1


def test_a_class_started_after_one_ended_opens_at_lesson_one(monkeypatch):
    """The ended class's lesson stayed in the page: the next class opened there."""
    monkeypatch.setattr(widgets, "SETTLE_S", 0.0)
    teacher, code, key = pages._instructor()
    teacher.selectbox(key="cl_pick").set_value(LESSON_IDS[4]).run()
    teacher.button(key="cl_end").click().run()
    assert teacher.session_state["cl_lesson"] == LESSON_IDS[0]


@pytest.mark.parametrize(("value", "said"), [("zz", "`cl_code` is"), ("  ", "`cl_code` holds no")])
def test_an_instructor_link_with_a_bad_code_is_answered_in_the_instructors_words(value, said):
    at = pages._open("classroom", {"lang": "en", "cl_code": value, "cl_key": rules.new_secret(128)})
    assert not at.exception
    refused = pages._texts(at, "error")
    assert said in refused and "your instructor" not in refused
