"""The write path's lock and state-folder rules checked in the test's own process, quickly (tests/MUTATION.md,
twelfth session: their earlier killers are among the slow tests the mutation run's budget leaves out)."""

from __future__ import annotations

import errno
import os
import time

import pytest

from inspector import plan, portable
from inspector.plan import ApplyError, WriteLog


class _Msvcrt:
    """msvcrt's byte lock: held by another the first ``held`` times (with ``code``), then taken."""

    LK_NBLCK = 2

    def __init__(self, held: int, code: int) -> None:
        self.calls: list[tuple[int, int]] = []
        self.held, self.code = held, code

    def locking(self, fd: int, mode: int, nbytes: int) -> None:
        self.calls.append((mode, nbytes))
        if len(self.calls) <= self.held:
            raise OSError(self.code, "held by another")


@pytest.mark.parametrize("code", [errno.EACCES, getattr(errno, "EDEADLOCK", errno.EDEADLK)])
def test_without_flock_a_byte_lock_held_by_another_is_waited_for(monkeypatch, tmp_path, code):
    fake = _Msvcrt(held=2, code=code)
    monkeypatch.setattr(plan, "fcntl", None)
    monkeypatch.setattr(plan, "msvcrt", fake)
    monkeypatch.setattr(plan.time, "sleep", lambda s: None)
    fd = os.open(tmp_path / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        plan._flock(fd, time.monotonic() + 60, tmp_path)
    finally:
        os.close(fd)
    assert fake.calls == [(2, 1), (2, 1), (2, 1)]


def test_without_flock_another_error_is_raised_at_once(monkeypatch, tmp_path):
    fake = _Msvcrt(held=1, code=errno.EIO)
    monkeypatch.setattr(plan, "fcntl", None)
    monkeypatch.setattr(plan, "msvcrt", fake)
    fd = os.open(tmp_path / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        with pytest.raises(OSError) as info:
            plan._flock(fd, time.monotonic() + 60, tmp_path)
    finally:
        os.close(fd)
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
