"""The instructor's actions act on the lesson whose question the Class page shows with them.

Picking another lesson reruns the page; a click on Reveal, Close voting, Second round or
"Everyone to lesson N" sent while that run is still being drawn reaches the server with
the picker's new lesson, but with the callback the buttons of the lesson before were drawn
with.  Measured in Chromium: a click in the same moment as the pick closed the lesson the
page had just left, while the page went on to show the picked one, its voting open.
"""

from __future__ import annotations

import pytest

from classroom import rules
from tests.app.test_class_pages import FIRST, _button, _instructor, _texts
from ui.classroom import store
from ui.lessons.catalog import LESSON_IDS

THIRD = LESSON_IDS[2]


def _class_lesson(code: str) -> tuple[str | None, int]:
    """Where "everyone to lesson N" sent the class, and how many moves it made."""
    with store().database.transaction() as tx:
        return tx.one("SELECT lesson, moves FROM classes WHERE code = ?", (code,))


@pytest.mark.parametrize("action", ["cl_reveal", "cl_close", "cl_round", "cl_move"])
def test_an_action_clicked_as_the_lesson_changes_is_refused_and_changes_nothing(action):
    """The picker already shows lesson 3 when the button of lesson 1 is clicked (both in
    the browser's one request): neither lesson changes, and the page says why, in a toast
    (which moves nothing on the projected page), in the words the page uses for the
    lessons (their numbers)."""
    teacher, code, key = _instructor()
    teacher.selectbox(key="cl_pick").set_value(THIRD)  # what the browser shows
    teacher.button(key=action).click().run()  # the button drawn with lesson 1's question
    for lesson_id in (FIRST, THIRD):
        assert store().room(code, key, lesson_id).state == rules.LessonState()
    assert _class_lesson(code) == (None, 0)
    said = _texts(teacher, "toast")
    assert "Nothing was done" in said and "lesson 1" in said and "lesson 3" in said
    assert not teacher.warning
    assert not teacher.exception
    assert teacher.session_state["cl_lesson"] == THIRD  # the pick itself is taken
    _button(teacher, "Reveal the answer").click().run()  # the next click: lesson 3's own
    assert store().room(code, key, THIRD).state.revealed
    assert not store().room(code, key, FIRST).state.revealed
    assert "Nothing was done" not in _texts(teacher, "toast")


def test_an_action_after_the_pick_has_drawn_acts_on_the_picked_lesson():
    teacher, code, key = _instructor()
    teacher.selectbox(key="cl_pick").set_value(THIRD).run()
    _button(teacher, "Everyone to lesson 3").click().run()
    assert _class_lesson(code) == (THIRD, 1)
    _button(teacher, "Close voting").click().run()
    assert not store().room(code, key, THIRD).state.voting_open
    assert store().room(code, key, FIRST).state.voting_open
    assert not _texts(teacher, "warning", "toast")


def test_after_the_reveal_the_one_action_is_everyone_to_the_next_lesson(monkeypatch):
    """Revealed, a lesson's Close voting, Second round and Reveal can do nothing: in their
    place, the next step takes the class and the page to the next lesson; the last lesson
    has no next."""
    from ui.widgets import classroom as widgets

    monkeypatch.setattr(widgets, "SETTLE_S", 0.0)  # each press below a second apart (next test)
    teacher, code, key = _instructor()
    _button(teacher, "Reveal the answer").click().run()
    shown = [b.label for b in teacher.button if b.key and b.key.startswith("cl_")]
    assert "Next: everyone to lesson 2" in shown
    assert not {"Close voting", "Second round", "Reveal the answer"} & set(shown)
    teacher.button(key="cl_next").click().run()
    assert _class_lesson(code) == (LESSON_IDS[1], 1)
    assert teacher.session_state["cl_lesson"] == LESSON_IDS[1]
    assert store().room(code, key, LESSON_IDS[1]).state == rules.LessonState()
    assert _button(teacher, "Reveal the answer")  # the new lesson's own question
    last = LESSON_IDS[-1]
    teacher.selectbox(key="cl_pick").set_value(last).run()
    _button(teacher, "Reveal the answer").click().run()
    assert not [b for b in teacher.button if b.key in ("cl_next", "cl_reveal")]
    assert not teacher.exception


def test_a_press_right_after_next_is_not_taken_for_the_next_lessons_reveal(monkeypatch):
    """ "Next" stands where the next lesson's Reveal then stands: a double click's second
    press (or one within a second) is refused, not taken as that lesson's reveal."""
    from ui.widgets import classroom as widgets

    teacher, code, key = _instructor()
    _button(teacher, "Reveal the answer").click().run()
    teacher.button(key="cl_next").click().run()
    _button(teacher, "Reveal the answer").click().run()  # at once
    assert not store().room(code, key, LESSON_IDS[1]).state.revealed
    said = _texts(teacher, "toast")
    assert "Nothing was done" in said and "lesson 1" in said and "lesson 2" in said
    monkeypatch.setattr(widgets, "SETTLE_S", 0.0)  # a second later
    _button(teacher, "Reveal the answer").click().run()
    assert store().room(code, key, LESSON_IDS[1]).state.revealed


def test_a_double_click_on_next_moves_the_class_one_lesson():
    """Lesson 2 already revealed: its own Next stands where lesson 1's was, and a double
    click's second press is refused (it took the class on to lesson 3)."""
    teacher, code, key = _instructor()
    store().reveal(code, key, LESSON_IDS[1])
    _button(teacher.run(), "Reveal the answer").click().run()
    _button(teacher, "Next: everyone to lesson 2").click().run()
    _button(teacher, "Next: everyone to lesson 3").click().run()  # at once
    assert teacher.session_state["cl_lesson"] == LESSON_IDS[1]
    assert _class_lesson(code) == (LESSON_IDS[1], 1)
    assert "Nothing was done" in _texts(teacher, "toast")
