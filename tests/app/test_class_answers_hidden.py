"""A learner in a class sees no answer and no right/wrong verdict before it may show (paced:
the instructor's reveal; self-paced: their own committed prediction), on any lesson and on
the sheet view; the class counts the prediction made before the answer was shown."""

from __future__ import annotations

from tests.app.test_class_pages import (
    ANSWER,
    FIRST,
    WRONG,
    _commit,
    _instructor,
    _learner,
    _texts,
)
from ui.classroom import store
from ui.lessons.catalog import LESSON_IDS, lesson
from ui.views.lessons import option_label

SECOND = LESSON_IDS[1]


def _progress(at) -> str:
    return at.get("progress")[0].proto.text


def _answer_line(lesson_id: str) -> str:
    item = lesson(lesson_id)
    return f"Answer: {option_label(item, item.answer)}"


def test_paced_the_progress_bar_counts_no_right_answer_before_its_reveal_on_any_lesson():
    """Paced: a locked-in right answer counts as answered, and as right only once revealed,
    whichever lesson the learner is on."""
    _, code, key = _instructor()
    learner = _commit(_learner(code), ANSWER)
    assert "· 1 answered, 0 right" in _progress(learner)
    learner.button(key="ls_next").click().run()
    assert learner.session_state["ls_lesson"] == SECOND
    assert "· 1 answered, 0 right" in _progress(learner), _progress(learner)
    store().reveal(code, key, FIRST)
    assert "· 1 answered, 1 right" in _progress(learner.run())


def test_paced_the_sheet_view_says_each_answer_is_hidden_until_its_reveal():
    """Paced: the sheet view gives a learner each question with a line saying its answer is
    hidden, and its answer and link once the instructor reveals it."""
    _, code, key = _instructor()
    learner = _learner(code)
    learner.button_group(key="ls_view").set_value("sheet").run()
    shown = _texts(learner, "markdown")
    assert _answer_line(FIRST) not in shown and _answer_line(SECOND) not in shown
    assert shown.count("Answer hidden until your instructor reveals it.") == len(LESSON_IDS)
    assert not learner.exception
    intro = _texts(learner, "caption")  # not "Every lesson's link … with its question and answer"
    assert "each answer and its link show here once your class may see it" in intro
    # a learner in a class is not offered to start one (the sheet's link for instructors)
    assert not [link for link in learner.get("page_link") if "Start a class" in link.label]
    store().reveal(code, key, FIRST)
    shown = _texts(learner.run(), "markdown")
    assert _answer_line(FIRST) in shown and _answer_line(SECOND) not in shown


def test_an_answer_seen_while_self_paced_stays_shown_when_paced_again_on_every_lesson():
    """A right answer locked in while paced, then Paced off (the class shows it with the
    vote) and on again: the verdict, the progress bar's "right" and the sheet's answer line
    stay, on the lesson and on the next one (paced again, the page hid them on the sheet and
    on other lessons, though the learner had seen them)."""
    teacher, code, _ = _instructor()
    learner = _commit(_learner(code), ANSWER)
    assert "· 1 answered, 0 right" in _progress(learner)  # paced: the verdict waits
    teacher.run().toggle(key="cl_paced").set_value(False).run()
    assert "· 1 answered, 1 right" in _progress(learner.run())
    teacher.toggle(key="cl_paced").set_value(True).run()
    assert "· 1 answered, 1 right" in _progress(learner.run())
    assert "Right:" in _texts(learner, "success", "info", "markdown")  # the verdict stays
    learner.button(key="ls_next").click().run()
    assert learner.session_state["ls_lesson"] == SECOND
    assert "· 1 answered, 1 right" in _progress(learner), _progress(learner)
    learner.button_group(key="ls_view").set_value("sheet").run()
    shown = _texts(learner, "markdown")
    assert _answer_line(FIRST) in shown and _answer_line(SECOND) not in shown
    assert shown.count("Answer hidden until your instructor reveals it.") == len(LESSON_IDS) - 1


def test_a_committed_answer_shows_on_the_sheet_only_once_the_class_keeps_that_it_showed():
    """Paced, voting closed: a commit is not counted and its answer hidden.  Paced off, the
    sheet showed that answer, though the class had not kept that it showed it (only the
    lesson on screen records that), and a right answer committed after it was counted.  The
    sheet now shows it once the lesson has shown it, and then nothing after it counts."""
    teacher, code, key = _instructor()
    teacher.run().button(key="cl_close").click().run()
    learner = _commit(_learner(code), WRONG)
    learner.button(key="ls_next").click().run()
    teacher.toggle(key="cl_paced").set_value(False).run()
    learner.button_group(key="ls_view").set_value("sheet").run()
    assert _answer_line(FIRST) not in _texts(learner, "markdown")  # not shown yet
    learner.button_group(key="ls_view").set_value("lesson").run()
    learner.session_state["ls_lesson"] = FIRST
    learner.run()  # the lesson shows the answer: the class keeps that it did
    learner.button_group(key="ls_view").set_value("sheet").run()
    assert _answer_line(FIRST) in _texts(learner, "markdown")
    teacher.toggle(key="cl_paced").set_value(True).run()
    teacher.button(key="cl_reopen").click().run()
    learner.button_group(key="ls_view").set_value("lesson").run()
    learner.button(key=f"ls_again_{FIRST}").click().run()
    _commit(learner, ANSWER)
    assert store().room(code, key, FIRST).answered == (0,)


def test_the_sheet_shows_no_answer_the_class_has_not_kept_it_showed_even_on_its_lesson():
    """The sheet is opened from the lesson where an uncounted prediction was committed
    (paced, voting closed), then Paced is turned off: the sheet showed that answer, though
    no lesson had shown it (the class kept nothing); it says where to see it instead."""
    teacher, code, key = _instructor()
    teacher.run().button(key="cl_close").click().run()
    learner = _commit(_learner(code), WRONG)
    learner.button_group(key="ls_view").set_value("sheet").run()
    teacher.toggle(key="cl_paced").set_value(False).run()
    shown = _texts(learner.run(), "markdown")
    assert _answer_line(FIRST) not in shown
    assert "You committed a prediction here: open the lesson to see its answer." in shown
    teacher.toggle(key="cl_paced").set_value(True).run()
    teacher.button(key="cl_reopen").click().run()
    learner.button_group(key="ls_view").set_value("lesson").run()
    learner.button(key=f"ls_again_{FIRST}").click().run()
    _commit(learner, ANSWER)  # never shown the answer: counted
    assert store().room(code, key, FIRST).counts[0][ANSWER] == 1


def test_the_course_end_of_a_self_paced_class_says_where_an_unshown_answer_is():
    """An answer committed while paced and voting was closed, then Paced off: no lesson has
    shown it yet.  The course's end said "Waiting for your instructor's reveal" of it, in a
    class that reveals nothing; it says to open its lesson."""
    teacher, code, _ = _instructor()
    teacher.run().button(key="cl_close").click().run()
    learner = _commit(_learner(code), WRONG)
    teacher.toggle(key="cl_paced").set_value(False).run()
    last = LESSON_IDS[-1]
    learner.session_state["ls_lesson"] = last
    _commit(learner.run(), lesson(last).answer, last)
    said = _texts(learner, "caption")
    assert "Not shown yet: 1 of your answers; open their lessons to see them." in said, said
    assert "Waiting for your instructor's reveal" not in said


def test_an_answer_shown_with_a_refused_vote_is_kept_as_shown(monkeypatch):
    """Self-paced, a vote refused (the learner's votes a minute past the limit): the answer
    shows all the same, so the class keeps that it showed, and nothing after it counts."""
    from classroom import rules

    teacher, code, key = _instructor()
    teacher.toggle(key="cl_paced").set_value(False).run()
    monkeypatch.setattr(rules, "VOTE_LIMIT", rules.Limit(0, 60.0))
    learner = _commit(_learner(code), WRONG)
    assert "More than 0 votes" in _texts(learner, "warning")
    monkeypatch.undo()
    learner.button(key=f"ls_again_{FIRST}").click().run()
    _commit(learner, ANSWER)
    assert "Practice only" in _texts(learner, "caption")
    assert store().room(code, key, FIRST).answered == (0,)


def test_self_paced_the_sheet_view_shows_an_answer_once_its_prediction_is_committed():
    teacher, code, _ = _instructor()
    teacher.toggle(key="cl_paced").set_value(False).run()
    learner = _commit(_learner(code), WRONG)
    learner.button_group(key="ls_view").set_value("sheet").run()
    shown = _texts(learner, "markdown")
    assert _answer_line(FIRST) in shown and _answer_line(SECOND) not in shown
    assert shown.count("Answer hidden until you commit your prediction in the lesson.") == (
        len(LESSON_IDS) - 1
    )


def test_self_paced_practising_after_the_answer_leaves_the_counted_prediction():
    """Self-paced: "Try again" after the answer showed is practice for the learner, said so
    in a line; the class keeps the prediction made before the answer was shown."""
    teacher, code, key = _instructor()
    teacher.toggle(key="cl_paced").set_value(False).run()
    learner = _commit(_learner(code), WRONG)
    assert "Not quite" in _texts(learner, "error")  # the answer is shown to this learner
    learner.button(key=f"ls_again_{FIRST}").click().run()
    _commit(learner, ANSWER)
    counts = store().room(code, key, FIRST).counts[0]
    assert counts[WRONG] == 1 and counts[ANSWER] == 0, counts
    assert "Practice only: the class keeps the prediction" in _texts(learner, "caption")
    assert not _texts(learner, "warning")


def test_outside_a_class_the_sheet_lists_every_answer():
    learner = _learner("")
    learner.button_group(key="ls_view").set_value("sheet").run()
    shown = _texts(learner, "markdown")
    assert all(_answer_line(i) in shown for i in LESSON_IDS)
    assert "hidden" not in shown


def test_revealed_without_a_committed_prediction_the_learner_is_told_how_to_see_it():
    """A learner with no counted vote when the answer is revealed (joined then) sees no
    answer (it shows with a commit): the line says so, rather than only that the answer was
    revealed."""
    teacher, code, key = _instructor()
    store().reveal(code, key, FIRST)
    learner = _learner(code)
    assert "commit a prediction to see it" in _texts(learner, "info")
    assert "Right" not in _texts(learner, "success")  # the answer is not on the page
    _commit(learner, ANSWER)
    said = _texts(learner, "info")
    assert "revealed the answer" in said and "commit a prediction" not in said
    assert "Right" in _texts(learner, "success")


def test_revealed_in_a_second_round_they_did_not_vote_in_the_counted_vote_shows():
    """A second round unlocks each learner's first-round vote; revealed before they commit
    again, each sees the verdict on the vote the class counted, whether their page ran in
    the second round (it had unlocked it: they were told to commit a prediction to see an
    answer their vote had already counted) or not (its caption said "not counted")."""
    teacher, code, key = _instructor()
    ran, idle = _commit(_learner(code), ANSWER), _commit(_learner(code), WRONG)
    store().second_round(code, key, FIRST)
    assert ran.run().radio(key=f"ls_pick_{FIRST}").value is None  # unlocked
    store().reveal(code, key, FIRST)
    for learner, verdict in ((ran.run(), "success"), (idle.run(), "error")):
        assert "revealed the answer" in _texts(learner, "info")
        assert "commit a prediction" not in _texts(learner, "info")
        assert _texts(learner, verdict)  # right, or not quite
        assert "not counted" not in _texts(learner, "caption")
        assert "is counted in the class" in _texts(learner, "caption")
    ran.button(key=f"ls_again_{FIRST}").click().run()  # practice: not given back again
    assert ran.radio(key=f"ls_pick_{FIRST}").value is None
