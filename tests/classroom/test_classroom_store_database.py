"""The class store's database, SQLite and PostgreSQL: votes from many threads and from two
stores at once, the schema versioned and migrated once, SQLite as a WAL file in the data
directory, PostgreSQL chosen by a URL, and a thread refused when no connection comes."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from classroom import db
from classroom.db import Database
from classroom.schema import MIGRATIONS
from classroom.store import ClassStore, open_store
from tests.classroom.sample_class import FIRST, INSTRUCTOR, class_with
from ui.lessons.catalog import ANSWER_IDS, OPTIONS


def test_votes_from_many_threads_at_once_are_all_recorded(store):
    new, tokens = class_with(store, 40)
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


def test_opening_while_another_connection_writes_waits_for_the_switch_to_wal(tmp_path):
    """SQLite refuses a journal-mode switch at once, without its busy timeout, while another
    connection holds a lock (a store migrating the new file): the switch is tried again."""
    path = tmp_path / "classroom.sqlite3"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("CREATE TABLE t (x INTEGER)")
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO t VALUES (1)")
    threading.Timer(0.5, lambda: other.execute("COMMIT")).start()
    database = Database(path)
    with database.transaction() as tx:
        assert tx.one("PRAGMA journal_mode") == ("wal",)
        assert tx.one("SELECT x FROM t") == (1,)
    database.close()
    other.close()
