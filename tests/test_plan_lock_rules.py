"""The lock file of systems without flock (``plan._exclusive_file_lock`` and its helpers), rule by rule.

``<lock>.held``, made with O_EXCL, holds ``"<pid> <start time>\\n"`` (the start time as ``repr`` of
a float, ``0.0`` when the system does not tell it); its holder is gone when the pid is gone or now
names a process started more than 1 s away from the written time; a stale one is renamed aside
before it is removed, and put back when what was renamed is another waiter's fresh lock. A live
holder is waited for in steps of 50 ms until the deadline, then the write is refused as busy.
Release removes the file only while it holds our stamp. The expected stamps are read from Linux'
``/proc`` (``proc(5)``: the start time in clock ticks after boot, ``btime`` in ``/proc/stat``).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import sys
import types
from pathlib import Path

import pytest

import inspector.plan as planmod
from inspector import portable
from inspector.plan import WriteBusy, WriteLog
from tests.write_path_helpers import FakeMsvcrt


def _facts(pid: int, started_at: float | None) -> portable.ProcessFacts:
    return portable.ProcessFacts(pid=pid, started_at=started_at, cwd=None, exe=None, cmdline=())


def _proc_start_time() -> float:
    """This process's start time in seconds since the epoch, from ``/proc`` (proc(5))."""
    stat_line = Path("/proc/self/stat").read_text()
    ticks = int(stat_line.rsplit(")", 1)[1].split()[19])  # field 22, starttime
    (btime,) = [
        int(line.split()[1])
        for line in Path("/proc/stat").read_text().splitlines()
        if line.startswith("btime ")
    ]
    return btime + ticks / os.sysconf("SC_CLK_TCK")


def _stamp_of(held: Path) -> tuple[int, float]:
    text = held.read_text(encoding="ascii")
    assert text.endswith("\n") and text.count(" ") == 1
    pid, started = text.split()
    return int(pid), float(started)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_held_file_names_this_process_and_its_start_time(tmp_path):
    lock = tmp_path / "k.lock"
    release = planmod._exclusive_file_lock(lock, tmp_path, deadline=0.0)
    held = tmp_path / "k.lock.held"
    pid, started = _stamp_of(held)
    assert pid == os.getpid()
    assert abs(started - _proc_start_time()) < 1.0
    assert oct(held.stat().st_mode & 0o777) == "0o600"
    release()
    assert not held.exists()


@pytest.mark.parametrize("facts", [None, "no start time"], ids=["no-process-facts", "no-start-time"])
def test_a_start_time_the_system_does_not_tell_is_written_as_zero(tmp_path, monkeypatch, facts):
    answer = None if facts is None else _facts(os.getpid(), None)
    monkeypatch.setattr(portable, "process_facts", lambda pid: answer)
    planmod._exclusive_file_lock(tmp_path / "k.lock", tmp_path, deadline=0.0)
    assert (tmp_path / "k.lock.held").read_bytes() == f"{os.getpid()} 0.0\n".encode("ascii")


def test_the_start_time_is_written_as_its_repr(tmp_path, monkeypatch):
    monkeypatch.setattr(portable, "process_facts", lambda pid: _facts(pid, 1700000000.25))
    planmod._exclusive_file_lock(tmp_path / "k.lock", tmp_path, deadline=0.0)
    assert (tmp_path / "k.lock.held").read_bytes() == f"{os.getpid()} 1700000000.25\n".encode("ascii")


# ---------------------------------------------------------------- is the holder gone


@pytest.mark.parametrize(
    ("now_started", "gone"),
    [
        (100.0, False),
        (101.0, False),
        (99.0, False),
        (101.5, True),
        (98.5, True),
        (102.5, True),
        (None, False),
    ],
)
def test_a_holder_is_gone_when_its_pid_started_more_than_a_second_away(monkeypatch, now_started, gone):
    """The pid now names a process started more than 1 s from the written time: another process
    (the pid was reused). Exactly 1 s away, or no start time known: the same process."""
    asked = []
    monkeypatch.setattr(portable, "process_facts", lambda pid: asked.append(pid) or _facts(pid, now_started))
    assert planmod._holder_gone((4242, 100.0)) is gone
    assert asked == [4242]


def test_a_holder_whose_pid_is_gone_is_gone_and_an_unread_one_is_not(monkeypatch):
    monkeypatch.setattr(portable, "process_facts", lambda pid: None)
    assert planmod._holder_gone((4242, 100.0)) is True
    assert planmod._holder_gone(None) is False


# ---------------------------------------------------------------- waiting and taking over


class _Clock:
    """The ``time`` the lock sees: a monotonic clock that moves only when slept."""

    def __init__(self, now: float) -> None:
        self.now = now
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def _live_holder(held: Path) -> bytes:
    stamp = f"{os.getpid()} {portable.process_facts(os.getpid()).started_at!r}\n".encode("ascii")
    held.write_bytes(stamp)
    return stamp


def test_a_live_holder_is_waited_for_in_50_ms_steps_then_the_write_is_busy(tmp_path, monkeypatch):
    held = tmp_path / "k.lock.held"
    stamp = _live_holder(held)
    clock = _Clock(100.0)
    monkeypatch.setattr(planmod, "time", types.SimpleNamespace(monotonic=clock.monotonic, sleep=clock.sleep))
    with pytest.raises(WriteBusy) as caught:
        planmod._exclusive_file_lock(tmp_path / "k.lock", tmp_path / "sessions", deadline=100.19)
    assert clock.slept == pytest.approx([0.05] * 4)
    assert str(caught.value) == (
        f"another hermes-inspector (the window or a command) is writing to {tmp_path / 'sessions'}; "
        "nothing was written. Try again when it has finished."
    )
    assert held.read_bytes() == stamp
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.lock.held"]


def test_at_the_deadline_itself_there_is_no_more_waiting(tmp_path, monkeypatch):
    _live_holder(tmp_path / "k.lock.held")
    clock = _Clock(100.0)
    monkeypatch.setattr(planmod, "time", types.SimpleNamespace(monotonic=clock.monotonic, sleep=clock.sleep))
    with pytest.raises(WriteBusy):
        planmod._exclusive_file_lock(tmp_path / "k.lock", tmp_path, deadline=100.0)
    assert clock.slept == []


def test_a_lock_left_by_a_dead_process_is_taken_over(tmp_path, monkeypatch):
    held = tmp_path / "k.lock.held"
    held.write_bytes(b"4242 100.0\n")
    monkeypatch.setattr(planmod, "_holder_gone", lambda holder: holder == (4242, 100.0))
    release = planmod._exclusive_file_lock(tmp_path / "k.lock", tmp_path, deadline=0.0)
    assert _stamp_of(held)[0] == os.getpid()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.lock.held"]  # nothing left aside
    release()
    assert list(tmp_path.iterdir()) == []


def test_a_stale_lock_another_waiter_removed_first_is_no_error(tmp_path, monkeypatch):
    """The rename aside finds nothing (the other waiter took the stale file away): try again."""
    held = tmp_path / "k.lock.held"
    held.write_bytes(b"4242 100.0\n")

    def gone_and_taken_away(holder):
        held.unlink()
        return True

    monkeypatch.setattr(planmod, "_holder_gone", gone_and_taken_away)
    planmod._exclusive_file_lock(tmp_path / "k.lock", tmp_path, deadline=0.0)
    assert _stamp_of(held)[0] == os.getpid()


def test_another_waiters_fresh_lock_renamed_aside_is_put_back(tmp_path, monkeypatch):
    """Between reading the stale holder and renaming it aside, another waiter took it over: what
    was renamed is that waiter's fresh lock, so it is put back (linked) and we wait."""
    held = tmp_path / "k.lock.held"
    held.write_bytes(b"4242 100.0\n")
    fresh = b"4343 200.0\n"
    verdicts = []

    def judge(holder):
        verdicts.append(holder)
        if len(verdicts) == 1:
            held.write_bytes(fresh)  # the other waiter's takeover, after our read
            return True
        return False  # the fresh holder is alive

    monkeypatch.setattr(planmod, "_holder_gone", judge)
    with pytest.raises(WriteBusy):
        planmod._exclusive_file_lock(tmp_path / "k.lock", tmp_path, deadline=0.0)
    assert verdicts == [(4242, 100.0), (4343, 200.0)]
    assert held.read_bytes() == fresh
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.lock.held"]


def test_a_fresh_lock_that_cannot_be_put_back_is_no_error(tmp_path, monkeypatch):
    """A third waiter made a new held file before ours is put back: the link fails (EEXIST), the
    renamed file is removed, and the third waiter's lock is waited for."""
    held = tmp_path / "k.lock.held"
    held.write_bytes(b"4242 100.0\n")
    real_holder = planmod._holder
    third = b"4444 300.0\n"

    def holder(path):
        if path.name.startswith("k.lock.held.stale-"):
            held.write_bytes(third)  # the third waiter's O_EXCL create, after our rename
            return (4343, 200.0)
        return real_holder(path)

    monkeypatch.setattr(planmod, "_holder", holder)
    monkeypatch.setattr(planmod, "_holder_gone", lambda h: h == (4242, 100.0))
    with pytest.raises(WriteBusy):
        planmod._exclusive_file_lock(tmp_path / "k.lock", tmp_path, deadline=0.0)
    assert held.read_bytes() == third
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.lock.held"]


# ---------------------------------------------------------------- release and the lock file


def test_release_leaves_a_lock_that_is_no_longer_ours(tmp_path):
    held = tmp_path / "k.lock.held"
    held.write_bytes(b"4343 200.0\n")
    planmod._release_file_lock(held, b"4242 100.0\n")
    assert held.read_bytes() == b"4343 200.0\n"


def test_release_of_a_lock_already_gone_is_no_error(tmp_path):
    planmod._release_file_lock(tmp_path / "k.lock.held", b"4242 100.0\n")
    assert list(tmp_path.iterdir()) == []


def test_the_lock_files_folder_is_made_once_and_reused(tmp_path):
    log = WriteLog(tmp_path / "state")
    first = planmod._lock_file(tmp_path / "a", log)
    second = planmod._lock_file(tmp_path / "b", log)
    assert first.parent == second.parent == tmp_path / "state" / "locks"
    assert first != second
    assert planmod._lock_file(tmp_path / "a", log) == first
    assert stat.S_IMODE(first.parent.stat().st_mode) == 0o700
    key = hashlib.sha256(os.fsencode(os.path.realpath(tmp_path / "a"))).hexdigest()
    assert first.name == key[:32] + ".lock"


def test_the_lock_files_folder_is_made_0700_whatever_the_umask(tmp_path):
    old = os.umask(0)
    try:
        lock = planmod._lock_file(tmp_path / "a", WriteLog(tmp_path / "state"))
    finally:
        os.umask(old)
    assert stat.S_IMODE(lock.parent.stat().st_mode) == 0o700


def _without_flock(monkeypatch, tmp_path, msvcrt) -> Path:
    """No flock (and ``msvcrt`` as given), the private lock folder made in ``tmp_path/tmp``; the
    sessions folder to lock."""
    import tempfile

    monkeypatch.setattr(planmod, "fcntl", None)
    monkeypatch.setattr(planmod, "msvcrt", msvcrt)
    monkeypatch.setattr(planmod.time, "sleep", lambda s: None)
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    folder = tmp_path / "sessions"
    folder.mkdir()
    return folder


def _busy_words(folder: Path) -> str:
    return (
        f"another hermes-inspector (the window or a command) is writing to {folder}; "
        "nothing was written. Try again when it has finished."
    )


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX uids for the private lock folder")
def test_without_flock_or_msvcrt_a_held_folder_is_refused_naming_that_folder(monkeypatch, tmp_path):
    """Rule (seventeenth session): where there is neither flock nor msvcrt, a folder another writer
    holds is refused as busy in words that name the folder written to (not the lock file)."""
    folder = _without_flock(monkeypatch, tmp_path, None)
    log = WriteLog(tmp_path / "state")
    release = planmod._lock_one(folder, log, 0.0)
    try:
        with pytest.raises(WriteBusy) as info:
            planmod._lock_one(folder, log, 0.0)
    finally:
        release()
    assert str(info.value) == _busy_words(folder)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX uids for the private lock folder")
def test_with_msvcrt_a_held_folder_is_refused_at_its_deadline_naming_that_folder(monkeypatch, tmp_path):
    """Rule (seventeenth session): where there is msvcrt and no flock, the lock is msvcrt's byte lock
    of a lock file made in the private lock folder; held by another until the deadline, the write is
    refused as busy in words that name the folder written to."""
    held = FakeMsvcrt(held=10**9, code=errno.EACCES)
    folder = _without_flock(monkeypatch, tmp_path, held)
    with pytest.raises(WriteBusy) as info:
        planmod._lock_one(folder, WriteLog(tmp_path / "state"), 0.0)
    assert str(info.value) == _busy_words(folder)
    assert held.calls == [(2, 1)]
    key = hashlib.sha256(os.fsencode(os.path.realpath(folder))).hexdigest()[:32]
    (locks,) = (tmp_path / "tmp").iterdir()
    assert [p.name for p in locks.iterdir()] == [f"{key}.lock"]
