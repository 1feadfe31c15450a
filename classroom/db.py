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

A database that stays busy or cannot be reached is a refusal like the store's others
(``DatabaseBusy``), never the driver's error (one that cannot be opened as this server is
set up: ``DatabaseUnavailable``; either way the cause goes to the server's log): a pooled
connection that died while idle (its server restarted, a firewall cut it) is closed and a
new one opened in its place; a transaction that failed before its commit (a deadlock's
victim, a connection lost midway) may run once more (``retried``).  No wait is unbounded:
SQLite's lock wait, PostgreSQL's statements (``statement_timeout``) and a PostgreSQL
connection cut without a word (TCP keepalives and ``tcp_user_timeout``, else a page would
wait for TCP's own ~15 minutes).
A PostgreSQL server that hangs while its machine still answers TCP is bounded on this side:
a transaction still waiting after ``deadlines.HUNG_AFTER_S`` has its socket shut down
(``classroom/deadlines.py``) and is refused without a second try.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from classroom.db_refusals import (
    DatabaseBusy,
    DatabaseUnavailable,
    busy_refusal,
    log_failure,
    log_refusal,
    set_up_wrong,
)
from classroom.deadlines import Deadline

BUSY_TIMEOUT_S = 5.0  # SQLite: how long a writer waits for another's lock
STATEMENT_TIMEOUT_S = 5.0  # PostgreSQL: how long one statement (a lock wait too) may take
IDLE_IN_TRANSACTION_S = 30.0  # PostgreSQL: a frozen process's open transaction is ended
# PostgreSQL, a connection cut silently (a firewall dropping its packets): unanswered data is
# given up after DEAD_AFTER_S (TCP_USER_TIMEOUT), and an idle wait for an answer after the
# keepalive probes go unanswered (first probe after 5 s, then 3 probes 2 s apart).
DEAD_AFTER_S = 10.0
KEEPALIVE = {"keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2, "keepalives_count": 3}
POOL_SIZE = 8  # connections per process and database
POOL_WAIT_S = 10.0  # a thread waits this long for a free connection, then is refused


@dataclass(frozen=True)
class Dialect:
    name: str
    placeholder: str
    begin_write: str
    migration_lock: str | None  # run first in the migrating transaction
    row_locks: tuple[str, str] | None  # (exclusive, shared) suffixes of a locking SELECT


SQLITE = Dialect("sqlite", "?", "BEGIN IMMEDIATE", None, None)  # BEGIN IMMEDIATE already locks
POSTGRESQL = Dialect(
    "postgresql",
    "%s",
    "BEGIN",
    "SELECT pg_advisory_xact_lock(2026112923)",
    (" FOR UPDATE", " FOR KEY SHARE"),  # KEY SHARE: taken by many at once, not by a delete
)


def is_database_url(target: str | Path) -> bool:
    return isinstance(target, str) and target.startswith(("postgresql://", "postgres://"))


def _other_url(target: str | Path) -> str | None:
    """The scheme of a URL of another database (``mysql``, a typo such as ``postgressql``),
    which would otherwise be taken for a file's path; None for a path or a PostgreSQL URL."""
    if isinstance(target, str) and "://" in target and not is_database_url(target):
        return target.split("://", 1)[0]
    return None


def _misread(url: str) -> str | None:
    """Why libpq would misread a URL's user or password, else None.  libpq takes the text
    up to the first ``@`` as the user and password when no ``/`` comes before it (a ``?``
    does not stop it), and the host list up to the next ``/`` or ``?``: a password holding
    ``@``, ``/`` or (with no path) ``?``, not percent-encoded, spills into the host, port,
    database name or options, which libpq's own messages then quote into the log (``failed
    to resolve host "ss@db.example"``): such a URL is refused unsent.  Read as libpq reads
    the URL's text; ``host=@name`` in the options (an abstract socket) is not looked at."""
    rest = url.split("://", 1)[-1]
    first = next((i for i, c in enumerate(rest) if c in "@/"), len(rest))
    credentials = rest[:first] if rest[first : first + 1] == "@" else None
    after = rest[first + 1 :] if credentials is not None else rest
    hosts, _, path = after.partition("?")[0].partition("/")
    # each host's port: after the last ':' past an IPv6 address's "]" ("[::1]:5432")
    ports = [entry.rpartition("]")[2].partition(":")[2] for entry in hosts.split(",")]
    no_password = credentials is None or ":" not in credentials
    if (
        (credentials is not None and "?" in credentials)  # "host?password=se@cret"
        or "@" in hosts  # a password's '@': "u:pa@ss@host"
        # a password's '/': "u:pa/ss@host" read as a host, a port and a path, as is
        # "admin@srv:pa/ss@host" after a user with an '@' of its own
        or (no_password and "@" in path)
        or not all(port.isdigit() for port in ports if port)
    ):
        return (
            "is one libpq would misread (its host, port or database name holding part of a "
            "password?): is an '@', '/' or '?' in its user, password or database name not "
            "percent-encoded? (write '@' as %40, '/' as %2F, '?' as %3F, ':' as %3A, '%' as %25)"
        )
    return None


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

    def __init__(self, cursor, dialect: Dialect, write: bool = False):
        self._cursor = cursor
        self._dialect = dialect
        self._write = write

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

    def lock(self, sql: str, params: Sequence = (), shared: bool = False) -> None:
        """Lock the rows the SELECT ``sql`` finds until the transaction ends: PostgreSQL's
        ``FOR UPDATE`` (``FOR KEY SHARE`` when ``shared``: others may share it, a delete
        waits).  SQLite: nothing, a writing transaction holds the whole file's lock; nor in
        a reading transaction, which has nothing to protect."""
        if self._dialect.row_locks and self._write:
            self.rows(sql + self._dialect.row_locks[shared], params)

    def _sql(self, sql: str) -> str:
        if self._dialect.placeholder == "?":
            return sql
        return sql.replace("?", self._dialect.placeholder)  # our SQL has no literal "?"


def _bounds() -> str:
    """PostgreSQL's waits, for the transaction just begun: a statement (a lock wait too) and
    an open transaction left idle (a process frozen while it holds a class's row)."""
    return (
        f"SET LOCAL statement_timeout = {int(STATEMENT_TIMEOUT_S * 1000)};"
        f" SET LOCAL idle_in_transaction_session_timeout = {int(IDLE_IN_TRANSACTION_S * 1000)}"
    )


class Database:
    """A SQLite file (created on first use, with its folder) or a PostgreSQL URL."""

    def __init__(self, target: str | Path, pool_size: int = POOL_SIZE):
        self.target = target if is_database_url(target) else Path(target)
        self.dialect = POSTGRESQL if is_database_url(target) else SQLITE
        self._other_url = _other_url(target)  # refused at the first connection, not a file
        self._idle: list = []  # open connections nobody holds (last in, first out)
        self._lock = threading.Lock()
        self._slots, self._pool_size = threading.BoundedSemaphore(pool_size), pool_size
        self._closed = False

    def _connect(self):
        if self.dialect is POSTGRESQL:
            import psycopg  # only where a URL is configured

            # autocommit: transactions are our explicit BEGIN ... COMMIT, as on SQLite.  What
            # the operator's URL sets is kept (a keyword would replace it): the timeouts are
            # set in each transaction instead (_BOUNDS), which a pooler such as PgBouncer
            # passes on where it refuses a connection's ``options``.
            try:
                given = psycopg.conninfo.conninfo_to_dict(self.target)
            except psycopg.Error as error:  # its message quotes the URL, password and all
                log_failure(f"the database URL cannot be read ({type(error).__name__})")
                raise DatabaseUnavailable() from None
            if misread := _misread(self.target):
                log_failure(f"the database URL {misread}")
                raise DatabaseUnavailable()
            socket = {"connect_timeout": 10, "tcp_user_timeout": int(DEAD_AFTER_S * 1000)}
            extra = {k: v for k, v in {**socket, **KEEPALIVE}.items() if k not in given}
            try:
                return psycopg.connect(self.target, autocommit=True, **extra)
            except psycopg.ProgrammingError as error:  # an option's value it cannot take
                log_failure(f"the database URL's options are refused: {error}")
                raise DatabaseUnavailable() from None
            except psycopg.OperationalError as error:  # refused as set up, or down a while
                if (refused := set_up_wrong(error)) is not None:  # its line, of several
                    log_failure(f"the database server refuses this URL: {refused}")
                    raise DatabaseUnavailable() from None
                raise
        if self._other_url:  # its scheme only: the rest may hold a password
            log_failure(f"a {self._other_url}:// URL; the database URLs read are postgresql://")
            raise DatabaseUnavailable()
        connection = None
        try:
            self.target.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(
                self.target, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            _wal(connection)
            connection.execute("PRAGMA synchronous = NORMAL")
        except (OSError, sqlite3.DatabaseError) as error:  # "file is not a database" too
            _close(connection)
            if isinstance(error, sqlite3.OperationalError) and busy_refusal(error) is not None:
                raise
            log_failure(f"{self.target}: {error}")
            raise DatabaseUnavailable() from error
        return connection

    @contextmanager
    def transaction(self, write: bool = False) -> Iterator[Transaction]:
        """A transaction, committed when the block ends and rolled back if it raises.

        ``write=True`` for a block that may write: on SQLite it waits for the write lock
        first.  A connection that failed (not a refusal of ours) is closed, not reused; a
        failure a moment may cure is a ``DatabaseBusy``.
        """
        if not self._slots.acquire(timeout=POOL_WAIT_S):
            waited = f"no free connection in {POOL_WAIT_S:g} s (a pool of {self._pool_size})"
            log_failure(waited, logging.WARNING)
            raise DatabaseBusy()
        connection = deadline = None
        try:
            if self.dialect is POSTGRESQL:  # in the try: its watcher may fail to start
                deadline = Deadline()
            connection, cursor = self._begin(write, deadline)
            try:
                yield Transaction(cursor, self.dialect, write)
            except BaseException as error:
                try:
                    cursor.execute("ROLLBACK")
                except Exception:  # the connection itself failed: not reused
                    connection = _close(connection)
                busy = busy_refusal(error)
                if busy is not None:
                    log_refusal(error)
                    raise (DatabaseBusy() if deadline and deadline.fired else busy) from error
                raise
            try:
                cursor.execute("COMMIT")
            except Exception as error:  # whether it committed is unknown: no retry
                connection = _close(connection)
                if busy_refusal(error) is not None:
                    log_refusal(error)
                    raise DatabaseBusy() from error
                raise
        finally:
            if deadline is not None:
                deadline.stop()
                if deadline.fired:  # its socket is shut: never given back to the pool
                    connection = _close(connection)
            if connection is not None:
                with self._lock:
                    keep = not self._closed
                    if keep:
                        self._idle.append(connection)
                if not keep:
                    connection.close()
            self._slots.release()

    def _begin(self, write: bool, deadline: Deadline | None) -> tuple:
        """(connection, cursor) in a new transaction: an idle connection, else a new one.  An
        idle one that fails to begin (its server restarted, or the network cut it) is closed
        and a new one opened in its place, once; not once ``deadline`` has fired."""
        with self._lock:
            connection = self._idle.pop() if self._idle else None
        for fresh in (False, True) if connection is not None else (True,):
            try:
                if fresh:
                    connection = self._connect()
                if deadline is not None:
                    deadline.watch(connection)
                cursor = connection.cursor()
                cursor.execute(self.dialect.begin_write if write else "BEGIN")
                if self.dialect is POSTGRESQL:
                    cursor.execute(_bounds())
                return connection, cursor
            except Exception as error:
                connection = _close(connection)
                busy = busy_refusal(error)
                if busy is None:
                    raise
                if fresh or not busy.retry or (deadline and deadline.fired):  # waited already
                    log_refusal(error)  # not an idle connection replaced without a word
                    raise DatabaseBusy() from error
        raise AssertionError("unreachable")

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


def _close(connection) -> None:
    """Close a connection that failed (its own close may fail too); None, to forget it."""
    if connection is not None:
        with suppress(Exception):
            connection.close()
