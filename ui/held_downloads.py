"""A file written at a download button's click stays until the browser has fetched it.

Every download here is written when it is clicked (``st.download_button(data=callable)``:
the class's counts, the dumps page's tables and report, a chart's CSV and images).  Streamlit
1.67 writes the file, sends its URL to the browser, and leaves the file referenced by no
session; the sweep at the end of every script run, in any session, marks such a file and the
next sweep deletes it.  Two runs anywhere on the server between the click's answer and the
browser's request for the URL were enough: on a server whose pages rerun several times a
second (a class: the chart every second, every learner's page every 1.5 s) the file was gone
and the browser's download failed ("canceled", a 404).

``hold()`` (once per process, from ``app.py``) keeps each such file referenced, as if a
session showed it, for ``HOLD_S`` seconds after it was written; a sweep after that deletes it
as before.  It reads Streamlit's media file manager's internals (its lock and its map of the
files each session refers to); ``tests/ui/test_held_downloads.py`` fails if a newer
Streamlit moves them, or if it no longer deletes an unfetched file, so the change is seen.
"""

from __future__ import annotations

import logging
import threading
import time

from streamlit.runtime.media_file_manager import MediaFileManager

HOLD_S = 60.0  # the browser's request for the URL comes within this of the file's writing
HOLDER = "normscope-held-downloads"  # the map's key, a "session" no real session id equals
_MARK = "_normscope_own"  # on the class, once hold() has wrapped it: Streamlit's methods
_DEADLINES = "_normscope_held_until"  # on a manager: {file id: time.monotonic() deadline}


def _file_id(url: str) -> str:
    """The stored file's id in its URL (``<media endpoint>/<id><extension>``)."""
    return url.rsplit("/", 1)[-1].split(".", 1)[0]


def release_expired(manager: MediaFileManager, now: float) -> None:
    """Stop holding the files written more than ``HOLD_S`` seconds before ``now``."""
    with manager._lock:
        held = manager._files_by_session_and_coord.get(HOLDER)
        if not held:
            return
        deadlines = manager.__dict__.setdefault(_DEADLINES, {})
        for file_id in [f for f in held if deadlines.get(f, 0.0) <= now]:
            del held[file_id]
            deadlines.pop(file_id, None)


# Streamlit's own two methods, kept on the class by the first hold(): a module imported again
# (a reload) finds them there rather than taking the wrappers for them.
STREAMLIT_OWN = getattr(MediaFileManager, _MARK, None) or (
    MediaFileManager.execute_deferred,
    MediaFileManager.remove_orphaned_files,
)
_FIRST = threading.Lock()
_LOGGER = logging.getLogger(__name__)


def hold() -> None:
    """Wrap ``MediaFileManager``'s click handler and its sweep, once per process."""
    with _FIRST:
        if getattr(MediaFileManager, _MARK, None) is not None:
            return
        _wrap(*STREAMLIT_OWN)


def _wrap(execute, sweep) -> None:
    def execute_deferred(self: MediaFileManager, file_id: str) -> str:
        url = execute(self, file_id)
        written = _file_id(url)
        with self._lock:
            if written in self._file_metadata:
                self._files_by_session_and_coord[HOLDER][written] = written
                self.__dict__.setdefault(_DEADLINES, {})[written] = time.monotonic() + HOLD_S
                return url
        _not_found(url)
        return url

    def remove_orphaned_files(self: MediaFileManager) -> None:
        release_expired(self, time.monotonic())
        sweep(self)

    MediaFileManager.execute_deferred = execute_deferred
    MediaFileManager.remove_orphaned_files = remove_orphaned_files
    setattr(MediaFileManager, _MARK, (execute, sweep))


_said_not_found = threading.Event()


def _not_found(url: str) -> None:
    """Say once per process that a written file could not be held: another storage's URLs,
    or two sweeps that came before the hold (then this one download may fail).  Once, not
    once per URL: every click writes a new one."""
    if not _said_not_found.is_set():
        _said_not_found.set()
        _LOGGER.warning("a download written at its click is not held (%s): no such file", url)
