"""The class pages when the class database is busy for a moment or holds what its rules never
make: a message on the page, never a traceback, and a busy moment not remembered."""

from __future__ import annotations

import sqlite3

import ui.classroom
from classroom import db, rules
from classroom.db_refusals import DatabaseBusy
from classroom.store import ClassStore
from tests.app.test_class_pages import ANSWER, FIRST, _commit, _instructor, _learner, _open, _texts
from ui.classroom import store


def test_a_busy_moment_is_not_remembered_the_next_run_asks_again(monkeypatch):
    """The store refuses one read with ``classroom.busy``: the learner's page says so, and
    on the next run asks the store again (the learner is still in the class, and what they
    commit is counted); only lasting refusals (a wrong code, an ended class) are kept."""
    _, code, key = _instructor()
    learner = _learner(code)
    assert rules.shown_code(code) in _texts(learner, "caption")  # in the class
    real, calls = ClassStore.learner_view, []

    def busy_once(self, *args):
        calls.append(args)
        if len(calls) == 1:
            raise DatabaseBusy()
        return real(self, *args)

    monkeypatch.setattr(ClassStore, "learner_view", busy_once)
    learner.run()
    assert "busy" in _texts(learner, "error")
    learner.run()  # a moment later: the database answers again
    assert rules.shown_code(code) in _texts(learner, "caption"), _texts(learner, "error")
    _commit(learner, ANSWER)
    assert store().room(code, key, FIRST).answered == (1,)


def test_a_locked_sqlite_database_is_a_message_on_the_learners_page(monkeypatch, tmp_path):
    """A commit waiting past SQLite's busy timeout (another writer holds the lock) says the
    class's database is busy, and the page goes on; no exception."""
    monkeypatch.setattr(db, "BUSY_TIMEOUT_S", 0.2)  # before the app opens its store
    _, code, _ = _instructor()
    learner = _learner(code)
    other = sqlite3.connect(tmp_path / "classroom.sqlite3", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another writer holding the lock
    try:
        _commit(learner, ANSWER)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert not learner.exception, learner.exception[0].message
    assert "busy" in _texts(learner, "warning")


def test_the_class_page_draws_a_lesson_past_round_two():
    """A lesson in round 3 (which the store never opens; a database written otherwise): the
    instructor's chart and counts still draw."""
    teacher, code, key = _instructor()
    store().second_round(code, key, FIRST)
    with store().database.transaction(write=True) as tx:
        tx.run("UPDATE lessons SET round = 3 WHERE code = ?", (code,))
    teacher.run()
    assert not teacher.exception, teacher.exception[0].message
    assert " in round 2" in _texts(teacher, "markdown")


def test_a_database_unreachable_when_the_store_opens_is_a_message_on_both_pages(monkeypatch):
    """The process's first use of the store while its database does not answer: the Class
    page (an instructor's link) and a learner's page say the database is busy, with no
    exception (the store opens within the refusal's reach, and again on a later run)."""

    def unreachable(*args, **kwargs):
        raise DatabaseBusy()

    store.clear()
    monkeypatch.setattr(ui.classroom, "open_store", unreachable)
    teacher = _open("classroom", {"lang": "en", "cl_code": "ABCDEF", "cl_key": "k" * 43})
    learner = _learner("ABCDEF")
    for page in (teacher, learner):
        assert not page.exception, page.exception[0].message
        assert "busy" in _texts(page, "error", "warning")
