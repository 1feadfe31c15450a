"""Every class-store test runs on SQLite and on a real PostgreSQL server started here.

The PostgreSQL server is Debian's (``initdb`` / ``pg_ctl``, on a Unix socket in a temporary
folder), one per test session; each test gets an empty schema.  Where PostgreSQL is missing:
as root (CI) the tests fail, since ``scripts/test.sh`` installs it; otherwise they are
skipped with what to install.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

import psycopg
import pytest

from classroom.db import Database
from classroom.local_postgres import postgres_bin, temporary_postgres
from classroom.store import ClassStore
from engine.errors import EngineError
from ui.i18n import LANGUAGES, translate
from ui.lessons.catalog import ANSWER_IDS


@pytest.fixture(scope="session")
def postgres_server():
    if postgres_bin() is None:
        message = "PostgreSQL's initdb is missing: scripts/test.sh installs Debian's postgresql"
        if os.geteuid() == 0:
            pytest.fail(message)
        pytest.skip(message + " (as root)")
    with temporary_postgres() as url:
        yield url


@pytest.fixture
def postgres_url(postgres_server) -> str:
    """The test server's URL, its database emptied."""
    with psycopg.connect(postgres_server, autocommit=True) as connection:
        connection.execute("DROP SCHEMA public CASCADE")
        connection.execute("CREATE SCHEMA public")
    return postgres_server


class Clock:
    """Seconds since the epoch, moved by the test."""

    def __init__(self):
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, tmp_path):
    if request.param == "sqlite":
        database = Database(tmp_path / "data" / "classroom.sqlite3")
    else:
        database = Database(request.getfixturevalue("postgres_url"))
    yield database
    database.close()


@pytest.fixture
def store(database, clock) -> ClassStore:
    return ClassStore(database, ANSWER_IDS, clock)


@contextmanager
def _refused(key: str):
    with pytest.raises(EngineError) as caught:
        yield caught
    assert caught.value.key == key
    for lang in LANGUAGES:
        text = translate(f"errors.{key}", lang, **caught.value.params)
        assert text != f"errors.{key}" and "{" not in text


@pytest.fixture
def refused():
    """``with refused(key):`` the block raises ``EngineError(key)``, whose message renders in
    every language."""
    return _refused


TABLES = (
    "classes",
    "lessons",
    "learners",
    "votes",
    "seen_answers",
    "rate_limits",
    "ended_classes",
    "meta",
    "schema_version",
)


@pytest.fixture
def snapshot(database):
    """``snapshot()``: every row of every table, to check that a refusal changed nothing."""

    def rows() -> dict[str, list]:
        with database.transaction() as tx:
            return {table: sorted(tx.rows(f"SELECT * FROM {table}")) for table in TABLES}

    return rows
