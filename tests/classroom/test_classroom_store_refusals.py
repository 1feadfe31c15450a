"""The class store on SQLite and PostgreSQL, refusing: a learner or a forged key acting as
the instructor, a forged token voting, a vote that is no lesson's answer, floods of votes,
joins and new classes past their limits, wrong and malformed codes, a full class or server;
and a class's end: expired or ended, refused everywhere and deleted with all its data."""

from __future__ import annotations

import pytest

from classroom import rules
from tests.classroom.sample_class import FIRST, INSTRUCTOR, SECOND, class_with
from ui.lessons.catalog import ANSWER_IDS, LESSON_IDS, OPTIONS

INSTRUCTOR_ACTIONS = {
    "room": lambda s, code, key: s.room(code, key, FIRST),
    "close": lambda s, code, key: s.set_voting(code, key, FIRST, False),
    "second round": lambda s, code, key: s.second_round(code, key, FIRST),
    "reveal": lambda s, code, key: s.reveal(code, key, FIRST),
    "move": lambda s, code, key: s.move_everyone(code, key, SECOND),
    "paced": lambda s, code, key: s.set_paced(code, key, False),
    "csv": lambda s, code, key: s.export_csv(code, key),
    "end": lambda s, code, key: s.end_class(code, key),
}


@pytest.mark.parametrize("action", INSTRUCTOR_ACTIONS)
def test_a_learner_or_a_forged_key_never_acts_as_the_instructor(store, refused, snapshot, action):
    new, (ann,) = class_with(store, 1)
    other = store.create_class(INSTRUCTOR)
    store.vote(new.code, ann, f"{FIRST}.a")
    before = snapshot()
    forged = [ann, new.code, other.instructor_key, "", "x" * 10_000, None]
    for key in forged:
        with refused("classroom.not_instructor"):
            INSTRUCTOR_ACTIONS[action](store, new.code, key)
    assert snapshot() == before
    INSTRUCTOR_ACTIONS[action](store, new.code, new.instructor_key)  # the real key works


@pytest.mark.parametrize("action", INSTRUCTOR_ACTIONS)
def test_an_instructors_link_without_its_code_is_refused_as_naming_no_code(store, refused, action):
    """A link holding the key but no code (or a code the link's parser refused, hence ""):
    the refusal says that no code was given, not that no class has the code ""."""
    new = store.create_class(INSTRUCTOR)
    for code in ("", "   "):
        with refused("classroom.no_code"):
            INSTRUCTOR_ACTIONS[action](store, code, new.instructor_key)


def test_a_token_from_another_class_or_a_forged_one_cannot_vote(store, refused, snapshot):
    new, (ann,) = class_with(store, 1)
    other = store.create_class(INSTRUCTOR)
    before = snapshot()
    for token in ["forged", rules.digest(ann), "", None, "y" * 10_000]:
        with refused("classroom.not_joined"):
            store.vote(new.code, token, f"{FIRST}.a")
    with refused("classroom.not_joined"):
        store.vote(other.code, ann, f"{FIRST}.a")
    with refused("classroom.not_joined"):
        store.learner_view(other.code, ann, FIRST)
    assert snapshot() == before


@pytest.mark.parametrize(
    "answer_id, key",
    [
        ("no_such_lesson.a", "classroom.unknown_lesson"),
        (FIRST, "classroom.unknown_lesson"),  # no option at all
        (f"{FIRST}.e", "classroom.unknown_option"),
        (f"{FIRST}.", "classroom.unknown_option"),
        (f"{FIRST}.A", "classroom.unknown_option"),
        (f"{FIRST}.a; DROP TABLE votes", "classroom.unknown_option"),
        (None, "classroom.unknown_lesson"),
    ],
)
def test_a_vote_must_be_one_of_the_lessons_answer_ids(store, refused, snapshot, answer_id, key):
    new, (ann,) = class_with(store, 1)
    before = snapshot()
    with refused(key):
        store.vote(new.code, ann, answer_id)
    assert snapshot() == before


def test_every_answer_id_of_the_lessons_is_accepted(store):
    new, (ann,) = class_with(store, 1)
    for answer_id in ANSWER_IDS:
        store.vote(new.code, ann, answer_id)
        store.clock.advance(1.5 * rules.VOTE_LIMIT.window_s / rules.VOTE_LIMIT.count)
    for lesson in LESSON_IDS:
        assert store.room(new.code, new.instructor_key, lesson).counts[0][OPTIONS[-1]] == 1


def test_a_flood_of_votes_is_refused_past_the_limit_and_the_last_accepted_vote_stands(
    store, refused, snapshot, clock
):
    new, (ann,) = class_with(store, 1)
    limit = rules.VOTE_LIMIT
    for i in range(limit.count):
        store.vote(new.code, ann, f"{FIRST}.{OPTIONS[i % 2]}")
    last = OPTIONS[(limit.count - 1) % 2]
    before = snapshot()
    with refused("classroom.too_many_votes"):
        store.vote(new.code, ann, f"{FIRST}.d")
    assert snapshot() == before
    assert store.room(new.code, new.instructor_key, FIRST).counts[0][last] == 1
    clock.advance(limit.window_s)
    store.vote(new.code, ann, f"{FIRST}.d")  # a new window
    assert store.room(new.code, new.instructor_key, FIRST).counts[0]["d"] == 1


def test_a_malformed_code_is_refused_without_counting_as_a_guess(store, refused, snapshot):
    store.create_class(INSTRUCTOR)
    before = snapshot()
    for typed in ["", "ABC", "ABCDEFG", "ABCDE0", "ABCDEI", "ABC DE!", "x" * 10_000, None, 123456]:
        with refused("classroom.malformed_code"):
            store.join(typed, "10.0.0.1")
    assert snapshot() == before


def test_a_wrong_code_is_refused_counted_and_changes_nothing_else(store, refused, snapshot):
    new = store.create_class(INSTRUCTOR)
    wrong = next(c for c in ("222222", "333333") if c != new.code)
    before = snapshot()
    with refused("classroom.no_class"):
        store.join(wrong, "10.0.0.1")
    after = snapshot()
    assert {t: r for t, r in after.items() if t != "rate_limits"} == {
        t: r for t, r in before.items() if t != "rate_limits"
    }
    joins = [events for subject, _, events in after["rate_limits"] if subject.startswith("join:")]
    assert joins == [1, 1]  # this client's wrong codes, and every client's
    assert "10.0.0.1" not in repr(after)  # the client only as a salted digest


def test_a_refusal_names_the_code_as_read_and_a_malformed_one_as_typed(store, refused):
    """The code in a message is ours, upper case in two halves as the instructor shows it
    (not the typed text in a small code font, where capitals read as lower case)."""
    new, (ann,) = class_with(store, 1)
    wrong = next(c for c in ("zzz-zzz", "yyy-yyy") if rules.normalize_code(c) != new.code)
    with refused("classroom.no_class") as caught:
        store.join(wrong, "10.0.0.1")
    assert caught.value.params["code"] == wrong.upper()
    with refused("classroom.not_instructor") as caught:
        store.reveal(new.code.lower(), "forged", FIRST)
    assert caught.value.params["code"] == rules.shown_code(new.code)
    with refused("classroom.not_joined") as caught:
        store.learner_view(new.code.lower(), "forged", FIRST)
    assert caught.value.params["code"] == rules.shown_code(new.code)
    with refused("classroom.malformed_code") as caught:  # an instructor link's bad code
        store.room("<b>1</b>", new.instructor_key, FIRST)
    assert caught.value.params["value"] == "<b>1</b>"  # shown literally, as typed


def test_past_its_limit_a_client_is_refused_even_with_the_right_code(store, refused, clock):
    new = store.create_class(INSTRUCTOR)
    limit = rules.JOIN_LIMITS["client"]
    for _ in range(limit.count):
        with refused("classroom.no_class"):
            store.join("222222" if new.code != "222222" else "333333", "10.0.0.1")
    with refused("classroom.too_many_attempts"):
        store.join(new.code, "10.0.0.1")
    store.join(new.code, "10.0.0.2")  # another address is not held back
    clock.advance(limit.window_s)
    store.join(new.code, "10.0.0.1")


def test_a_right_code_is_not_counted_as_a_guess(store):
    new = store.create_class(INSTRUCTOR)
    learners = rules.JOIN_LIMITS["client"].count + 5
    for _ in range(learners):
        store.join(new.code, "10.0.0.1")  # a room behind one address
    assert store.room(new.code, new.instructor_key, FIRST).joined == learners


def test_past_the_servers_limit_only_clients_without_wrong_codes_are_checked(
    store, refused, monkeypatch
):
    monkeypatch.setitem(rules.JOIN_LIMITS, "server", rules.Limit(3, 600.0))
    new = store.create_class(INSTRUCTOR)
    wrong = "222222" if new.code != "222222" else "333333"
    for address in ("10.0.0.1", "10.0.0.2", "10.0.0.3"):
        with refused("classroom.no_class"):
            store.join(wrong, address)
    with refused("classroom.too_many_attempts"):  # a guesser, past the server's limit
        store.join(new.code, "10.0.0.1")
    store.join(new.code, "10.0.0.9")  # a learner with a clean record still gets in
    with refused("classroom.no_class"):  # and a fresh address gets one guess...
        store.join(wrong, "10.0.0.8")
    with refused("classroom.too_many_attempts"):  # ...and no second
        store.join(wrong, "10.0.0.8")


def test_an_expired_class_is_refused_everywhere_then_purged_with_all_its_data(
    store, refused, snapshot, clock
):
    new, (ann,) = class_with(store, 1)
    store.vote(new.code, ann, f"{FIRST}.a")
    store.reveal(new.code, new.instructor_key, FIRST)
    kept = store.create_class(INSTRUCTOR)
    clock.advance(rules.CLASS_LIFETIME_S - 60)
    later = store.create_class(INSTRUCTOR)  # created near the end of the first ones' lifetime
    clock.advance(61)
    with refused("classroom.not_instructor"):  # told apart from a wrong key, no more
        store.room(new.code, new.instructor_key, FIRST)
    with refused("classroom.no_class"):
        store.vote(new.code, ann, f"{FIRST}.b")
    with refused("classroom.no_class"):
        store.learner_view(new.code, ann, FIRST)
    assert store.purge_expired() == 0  # the polled reads above purged new and kept
    rows = snapshot()
    assert [row[0] for row in rows["classes"]] == [later.code]
    assert rows["lessons"] == rows["learners"] == rows["votes"] == []
    with refused("classroom.no_class"):
        store.join(kept.code, "10.0.0.1")


def test_a_join_purges_expired_classes(store, snapshot, clock):
    class_with(store, 2)
    clock.advance(rules.CLASS_LIFETIME_S - 10)
    fresh = store.create_class(INSTRUCTOR)
    clock.advance(20)  # the first class has expired, and no class was created since
    store.join(fresh.code, "10.0.0.1")
    rows = snapshot()
    assert [row[0] for row in rows["learners"]] == [fresh.code]


def test_ending_a_class_deletes_it_at_once_and_says_how_many_answered(store, snapshot):
    new, (ann, _) = class_with(store, 2)
    store.vote(new.code, ann, f"{FIRST}.a")
    store.vote(new.code, ann, f"{SECOND}.b")
    ended = store.end_class(new.code, new.instructor_key)
    assert (ended.joined, ended.answered) == (2, 1)
    rows = snapshot()
    assert rows["classes"] == rows["learners"] == rows["votes"] == rows["lessons"] == []
    assert [row[0] for row in rows["ended_classes"]] == [new.code]  # the code, nothing else


def test_an_ended_class_is_refused_as_ended_by_its_instructor_until_its_expiry(
    store, refused, clock
):
    new, (ann,) = class_with(store, 1)
    store.end_class(new.code, new.instructor_key)
    with refused("classroom.ended") as caught:
        store.learner_view(new.code, ann, FIRST)  # what the learner's page polls
    assert caught.value.params["code"] == rules.shown_code(new.code)
    with refused("classroom.ended"):
        store.vote(new.code, ann, f"{FIRST}.a")
    with refused("classroom.ended"):
        store.join(new.code.lower(), "10.0.0.9")  # a reload of the join link
    with refused("classroom.ended"):
        store.room(new.code, new.instructor_key, FIRST)  # the instructor's other tab
    clock.advance(rules.CLASS_LIFETIME_S)
    store.purge_expired()
    with refused("classroom.no_class"):  # past its expiry, its code is forgotten too
        store.learner_view(new.code, ann, FIRST)


def test_reloading_an_ended_classs_link_is_not_counted_as_a_guess(store, refused):
    new = store.create_class(INSTRUCTOR)
    store.end_class(new.code, new.instructor_key)
    for _ in range(rules.JOIN_LIMITS["client"].count + 5):  # a room behind one address
        with refused("classroom.ended"):
            store.join(new.code, "10.0.0.1")
    store.join(store.create_class(INSTRUCTOR).code, "10.0.0.1")  # the next class: joined


def test_a_new_class_never_takes_an_ended_classs_code(store, refused, monkeypatch):
    new, (ann,) = class_with(store, 1)
    store.end_class(new.code, new.instructor_key)
    drawn = iter([new.code, "23456A"])  # the ended code drawn again first
    monkeypatch.setattr(rules, "new_code", lambda: next(drawn))
    assert store.create_class(INSTRUCTOR).code == "23456A"
    with refused("classroom.ended"):
        store.learner_view(new.code, ann, FIRST)


def test_one_address_starts_a_few_classes_an_hour(store, refused, snapshot, clock):
    limit = rules.CREATE_LIMIT
    for _ in range(limit.count):
        store.create_class(INSTRUCTOR)
    before = snapshot()
    with refused("classroom.too_many_classes"):
        store.create_class(INSTRUCTOR)
    assert snapshot() == before
    store.create_class("192.0.2.2")
    clock.advance(limit.window_s)
    store.create_class(INSTRUCTOR)


def test_a_full_class_and_a_full_server_refuse_more(store, refused, monkeypatch):
    monkeypatch.setattr(rules, "MAX_LEARNERS", 2)
    monkeypatch.setattr(rules, "MAX_OPEN_CLASSES", 2)
    new, _ = class_with(store, 2)
    with refused("classroom.class_full"):
        store.join(new.code, "10.0.0.1")
    store.create_class(INSTRUCTOR)
    with refused("classroom.server_full"):
        store.create_class("192.0.2.2")


def test_an_unknown_lesson_is_refused_for_the_instructor_too(store, refused):
    new = store.create_class(INSTRUCTOR)
    with refused("classroom.unknown_lesson"):
        store.room(new.code, new.instructor_key, "no_such_lesson")
    with refused("classroom.unknown_lesson"):
        store.move_everyone(new.code, new.instructor_key, "no_such_lesson")
