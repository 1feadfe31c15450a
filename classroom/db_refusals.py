"""The class database's refusals, and how their causes reach the server's log.

A database that stays busy or cannot be reached is a refusal like the class store's others,
never the driver's error: ``DatabaseBusy`` where a moment may cure it, ``DatabaseUnavailable``
where the server is set up so that it cannot be opened.  Either way the cause is logged (under
``classroom.db``, the connections' own logger), not on every click of a class.
"""

from __future__ import annotations

import functools
import logging
import sqlite3
import sys
import time

from engine.errors import EngineError


class DatabaseBusy(EngineError):
    """The class's database is busy or unreachable (``classroom.busy``: "try again in a
    moment").  ``retry``: nothing was committed and the database may answer at once, so the
    whole action may run again (a deadlock's victim, a connection lost midway); False once
    a wait already ran out (SQLite's lock, the pool) or where a commit may have happened."""

    def __init__(self, retry: bool = False):
        super().__init__("classroom.busy", {})
        self.retry = retry


class DatabaseUnavailable(EngineError):
    """The class's database cannot be opened as this server is set up
    (``classroom.unavailable``): its folder cannot be made or written, or its URL names no
    database this app speaks.  Not the user's doing and no moment cures it: the page says
    so, and the cause goes to the server's log for whoever runs it."""

    def __init__(self):
        super().__init__("classroom.unavailable", {})


_LOGGER = logging.getLogger("classroom.db")
LOG_EVERY_S = 10.0  # one log line per this many seconds for the same failure, at most
LOGGED_KINDS = 64  # failures remembered for that; past it, the memory starts again
_logged: dict[str, float] = {}


def log_failure(message: str, level: int = logging.ERROR) -> None:
    """Tell the server's log why the database failed, not on every click of a class: the
    same first line (a PostgreSQL error's details vary) at most once in ``LOG_EVERY_S``."""
    said = (message.strip().splitlines() or [""])[0][:200]
    now = time.monotonic()
    if now - _logged.get(said, float("-inf")) >= LOG_EVERY_S:
        if len(_logged) >= LOGGED_KINDS:
            _logged.clear()
        _logged[said] = now
        _LOGGER.log(level, "class database: %s", said)


def log_refusal(error: BaseException) -> None:
    """A driver's failure refused to a user (busy, down, or misconfigured?), as a warning:
    PostgreSQL's, or SQLite's lock wait that ran out."""
    psycopg = sys.modules.get("psycopg")
    if isinstance(error, sqlite3.Error) or (
        psycopg is not None and isinstance(error, psycopg.Error)
    ):
        log_failure(str(error) or type(error).__name__, logging.WARNING)


def busy_refusal(error: BaseException) -> DatabaseBusy | None:
    """The refusal standing for a driver's ``error`` that a moment may cure, else None (a
    fault in our SQL stays an exception): SQLite's lock wait ran out; any of PostgreSQL's
    operational errors (a connection that failed, a deadlock, a lock or query cancelled)."""
    if isinstance(error, sqlite3.OperationalError):
        return DatabaseBusy() if "locked" in str(error) or "busy" in str(error) else None
    psycopg = sys.modules.get("psycopg")  # imported only where a URL is configured
    if psycopg is not None and isinstance(error, psycopg.OperationalError):
        waited = isinstance(error, psycopg.errors.QueryCanceled)  # STATEMENT_TIMEOUT_S ran out
        return DatabaseBusy(retry=not waited)
    return None


# What a failed connection's message says where no wait cures it: the URL names a database
# or role the server lacks, or credentials it refuses (a password, or none given where one
# is asked for), or its rules turn the user away.  Read in the words of the server and of
# libpq (these errors carry no SQLSTATE in psycopg), English where the server's lc_messages
# is (a C or English locale at initdb); a server that writes another language's is read as
# busy.
_SET_UP_WRONG = (
    "does not exist",  # database "x" / role "x" does not exist
    "authentication failed",  # password, peer, ident ...
    "no password supplied",  # libpq: the server asks for one, the URL has none
    "authentication method requirement",  # libpq: require_auth refused the server's
    "pg_hba.conf",  # no entry for the host, or one that rejects it
    "permission denied for database",  # no CONNECT privilege
    "not permitted to log in",  # a role without LOGIN
)


def set_up_wrong(error: BaseException) -> str | None:
    """The cause, from the line of a failed connection's message (one a host, where the URL
    names several) saying that PostgreSQL refused it for how this server is set up, not
    for a moment's load, else None: then the page says the database cannot be opened
    (``classroom.unavailable``), not "busy, try again", which no wait would make true."""
    for line in str(error).splitlines():
        found = [line.find(words) for words in _SET_UP_WRONG if words in line]
        if found:  # the cause first: the line's host and address can take a log line's room
            start = line.rfind("failed: ", 0, min(found))  # "... port 5432 failed: FATAL: ..."
            return (line[start + len("failed: ") :] if start >= 0 else line[min(found) :]).strip()
    return None


def retried(cls: type) -> type:
    """``cls`` with each public method run once more when it is refused with a
    ``DatabaseBusy`` that allows it; the second refusal stands (and allows no retry by a
    caller that is itself retried, so an action runs at most twice)."""

    def once_more(method):
        @functools.wraps(method)
        def run(*args, **kwargs):
            try:
                return method(*args, **kwargs)
            except DatabaseBusy as busy:
                if not busy.retry:
                    raise
            try:
                return method(*args, **kwargs)
            except DatabaseBusy as busy:
                raise DatabaseBusy() from busy

        return run

    for name, member in list(vars(cls).items()):
        if callable(member) and not name.startswith("_"):
            setattr(cls, name, once_more(member))
    return cls
