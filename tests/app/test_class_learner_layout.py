"""Class mode through AppTest: how the Lessons page is laid out for a learner from the join
link (the class's banner, then the lesson, then the lessons' menu)."""

from __future__ import annotations

from tests.app.test_class_pages import _instructor, _learner


def test_a_learner_in_a_class_sees_the_banner_then_the_lesson_then_the_lessons_menu():
    """A phone put the question two screens down, under the page's title, its intro and
    the lessons' menu; the layout stays while the class is gone (its refusal first)."""
    _, code, _ = _instructor()
    learner = _learner(code)
    assert not learner.title  # the class's banner, then the lesson's own heading
    order = [e.type for e in learner.main if e.type in ("header", "subheader", "selectbox")]
    assert order[:2] == ["header", "subheader"] and order[-1] == "selectbox"
    gone = _learner("ABCDEF")
    assert not gone.exception and not gone.title and gone.error


def test_a_learner_in_a_class_is_not_promised_what_a_paced_class_withholds():
    """Alone, "Commit to an answer first: the explanation … open once you have" is true; in
    a paced class the answer waits for the instructor, and the banner says so."""
    _, code, _ = _instructor()
    learner = _learner(code)
    captions = [c.value for c in learner.caption]
    assert not [c for c in captions if c.startswith("Commit to an answer")]
    assert [c for c in captions if "Your instructor reveals each answer" in c]  # the banner
