"""The statements several of the class store's actions share, each run inside its caller's
transaction (``classroom/store.py`` decides who may do what and what is refused)."""

from __future__ import annotations

from classroom import rules
from classroom.db import Transaction
from classroom.rules import LessonState
from classroom.schema import CLASS_TABLES


def open_class(tx: Transaction, code: str, now: float) -> tuple | None:
    """(instructor digest,) of the open class ``code``, or None (none, or expired)."""
    return tx.one(
        "SELECT instructor_digest FROM classes WHERE code = ? AND expires_at > ?", (code, now)
    )


def lock_class(tx: Transaction, code: str, shared: bool = False) -> None:
    """Lock the class's row first in a transaction that writes in it (PostgreSQL; SQLite's
    writers hold the whole file): the instructor's actions alone (``shared=False``), a
    learner's together (``shared``).  One order, the class's row before any other, so no two
    of them deadlock; ending the class waits for the joins and votes in it, and a join or
    vote that waited for its end finds no class, rather than leaving rows that belong to none."""
    tx.lock("SELECT 1 FROM classes WHERE code = ?", (code,), shared)


def learner(tx: Transaction, code: str, token: object, now: float) -> tuple | None:
    """(learner digest,) of the holder of ``token`` in the open class ``code``, or None."""
    if not isinstance(token, str) or not token or len(token) > rules.TOKEN_CHARS:
        return None
    return tx.one(
        "SELECT l.learner FROM learners l JOIN classes c ON c.code = l.code"
        " WHERE l.code = ? AND l.learner = ? AND c.expires_at > ?",
        (code, rules.digest(token), now),
    )


def state(round_: int | None, closed: int | None, revealed: int | None) -> LessonState:
    """A lesson's state from its row's columns (all None: no row yet, the defaults)."""
    if round_ is None:
        return LessonState()
    return LessonState(round_, not closed, bool(revealed))


def lesson_state(tx: Transaction, code: str, lesson: str) -> LessonState:
    found = tx.one(
        "SELECT round, closed, revealed FROM lessons WHERE code = ? AND lesson = ?",
        (code, lesson),
    )
    return state(*found) if found else LessonState()


def votes_of(tx: Transaction, code: str, lesson: str, learner: str) -> dict[int, tuple]:
    """One learner's votes on ``lesson``: round -> (option, whether the answer was shown with
    it, which makes it final)."""
    return {
        round_: (option, bool(seen))
        for round_, option, seen in tx.rows(
            "SELECT round, option, seen FROM votes WHERE code = ? AND lesson = ? AND learner = ?",
            (code, lesson, learner),
        )
    }


def revealed(tx: Transaction, code: str) -> frozenset[str]:
    """The lessons of the class ``code`` whose answer its instructor revealed."""
    found = tx.rows("SELECT lesson FROM lessons WHERE code = ? AND revealed = 1", (code,))
    return frozenset(lesson for (lesson,) in found)


def paced(tx: Transaction, code: str) -> bool:
    """Whether the class ``code`` is paced (answers show only once revealed)."""
    (found,) = tx.one("SELECT paced FROM classes WHERE code = ?", (code,))
    return bool(found)


def seen(tx: Transaction, code: str, learner: str) -> frozenset[str]:
    """The lessons whose answer the class has shown ``learner``, in any round: with a vote of
    theirs (the class was self-paced when they voted, or was made so after), or with none
    counted (``seen_answers``)."""
    found = tx.rows(
        "SELECT lesson FROM votes WHERE code = ? AND learner = ? AND seen = 1"
        " UNION SELECT lesson FROM seen_answers WHERE code = ? AND learner = ?",
        (code, learner, code, learner),
    )
    return frozenset(lesson for (lesson,) in found)


def saw_unvoted(tx: Transaction, code: str, lesson: str, learner: str) -> bool:
    """Whether ``learner`` was shown ``lesson``'s answer with no vote of theirs counted."""
    return (
        tx.one(
            "SELECT 1 FROM seen_answers WHERE code = ? AND lesson = ? AND learner = ?",
            (code, lesson, learner),
        )
        is not None
    )


def seen_count(tx: Transaction, code: str, lesson: str, round_: int) -> int:
    """How many learners were shown ``lesson``'s answer in round ``round_`` (with a vote of
    theirs or with none counted)."""
    (count,) = tx.one(
        "SELECT COUNT(*) FROM (SELECT learner FROM votes"
        " WHERE code = ? AND lesson = ? AND round = ? AND seen = 1"
        " UNION SELECT learner FROM seen_answers WHERE code = ? AND lesson = ? AND round = ?)"
        " AS seen_learners",
        (code, lesson, round_, code, lesson, round_),
    )
    return count


def count_event(tx: Transaction, subject: str, now: float, limit: rules.Limit) -> int:
    """Count one more event of ``subject`` in its window; the count, this one included.

    One statement, so two processes counting at once both count (a row lock in
    PostgreSQL, the write lock in SQLite); a window older than ``limit`` starts anew.
    """
    (events,) = tx.one(
        "INSERT INTO rate_limits (subject, window_start, events) VALUES (?, ?, 1)"
        " ON CONFLICT (subject) DO UPDATE SET"
        " events = CASE WHEN rate_limits.window_start <= ? THEN 1"
        " ELSE rate_limits.events + 1 END,"
        " window_start = CASE WHEN rate_limits.window_start <= ? THEN ?"
        " ELSE rate_limits.window_start END"
        " RETURNING events",
        (subject, now, now - limit.window_s, now - limit.window_s, now),
    )
    return events


def ended(tx: Transaction, code: str, now: float) -> bool:
    """Whether the instructor ended the class ``code`` before its expiry at ``now``."""
    return (
        tx.one("SELECT 1 FROM ended_classes WHERE code = ? AND expires_at > ?", (code, now))
        is not None
    )


def purge(tx: Transaction, now: float) -> int:
    """Delete every class expired at ``now`` with all it recorded, the codes of ended classes
    past their expiry, and ended rate-limit windows; the number of classes deleted."""
    window = max(limit.window_s for limit in (*rules.JOIN_LIMITS.values(), rules.CREATE_LIMIT))
    tx.lock("SELECT 1 FROM classes WHERE expires_at <= ? ORDER BY code", (now,))  # see lock_class
    for table in CLASS_TABLES[:-1]:
        tx.run(
            f"DELETE FROM {table} WHERE code IN (SELECT code FROM classes WHERE expires_at <= ?)",
            (now,),
        )
    purged = tx.run("DELETE FROM classes WHERE expires_at <= ?", (now,))
    tx.run("DELETE FROM ended_classes WHERE expires_at <= ?", (now,))
    tx.run("DELETE FROM rate_limits WHERE window_start <= ?", (now - window,))
    return purged
