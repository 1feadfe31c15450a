"""ui/held_downloads.py: a file written at a download button's click survives the sweeps of
other sessions' runs until the browser has had time to fetch it, then is deleted."""

from __future__ import annotations

import time
from unittest import mock

import pytest
from streamlit.runtime import media_file_manager
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.media_file_storage import MediaFileStorageError
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from ui import held_downloads

CSV = "lesson,round,option,votes\nrms_vs_ln,1,a,3\n"


def _clicked(manager: MediaFileManager, execute) -> str:
    """A session draws a deferred download button and its user clicks it: the written
    file's id (the button's own placeholder id is another)."""
    with mock.patch.object(media_file_manager, "_get_session_id", return_value="teacher"):
        placeholder = manager.add_deferred(lambda: CSV, "text/csv", "1.2.3", file_name="c.csv")
    return held_downloads._file_id(execute(manager, placeholder))


def _served(storage: MemoryMediaFileStorage, file_id: str) -> bool:
    try:
        return storage.get_file(file_id).content == CSV.encode()
    except MediaFileStorageError:
        return False


def test_streamlit_itself_deletes_the_written_file_after_two_runs_anywhere():
    """The race the module exists for: if a newer Streamlit keeps the file, this fails and
    the module can go."""
    storage = MemoryMediaFileStorage("/media")
    manager = MediaFileManager(storage)
    execute, sweep = held_downloads.STREAMLIT_OWN
    written = _clicked(manager, execute)
    sweep(manager)  # another session's run ends: the file is marked
    assert _served(storage, written)
    sweep(manager)  # and the next one's: deleted before the browser asked for it
    assert not _served(storage, written)


@pytest.fixture
def held():
    held_downloads.hold()
    storage = MemoryMediaFileStorage("/media")
    return storage, MediaFileManager(storage)


def test_the_written_file_is_served_through_many_runs_then_deleted_after_its_hold(held):
    storage, manager = held
    written = _clicked(manager, MediaFileManager.execute_deferred)
    for _ in range(20):  # a class's pages rerunning while the browser's request is on its way
        manager.remove_orphaned_files()
    assert _served(storage, written)
    held_downloads.release_expired(manager, time.monotonic() + held_downloads.HOLD_S + 1)
    manager.remove_orphaned_files()
    manager.remove_orphaned_files()
    assert not _served(storage, written)


def test_holding_is_installed_once_and_a_click_twice_writes_one_file_held_once(held):
    storage, manager = held
    wrapped = MediaFileManager.execute_deferred
    held_downloads.hold()
    assert MediaFileManager.execute_deferred is wrapped
    first = _clicked(manager, MediaFileManager.execute_deferred)
    second = _clicked(manager, MediaFileManager.execute_deferred)
    assert first == second  # the same bytes: one stored file
    assert manager._files_by_session_and_coord[held_downloads.HOLDER] == {first: first}


def test_a_session_ending_does_not_release_the_held_file(held):
    """A tab closed right after its click: its session's references go, the download stays."""
    storage, manager = held
    written = _clicked(manager, MediaFileManager.execute_deferred)
    manager.clear_session_refs("teacher")
    manager.remove_orphaned_files()
    manager.remove_orphaned_files()
    assert _served(storage, written)


def test_imported_again_the_module_still_knows_streamlits_own_methods(held):
    """A reload must not take the wrappers for Streamlit's methods (the first test would then
    test the wrapper)."""
    import importlib

    wrapped = MediaFileManager.execute_deferred
    assert wrapped not in held_downloads.STREAMLIT_OWN
    importlib.reload(held_downloads)
    assert wrapped not in held_downloads.STREAMLIT_OWN
    assert MediaFileManager.execute_deferred is wrapped  # and hold() wraps nothing twice
    held_downloads.hold()
    assert MediaFileManager.execute_deferred is wrapped


def test_a_file_it_cannot_hold_is_logged_once_per_process_not_once_per_click(monkeypatch, caplog):
    """Logged once per URL, a class clicking a changing CSV logged at every click (each
    click writes a new file) and the memory of what was said grew without end."""
    import logging
    import threading

    monkeypatch.setattr(held_downloads, "_said_not_found", threading.Event())
    with caplog.at_level(logging.WARNING, logger=held_downloads.__name__):
        for click in range(5):
            held_downloads._not_found(f"/media/{click:056x}.csv")
    assert len(caplog.records) == 1
