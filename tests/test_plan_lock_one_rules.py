"""``plan._lock_one`` with flock: the folder itself is locked, opened as a folder; a path flock cannot
take that way is locked through the state folder's lock file (found by mutation testing,
eighteenth session: the open's ``O_DIRECTORY`` and the fallback's arguments were not pinned)."""

from __future__ import annotations

import os
import time

import pytest

import inspector.plan as planmod
from inspector.plan import WriteBusy, WriteLog

fcntl = pytest.importorskip("fcntl")
pytestmark = pytest.mark.skipif(not hasattr(os, "O_DIRECTORY"), reason="needs O_DIRECTORY")


def _held_by_another(path) -> bool:
    """Whether an exclusive flock of ``path`` by a descriptor of our own would have to wait."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_a_folder_is_locked_itself_and_no_lock_file_is_made(tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    log = WriteLog(tmp_path / "state")
    release = planmod._lock_one(folder, log, time.monotonic() + 5)
    try:
        assert _held_by_another(folder)
        assert not (tmp_path / "state" / "locks").exists()
    finally:
        release()
    assert not _held_by_another(folder)


def test_a_path_that_is_no_folder_is_locked_through_a_lock_file_not_by_a_lock_on_it(tmp_path):
    """The folder is opened as a folder (O_DIRECTORY): a path naming a file fails there, and the lock
    file standing for it in the state folder is created and held instead; the file stays unlocked."""
    not_a_folder = tmp_path / "sessions"
    not_a_folder.write_bytes(b"x")
    log = WriteLog(tmp_path / "state")
    release = planmod._lock_one(not_a_folder, log, time.monotonic() + 5)
    try:
        lock = planmod._lock_file(not_a_folder, log)
        assert lock.is_file()
        assert _held_by_another(lock)
        assert not _held_by_another(not_a_folder)
    finally:
        release()
    assert not _held_by_another(lock)


def test_a_held_lock_file_is_busy_at_the_deadline_naming_the_folder(tmp_path):
    not_a_folder = tmp_path / "sessions"
    not_a_folder.write_bytes(b"x")
    log = WriteLog(tmp_path / "state")
    release = planmod._lock_one(not_a_folder, log, time.monotonic() + 5)
    try:
        with pytest.raises(WriteBusy) as info:
            planmod._lock_one(not_a_folder, log, time.monotonic() - 1)
    finally:
        release()
    assert str(info.value) == (
        f"another hermes-inspector (the window or a command) is writing to {not_a_folder}; "
        "nothing was written. Try again when it has finished."
    )


def test_a_folder_held_by_another_is_busy_at_the_deadline_naming_the_folder(tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    other = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(WriteBusy) as info:
            planmod._lock_one(folder, WriteLog(tmp_path / "state"), time.monotonic() - 1)
    finally:
        os.close(other)
    assert str(info.value) == (
        f"another hermes-inspector (the window or a command) is writing to {folder}; "
        "nothing was written. Try again when it has finished."
    )
    assert not (tmp_path / "state" / "locks").exists()  # a held folder is not taken by a lock file
