"""A class database this server cannot open (a data folder that cannot be made, a URL of
another database) is the refusal ``classroom.unavailable``, with its cause in the server's
log: never the driver's traceback on the instructor's projector, never a file named after
a URL."""

from __future__ import annotations

import logging

import pytest

from classroom import db, db_refusals
from classroom.store import open_store
from ui.errors import error_text
from ui.lessons.catalog import ANSWER_IDS


@pytest.fixture(autouse=True)
def _every_failure_logged(monkeypatch):
    monkeypatch.setattr(db_refusals, "_logged", {})


def test_a_data_folder_that_cannot_be_made_is_refused_and_logged(tmp_path, caplog):
    blocker = tmp_path / "data"
    blocker.write_text("a file where the folder should be")
    with caplog.at_level(logging.ERROR, logger="classroom.db"):
        with pytest.raises(db_refusals.DatabaseUnavailable) as refused:
            open_store(ANSWER_IDS, blocker / "classroom.sqlite3")
    assert refused.value.key == "classroom.unavailable"
    assert "in its log" in error_text(refused.value)
    assert str(blocker) in caplog.text


@pytest.mark.parametrize("url", ["mysql://user:secret@db.example/normscope", "sqlite:///x.db"])
def test_a_url_of_another_database_is_refused_and_makes_no_file(tmp_path, monkeypatch, caplog, url):
    monkeypatch.chdir(tmp_path)
    with caplog.at_level(logging.ERROR, logger="classroom.db"):
        with pytest.raises(db_refusals.DatabaseUnavailable):
            open_store(ANSWER_IDS, url)
    assert list(tmp_path.iterdir()) == []
    scheme = url.split("://")[0]
    assert f"{scheme}://" in caplog.text and "secret" not in caplog.text


def test_a_failure_is_logged_once_in_a_while_not_at_every_click(tmp_path, caplog):
    blocker = tmp_path / "data"
    blocker.write_text("")
    with caplog.at_level(logging.ERROR, logger="classroom.db"):
        for _ in range(5):
            with pytest.raises(db_refusals.DatabaseUnavailable):
                open_store(ANSWER_IDS, blocker / "classroom.sqlite3")
    assert len(caplog.records) == 1


@pytest.mark.parametrize(
    ("url", "said", "secret"),
    [
        ("postgresql://user:se%ZZcret@db.example/normscope", "cannot be read", "cret"),
        # psycopg's ProgrammingError ("bad value for connect_timeout") reached the page raw
        ("postgresql://u:s3cret@127.0.0.1:1/db?connect_timeout=abc", "connect_timeout", "s3cret"),
        # libpq ends a password at its first '@' (or '/') and quotes the rest as the host
        ("postgresql://u:s3c@ret@127.0.0.1:1/db", "percent-encoded", "ret"),
        ("postgresql://u:s3c/ret@127.0.0.1:1/db", "percent-encoded", "ret"),
        # digits before the '/': libpq reads host "postgres", port 1234, database "abc@..."
        ("postgresql://postgres:1234/abc@127.0.0.1:1/db", "percent-encoded", "abc"),
        # libpq reads past a '?' for the user and password: host "w0rd@127.0.0.1"
        ("postgresql://u:pa?ss@w0rd@127.0.0.1:1/db", "percent-encoded", "w0rd"),
        # no path: the options are read as the user and password, the host as "cret"
        ("postgresql://127.0.0.1:1?user=u&password=se@cret", "percent-encoded", "cret"),
        # a user with an '@' of its own: libpq reads port "pa", the password's head
        ("postgresql://admin@srv:pa/ss@127.0.0.1:1/db", "percent-encoded", "ss@"),
        ("postgresql://admin@srv:12/ss@127.0.0.1:1/db", "percent-encoded", "ss@"),
    ],
)
def test_a_database_url_it_cannot_use_is_refused_and_logged_without_its_password(
    caplog, url, said, secret
):
    with caplog.at_level(logging.ERROR, logger="classroom.db"):
        with pytest.raises(db_refusals.DatabaseUnavailable):
            open_store(ANSWER_IDS, url)
    assert said in caplog.text and secret not in caplog.text


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://u:s3c%40r%2Fet@127.0.0.1:5432/db",  # '@' and '/' percent-encoded
        "postgresql://u:pa:ss@[::1]:5432/db",  # ':' in a password, an IPv6 host
        "postgresql:///db?host=@pgsock",  # an abstract Unix socket, named in the options
        "postgresql://u@/db?host=/run/postgresql&port=5433",
        "postgresql://u:p@h1:5432,h2:5433/db?target_session_attrs=read-write",
        "postgresql://u:p@host/my@db",  # after a user, libpq reads the path as the name
        "postgresql://host/my%40db",
    ],
)
def test_a_database_url_libpq_reads_as_written_is_not_refused(url):
    assert db._misread(url) is None


def test_failures_are_remembered_by_their_first_line_and_within_a_bound(monkeypatch, caplog):
    with caplog.at_level(logging.WARNING, logger="classroom.db"):
        for process in range(3):  # a deadlock's details name other processes each time
            db_refusals.log_failure(f"deadlock detected\nDETAIL: Process {process} waits", 30)
        for kind in range(db_refusals.LOGGED_KINDS + 5):
            db_refusals.log_failure(f"failure {kind}")
    assert caplog.text.count("deadlock detected") == 1 and "DETAIL" not in caplog.text
    assert len(db_refusals._logged) <= db_refusals.LOGGED_KINDS


def test_a_file_that_is_not_a_database_is_refused_and_logged(tmp_path, caplog):
    """sqlite3's DatabaseError ("file is not a database") reached the page raw."""
    garbage = tmp_path / "classroom.sqlite3"
    garbage.write_bytes(b"not a database, " * 512)
    with caplog.at_level(logging.ERROR, logger="classroom.db"):
        with pytest.raises(db_refusals.DatabaseUnavailable):
            open_store(ANSWER_IDS, garbage)
    assert "not a database" in caplog.text and str(garbage) in caplog.text
    assert garbage.read_bytes() == b"not a database, " * 512  # left as it was


@pytest.mark.parametrize(
    ("given", "said"),
    [("/postgres?", "/no_such_db?"), ("user=normscope", "user=no_such_role")],
)
def test_a_database_or_role_the_server_lacks_is_unavailable_not_busy(
    postgres_server, caplog, given, said
):
    """The server answers, and refuses the URL for good: no moment cures it, so the page
    says the database cannot be opened (not "busy, try again"), and the log says why."""
    url = postgres_server.replace(given, said)
    assert url != postgres_server
    with caplog.at_level(logging.ERROR, logger="classroom.db"):
        with pytest.raises(db_refusals.DatabaseUnavailable), db.Database(url).transaction():
            pass
    assert "refuses this URL" in caplog.text and "does not exist" in caplog.text


@pytest.mark.parametrize(
    ("message", "cause"),
    [  # as psycopg 3.3 wrote them from a PostgreSQL 15 server (scram, a pg_hba reject line)
        (
            'connection failed: connection to server at "127.0.0.1", port 5432 failed: '
            "fe_sendauth: no password supplied",
            "fe_sendauth: no password supplied",
        ),
        (
            'connection failed: connection to server at "127.0.0.1", port 5432 failed: FATAL:  '
            'pg_hba.conf rejects connection for host "127.0.0.1", user "u", database "d"',
            'FATAL:  pg_hba.conf rejects connection for host "127.0.0.1", user "u", database "d"',
        ),
        # several hosts: a line each, after the host, its port and its address
        (
            "- host: 'db1.internal.example.com', port: '1', hostaddr: '10.0.0.12': connection "
            'failed: connection to server at "db1.internal.example.com" (10.0.0.12), port 1 '
            "failed: Connection refused\n- host: 'db2.internal.example.com', port: '5432', "
            "hostaddr: '10.0.0.13': connection failed: connection to server at "
            '"db2.internal.example.com" (10.0.0.13), port 5432 failed: FATAL:  password '
            'authentication failed for user "u"',
            'FATAL:  password authentication failed for user "u"',
        ),
        (
            'connection failed: connection to server at "h", port 5432 failed: FATAL:  '
            'role "u" is not permitted to log in',
            'FATAL:  role "u" is not permitted to log in',
        ),
    ],
)
def test_the_cause_of_a_refused_connection_is_found_first(message, cause):
    """The cause is what is logged, first: behind a long host name and address it was cut
    at the log line's 200 characters; with several hosts, the refusing host's line."""
    assert db_refusals.set_up_wrong(Exception(message)) == cause


def test_a_server_that_is_down_or_busy_is_not_set_up_wrong():
    down = 'connection to server at "h", port 1 failed: Connection refused'
    busy = 'connection to server at "h" failed: FATAL:  sorry, too many clients already'
    assert db_refusals.set_up_wrong(Exception(down)) is None
    assert db_refusals.set_up_wrong(Exception(busy)) is None
