"""Connections to the class mode's database: a SQLite file, or PostgreSQL given a URL.

The SQL of ``classroom/store.py`` is written once, for both; what differs is here and small:
the placeholder (``?`` / ``%s``), how a writing transaction starts (SQLite's ``BEGIN
IMMEDIATE`` takes the write lock at once, so two writers never both read and then fail to
upgrade), and the lock that keeps two processes from migrating at the same time.

Connections are pooled per process, a few per database, each used by one thread at a time.
Not one per thread: Streamlit runs every rerun of a page in a new thread, so per-thread
connections would be opened and dropped at every click; the pool also bounds how many a
process holds (PostgreSQL allows 100 by default, shared by every process of the app).
SQLite runs in WAL mode (readers never wait for the writer; one writer at a time, others wait
up to ``BUSY_TIMEOUT_S``) with ``synchronous=NORMAL``: a commit survives the app crashing,
and the last commits may be lost if the machine loses power.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from engine.errors import EngineError

BUSY_TIMEOUT_S = 5.0  # SQLite: how long a writer waits for another's lock
POOL_SIZE = 8  # connections per process and database
POOL_WAIT_S = 10.0  # a thread waits this long for a free connection, then is refused


@dataclass(frozen=True)
class Dialect:
    name: str
    placeholder: str
    begin_write: str
    migration_lock: str | None  # run first in the migrating transaction


SQLITE = Dialect("sqlite", "?", "BEGIN IMMEDIATE", None)  # BEGIN IMMEDIATE already locks
POSTGRESQL = Dialect("postgresql", "%s", "BEGIN", "SELECT pg_advisory_xact_lock(2026112923)")


def is_database_url(target: str | Path) -> bool:
    return isinstance(target, str) and target.startswith(("postgresql://", "postgres://"))


def _wal(connection: sqlite3.Connection) -> None:
    """Switch the file to WAL, waiting up to ``BUSY_TIMEOUT_S`` for other connections' locks.

    SQLite refuses the switch at once ("database is locked") while another connection holds
    a lock, without its busy timeout: a store opening while another migrates the new file.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            connection.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:  # only a lock is waited for
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class Transaction:
    """One transaction's statements: SQL with ``?`` placeholders, in either dialect."""

    def __init__(self, cursor, dialect: Dialect):
        self._cursor = cursor
        self._dialect = dialect

    def run(self, sql: str, params: Sequence = ()) -> int:
        """Execute ``sql``; the number of rows it changed."""
        self._cursor.execute(self._sql(sql), tuple(params))
        return self._cursor.rowcount

    def rows(self, sql: str, params: Sequence = ()) -> list[tuple]:
        self._cursor.execute(self._sql(sql), tuple(params))
        return list(self._cursor.fetchall())

    def one(self, sql: str, params: Sequence = ()) -> tuple | None:
        found = self.rows(sql, params)
        return found[0] if found else None

    def _sql(self, sql: str) -> str:
        if self._dialect.placeholder == "?":
            return sql
        return sql.replace("?", self._dialect.placeholder)  # our SQL has no literal "?"


class Database:
    """A SQLite file (created on first use, with its folder) or a PostgreSQL URL."""

    def __init__(self, target: str | Path, pool_size: int = POOL_SIZE):
        self.target = target if is_database_url(target) else Path(target)
        self.dialect = POSTGRESQL if is_database_url(target) else SQLITE
        self._idle: list = []  # open connections nobody holds (last in, first out)
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(pool_size)
        self._closed = False

    def _connect(self):
        if self.dialect is POSTGRESQL:
            import psycopg  # only where a URL is configured

            # autocommit: transactions are our explicit BEGIN ... COMMIT, as on SQLite
            return psycopg.connect(self.target, autocommit=True, connect_timeout=10)
        self.target.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(
            self.target, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        _wal(connection)
        connection.execute("PRAGMA synchronous = NORMAL")
        return connection

    @contextmanager
    def transaction(self, write: bool = False) -> Iterator[Transaction]:
        """A transaction, committed when the block ends and rolled back if it raises.

        ``write=True`` for a block that may write: on SQLite it waits for the write lock
        first.  A connection that failed (not a refusal of ours) is closed, not reused.
        """
        if not self._slots.acquire(timeout=POOL_WAIT_S):
            raise EngineError("classroom.busy", {})
        connection, healthy = None, False
        try:
            with self._lock:
                connection = self._idle.pop() if self._idle else None
            connection = connection or self._connect()
            cursor = connection.cursor()
            cursor.execute(self.dialect.begin_write if write else "BEGIN")
            try:
                yield Transaction(cursor, self.dialect)
            except BaseException:
                cursor.execute("ROLLBACK")
                healthy = True
                raise
            cursor.execute("COMMIT")
            healthy = True
        finally:
            if connection is not None:
                with self._lock:
                    keep = healthy and not self._closed
                    if keep:
                        self._idle.append(connection)
                if not keep:
                    connection.close()
            self._slots.release()

    def migrate(self, migrations: Sequence[Sequence[str]]) -> int:
        """Bring the schema to ``len(migrations)``, running the versions it lacks, in order.

        ``migrations[i]`` holds the statements from version ``i`` to ``i + 1``; all pending
        ones run in one transaction, so a failure leaves the schema as it was.  Refuses a
        schema newer than this code knows (an older release pointed at a newer database).
        """
        with self.transaction(write=True) as tx:
            if self.dialect.migration_lock:
                tx.run(self.dialect.migration_lock)
            tx.run("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = tx.one("SELECT version FROM schema_version")
            current = row[0] if row else 0
            if current > len(migrations):
                raise RuntimeError(
                    f"the class database is at schema version {current}; this code knows "
                    f"versions up to {len(migrations)}: run a newer NormScope"
                )
            for statements in migrations[current:]:
                for statement in statements:
                    tx.run(statement)
            if row is None:
                tx.run("INSERT INTO schema_version (version) VALUES (?)", (len(migrations),))
            else:
                tx.run("UPDATE schema_version SET version = ?", (len(migrations),))
        return len(migrations)

    def close(self) -> None:
        """Close the idle connections; those in use close when given back."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
