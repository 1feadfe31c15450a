"""A PostgreSQL transaction's deadline on the client side, for a server that hangs.

A server that hangs while its machine still answers TCP (stopped, swapping, its disk frozen)
answers no statement, so neither its own timeouts (``statement_timeout``) nor TCP's
(keepalives, ``tcp_user_timeout``) ever fire: the kernel acknowledges every packet.  Only the
client can end the wait, by shutting the connection's socket down, which wakes the thread
blocked reading it with the connection lost.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from contextlib import suppress

HUNG_AFTER_S = 20.0  # a whole transaction (a few statements, each bounded by the server's
#   statement_timeout while it answers) waits this long for a server that does not
WATCH_EVERY_S = 0.5  # how often the open transactions' deadlines are checked


class Deadline:
    """A PostgreSQL transaction's bound on the client side: once ``HUNG_AFTER_S`` has passed,
    the socket of the connection it runs on (``watch``) is shut down, so a statement waiting
    for a server that hangs ends with the driver's ``OperationalError`` (``fired``: no second
    try, which would wait as long again).  ``stop`` when the transaction has ended, before
    its connection goes back to the pool: a cut is then never made, nor still under way.

    One watching thread per process checks every open transaction's deadline each
    ``WATCH_EVERY_S`` (a thread per transaction doubled a short transaction's cost)."""

    _open: set[Deadline] = set()
    _open_lock = threading.Lock()
    _watcher: threading.Thread | None = None

    def __init__(self):
        self.fired = False
        self.at = time.monotonic() + HUNG_AFTER_S
        self._connection = None
        self._stopped = False
        self._lock = threading.Lock()
        with Deadline._open_lock:
            Deadline._open.add(self)
            if Deadline._watcher is None:
                Deadline._watcher = threading.Thread(
                    target=Deadline._watch, name="normscope-class-deadlines", daemon=True
                )
                Deadline._watcher.start()

    def watch(self, connection) -> None:
        with self._lock:
            self._connection = connection
            if self.fired:  # ran out while the connection was being taken or opened
                _shut(connection)

    def stop(self) -> None:
        with Deadline._open_lock:
            Deadline._open.discard(self)
        with self._lock:  # waits for a cut under way
            self._stopped = True

    def _cut(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self.fired = True
            if self._connection is not None:
                _shut(self._connection)

    @staticmethod
    def _watch() -> None:
        while True:
            time.sleep(WATCH_EVERY_S)
            now = time.monotonic()
            with Deadline._open_lock:
                due = [deadline for deadline in Deadline._open if deadline.at <= now]
                Deadline._open.difference_update(due)
            for deadline in due:
                deadline._cut()


def _shut(connection) -> None:
    """Shut a PostgreSQL connection's socket down both ways: a thread blocked reading from it
    wakes with the connection lost (its file descriptor stays the driver's to close)."""
    with suppress(Exception):  # already closed, or closing
        fd = connection.pgconn.socket
        with socket.socket(fileno=os.dup(fd)) as duplicate:
            duplicate.shutdown(socket.SHUT_RDWR)
