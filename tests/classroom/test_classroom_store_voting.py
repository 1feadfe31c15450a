"""The class store on SQLite and PostgreSQL, used as a class uses it: a class's code and
instructor key, learners joining and voting, second rounds, closed voting and the reveal,
paced and self-paced learners, everyone moved to a lesson, and the CSV; nothing anyone reads
names a learner."""

from __future__ import annotations

import csv
import io

from classroom import rules
from tests.classroom.sample_class import FIRST, INSTRUCTOR, SECOND, class_with
from ui.lessons.catalog import OPTIONS


def test_a_class_gets_a_short_code_and_a_separate_instructor_key_stored_only_as_a_digest(
    store, snapshot
):
    new = store.create_class(INSTRUCTOR)
    assert len(new.code) == rules.CODE_LENGTH and set(new.code) <= set(rules.CODE_ALPHABET)
    assert new.instructor_key != new.code and len(new.instructor_key) >= 40
    stored = repr(snapshot())
    assert new.code in stored and new.instructor_key not in stored
    assert rules.digest(new.instructor_key) in stored


def test_codes_of_open_classes_differ(store):
    codes = {store.create_class(f"192.0.2.{i}").code for i in range(30)}
    assert len(codes) == 30


def test_a_learner_joins_with_the_code_as_typed_and_is_counted_once(store):
    new = store.create_class(INSTRUCTOR)
    typed = f" {new.code[:3].lower()}-{new.code[3:].lower()} "
    token = store.join(typed, "10.0.0.1")
    assert store.join(new.code, "10.0.0.1", token=token) == token  # the same browser again
    other = store.join(new.code, "10.0.0.1", token="forged")  # no such learner: a new one
    assert other not in (token, "forged")
    assert store.room(new.code, new.instructor_key, FIRST).joined == 2


def test_a_browser_joins_under_the_token_it_made_and_is_one_learner_however_often(store):
    """The page's browser makes its learner token before it joins (the class's cookie): the
    learner is named by it, so its pages joining with it are one learner.  Only what 128
    random bits make is taken; anything else gets a token of the store's."""
    new = store.create_class(INSTRUCTOR)
    mine = rules.new_secret(128)
    assert store.join(new.code, "10.0.0.1", mine) == mine
    assert store.join(new.code, "10.0.0.1", mine) == mine  # a second page, a reload
    assert store.room(new.code, new.instructor_key, FIRST).joined == 1
    for weak in ("short", "x" * 21, "a b c d e f g h i j k l m", "é" * 30, "y" * 65, 12345):
        assert rules.secret_shaped(weak) is None
        assert store.join(new.code, "10.0.0.1", weak) != weak
    assert store.room(new.code, new.instructor_key, FIRST).joined == 7


def test_votes_are_counted_per_option_and_a_change_of_mind_replaces_the_vote(store):
    new, (ann, bob, cat) = class_with(store, 3)
    store.vote(new.code, ann, f"{FIRST}.a")
    store.vote(new.code, bob, f"{FIRST}.b")
    store.vote(new.code, cat, f"{FIRST}.b")
    store.vote(new.code, ann, f"{FIRST}.b")  # changes her mind
    store.vote(new.code, ann, f"{SECOND}.c")  # another lesson is counted apart
    room = store.room(new.code, new.instructor_key, FIRST)
    assert room.counts == ({"a": 0, "b": 3, "c": 0, "d": 0},)
    assert room.answered == (3,) and room.joined == 3
    assert store.learner_view(new.code, ann, FIRST).votes == ("b",)


def test_a_second_round_counts_apart_and_keeps_the_first_rounds_votes(store):
    new, (ann, bob) = class_with(store, 2)
    store.vote(new.code, ann, f"{FIRST}.a")
    store.vote(new.code, bob, f"{FIRST}.a")
    state = store.second_round(new.code, new.instructor_key, FIRST)
    assert state == rules.LessonState(round=2, voting_open=True, revealed=False)
    store.vote(new.code, ann, f"{FIRST}.c")
    room = store.room(new.code, new.instructor_key, FIRST)
    assert room.counts == ({"a": 2, "b": 0, "c": 0, "d": 0}, {"a": 0, "b": 0, "c": 1, "d": 0})
    assert room.answered == (2, 1)
    assert store.learner_view(new.code, ann, FIRST).votes == ("a", "c")
    assert store.learner_view(new.code, bob, FIRST).votes == ("a", None)


def test_there_is_one_second_round_and_none_after_the_reveal(store, refused, snapshot):
    new = store.create_class(INSTRUCTOR)
    store.second_round(new.code, new.instructor_key, FIRST)
    before = snapshot()
    with refused("classroom.no_more_rounds"):
        store.second_round(new.code, new.instructor_key, FIRST)
    store.reveal(new.code, new.instructor_key, SECOND)
    with refused("classroom.no_more_rounds"):
        store.second_round(new.code, new.instructor_key, SECOND)
    assert store.room(new.code, new.instructor_key, SECOND).state.round == 1
    assert snapshot()["lessons"] == sorted([*before["lessons"], (new.code, SECOND, 1, 1, 1)])


def test_closed_voting_refuses_votes_until_opened_again(store, refused, snapshot):
    new, (ann,) = class_with(store, 1)
    store.vote(new.code, ann, f"{FIRST}.a")
    store.set_voting(new.code, new.instructor_key, FIRST, open_=False)
    before = snapshot()
    with refused("classroom.voting_closed"):
        store.vote(new.code, ann, f"{FIRST}.b")
    assert snapshot() == before
    store.set_voting(new.code, new.instructor_key, FIRST, open_=True)
    store.vote(new.code, ann, f"{FIRST}.b")
    assert store.room(new.code, new.instructor_key, FIRST).counts[0]["b"] == 1


def test_a_revealed_answer_closes_voting_for_good(store, refused):
    new, (ann,) = class_with(store, 1)
    state = store.reveal(new.code, new.instructor_key, FIRST)
    assert state.revealed and not state.voting_open
    with refused("classroom.voting_closed"):
        store.vote(new.code, ann, f"{FIRST}.a")
    with refused("classroom.revealed"):
        store.set_voting(new.code, new.instructor_key, FIRST, open_=True)


def test_paced_learners_see_the_answer_only_once_it_is_revealed(store):
    """What ui/widgets/class_vote.py's ``hidden`` reads: paced, the lesson's reveal."""
    new, (ann,) = class_with(store, 1)
    store.vote(new.code, ann, f"{FIRST}.a")
    view = store.learner_view(new.code, ann, FIRST)
    assert view.paced and not view.state.revealed and FIRST not in view.revealed
    store.reveal(new.code, new.instructor_key, FIRST)
    view = store.learner_view(new.code, ann, FIRST)
    assert view.state.revealed and FIRST in view.revealed


def test_self_paced_learners_see_the_answer_once_they_commit(store):
    """Self-paced, the answer shows with the learner's own vote: the view holds it."""
    new, (ann,) = class_with(store, 1)
    store.set_paced(new.code, new.instructor_key, False)
    view = store.learner_view(new.code, ann, FIRST)
    assert not view.paced and view.votes == (None,) and not view.final
    store.vote(new.code, ann, f"{FIRST}.a")
    view = store.learner_view(new.code, ann, FIRST)
    assert not view.paced and view.votes == ("a",) and view.final


def test_a_self_paced_class_has_no_second_round(store, refused, snapshot):
    """Self-paced, each learner who committed has seen the answer: a second round would
    count answers given after it.  Paced again, a question whose answer a learner saw has
    none either; another one has."""
    new, (ann,) = class_with(store, 1)
    store.vote(new.code, ann, f"{FIRST}.a")
    store.set_paced(new.code, new.instructor_key, False)
    before = snapshot()
    with refused("classroom.second_round_self_paced"):
        store.second_round(new.code, new.instructor_key, FIRST)
    assert snapshot()["lessons"] == before["lessons"]
    store.set_paced(new.code, new.instructor_key, True)  # ann saw the answer: still none
    with refused("classroom.second_round_seen"):
        store.second_round(new.code, new.instructor_key, FIRST)
    assert store.second_round(new.code, new.instructor_key, SECOND).round == 2  # nobody saw it


def test_an_answer_seen_with_no_vote_is_kept_its_rounds_votes_refused(store, refused, snapshot):
    """Self-paced, voting closed: ann commits, the page shows her the answer, no vote counted
    (``saw_answer``).  Her view says so (final, the lesson seen); once voting reopens a vote
    of hers in that round is refused, and a second round is too (paced again)."""
    new, (ann, bob) = class_with(store, 2)
    store.set_paced(new.code, new.instructor_key, False)
    store.set_voting(new.code, new.instructor_key, FIRST, False)
    store.saw_answer(new.code, ann, FIRST)
    store.saw_answer(new.code, ann, FIRST)  # twice: kept once
    view = store.learner_view(new.code, ann, FIRST)
    assert view.final and view.seen == {FIRST} and view.votes == (None,)
    assert not store.learner_view(new.code, bob, FIRST).final
    store.set_voting(new.code, new.instructor_key, FIRST, True)
    before = snapshot()
    with refused("classroom.answer_seen_unvoted"):
        store.vote(new.code, ann, f"{FIRST}.a")
    assert snapshot()["votes"] == before["votes"]
    store.vote(new.code, bob, f"{FIRST}.a")
    store.set_paced(new.code, new.instructor_key, True)
    with refused("classroom.second_round_seen"):
        store.second_round(new.code, new.instructor_key, FIRST)
    store.end_class(new.code, new.instructor_key)
    assert snapshot()["seen_answers"] == []


def test_an_answer_shown_while_self_paced_is_kept_when_said_after_pacing_again(store, refused):
    """The page drew the answer while the class was self-paced; its database was busy, and
    it says so a run later, once the instructor has paced the class again and reopened
    voting: kept (it was ignored, and a prediction made after the answer counted)."""
    new, (ann,) = class_with(store, 1)
    store.set_paced(new.code, new.instructor_key, False)
    store.set_voting(new.code, new.instructor_key, FIRST, False)
    store.set_paced(new.code, new.instructor_key, True)
    store.set_voting(new.code, new.instructor_key, FIRST, True)
    store.saw_answer(new.code, ann, FIRST)
    assert store.learner_view(new.code, ann, FIRST).final
    with refused("classroom.answer_seen_unvoted"):
        store.vote(new.code, ann, f"{FIRST}.a")


def test_a_learner_shown_the_answer_with_no_vote_blocks_a_second_round(store, refused):
    """The second-round check counts ``seen_answers`` too: here no vote is marked seen."""
    new, (ann,) = class_with(store, 1)
    store.set_paced(new.code, new.instructor_key, False)
    store.saw_answer(new.code, ann, FIRST)
    store.set_paced(new.code, new.instructor_key, True)
    with refused("classroom.second_round_seen"):
        store.second_round(new.code, new.instructor_key, FIRST)


def test_an_answer_shown_in_round_one_makes_every_later_vote_final(store, refused):
    """Paced, a vote, round 2 opens, Paced off (every vote is marked seen) and on again: the
    page shows the answer (the lesson is seen), so a round-2 vote is refused, as a change of
    the round-1 vote would be; it was counted in round 2."""
    new, (ann,) = class_with(store, 1)
    store.vote(new.code, ann, f"{FIRST}.a")
    store.second_round(new.code, new.instructor_key, FIRST)
    store.set_paced(new.code, new.instructor_key, False)
    store.set_paced(new.code, new.instructor_key, True)
    view = store.learner_view(new.code, ann, FIRST)
    assert view.final and FIRST in view.seen and view.votes == ("a", None)
    with refused("classroom.answer_seen"):
        store.vote(new.code, ann, f"{FIRST}.b")
    assert store.room(new.code, new.instructor_key, FIRST).answered == (1, 0)


def test_everyone_to_lesson_n_reaches_every_learners_view_each_time(store):
    new, (ann, bob) = class_with(store, 2)
    assert store.learner_view(new.code, ann, FIRST).class_lesson is None
    store.move_everyone(new.code, new.instructor_key, SECOND)
    store.move_everyone(new.code, new.instructor_key, SECOND)  # again: followers go back
    for token in (ann, bob):
        view = store.learner_view(new.code, token, FIRST)
        assert (view.class_lesson, view.moves) == (SECOND, 2)


def test_the_csv_has_every_round_of_every_lesson_voted_on_and_names_no_learner(store):
    new, tokens = class_with(store, 3)
    for token in tokens:
        store.vote(new.code, token, f"{FIRST}.b")
    store.second_round(new.code, new.instructor_key, FIRST)
    store.vote(new.code, tokens[0], f"{FIRST}.a")
    store.vote(new.code, tokens[1], f"{SECOND}.d")
    text = store.export_csv(new.code, new.instructor_key)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["lesson"], r["round"]) for r in rows[:: len(OPTIONS)]] == [
        (FIRST, "1"),
        (FIRST, "2"),
        (SECOND, "1"),
    ]
    votes = {(r["lesson"], r["round"], r["option"]): int(r["votes"]) for r in rows}
    assert votes[(FIRST, "1", "b")] == 3 and votes[(FIRST, "2", "a")] == 1
    assert votes[(SECOND, "1", "d")] == 1 and sum(votes.values()) == 5
    assert not any(t in text or rules.digest(t) in text for t in tokens)


def test_nothing_a_learner_or_the_instructor_reads_names_a_learner(store):
    new, tokens = class_with(store, 3)
    for token in tokens:
        store.vote(new.code, token, f"{FIRST}.c")
    secrets = [*tokens, *(rules.digest(t) for t in tokens)]
    seen = [
        repr(store.learner_view(new.code, tokens[0], FIRST)),
        repr(store.room(new.code, new.instructor_key, FIRST)),
        store.export_csv(new.code, new.instructor_key),
    ]
    assert not [s for s in secrets for text in seen if s in text]
