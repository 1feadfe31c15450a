"""The rules of a class: codes and secrets, the limits a server enforces, and what each side sees.

Join codes are ``CODE_LENGTH`` characters from ``CODE_ALPHABET`` (digits 2-9 and the letters
without I, L, O and U, so nothing reads as another character on a projector): 30⁶ ≈ 7.3×10⁸
codes.  What a guesser gets is bounded by ``JOIN_LIMITS``; ``brute_force`` works out what a
search would take, and docs/architecture.md states the figures.  The instructor's key and a
learner's token are ``secrets.token_urlsafe`` values (256 and 128 bits); the database keeps
only their SHA-256, so a copy of it lets nobody act as an instructor or a learner.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import secrets
import unicodedata
from dataclasses import dataclass
from urllib.parse import parse_qs

from engine.errors import EngineError

CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTVWXYZ"
CODE_LENGTH = 6
CLASS_LIFETIME_S = 24 * 3600  # a class and everything recorded in it are deleted after this
PURGE_EVERY_S = 60.0  # what pages poll purges expired classes at most this often per process
ROUNDS = 2  # a question is voted on once, then once more after the room has argued
MAX_LEARNERS = 500  # per class: a workshop is 30-100; a script joining in a loop stops here
MAX_OPEN_CLASSES = 200  # per server: each open class is one more code a guesser can hit
TOKEN_CHARS = 64  # longer "tokens" and "keys" are refused before they are hashed


@dataclass(frozen=True)
class Limit:
    """At most ``count`` events per ``window_s`` seconds (a fixed window from the first)."""

    count: int
    window_s: float


# Wrong codes per client address (a room behind one NAT shares it: 20 leaves room for typos),
# and per server (past it, a client that has already guessed wrong is refused).
JOIN_LIMITS = {"client": Limit(20, 600.0), "server": Limit(200, 600.0)}
# Votes per learner: a change of mind is a vote; a script sending hundreds is not a person.
VOTE_LIMIT = Limit(30, 60.0)
# Classes started per client address: an instructor starts one or two; a script filling the
# server (MAX_OPEN_CLASSES) would need many addresses.
CREATE_LIMIT = Limit(5, 3600.0)


def new_code() -> str:
    """A random join code (``secrets``: unpredictable from earlier codes)."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


MINUS = "\u2212"  # a dash to a reader, though Unicode files it as a maths sign, not "Pd"


def normalize_code(text: object) -> str | None:
    """The code a person typed, upper-cased without spaces and dashes (any: a phone's
    keyboard or a slide writes "‐", "–" or "−" for "-"), full-width letters and digits read as
    ASCII; None if it cannot be one.

    Nothing with a wrong length or a character outside the alphabet reaches the database, so
    a malformed code is refused without counting as a guess.  Letters are upper-cased as
    ASCII only: "ß" is no code's letter, though Python upper-cases it to "SS".
    """
    if not isinstance(text, str) or len(text) > 4 * CODE_LENGTH:
        return None
    text = unicodedata.normalize("NFKC", text)  # ＡＢＣ－１２３ from a Chinese keyboard
    kept = [c for c in text if not (c.isspace() or c == MINUS or unicodedata.category(c) == "Pd")]
    if not all(c.isascii() for c in kept):
        return None
    code = "".join(kept).upper()
    if len(code) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in code):
        return None
    return code


LINK_CODE_KEYS = ("ls_class", "cl_code")  # where a join link and an instructor's link hold it


def code_of_link(text: str) -> str:
    """The class code a pasted join link (``…/lessons?ls_class=ABCDEF``) or instructor's link
    (``…cl_code=…``) holds; any other text as it is.  Only the code is read from the link:
    an instructor's key in it is not."""
    if "?" not in text:
        return text
    query = parse_qs(text.partition("?")[2].partition("#")[0])  # no URL parser: "http://[?"
    found = [query[key][-1] for key in LINK_CODE_KEYS if query.get(key)]
    return found[0] if found else text


def checked_code(text: object) -> str:
    """``normalize_code(text)``, or the refusal that says what a code is: the Class page
    checks a typed code with it as it is typed, the store before any lookup."""
    code = normalize_code(text)
    if code is None:
        params = {"value": str(text)[:100], "length": CODE_LENGTH, "alphabet": CODE_ALPHABET}
        raise EngineError("classroom.malformed_code", params)
    return code


def shown_code(code: str) -> str:
    """A code as people read it aloud: ``ABC-DEF``."""
    half = CODE_LENGTH // 2
    return f"{code[:half]}-{code[half:]}"


def no_class(code: object) -> EngineError:
    """The refusal for a code no open class has: written as the code it was read as (upper
    case, in two halves, as the instructor shows it), or, for what cannot be a code, what one
    is."""
    if not str(code).strip():  # a link with a key and no code, or a code it refused
        return EngineError("classroom.no_code", {"length": CODE_LENGTH})
    try:
        code = checked_code(code)
    except EngineError as malformed:
        return malformed
    hours = round(CLASS_LIFETIME_S / 3600)
    return EngineError("classroom.no_class", {"code": shown_code(code), "hours": hours})


def new_secret(bits: int) -> str:
    return secrets.token_urlsafe(bits // 8)


SECRET_MIN_CHARS = 22  # 128 random bits in URL-safe base64: a learner's token at the least
_URL_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def secret_shaped(token: object) -> str | None:
    """``token`` if it is shaped as our secrets are, else None: 22 to ``TOKEN_CHARS``
    URL-safe characters, as 128 random bits or more make.  A browser may name its new learner
    by such a token (it makes it, and keeps it in the class's cookie, before it joins; a weak
    one would put only its own learner at risk); the instructor's key (256 bits) is one too,
    as read back from this browser's cookie."""
    if not isinstance(token, str) or not SECRET_MIN_CHARS <= len(token) <= TOKEN_CHARS:
        return None
    return token if set(token) <= _URL_SAFE else None


def digest(secret: str) -> str:
    """The SHA-256 of a secret, as stored."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def matches(secret: object, stored: str) -> bool:
    """Whether ``secret`` is the one whose digest is ``stored`` (constant-time comparison)."""
    if not isinstance(secret, str) or not secret or len(secret) > TOKEN_CHARS:
        return False
    return hmac.compare_digest(digest(secret), stored)


@dataclass(frozen=True)
class BruteForce:
    """What guessing codes at the server's limits gets an attacker."""

    codes: int  # possible codes
    guesses_per_day: float  # the most the server accepts from the given number of addresses
    expected_days: float  # until one of ``open_classes`` is found
    chance_per_class: float  # to find one given class in its lifetime


def brute_force(addresses: int = 1, open_classes: int = 1) -> BruteForce:
    """The guesses ``JOIN_LIMITS`` allow from ``addresses`` client addresses at once.

    Each address gets ``client.count`` wrong codes per window; the server as a whole
    ``server.count`` per window, and past that each address one more (its first: a client
    that has guessed wrong is then refused until its window ends).
    """
    client, server = JOIN_LIMITS["client"], JOIN_LIMITS["server"]
    per_window = min(addresses * client.count, server.count + addresses)
    per_day = per_window * 86400 / client.window_s
    codes = len(CODE_ALPHABET) ** CODE_LENGTH
    return BruteForce(
        codes=codes,
        guesses_per_day=per_day,
        expected_days=codes / (open_classes * per_day),
        chance_per_class=min(1.0, per_day * CLASS_LIFETIME_S / 86400 / codes),
    )


@dataclass(frozen=True)
class NewClass:
    """What "Start a class" hands the instructor: the room's code and the private key."""

    code: str
    instructor_key: str  # goes only into the instructor's link; the server keeps its hash
    expires_at: float  # seconds since the epoch


@dataclass(frozen=True)
class EndedClass:
    """What ending a class tells the instructor: how many were in it, before it was deleted."""

    joined: int  # learners in the class
    answered: int  # of them, those who voted at least once


@dataclass(frozen=True)
class LessonState:
    """Where a lesson's question stands in a class."""

    round: int = 1  # 1, or 2 after "second round"
    voting_open: bool = True
    revealed: bool = False


@dataclass(frozen=True)
class Room:
    """The instructor's view of one lesson: counts only, never who voted what."""

    lesson: str
    state: LessonState
    joined: int  # learners in the class
    counts: tuple[dict[str, int], ...]  # per round so far (index 0 = round 1): option -> votes
    paced: bool
    class_lesson: str | None = None  # where "everyone to lesson N" last sent the class

    @property
    def answered(self) -> tuple[int, ...]:
        """Learners who voted, per round (one vote each)."""
        return tuple(sum(votes.values()) for votes in self.counts)


@dataclass(frozen=True)
class LearnerView:
    """What one learner sees of the class for one lesson: the room's state and their own votes."""

    lesson: str
    state: LessonState
    votes: tuple[str | None, ...]  # this learner's option per round so far (None: no vote)
    paced: bool  # the instructor leads: the answer shows only once revealed
    class_lesson: str | None  # where "everyone to lesson N" last sent the room
    moves: int  # how many times it did: a follower follows when this changes
    revealed: frozenset[str] = frozenset()  # the class's lessons whose answer is revealed
    final: bool = False  # this lesson's answer was shown to them: a new vote is refused
    seen: frozenset[str] = frozenset()  # the lessons whose answer was shown to them


def counts_csv(options: dict, rounds: dict, counted) -> str:
    """The instructor's export: ``lesson,round,option,votes`` for every lesson with votes or a
    state (``rounds``: lesson -> its last round), per round and option in teaching order
    (``options``: lesson -> its option ids), from ``counted`` rows (lesson, round, option, n)."""
    votes = {(lesson, round_, option): n for lesson, round_, option, n in counted}
    rounds = dict(rounds)
    for lesson, round_, _ in votes:
        rounds[lesson] = max(rounds.get(lesson, 1), round_)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["lesson", "round", "option", "votes"])
    for lesson, lesson_options in options.items():
        for round_ in range(1, rounds.get(lesson, 0) + 1):
            for option in lesson_options:
                writer.writerow([lesson, round_, option, votes.get((lesson, round_, option), 0)])
    return out.getvalue()
