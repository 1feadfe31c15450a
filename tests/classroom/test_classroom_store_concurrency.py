"""The class store under actions at the same moment, on SQLite and on PostgreSQL: a class's
writing actions lock its row first, so an action reads the state it acts on, ending a class
leaves no row behind, and no two actions deadlock.

SQLite's ``BEGIN IMMEDIATE`` serializes whole transactions; PostgreSQL (READ COMMITTED,
several app processes sharing it) needs the row locks.  The pauses below only widen a window
that exists between two statements of one transaction."""

from __future__ import annotations

import threading
import time

from classroom import db, rows, rules
from engine.errors import EngineError
from tests.classroom.sample_class import FIRST, INSTRUCTOR, class_with


def _in_threads(*calls):
    """Run each call in its own thread; the exceptions they raised, in order (None: none)."""
    raised = [None] * len(calls)

    def run(i, call):
        try:
            call()
        except BaseException as error:  # noqa: BLE001  (returned to the test)
            raised[i] = error

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return raised


def test_two_second_rounds_at_once_open_round_two_once(store, monkeypatch):
    """The instructor's two tabs press "Second round" at once: one opens round 2, the other
    is refused (``no_more_rounds``); never a round past ``rules.ROUNDS``."""
    new = store.create_class(INSTRUCTOR)
    store.set_voting(new.code, new.instructor_key, FIRST, True)  # the lesson has its row
    both_read = threading.Barrier(2, timeout=1)  # broken: one waits alone
    real = rows.lesson_state

    def lesson_state(tx, code, lesson):
        state = real(tx, code, lesson)
        try:  # each waits for the other's lock, and the barrier breaks
            both_read.wait()
        except threading.BrokenBarrierError:
            pass
        return state

    monkeypatch.setattr(rows, "lesson_state", lesson_state)
    second = lambda: store.second_round(new.code, new.instructor_key, FIRST)  # noqa: E731
    raised = _in_threads(second, second)
    monkeypatch.setattr(rows, "lesson_state", real)
    room = store.room(new.code, new.instructor_key, FIRST)
    assert room.state.round == rules.ROUNDS and len(room.counts) == rules.ROUNDS, raised
    assert sorted(getattr(e, "key", None) or "" for e in raised) == ["", "classroom.no_more_rounds"]


def _paused(monkeypatch, thread_name: str, before_sql: str):
    """In the thread ``thread_name``, stop before the statement starting ``before_sql`` until
    ``go`` is set (at most 1 s); ``reached`` is set when it gets there."""
    reached, go = threading.Event(), threading.Event()
    real = db.Transaction.run

    def run(self, sql, params=()):
        if threading.current_thread().name == thread_name and sql.startswith(before_sql):
            reached.set()
            go.wait(1.0)
        return real(self, sql, params)

    monkeypatch.setattr(db.Transaction, "run", run)
    return reached, go


def _left_behind(store) -> dict[str, int]:
    """Rows of learners, votes and lessons whose class no longer exists."""
    with store.database.transaction() as tx:
        return {
            table: tx.one(
                f"SELECT COUNT(*) FROM {table} WHERE code NOT IN (SELECT code FROM classes)"
            )[0]
            for table in ("learners", "votes", "lessons")
        }


def test_a_join_racing_the_end_of_the_class_leaves_no_learner_row(store, clock, monkeypatch):
    """A learner joins while the instructor ends the class: the end waits for the join (or
    the join finds the class ended); no learner row outlives its class (purges delete
    through ``classes``, so such a row would stay forever)."""
    new = store.create_class(INSTRUCTOR)
    reached, go = _paused(monkeypatch, "join", "INSERT INTO learners")
    joining = threading.Thread(
        target=lambda: store.join(new.code, "10.0.0.1"), name="join", daemon=True
    )
    joining.start()
    assert reached.wait(10)
    ended = _in_threads(lambda: store.end_class(new.code, new.instructor_key))
    go.set()
    joining.join(10)
    clock.advance(2 * rules.CLASS_LIFETIME_S)
    store.purge_expired()
    assert _left_behind(store) == {"learners": 0, "votes": 0, "lessons": 0}, ended


def test_a_vote_racing_the_end_of_the_class_leaves_no_vote_row(store, clock, monkeypatch):
    """A learner's vote is being written while the instructor ends the class: the end waits
    for the vote and deletes it with the class; no vote row outlives its class."""
    new, (ann,) = class_with(store, 1)
    reached, go = _paused(monkeypatch, "vote", "INSERT INTO votes")
    voting = threading.Thread(
        target=lambda: store.vote(new.code, ann, f"{FIRST}.a"), name="vote", daemon=True
    )
    voting.start()
    assert reached.wait(10)
    ending = threading.Thread(
        target=lambda: store.end_class(new.code, new.instructor_key), daemon=True
    )
    ending.start()
    time.sleep(1.0)  # the end has started, and waits for the vote
    go.set()
    voting.join(10)
    ending.join(10)
    clock.advance(2 * rules.CLASS_LIFETIME_S)
    store.purge_expired()
    assert _left_behind(store) == {"learners": 0, "votes": 0, "lessons": 0}


def test_a_changed_vote_racing_the_end_of_the_class_is_no_deadlock(store, monkeypatch):
    """The same for a learner changing a vote (the end deleting the old vote, the vote
    replacing it): both lock the class first, so neither waits for the other in turn, and
    neither caller gets a database error (``DeadlockDetected``) in place of a message."""
    new, (ann,) = class_with(store, 1)
    store.vote(new.code, ann, f"{FIRST}.a")
    reached, go = _paused(monkeypatch, "vote", "INSERT INTO votes")
    raised = []

    def vote():
        try:
            store.vote(new.code, ann, f"{FIRST}.b")
        except BaseException as error:  # noqa: BLE001
            raised.append(error)

    def end():
        try:
            store.end_class(new.code, new.instructor_key)
        except BaseException as error:  # noqa: BLE001
            raised.append(error)

    voting = threading.Thread(target=vote, name="vote", daemon=True)
    voting.start()
    assert reached.wait(10)
    ending = threading.Thread(target=end, daemon=True)
    ending.start()
    time.sleep(0.5)
    go.set()
    voting.join(15)
    ending.join(15)
    assert [e for e in raised if not isinstance(e, EngineError)] == []


def test_one_browsers_pages_joining_at_once_with_its_token_are_one_learner(store, monkeypatch):
    """A join link opened twice at once (a double tap, a QR code scanned twice): both pages
    join with the token their browser made before joining (``rules.secret_shaped``), each
    finding no learner yet; the first insert waits at its statement while the second runs.
    One learner, and both pages hold its token; another browser's token is another learner."""
    new = store.create_class(INSTRUCTOR)
    token = rules.new_secret(128)  # what the browser keeps in the class's cookie
    reached, go = _paused(monkeypatch, "first", "INSERT INTO learners")
    got = []
    first = threading.Thread(
        target=lambda: got.append(store.join(new.code, "10.0.0.1", token)), name="first"
    )
    first.start()
    assert reached.wait(10)
    raised = _in_threads(lambda: got.append(store.join(new.code, "10.0.0.1", token)))
    go.set()
    first.join(10)
    assert raised == [None] and got == [token, token]
    other = store.join(new.code, "10.0.0.1", rules.new_secret(128))  # the same room's address
    assert other != token
    assert store.room(new.code, new.instructor_key, FIRST).joined == 2
