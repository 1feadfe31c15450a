"""The class store under database failures: a database that fails or stays busy is the
store's refusal ``classroom.busy``, after one more try where nothing was committed, and a
pooled connection that died is replaced."""

from __future__ import annotations

import logging
import os
import signal
import sqlite3
import time
from urllib.parse import quote

import psycopg
import pytest

from classroom import db, db_refusals, deadlines
from classroom.db import Database
from classroom.db_refusals import DatabaseBusy, retried
from classroom.store import ClassStore
from tests.classroom.sample_class import FIRST, class_with
from ui.lessons.catalog import ANSWER_IDS


def test_a_dropped_postgresql_connection_is_replaced_and_the_action_done(postgres_url, clock):
    """PostgreSQL restarts or an idle connection is cut (a lunch break behind a firewall):
    a pooled connection that fails is closed and the action done on a new one, neither a
    traceback nor a refusal."""
    store = ClassStore(Database(postgres_url), ANSWER_IDS, clock)
    new, (ann,) = class_with(store, 1)
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    time.sleep(0.2)
    try:
        store.vote(new.code, ann, f"{FIRST}.a")
        assert store.learner_view(new.code, ann, FIRST).votes == ("a",)
    finally:
        store.database.close()


def test_an_unreachable_postgresql_server_is_a_refusal():
    """No server answers at the URL (stopped, or the network down): the refusal
    ``classroom.busy``, not psycopg's error."""
    database = Database("postgresql://normscope@127.0.0.1:9/normscope")  # discard: none
    with pytest.raises(DatabaseBusy) as caught, database.transaction():
        pass
    assert caught.value.key == "classroom.busy"


def test_sqlite_busy_past_the_timeout_is_a_refusal(tmp_path, clock, monkeypatch, refused, caplog):
    """A writer waiting longer than ``BUSY_TIMEOUT_S`` for SQLite's lock (another process's
    long write) is refused with ``classroom.busy``, a message every page shows, not
    ``sqlite3.OperationalError: database is locked``."""
    monkeypatch.setattr(db, "BUSY_TIMEOUT_S", 0.2)
    path = tmp_path / "classroom.sqlite3"
    store = ClassStore(Database(path), ANSWER_IDS, clock)
    new, (ann,) = class_with(store, 1)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    monkeypatch.setattr(db_refusals, "_logged", {})
    try:
        with caplog.at_level(logging.WARNING, logger="classroom.db"), refused("classroom.busy"):
            store.vote(new.code, ann, f"{FIRST}.a")
    finally:
        other.execute("ROLLBACK")
        other.close()
        store.database.close()
    assert "database is locked" in caplog.text  # the cause, for whoever runs the server


def test_a_pool_with_no_free_connection_is_a_refusal_and_logged(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(db, "POOL_WAIT_S", 0.05)
    monkeypatch.setattr(db_refusals, "_logged", {})
    database = Database(tmp_path / "classroom.sqlite3", pool_size=1)
    with database.transaction():  # holds the pool's one connection
        with caplog.at_level(logging.WARNING, logger="classroom.db"):
            with pytest.raises(DatabaseBusy), database.transaction():
                pass
    assert "no free connection in 0.05 s (a pool of 1)" in caplog.text
    database.close()


def test_an_action_refused_before_its_commit_runs_once_more_and_no_more():
    """An action refused with a ``DatabaseBusy`` that allows it (nothing was committed: a
    deadlock's victim) runs once more; refused again, or refused where a commit may have
    happened, the refusal stands; an action calling another runs at most twice."""
    calls = []

    @retried
    class Actions:
        def failing(self, times: int, retry: bool = True) -> str:
            calls.append(times)
            if len(calls) <= times:
                raise DatabaseBusy(retry=retry)
            return "done"

        def outer(self) -> str:
            calls.append("outer")
            return self.failing(10)

    assert Actions().failing(1) == "done" and len(calls) == 2
    calls.clear()
    with pytest.raises(DatabaseBusy):
        Actions().failing(2)
    assert len(calls) == 2
    calls.clear()
    with pytest.raises(DatabaseBusy):
        Actions().failing(1, retry=False)
    assert len(calls) == 1
    calls.clear()
    with pytest.raises(DatabaseBusy):
        Actions().outer()
    assert calls.count("outer") == 1 and len(calls) == 3


def test_a_postgresql_lock_held_past_the_statement_timeout_is_a_refusal_not_a_wait(
    postgres_url, clock, monkeypatch, refused
):
    """Another connection holds the class's row (a stuck instructor's transaction, a
    process frozen mid-action): an action waiting for it is refused with ``classroom.busy``
    after ``STATEMENT_TIMEOUT_S``, once (the wait already ran out: no second wait), instead
    of holding the page and a pooled connection for as long as the lock stays."""
    monkeypatch.setattr(db, "STATEMENT_TIMEOUT_S", 0.3)
    store = ClassStore(Database(postgres_url), ANSWER_IDS, clock)
    new, (ann,) = class_with(store, 1)
    with psycopg.connect(postgres_url, autocommit=True) as other:
        other.execute("BEGIN")
        other.execute("SELECT * FROM classes FOR UPDATE")
        start = time.monotonic()
        try:
            with refused("classroom.busy"):
                store.vote(new.code, ann, f"{FIRST}.a")
        finally:
            other.execute("ROLLBACK")
        assert time.monotonic() - start < 3 * 0.3 + 1.0
    try:
        store.vote(new.code, ann, f"{FIRST}.a")  # the lock released: the action is done
        assert store.learner_view(new.code, ann, FIRST).votes == ("a",)
    finally:
        store.database.close()


def test_postgresql_connections_give_up_on_a_silent_network_cut(postgres_url):
    """A firewall that drops a connection's packets sends no reset: without keepalives and a
    user timeout a page would wait on the socket for TCP's own retries (~15 minutes).  Every
    connection is opened with both (read back from libpq), and every transaction bounds its
    statements and its idle time (read back from the server)."""
    database = Database(postgres_url)
    try:
        with database.transaction() as transaction:
            settings = dict(
                transaction.rows(
                    "SELECT name, setting FROM pg_settings WHERE name IN"
                    " ('statement_timeout', 'idle_in_transaction_session_timeout')"
                )
            )
        with database._connect() as connection:
            parameters = connection.info.get_parameters()
    finally:
        database.close()
    assert int(settings["statement_timeout"]) == int(db.STATEMENT_TIMEOUT_S * 1000)
    assert int(settings["idle_in_transaction_session_timeout"]) == int(
        db.IDLE_IN_TRANSACTION_S * 1000
    )
    assert parameters["keepalives"] == "1"
    assert int(parameters["keepalives_idle"]) <= 10
    assert int(parameters["tcp_user_timeout"]) == int(db.DEAD_AFTER_S * 1000)


def test_the_urls_own_settings_are_kept(postgres_url):
    """An operator's URL that sets ``options`` (a schema on ``search_path``, as a shared server
    wants) or its own keepalives keeps them: the class tables go where the URL says."""
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute("DROP SCHEMA IF EXISTS classroom_app CASCADE")
        connection.execute("CREATE SCHEMA classroom_app")
    url = postgres_url + "&keepalives_idle=7&options=" + quote("-c search_path=classroom_app")
    database = Database(url)
    try:
        ClassStore(database, ANSWER_IDS)  # migrates
        with database._connect() as connection:
            assert connection.info.get_parameters()["keepalives_idle"] == "7"
    finally:
        database.close()
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        where = connection.execute(
            "SELECT table_schema FROM information_schema.tables WHERE table_name = 'learners'"
        ).fetchall()
    assert where == [("classroom_app",)]


def test_a_postgresql_server_that_hangs_is_a_refusal_after_the_deadline_once(
    postgres_url, clock, monkeypatch, refused
):
    """The server's process serving the pooled connection stops (SIGSTOP: a frozen process,
    while its machine still answers TCP): no statement is answered, so its own timeouts never
    fire.  The action is refused with ``classroom.busy`` once ``HUNG_AFTER_S`` has passed,
    without a second wait; the connection is dropped and the next action is done."""
    monkeypatch.setattr(deadlines, "HUNG_AFTER_S", 1.0)
    store = ClassStore(Database(postgres_url), ANSWER_IDS, clock)
    new, (ann,) = class_with(store, 1)
    frozen = [connection.info.backend_pid for connection in store.database._idle]
    assert frozen
    for pid in frozen:
        os.kill(pid, signal.SIGSTOP)
    try:
        start = time.monotonic()
        with refused("classroom.busy"):
            store.vote(new.code, ann, f"{FIRST}.a")
        assert 1.0 <= time.monotonic() - start < 2 * 1.0
        assert not store.database._idle  # the cut connection is not pooled again
    finally:
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)
    try:
        store.vote(new.code, ann, f"{FIRST}.a")  # on a new connection
        assert store.learner_view(new.code, ann, FIRST).votes == ("a",)
    finally:
        store.database.close()
