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
    ``watch`` keeps a duplicate of the socket's descriptor, and the cut shuts that one down:
    a descriptor number read at the cut could already be another socket's (the connection
    closed by its own thread, the number given to the next one opened).

    One watching thread per process checks every open transaction's deadline each
    ``WATCH_EVERY_S`` (a thread per transaction doubled a short transaction's cost)."""

    _open: set[Deadline] = set()
    _open_lock = threading.Lock()
    _watcher: threading.Thread | None = None

    def __init__(self):
        self.fired = False
        self.at = time.monotonic() + HUNG_AFTER_S
        self._socket: socket.socket | None = None  # the watched connection's, duplicated
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
        """Watch ``connection``, in place of the one watched before (closed by then)."""
        duplicate = _duplicate(connection)
        with self._lock:
            _close(self._socket)
            self._socket = duplicate
            if self.fired:  # ran out while the connection was being taken or opened
                _shut(duplicate)

    def stop(self) -> None:
        with Deadline._open_lock:
            Deadline._open.discard(self)
        with self._lock:  # waits for a cut under way
            self._stopped = True
            self._socket = _close(self._socket)

    def _cut(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self.fired = True
            _shut(self._socket)

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


def _duplicate(connection) -> socket.socket | None:
    """A PostgreSQL connection's socket under a descriptor of our own (None where it has
    none: closed, or lost): shutting it down shuts the connection's own down, and its number
    is never another socket's while we hold it."""
    try:
        fd = os.dup(connection.pgconn.socket)
    except Exception:  # already closed, or lost
        return None
    try:
        return socket.socket(fileno=fd)
    except OSError:
        os.close(fd)
        return None


def _shut(duplicate: socket.socket | None) -> None:
    """Shut a watched socket down both ways: a thread blocked reading the connection wakes
    with the connection lost (its own descriptor stays the driver's to close)."""
    if duplicate is not None:
        with suppress(OSError):  # no longer connected
            duplicate.shutdown(socket.SHUT_RDWR)


def _close(duplicate: socket.socket | None) -> None:
    if duplicate is not None:
        duplicate.close()
