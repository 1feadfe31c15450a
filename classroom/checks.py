"""The checks every action of the class store makes (``classroom/store.py``): a lesson it
knows, a code as stored, the instructor's key, a learner's token, the rate-limit subject of
a client, and the refusals they make."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager

from classroom import rows, rules
from classroom.db import Database, Transaction
from engine.errors import EngineError


def refuse(key: str, **params) -> EngineError:
    return EngineError(f"classroom.{key}", params)


class Checks:
    """What ``ClassStore`` checks before it acts, on its ``database``, ``clock``, the
    lessons' ``options`` and the ``_salt`` of its client digests."""

    database: Database
    clock: Callable[[], float]
    options: dict[str, tuple[str, ...]]
    _salt: str

    def _code(self, code: object) -> str:
        """A code as stored, or "" (which matches no class) for one that cannot be a code."""
        return rules.normalize_code(code) or ""

    def _check_lesson(self, lesson: str) -> None:
        if lesson not in self.options:
            raise refuse(
                "unknown_lesson",
                value=str(lesson)[:100],
                allowed=", ".join(self.options),
            )

    def _closed(self, tx: Transaction, code: object) -> EngineError:
        """The refusal for a code with no open class: ended by its instructor, or none."""
        if self._code(code) and rows.ended(tx, self._code(code), self.clock()):
            return refuse("ended", code=rules.shown_code(self._code(code)))
        return rules.no_class(code)

    def _instructor(self, tx: Transaction, code: object, key: str) -> None:
        """Refuse unless ``key`` is the instructor's of the open class ``code``."""
        rows.lock_class(tx, self._code(code))  # (only in a writing transaction)
        row = rows.open_class(tx, self._code(code), self.clock())
        self._check_instructor(row, code, key, tx)

    def _check_instructor(self, row: tuple | None, code: object, key: str, tx: Transaction) -> None:
        """One refusal for a wrong key and for a code no open class has: told apart, the
        instructor's link would test any number of codes, uncounted (a learner's join
        counts its wrong codes).  What cannot be a code, and a class its instructor ended,
        keep their own refusals: neither says that a class is open."""
        if row is None and (not self._code(code) or rows.ended(tx, self._code(code), self.clock())):
            raise self._closed(tx, code)
        if row is None or not rules.matches(key, row[0]):
            hours = round(rules.CLASS_LIFETIME_S / 3600)
            raise refuse("not_instructor", code=rules.shown_code(self._code(code)), hours=hours)

    def _learner_key(self, tx: Transaction, code: object, token: object) -> str:
        """The stored digest of this learner, or a refusal (no such class, or not joined)."""
        rows.lock_class(tx, self._code(code), shared=True)  # (only in a writing transaction)
        row = rows.learner(tx, self._code(code), token, self.clock())
        if row is None:
            if rows.open_class(tx, self._code(code), self.clock()) is None:
                raise self._closed(tx, code)
            raise refuse("not_joined", code=rules.shown_code(self._code(code)))
        return row[0]

    @contextmanager
    def _lesson_for_instructor(self, code: str, key: str, lesson: str):
        """A writing transaction in which the instructor is checked and the lesson has a row."""
        self._check_lesson(lesson)
        with self.database.transaction(write=True) as tx:
            self._instructor(tx, code, key)
            tx.run(
                "INSERT INTO lessons (code, lesson) VALUES (?, ?)"
                " ON CONFLICT (code, lesson) DO NOTHING",
                (self._code(code), lesson),
            )
            yield tx, rows.lesson_state(tx, self._code(code), lesson)

    def _client(self, action: str, client: str) -> str:
        """The rate_limits subject of ``client`` (an address) doing ``action``: salted digest."""
        return f"{action}:{rules.digest(self._salt + str(client))}"
