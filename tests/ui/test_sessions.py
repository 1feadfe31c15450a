"""ui/sessions.py: a closed tab's session, once Streamlit's reconnect time has passed, is shut
down, which releases its uploaded files (Streamlit itself only drops it from its store)."""

from __future__ import annotations

import threading
import time

from streamlit.runtime.memory_session_storage import MemorySessionStorage
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.session_manager import SessionInfo
from streamlit.runtime.state.session_state import SessionState
from streamlit.runtime.uploaded_file_manager import UploadedFileRec
from streamlit.runtime.websocket_session_manager import WebsocketSessionManager

from ui import sessions


class _Session:
    """What the sweeper calls on a stored session: AppSession.shutdown releases its files."""

    def __init__(self, session_id: str, files: MemoryUploadedFileManager):
        self.id, self.files, self.ended = session_id, files, 0
        self.session_state = SessionState()
        self.session_state["_compute_results"] = {"report": b"x" * 1000}

    def shutdown(self) -> None:
        self.ended += 1
        self.files.remove_session_files(self.id)


def test_the_streamlit_internals_the_sweeper_reads_are_there():
    storage = MemorySessionStorage(ttl_seconds=120)
    manager = WebsocketSessionManager(storage, MemoryUploadedFileManager("/upload"), None, None)
    assert manager._session_storage is storage
    assert isinstance(manager._storage_lock, type(threading.Lock()))
    assert storage._cache.expire(time.monotonic()) == []


def test_a_session_past_its_reconnect_time_is_shut_down_and_its_upload_released():
    files = MemoryUploadedFileManager("/upload")
    storage = MemorySessionStorage(ttl_seconds=120)
    closed = _Session("closed-tab", files)
    files.add_file("closed-tab", UploadedFileRec("f1", "dump.safetensors", "", b"x" * 1000))
    storage.save(SessionInfo(client=None, session=closed, script_run_count=1))
    lock = threading.Lock()
    assert sessions.end_expired_sessions(storage._cache, lock) == 0  # may still reconnect
    assert closed.ended == 0 and files.get_files("closed-tab", ["f1"])
    later = time.monotonic() + 121
    assert sessions.end_expired_sessions(storage._cache, lock, later) == 1
    assert closed.ended == 1 and files.get_files("closed-tab", ["f1"]) == []
    assert "_compute_results" not in closed.session_state  # emptied even if still referenced
    assert storage.list() == [] and sessions.end_expired_sessions(storage._cache, lock, later) == 0


def test_releasing_freed_memory_is_safe_to_call():
    sessions.release_freed_memory()  # glibc's malloc_trim, or nothing where there is none
