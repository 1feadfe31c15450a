"""A PostgreSQL transaction's client-side deadline: it cuts only the socket it watched, and a
deadline that cannot start costs its transaction no pool slot."""

from __future__ import annotations

import os
import socket
from types import SimpleNamespace

import pytest

from classroom import db
from classroom.deadlines import Deadline


def test_a_cut_reaches_the_watched_socket_not_the_next_one_given_its_number():
    """The connection's own thread closes it (its statement failed) as its deadline passes,
    and the next socket opened takes the freed descriptor number.  The cut shuts down the
    socket it watched, never the one now under that number (another transaction's
    connection, a page's websocket): the number it finds on the connection is stale."""
    watched, watched_peer = socket.socketpair()
    number = watched.fileno()
    connection = SimpleNamespace(pgconn=SimpleNamespace(socket=number))
    deadline = Deadline()
    try:
        deadline.watch(connection)
        other, other_peer = socket.socketpair()
        os.dup2(other.fileno(), number)  # the number freed and given to the next socket
        watched.detach()  # its descriptor is the other socket's now
        deadline._cut()
        assert deadline.fired
        assert watched_peer.recv(1) == b""  # the watched connection is cut
        other_peer.sendall(b"x")  # the socket now under its number still works both ways
        assert os.read(number, 1) == b"x"
        os.write(number, b"y")
        assert other_peer.recv(1) == b"y"
    finally:
        deadline.stop()
        os.close(number)
        for end in (watched_peer, other, other_peer):
            end.close()


def test_a_stopped_deadline_cuts_nothing_and_lets_its_duplicate_go():
    ends = socket.socketpair()
    deadline = Deadline()
    deadline.watch(SimpleNamespace(pgconn=SimpleNamespace(socket=ends[0].fileno())))
    deadline.stop()
    deadline._cut()  # the watcher, late
    assert not deadline.fired and deadline._socket is None
    ends[1].sendall(b"x")
    assert ends[0].recv(1) == b"x"
    for end in ends:
        end.close()


def test_a_deadline_that_cannot_start_gives_its_pool_slot_back(monkeypatch):
    """The first deadline starts the watching thread; where that fails (no thread to be had),
    the transaction fails, and its slot in the pool is free again, not lost for good."""

    def no_thread():
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(db, "Deadline", no_thread)
    database = db.Database("postgresql://nobody@127.0.0.1:1/none", pool_size=1)
    for _ in range(2):
        with pytest.raises(RuntimeError):
            with database.transaction():
                pass
    assert database._slots.acquire(blocking=False)
