"""The write path's lock and state-folder rules checked in the test's own process, quickly (tests/MUTATION.md,
twelfth session: their earlier killers are among the slow tests the mutation run's budget leaves out)."""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

import pytest

from inspector import plan, portable
from inspector.plan import ApplyError, WriteLog
from tests.write_path_helpers import FakeMsvcrt as _Msvcrt


def _byte_lock(monkeypatch, tmp_path, fake, deadline=None) -> int:
    """``plan._flock`` of a lock file with no flock and ``fake`` as msvcrt (no real sleeps); its descriptor."""
    monkeypatch.setattr(plan, "fcntl", None)
    monkeypatch.setattr(plan, "msvcrt", fake)
    monkeypatch.setattr(plan.time, "sleep", lambda s: None)
    fd = os.open(tmp_path / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        os.write(fd, b"held")  # the position is now 4: the lock must seek back to the first byte
        plan._flock(fd, time.monotonic() + 60 if deadline is None else deadline, tmp_path)
    finally:
        os.close(fd)
    return fd


@pytest.mark.parametrize("code", [errno.EACCES, getattr(errno, "EDEADLOCK", errno.EDEADLK)])
def test_without_flock_a_byte_lock_held_by_another_is_waited_for(monkeypatch, tmp_path, code):
    fake = _Msvcrt(held=2, code=code)
    _byte_lock(monkeypatch, tmp_path, fake)
    assert fake.calls == [(2, 1), (2, 1), (2, 1)]


def test_without_flock_another_error_is_raised_at_once(monkeypatch, tmp_path):
    fake = _Msvcrt(held=1, code=errno.EIO)
    with pytest.raises(OSError) as info:
        _byte_lock(monkeypatch, tmp_path, fake)
    assert info.value.errno == errno.EIO and fake.calls == [(2, 1)]


def test_a_state_folder_of_another_user_is_refused_in_these_words(monkeypatch, tmp_path):
    root = tmp_path / "state"
    root.mkdir()
    owner = os.stat(root).st_uid
    monkeypatch.setattr(portable, "euid", lambda: owner + 1)
    with pytest.raises(ApplyError) as info:
        WriteLog(root)._ensure()
    assert str(info.value) == (
        f"the state folder {root} belongs to user {owner}, not to you; the inspector keeps private chats "
        "there only in a folder of its own. Set HERMES_INSPECTOR_STATE_DIR to another folder; nothing was written"
    )


def test_the_listing_keeps_the_names_that_are_not_links(tmp_path):
    from inspector.repair.save import ListedNames

    (tmp_path / "a.json").write_text("{}")
    (tmp_path / "link.json").symlink_to(tmp_path / "a.json")
    assert ListedNames(tmp_path).plain == {"a.json"}


# seventeenth session (tests/MUTATION.md): the byte lock's place and descriptor, an interrupted call,
# the deadline's bound, "inside" at the root and beside a name ending in a space, the refusal's words.


class _SeekingMsvcrt(_Msvcrt):
    """The fake byte lock, noting which descriptor and which byte of it each call locks."""

    def __init__(self, held: int, code: int, interrupted: int = 0) -> None:
        super().__init__(held, code)
        self.where: list[tuple[int, int]] = []
        self.interrupted = interrupted

    def locking(self, fd: int, mode: int, nbytes: int) -> None:
        self.where.append((fd, os.lseek(fd, 0, os.SEEK_CUR)))
        if self.interrupted:
            self.interrupted -= 1
            raise InterruptedError(errno.EINTR, "interrupted")
        super().locking(fd, mode, nbytes)


def test_without_flock_the_first_byte_of_the_descriptor_is_locked(monkeypatch, tmp_path):
    """Rule: msvcrt's lock is taken on the given descriptor at its first byte, whatever its position."""
    fake = _SeekingMsvcrt(held=0, code=errno.EACCES)
    fd = _byte_lock(monkeypatch, tmp_path, fake)
    assert fake.where == [(fd, 0)]


def test_an_interrupted_lock_call_is_made_again(monkeypatch, tmp_path):
    """Rule: a lock call interrupted by a signal is made again until the lock is taken."""
    fake = _SeekingMsvcrt(held=0, code=errno.EACCES, interrupted=2)
    fd = _byte_lock(monkeypatch, tmp_path, fake)
    assert fake.where == [(fd, 0), (fd, 0), (fd, 0)]
    assert fake.calls == [(2, 1)]


def test_a_lock_held_at_the_deadline_itself_is_busy(monkeypatch, tmp_path):
    """Rule: a lock still held when the clock reads the deadline exactly is given up (busy), not
    tried once more."""
    monkeypatch.setattr(plan.time, "monotonic", lambda: 1000.0)
    fake = _SeekingMsvcrt(held=1, code=errno.EACCES)
    with pytest.raises(plan.WriteBusy):
        _byte_lock(monkeypatch, tmp_path, fake, deadline=1000.0)
    assert len(fake.where) == 1


def test_inside_holds_at_the_root_and_not_beside_a_name_ending_in_a_space(tmp_path):
    """Rule: every path is inside the root folder; a folder whose name ends in a space does not hold
    the paths of the folder without it."""
    assert plan._inside(tmp_path / "a" / "x", Path("/")) is True
    (tmp_path / "a ").mkdir()
    (tmp_path / "a").mkdir()
    assert plan._inside(tmp_path / "a" / "x", tmp_path / "a ") is False
    assert plan._inside(tmp_path / "a " / "x", tmp_path / "a ") is True


def test_a_state_folder_inside_the_home_is_refused_in_these_words(tmp_path):
    """Rule: the refusal names the state folder and the folder it is in, and says what to set."""
    home = tmp_path / "home"
    root = home / "state"
    with pytest.raises(ApplyError) as info:
        WriteLog(root, keep_out_of=(home,)).check_outside()
    assert str(info.value) == (
        f"the inspector's state folder {root} (backups and the write log) is inside {home}; it must be "
        "kept outside the Hermes home and its sessions. Set HERMES_INSPECTOR_STATE_DIR (or XDG_STATE_HOME) "
        "to a folder outside it; nothing was written"
    )
