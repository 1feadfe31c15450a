"""Every read and write of the class mode, and each rule enforced (schema: `classroom/schema.py`).

A refusal is an ``EngineError("classroom.<name>", params)`` (messages in
``locales/<lang>/errors.toml``) raised inside the transaction, which is then rolled back:
nothing changes.  The one exception is a wrong join code, which is counted against the
client's guesses (that count is what makes guessing slow) and then refused.

Who may do what is decided by what they hold: the instructor's key (``NewClass``) for every
instructor action; a learner's token (from ``join``) for their own votes and view.  Nothing
returned to either side names a learner: the instructor gets counts, a learner only their
own votes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from classroom import rows, rules
from classroom.checks import Checks
from classroom.checks import refuse as _refuse
from classroom.db import Database
from classroom.db_refusals import retried
from classroom.rules import EndedClass, LearnerView, LessonState, NewClass, Room
from classroom.schema import CLASS_TABLES, MIGRATIONS

DATABASE_URL_VARIABLE = "NORMSCOPE_DATABASE_URL"  # postgresql://...: several processes share it
DATA_DIR_VARIABLE = "NORMSCOPE_DATA_DIR"  # else the SQLite file lives here
DEFAULT_DATA_DIR = Path(__file__).resolve().parents[1] / "data"
SQLITE_FILE = "classroom.sqlite3"
_EVERY_CLIENT = "join:*"  # the rate_limits row counting every client's wrong codes together


@retried  # an action that failed before its commit (a deadlock's victim) runs once more
class ClassStore(Checks):
    """The class mode's data: classes, learners, votes, and the rules they follow.

    ``answer_ids`` are the lessons' answers as ``"<lesson>.<option>"`` (the lessons page's
    ``ANSWER_IDS``), in teaching order: the only lessons and options a class accepts.
    ``clock`` gives seconds since the epoch (tests move it forward).
    """

    def __init__(
        self,
        database: Database,
        answer_ids: Iterable[str],
        clock: Callable[[], float] = time.time,
    ):
        self.database = database
        self.clock = clock
        self._purged_at = float("-inf")  # when the polled actions last purged (``_tidy``)
        self.options: dict[str, tuple[str, ...]] = {}  # lesson -> its options, in order
        for answer_id in answer_ids:
            lesson, _, option = answer_id.rpartition(".")
            self.options[lesson] = (*self.options.get(lesson, ()), option)
        database.migrate(MIGRATIONS)
        with database.transaction(write=True) as tx:
            tx.run(
                "INSERT INTO meta (name, value) VALUES ('salt', ?) ON CONFLICT (name) DO NOTHING",
                (rules.new_secret(256),),
            )
            self._salt = tx.one("SELECT value FROM meta WHERE name = 'salt'")[0]

    # --- the instructor ----------------------------------------------------------------------

    def create_class(self, client: str, paced: bool = True) -> NewClass:
        """A new class with a fresh code and instructor key; purges expired classes first.

        ``client`` (the instructor's address) is counted against ``rules.CREATE_LIMIT``.
        """
        self.purge_expired()
        now = self.clock()
        key = rules.new_secret(256)
        with self.database.transaction(write=True) as tx:
            limit = rules.CREATE_LIMIT
            if rows.count_event(tx, self._client("create", client), now, limit) > limit.count:
                raise _refuse(
                    "too_many_classes",
                    limit=limit.count,
                    minutes=round(limit.window_s / 60),
                )
            (open_classes,) = tx.one("SELECT COUNT(*) FROM classes")
            if open_classes >= rules.MAX_OPEN_CLASSES:
                raise _refuse("server_full", limit=rules.MAX_OPEN_CLASSES)
            while True:  # a collision is ~1 in a million per open class: try another code
                code = rules.new_code()
                if rows.ended(tx, code, now):  # its learners are still told it ended
                    continue
                created = tx.run(
                    "INSERT INTO classes (code, instructor_digest, created_at, expires_at, paced)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (code) DO NOTHING",
                    (code, rules.digest(key), now, now + rules.CLASS_LIFETIME_S, int(paced)),
                )
                if created:
                    break
        return NewClass(code, key, now + rules.CLASS_LIFETIME_S)

    def room(self, code: str, key: str, lesson: str) -> Room:
        """The instructor's live view of ``lesson``: state, joined count and both rounds' counts.

        Two indexed queries (the class with its lesson's state and its joined count; the
        lesson's votes grouped by round and option): what the instructor's view polls.
        """
        self._check_lesson(lesson)
        self._tidy()
        with self.database.transaction() as tx:
            found = tx.one(
                "SELECT c.instructor_digest, c.paced, c.lesson, l.round, l.closed, l.revealed,"
                " (SELECT COUNT(*) FROM learners WHERE code = c.code)"
                " FROM classes c LEFT JOIN lessons l ON l.code = c.code AND l.lesson = ?"
                " WHERE c.code = ? AND c.expires_at > ?",
                (lesson, self._code(code), self.clock()),
            )
            self._check_instructor(found, code, key, tx)
            counted = tx.rows(
                "SELECT round, option, COUNT(*) FROM votes WHERE code = ? AND lesson = ?"
                " GROUP BY round, option",
                (self._code(code), lesson),
            )
        _, paced, class_lesson, *state, joined = found
        state = rows.state(*state)
        counts = tuple({option: 0 for option in self.options[lesson]} for _ in range(state.round))
        for round_, option, votes in counted:
            counts[round_ - 1][option] = votes
        return Room(lesson, state, joined, counts, bool(paced), class_lesson)

    def set_voting(self, code: str, key: str, lesson: str, open_: bool) -> LessonState:
        """Close voting on ``lesson`` (or open it again, unless the answer is revealed)."""
        with self._lesson_for_instructor(code, key, lesson) as (tx, state):
            if state.revealed and open_:
                raise _refuse("revealed")
            tx.run(
                "UPDATE lessons SET closed = ? WHERE code = ? AND lesson = ?",
                (int(not open_), self._code(code), lesson),
            )
        return LessonState(state.round, open_, state.revealed)

    def second_round(self, code: str, key: str, lesson: str) -> LessonState:
        """Open round 2 of ``lesson``: everyone votes again; round 1's votes are kept.  Not in
        a self-paced class, nor where a learner has been shown the answer (the class was
        self-paced then or later): round 2 would count answers given after seeing it."""
        with self._lesson_for_instructor(code, key, lesson) as (tx, state):
            if state.round >= rules.ROUNDS or state.revealed:
                raise _refuse("no_more_rounds")
            if not rows.paced(tx, self._code(code)):
                raise _refuse("second_round_self_paced")
            seen = rows.seen_count(tx, self._code(code), lesson, state.round)
            if seen:
                raise _refuse("second_round_seen", count=seen)
            tx.run(
                "UPDATE lessons SET round = round + 1, closed = 0 WHERE code = ? AND lesson = ?",
                (self._code(code), lesson),
            )
        return LessonState(state.round + 1, True, False)

    def reveal(self, code: str, key: str, lesson: str) -> LessonState:
        """Show ``lesson``'s answer to every learner (paced mode waits for this); closes voting."""
        with self._lesson_for_instructor(code, key, lesson) as (tx, state):
            tx.run(
                "UPDATE lessons SET revealed = 1, closed = 1 WHERE code = ? AND lesson = ?",
                (self._code(code), lesson),
            )
        return LessonState(state.round, False, True)

    def move_everyone(self, code: str, key: str, lesson: str) -> None:
        """Send learners who follow the class to ``lesson`` ("everyone to lesson N")."""
        self._check_lesson(lesson)
        with self.database.transaction(write=True) as tx:
            self._instructor(tx, code, key)
            tx.run(
                "UPDATE classes SET lesson = ?, moves = moves + 1 WHERE code = ?",
                (lesson, self._code(code)),
            )

    def set_paced(self, code: str, key: str, paced: bool) -> None:
        """Paced: learners see an answer only when it is revealed; else once they commit (so
        turning it off shows the answer to everyone who has voted: their votes are final)."""
        with self.database.transaction(write=True) as tx:
            self._instructor(tx, code, key)
            tx.run("UPDATE classes SET paced = ? WHERE code = ?", (int(paced), self._code(code)))
            if not paced:
                tx.run("UPDATE votes SET seen = 1 WHERE code = ?", (self._code(code),))

    def export_csv(self, code: str, key: str) -> str:
        """Every lesson with votes or a state, per round and option: ``lesson,round,option,votes``.

        Counts only, like the chart (no learner appears in it), in teaching order.
        """
        with self.database.transaction() as tx:
            self._instructor(tx, code, key)
            rounds = dict(
                tx.rows("SELECT lesson, round FROM lessons WHERE code = ?", (self._code(code),))
            )
            counted = tx.rows(
                "SELECT lesson, round, option, COUNT(*) FROM votes WHERE code = ?"
                " GROUP BY lesson, round, option",
                (self._code(code),),
            )
        return rules.counts_csv(self.options, rounds, counted)

    def end_class(self, code: str, key: str) -> EndedClass:
        """Delete the class and everything recorded in it now, not at its expiry; only its code
        is kept until then, so that its learners are told the instructor ended it (rather
        than that no class has their code).  Returns how many joined and answered."""
        code = self._code(code) or code
        with self.database.transaction(write=True) as tx:
            self._instructor(tx, code, key)
            (expires_at,) = tx.one("SELECT expires_at FROM classes WHERE code = ?", (code,))
            (joined,) = tx.one("SELECT COUNT(*) FROM learners WHERE code = ?", (code,))
            (answered,) = tx.one(
                "SELECT COUNT(DISTINCT learner) FROM votes WHERE code = ?", (code,)
            )
            for table in CLASS_TABLES:
                tx.run(f"DELETE FROM {table} WHERE code = ?", (code,))
            tx.run(
                "INSERT INTO ended_classes (code, expires_at) VALUES (?, ?) ON CONFLICT (code)"
                " DO UPDATE SET expires_at = excluded.expires_at",
                (code, expires_at),
            )
        return EndedClass(joined, answered)

    # --- a learner -------------------------------------------------------------------------

    def join(self, code: object, client: str, token: str | None = None) -> str:
        """A learner's token for the class ``code``: ``token`` itself if it is already in it
        or if it is a browser's own (``rules.secret_shaped``: the new learner is named by
        it), else a new one.  A browser makes its token before it joins, so its pages that
        join at the same moment (a link opened twice) are one learner: the second insert
        finds the first one's row.

        ``client`` identifies where the attempt comes from (the browser's address), stored
        only as a salted digest, for ``rules.JOIN_LIMITS``: wrong codes are counted per
        client and for the whole server, and past the limits an attempt is refused before
        its code is looked at.
        """
        code = rules.checked_code(code)
        self.purge_expired()
        now = self.clock()
        with self.database.transaction(write=True) as tx:
            rows.lock_class(tx, code, shared=True)
            if token is not None and rows.learner(tx, code, token, now) is not None:
                return token
            client_key = self._client("join", client)
            mine = rows.count_event(tx, client_key, now, rules.JOIN_LIMITS["client"])
            everyone = rows.count_event(tx, _EVERY_CLIENT, now, rules.JOIN_LIMITS["server"])
            limits = rules.JOIN_LIMITS
            if mine > limits["client"].count or (everyone > limits["server"].count and mine > 1):
                raise _refuse(
                    "too_many_attempts",
                    minutes=round(limits["client"].window_s / 60),
                )
            wrong = rows.open_class(tx, code, now) is None
            ended = wrong and rows.ended(tx, code, now)
            if not wrong or ended:  # a class's real code is no guess: give back the count
                tx.run(  # (a room behind one address reloading an ended class's link)
                    "UPDATE rate_limits SET events = events - 1 WHERE subject IN (?, ?)",
                    (client_key, _EVERY_CLIENT),
                )
            if not wrong:
                (learners,) = tx.one("SELECT COUNT(*) FROM learners WHERE code = ?", (code,))
                if learners >= rules.MAX_LEARNERS:
                    raise _refuse("class_full", limit=rules.MAX_LEARNERS)
                token = rules.secret_shaped(token) or rules.new_secret(128)
                tx.run(
                    "INSERT INTO learners (code, learner, joined_at, window_start)"
                    " VALUES (?, ?, ?, ?) ON CONFLICT (code, learner) DO NOTHING",
                    (code, rules.digest(token), now, now),
                )
        if wrong:  # after the commit: a wrong code stays counted as a guess
            raise _refuse("ended", code=rules.shown_code(code)) if ended else rules.no_class(code)
        return token

    def vote(self, code: str, token: str, answer_id: str) -> None:
        """Record ``answer_id`` (``"<lesson>.<option>"``) as this learner's vote in the lesson's
        current round, replacing their earlier vote in that round, unless the lesson's answer
        has been shown to them (with a vote of theirs, self-paced, or with none:
        ``saw_answer``), in any round: the class counts predictions, not answers read."""
        lesson, _, option = str(answer_id).rpartition(".")
        self._check_lesson(lesson)
        if option not in self.options[lesson]:
            raise _refuse(
                "unknown_option",
                value=str(answer_id)[:100],
                allowed=", ".join(self.options[lesson]),
            )
        now = self.clock()
        with self.database.transaction(write=True) as tx:
            learner = self._learner_key(tx, code, token)
            state = rows.lesson_state(tx, self._code(code), lesson)
            if not state.voting_open:
                raise _refuse("voting_closed")
            paced = rows.paced(tx, self._code(code))
            mine = rows.votes_of(tx, self._code(code), lesson, learner)
            if any(seen for _, seen in mine.values()):  # in any round: the answer is known
                raise _refuse("answer_seen")
            if rows.saw_unvoted(tx, self._code(code), lesson, learner):
                raise _refuse("answer_seen_unvoted")
            limit = rules.VOTE_LIMIT
            (recent,) = tx.one(
                "UPDATE learners SET"
                " window_votes = CASE WHEN window_start <= ? THEN 1 ELSE window_votes + 1 END,"
                " window_start = CASE WHEN window_start <= ? THEN ? ELSE window_start END"
                " WHERE code = ? AND learner = ? RETURNING window_votes",
                (now - limit.window_s, now - limit.window_s, now, self._code(code), learner),
            )
            if recent > limit.count:
                raise _refuse(
                    "too_many_votes",
                    limit=limit.count,
                    seconds=round(limit.window_s),
                )
            tx.run(
                "INSERT INTO votes (code, lesson, round, learner, option, voted_at, seen)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (code, lesson, round, learner)"
                " DO UPDATE SET option = excluded.option, voted_at = excluded.voted_at,"
                " seen = excluded.seen",
                (self._code(code), lesson, state.round, learner, option, now, int(not paced)),
            )

    def saw_answer(self, code: str, token: str, lesson: str) -> None:
        """The class showed this learner ``lesson``'s answer (self-paced) with no vote of
        theirs counted (voting was closed, or the vote was refused): kept, so that no
        prediction they make after it is counted, whichever page or browser tab makes it (a
        page's own memory of it ended with a reload).  Kept even where the class is paced
        now: a page that drew the answer while it was self-paced may say so a run later (its
        database was busy), and a paced class shows no answer before its reveal."""
        self._check_lesson(lesson)
        with self.database.transaction(write=True) as tx:
            learner = self._learner_key(tx, code, token)
            state = rows.lesson_state(tx, self._code(code), lesson)
            tx.run(
                "INSERT INTO seen_answers (code, lesson, round, learner) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (code, lesson, round, learner) DO NOTHING",
                (self._code(code), lesson, state.round, learner),
            )

    def learner_view(self, code: str, token: str, lesson: str) -> LearnerView:
        """What this learner sees of ``lesson`` in the class: its state and their own votes."""
        self._check_lesson(lesson)
        self._tidy()
        with self.database.transaction() as tx:
            learner = self._learner_key(tx, code, token)
            paced, class_lesson, moves = tx.one(
                "SELECT paced, lesson, moves FROM classes WHERE code = ?", (self._code(code),)
            )
            state = rows.lesson_state(tx, self._code(code), lesson)
            mine = rows.votes_of(tx, self._code(code), lesson, learner)
            revealed = rows.revealed(tx, self._code(code))
            seen = rows.seen(tx, self._code(code), learner)
        votes = tuple(mine.get(r, (None,))[0] for r in range(1, state.round + 1))
        final = lesson in seen  # shown in any round: no later vote of theirs is counted
        return LearnerView(
            lesson, state, votes, bool(paced), class_lesson, moves, revealed, final, seen
        )

    # --- housekeeping ----------------------------------------------------------------------

    def purge_expired(self) -> int:
        """Delete every expired class with all it recorded, and ended join-limit windows.

        Run on every ``create_class`` and ``join``, and from what pages poll (``_tidy``); an
        expired class is refused everywhere even before it is purged.  Returns the number of
        classes deleted.
        """
        with self.database.transaction(write=True) as tx:
            return rows.purge(tx, self.clock())

    def _tidy(self) -> None:
        """Purge now and then from the polled reads: a server's last class is deleted when
        its day is over although nobody starts or joins another (every few seconds would
        make each poll a write)."""
        now = self.clock()
        if now - self._purged_at >= rules.PURGE_EVERY_S:
            self._purged_at = now
            self.purge_expired()


def open_store(answer_ids: Iterable[str], target: str | Path | None = None) -> ClassStore:
    """The app's class store: ``target``, else ``$NORMSCOPE_DATABASE_URL`` (PostgreSQL), else
    a SQLite file in ``$NORMSCOPE_DATA_DIR`` (default ``data/`` in the repository)."""
    if target is None:
        target = os.environ.get(DATABASE_URL_VARIABLE) or (
            Path(os.environ.get(DATA_DIR_VARIABLE) or DEFAULT_DATA_DIR) / SQLITE_FILE
        )
    return ClassStore(Database(target), answer_ids)
