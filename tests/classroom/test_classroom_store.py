"""The class store on SQLite and PostgreSQL: what each side may do, and what is recorded."""

from __future__ import annotations

import csv
import io
import sqlite3
import threading

import pytest

from classroom import db, rules
from classroom.db import Database
from classroom.schema import MIGRATIONS
from classroom.store import ClassStore, open_store
from ui.lessons.catalog import ANSWER_IDS, LESSON_IDS, OPTIONS

FIRST, SECOND = LESSON_IDS[0], LESSON_IDS[1]
INSTRUCTOR = "192.0.2.1"  # the instructor's address


def _class_with(store, learners: int):
    new = store.create_class(INSTRUCTOR)
    tokens = [store.join(new.code, f"10.0.0.{i}") for i in range(learners)]
    return new, tokens


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


def test_votes_are_counted_per_option_and_a_change_of_mind_replaces_the_vote(store):
    new, (ann, bob, cat) = _class_with(store, 3)
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
    new, (ann, bob) = _class_with(store, 2)
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
    new, (ann,) = _class_with(store, 1)
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
    new, (ann,) = _class_with(store, 1)
    state = store.reveal(new.code, new.instructor_key, FIRST)
    assert state.revealed and not state.voting_open
    with refused("classroom.voting_closed"):
        store.vote(new.code, ann, f"{FIRST}.a")
    with refused("classroom.revealed"):
        store.set_voting(new.code, new.instructor_key, FIRST, open_=True)


def test_paced_learners_see_the_answer_only_once_it_is_revealed(store):
    new, (ann,) = _class_with(store, 1)
    store.vote(new.code, ann, f"{FIRST}.a")
    assert not store.learner_view(new.code, ann, FIRST).answer_visible
    store.reveal(new.code, new.instructor_key, FIRST)
    assert store.learner_view(new.code, ann, FIRST).answer_visible


def test_self_paced_learners_see_the_answer_once_they_commit(store):
    new, (ann,) = _class_with(store, 1)
    store.set_paced(new.code, new.instructor_key, False)
    assert not store.learner_view(new.code, ann, FIRST).answer_visible
    store.vote(new.code, ann, f"{FIRST}.a")
    view = store.learner_view(new.code, ann, FIRST)
    assert view.answer_visible and not view.paced


def test_everyone_to_lesson_n_reaches_every_learners_view_each_time(store):
    new, (ann, bob) = _class_with(store, 2)
    assert store.learner_view(new.code, ann, FIRST).class_lesson is None
    store.move_everyone(new.code, new.instructor_key, SECOND)
    store.move_everyone(new.code, new.instructor_key, SECOND)  # again: followers go back
    for token in (ann, bob):
        view = store.learner_view(new.code, token, FIRST)
        assert (view.class_lesson, view.moves) == (SECOND, 2)


def test_the_csv_has_every_round_of_every_lesson_voted_on_and_names_no_learner(store):
    new, tokens = _class_with(store, 3)
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
    new, tokens = _class_with(store, 3)
    for token in tokens:
        store.vote(new.code, token, f"{FIRST}.c")
    secrets = [*tokens, *(rules.digest(t) for t in tokens)]
    seen = [
        repr(store.learner_view(new.code, tokens[0], FIRST)),
        repr(store.room(new.code, new.instructor_key, FIRST)),
        store.export_csv(new.code, new.instructor_key),
    ]
    assert not [s for s in secrets for text in seen if s in text]


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
    new, (ann,) = _class_with(store, 1)
    other = store.create_class(INSTRUCTOR)
    store.vote(new.code, ann, f"{FIRST}.a")
    before = snapshot()
    forged = [ann, new.code, other.instructor_key, "", "x" * 10_000, None]
    for key in forged:
        with refused("classroom.not_instructor"):
            INSTRUCTOR_ACTIONS[action](store, new.code, key)
    assert snapshot() == before
    INSTRUCTOR_ACTIONS[action](store, new.code, new.instructor_key)  # the real key works


def test_a_token_from_another_class_or_a_forged_one_cannot_vote(store, refused, snapshot):
    new, (ann,) = _class_with(store, 1)
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
    new, (ann,) = _class_with(store, 1)
    before = snapshot()
    with refused(key):
        store.vote(new.code, ann, answer_id)
    assert snapshot() == before


def test_every_answer_id_of_the_lessons_is_accepted(store):
    new, (ann,) = _class_with(store, 1)
    for answer_id in ANSWER_IDS:
        store.vote(new.code, ann, answer_id)
        store.clock.advance(1.5 * rules.VOTE_LIMIT.window_s / rules.VOTE_LIMIT.count)
    for lesson in LESSON_IDS:
        assert store.room(new.code, new.instructor_key, lesson).counts[0][OPTIONS[-1]] == 1


def test_a_flood_of_votes_is_refused_past_the_limit_and_the_last_accepted_vote_stands(
    store, refused, snapshot, clock
):
    new, (ann,) = _class_with(store, 1)
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
    new, (ann,) = _class_with(store, 1)
    store.vote(new.code, ann, f"{FIRST}.a")
    store.reveal(new.code, new.instructor_key, FIRST)
    kept = store.create_class(INSTRUCTOR)
    clock.advance(rules.CLASS_LIFETIME_S - 60)
    later = store.create_class(INSTRUCTOR)  # created near the end of the first ones' lifetime
    clock.advance(61)
    with refused("classroom.no_class"):
        store.room(new.code, new.instructor_key, FIRST)
    with refused("classroom.no_class"):
        store.vote(new.code, ann, f"{FIRST}.b")
    with refused("classroom.no_class"):
        store.learner_view(new.code, ann, FIRST)
    assert store.purge_expired() == 2  # new and kept
    rows = snapshot()
    assert [row[0] for row in rows["classes"]] == [later.code]
    assert rows["lessons"] == rows["learners"] == rows["votes"] == []
    with refused("classroom.no_class"):
        store.join(kept.code, "10.0.0.1")


def test_a_join_purges_expired_classes(store, snapshot, clock):
    _class_with(store, 2)
    clock.advance(rules.CLASS_LIFETIME_S - 10)
    fresh = store.create_class(INSTRUCTOR)
    clock.advance(20)  # the first class has expired, and no class was created since
    store.join(fresh.code, "10.0.0.1")
    rows = snapshot()
    assert [row[0] for row in rows["learners"]] == [fresh.code]


def test_ending_a_class_deletes_it_at_once(store, refused, snapshot):
    new, (ann,) = _class_with(store, 1)
    store.vote(new.code, ann, f"{FIRST}.a")
    store.end_class(new.code, new.instructor_key)
    rows = snapshot()
    assert rows["classes"] == rows["learners"] == rows["votes"] == []
    with refused("classroom.no_class"):
        store.join(new.code, "10.0.0.1")


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
    new, _ = _class_with(store, 2)
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


def test_votes_from_many_threads_at_once_are_all_recorded(store):
    new, tokens = _class_with(store, 40)
    errors = []

    def learner(i: int, token: str) -> None:
        try:
            store.vote(new.code, token, f"{FIRST}.{OPTIONS[i % 4]}")
            store.learner_view(new.code, token, FIRST)
        except Exception as error:  # noqa: BLE001  (reported below)
            errors.append(error)

    threads = [threading.Thread(target=learner, args=(i, t)) for i, t in enumerate(tokens)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert store.room(new.code, new.instructor_key, FIRST).counts == ({o: 10 for o in OPTIONS},)


def test_two_stores_on_one_database_see_each_others_votes(database, clock):
    # as two app processes would: each with its own connections
    first = ClassStore(database, ANSWER_IDS, clock)
    second = ClassStore(Database(database.target), ANSWER_IDS, clock)
    new = first.create_class(INSTRUCTOR)
    token = second.join(new.code, "10.0.0.1")
    second.vote(new.code, token, f"{FIRST}.c")
    assert first.room(new.code, new.instructor_key, FIRST).counts[0]["c"] == 1
    second.database.close()


def test_the_schema_is_versioned_and_migrating_again_changes_nothing(database, clock, snapshot):
    ClassStore(database, ANSWER_IDS, clock)
    before = snapshot()
    ClassStore(database, ANSWER_IDS, clock)
    assert snapshot() == before
    assert before["schema_version"] == [(len(MIGRATIONS),)]


def test_a_newer_schema_than_the_code_knows_is_refused(database, clock):
    ClassStore(database, ANSWER_IDS, clock)
    with database.transaction(write=True) as tx:
        tx.run("UPDATE schema_version SET version = ?", (len(MIGRATIONS) + 1,))
    with pytest.raises(RuntimeError, match="schema version"):
        ClassStore(database, ANSWER_IDS, clock)


def test_sqlite_is_a_wal_file_in_the_data_directory_created_on_first_use(tmp_path, monkeypatch):
    monkeypatch.delenv("NORMSCOPE_DATABASE_URL", raising=False)
    monkeypatch.setenv("NORMSCOPE_DATA_DIR", str(tmp_path / "new" / "folder"))
    store = open_store(ANSWER_IDS)
    store.create_class(INSTRUCTOR)
    path = tmp_path / "new" / "folder" / "classroom.sqlite3"
    assert store.database.target == path and path.is_file()
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    store.database.close()


def test_a_database_url_selects_postgresql(postgres_url, monkeypatch):
    monkeypatch.setenv("NORMSCOPE_DATABASE_URL", postgres_url)
    store = open_store(ANSWER_IDS)
    assert store.database.dialect.name == "postgresql"
    store.create_class(INSTRUCTOR)
    store.database.close()


def test_stores_opening_at_once_migrate_the_schema_once(database, clock):
    # as app processes starting together would: each with its own connections
    opened, errors = [], []

    def open_one() -> None:
        try:
            opened.append(ClassStore(Database(database.target), ANSWER_IDS, clock))
        except Exception as error:  # noqa: BLE001  (reported below)
            errors.append(error)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(opened) == 4
    with database.transaction() as tx:
        assert tx.rows("SELECT version FROM schema_version") == [(len(MIGRATIONS),)]
        assert len(tx.rows("SELECT value FROM meta WHERE name = 'salt'")) == 1
    for store in opened:
        store.database.close()


def test_a_thread_waiting_too_long_for_a_connection_is_refused(
    database, clock, refused, monkeypatch
):
    monkeypatch.setattr(db, "POOL_WAIT_S", 0.1)
    single = Database(database.target, pool_size=1)
    store = ClassStore(single, ANSWER_IDS, clock)
    with single.transaction():
        with refused("classroom.busy"):
            store.create_class(INSTRUCTOR)
    store.create_class(INSTRUCTOR)  # the connection is back
    single.close()
