"""The class store on SQLite and PostgreSQL counts predictions: a vote cast or kept while
its learner was shown the answer is final for its round, and a learner's view says which of
the class's answers are revealed."""

from __future__ import annotations

from tests.classroom.sample_class import FIRST, SECOND, class_with
from ui.lessons.catalog import lesson

ANSWER = lesson(FIRST).answer
WRONG = next(o for o in "abcd" if o != ANSWER)


def test_self_paced_a_vote_changed_after_the_answer_was_shown_is_refused(store, refused):
    """Self-paced, the answer shows with a learner's first vote: that vote stays counted."""
    new, (ann,) = class_with(store, 1)
    store.set_paced(new.code, new.instructor_key, False)
    store.vote(new.code, ann, f"{FIRST}.{WRONG}")
    view = store.learner_view(new.code, ann, FIRST)
    assert not view.paced and view.votes == (WRONG,) and view.final  # shown: the vote stays
    with refused("classroom.answer_seen"):
        store.vote(new.code, ann, f"{FIRST}.{ANSWER}")
    counts = store.room(new.code, new.instructor_key, FIRST).counts[0]
    assert counts[WRONG] == 1 and counts[ANSWER] == 0


def test_paced_a_change_of_mind_before_the_reveal_replaces_the_vote(store):
    """Paced, nothing is shown before the reveal: a learner may change their prediction."""
    new, (ann,) = class_with(store, 1)
    store.vote(new.code, ann, f"{FIRST}.{WRONG}")
    assert not store.learner_view(new.code, ann, FIRST).final
    store.vote(new.code, ann, f"{FIRST}.{ANSWER}")
    counts = store.room(new.code, new.instructor_key, FIRST).counts[0]
    assert counts[WRONG] == 0 and counts[ANSWER] == 1


def test_votes_shown_their_answer_by_a_switch_to_self_paced_stay_final(store, refused):
    """Turning paced mode off shows every voter the answer: their votes are final, also once
    the class is paced again."""
    new, (ann,) = class_with(store, 1)
    store.vote(new.code, ann, f"{FIRST}.{WRONG}")
    store.set_paced(new.code, new.instructor_key, False)
    store.set_paced(new.code, new.instructor_key, True)
    assert store.learner_view(new.code, ann, FIRST).final
    with refused("classroom.answer_seen"):
        store.vote(new.code, ann, f"{FIRST}.{ANSWER}")


def test_a_learners_view_lists_the_lessons_whose_answer_is_revealed(store):
    new, (ann,) = class_with(store, 1)
    assert store.learner_view(new.code, ann, SECOND).revealed == frozenset()
    store.reveal(new.code, new.instructor_key, FIRST)
    assert store.learner_view(new.code, ann, SECOND).revealed == {FIRST}
