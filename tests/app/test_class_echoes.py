"""Class mode through AppTest: a fragment's timer rerun carries every widget as the browser
showed it before the last whole run; such an echo of an old pick, tick, switch or mode must not
undo what that run did (``ui/echoes.py``).  Helpers from ``test_class_pages.py``."""

from __future__ import annotations

from tests.app.conftest import fragment_ids
from tests.app.test_class_pages import (
    ANSWER,
    FIRST,
    WRONG,
    _button,
    _commit,
    _instructor,
    _learner,
    _moved_to_the_third_lesson,
    _open,
)
from ui.classroom import store
from ui.lessons.catalog import LESSON_IDS


def test_a_timer_rerun_echoing_the_picker_of_before_a_move_does_not_undo_it(timer_rerun):
    """The browser sends the poll's request while it still shows lesson 1 (the run that moved
    the learner is being drawn): that echo is not the learner picking lesson 1."""
    learner = _moved_to_the_third_lesson()
    (poll,) = fragment_ids(learner)
    learner.selectbox(key="ls_choose").set_value(FIRST)  # what the browser still shows
    timer_rerun(learner, poll)
    assert learner.session_state["ls_lesson"] == LESSON_IDS[2]
    learner.run()
    assert learner.header[0].value.startswith("3. ")
    learner.selectbox(key="ls_choose").set_value(FIRST).run()  # the learner's own pick
    assert learner.session_state["ls_lesson"] == FIRST


def test_a_timer_rerun_echoing_the_first_round_tick_does_not_bring_it_back(timer_rerun):
    """The run that opens the second round clears the learner's tick; the poll's request,
    sent while the browser still showed it, must not tick it again."""
    teacher, code, _ = _instructor()
    learner = _commit(_learner(code), WRONG)
    _button(teacher.run(), "Second round").click().run()
    learner.run()
    assert learner.radio(key=f"ls_pick_{FIRST}").value is None  # asked again
    (poll,) = fragment_ids(learner)
    learner.radio(key=f"ls_pick_{FIRST}").set_value(WRONG)  # what the browser still shows
    timer_rerun(learner, poll)
    assert learner.run().radio(key=f"ls_pick_{FIRST}").value is None
    _commit(learner, ANSWER)  # the learner's own pick
    assert learner.radio(key=f"ls_pick_{FIRST}").value == ANSWER


def test_a_timer_rerun_echoing_an_old_paced_switch_does_not_flip_the_class(timer_rerun):
    """Paced mode changed in the instructor's other tab: this tab's chart timer echoes the
    switch as this tab's browser showed it before its last run, which must not change the
    class back."""
    teacher, code, key = _instructor()
    paced = store().room(code, key, FIRST).paced
    teacher.toggle(key="cl_paced").set_value(not paced).run()
    assert store().room(code, key, FIRST).paced is (not paced)
    (chart,) = fragment_ids(teacher)
    store().set_paced(code, key, paced)  # the other tab
    teacher.run()  # this tab's run that shows it
    teacher.toggle(key="cl_paced").set_value(not paced)  # what this browser still shows
    timer_rerun(teacher, chart)
    assert store().room(code, key, FIRST).paced is paced


def test_a_timer_rerun_echoing_presentation_mode_does_not_undo_its_exit_button(timer_rerun):
    """The instructor leaves presentation mode while the chart's timer still carries the
    sidebar's "present" as the browser showed it: the class page stays out of it."""
    _, code, key = _instructor()
    at = _open("classroom", {"lang": "en", "cl_code": code, "cl_key": key, "present": "on"})
    at.button(key="present_exit").click().run()
    assert at.session_state["present"] == "off"
    (chart,) = fragment_ids(at)
    at.button_group(key="present_select").set_value("on")  # what the browser still shows
    timer_rerun(at, chart)
    assert at.run().session_state["present"] == "off"
    at.button_group(key="present_select").set_value("on").run()  # the user's own choice
    assert at.session_state["present"] == "on"
