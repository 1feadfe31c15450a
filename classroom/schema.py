"""The class mode's tables, as the migrations that make them (``classroom/db.py`` runs them,
``classroom/store.py`` reads and writes them)."""

# MIGRATIONS[i]: the statements from schema version i to i + 1.  Never edit one that has been
# released; add the next.  Times are seconds since the epoch; flags are 0/1 integers (the same
# in both dialects).  Learners and the join limits' clients appear only as SHA-256 digests.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        "CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
        """CREATE TABLE classes (
            code TEXT PRIMARY KEY,
            instructor_digest TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL,
            paced INTEGER NOT NULL,
            lesson TEXT,
            moves INTEGER NOT NULL DEFAULT 0)""",
        "CREATE INDEX classes_by_expiry ON classes (expires_at)",
        """CREATE TABLE lessons (
            code TEXT NOT NULL,
            lesson TEXT NOT NULL,
            round INTEGER NOT NULL DEFAULT 1,
            closed INTEGER NOT NULL DEFAULT 0,
            revealed INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (code, lesson))""",
        """CREATE TABLE learners (
            code TEXT NOT NULL,
            learner TEXT NOT NULL,
            joined_at DOUBLE PRECISION NOT NULL,
            window_start DOUBLE PRECISION NOT NULL,
            window_votes INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (code, learner))""",
        """CREATE TABLE votes (
            code TEXT NOT NULL,
            lesson TEXT NOT NULL,
            round INTEGER NOT NULL,
            learner TEXT NOT NULL,
            option TEXT NOT NULL,
            voted_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (code, lesson, round, learner))""",
        """CREATE TABLE rate_limits (
            subject TEXT PRIMARY KEY,
            window_start DOUBLE PRECISION NOT NULL,
            events INTEGER NOT NULL)""",
    ),
    (  # an ended class's code alone, until its expiry: its learners are told it ended
        """CREATE TABLE ended_classes (
            code TEXT PRIMARY KEY,
            expires_at DOUBLE PRECISION NOT NULL)""",
    ),
    (  # the answer was shown with this vote (self-paced): a new one is refused
        "ALTER TABLE votes ADD COLUMN seen INTEGER NOT NULL DEFAULT 0",
    ),
    (  # the answer was shown to a learner with no vote of theirs counted (voting was closed,
        # or the vote refused): any vote of theirs on the lesson after it is refused
        """CREATE TABLE seen_answers (
            code TEXT NOT NULL,
            lesson TEXT NOT NULL,
            round INTEGER NOT NULL,
            learner TEXT NOT NULL,
            PRIMARY KEY (code, lesson, round, learner))""",
        # the lessons whose answer a learner was shown, read at each of their page's polls
        "CREATE INDEX votes_seen_by_learner ON votes (code, learner) WHERE seen = 1",
    ),
)
# deleted in this order
CLASS_TABLES = ("seen_answers", "votes", "learners", "lessons", "classes")
