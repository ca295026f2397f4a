"""The other systems' paths, taken on this machine: reads without ``pread``, no fork, no
``/dev/shm``, a write lock without ``flock`` (a lock file made with O_EXCL) and the umask without
``/proc``. Each fallback is checked against what the Linux path gives.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

from inspector import forked, portable
from inspector import plan as planmod
from inspector.plan import FileChange, Plan, WriteBusy, WriteLog, apply_plan, undo_write, write_lock
from inspector.store.files import Fingerprint
from inspector.store.scan import SessionDirScan


def test_reads_without_pread_give_the_same_bytes(tmp_path: Path) -> None:
    """Rule: a read at an offset gives the same bytes with or without os.pread (Windows has none)."""
    data = os.urandom(70_000)
    (tmp_path / "f").write_bytes(data)
    fd = os.open(tmp_path / "f", os.O_RDONLY | portable.O_BINARY)
    try:
        for size, offset in [(8, 0), (1000, 12_345), (70_000, 0), (500, 69_800), (10, 70_000), (10, 90_000)]:
            want = data[offset : offset + size]
            assert portable.pread_fallback(fd, size, offset) == want
            if hasattr(os, "pread"):
                assert os.pread(fd, size, offset) == want
            buf = bytearray(size)
            n = portable.pread_into_fallback(fd, buf, offset)
            assert n == len(want) and bytes(buf[:n]) == want
    finally:
        os.close(fd)


def test_the_linux_fast_path_is_the_plain_os_function_unless_forced() -> None:
    """Rule: the window's hot reads pay no wrapper on Linux; forced portable takes the fallback."""
    if portable.FORCED or not hasattr(os, "pread"):
        assert portable.pread is portable.pread_fallback
    else:
        assert portable.pread is os.pread


def test_no_fork_on_macos_when_forced_or_with_qt(monkeypatch) -> None:
    """Rule: fork only where the system allows it and no Qt is loaded; never on macOS."""
    monkeypatch.setattr(portable, "FORCED", False)
    monkeypatch.delitem(sys.modules, "PySide6.QtCore", raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    assert portable.can_fork() == hasattr(os, "fork")
    monkeypatch.setattr(sys, "platform", "darwin")
    assert not portable.can_fork()
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(portable, "FORCED", True)
    assert not portable.can_fork()
    monkeypatch.setattr(portable, "FORCED", False)
    monkeypatch.setitem(sys.modules, "PySide6.QtCore", object())
    assert not portable.can_fork()


def test_without_fork_the_scan_reads_every_sidecar_itself(tmp_path: Path, monkeypatch) -> None:
    """Rule: where Forked cannot fork it raises OSError, and the scan does all the work in-process."""
    from inspector.store import scan as scan_mod

    for i in range(40):
        (tmp_path / f"s{i:03d}.json").write_text(
            f'{{"session_id": "s{i:03d}", "title": "t{i}", "messages": []}}'
        )
    monkeypatch.setattr(scan_mod, "PARALLEL_MIN_FILES", 1)
    monkeypatch.setattr(portable, "FORCED", True)
    with pytest.raises(OSError):
        forked.Forked(lambda: 1)
    monkeypatch.setattr(scan_mod, "can_fork", lambda: True)  # as if allowed: Forked itself refuses
    names = sorted(n for n in os.listdir(tmp_path))
    without = SessionDirScan(tmp_path)
    assert without.prefetch(names) == 40
    monkeypatch.setattr(scan_mod, "can_fork", lambda: False)
    here = SessionDirScan(tmp_path)
    here.prefetch(names)
    assert [without.sidecar(n)[0] for n in names] == [here.sidecar(n)[0] for n in names]
    assert [without.message_count(n) for n in names] == [0] * 40


def test_the_handover_folder_is_tempfiles_without_dev_shm(monkeypatch) -> None:
    monkeypatch.setattr(portable, "FORCED", True)
    assert portable.handover_dir() is None
    monkeypatch.setattr(portable, "FORCED", False)
    expected = portable.SHM if os.path.isdir(portable.SHM) and os.access(portable.SHM, os.W_OK) else None
    assert portable.handover_dir() == expected


def test_the_umask_without_proc_is_the_same(monkeypatch) -> None:
    """Rule: a new file's mode is 0666 minus the umask, found without /proc too (set back at once)."""
    linux = planmod.current_umask()
    monkeypatch.setattr(portable, "FORCED", True)
    monkeypatch.setattr(planmod, "_UMASK", [])
    assert planmod.current_umask() == linux
    assert planmod.current_umask() == linux  # remembered
    mask = os.umask(0o022)
    os.umask(mask)
    assert mask == linux, "the umask was left changed"


# ---------------------------------------------------------------- the write lock without flock


@pytest.fixture
def no_flock(monkeypatch):
    monkeypatch.setattr(planmod, "fcntl", None)
    monkeypatch.setattr(planmod, "msvcrt", None)
    monkeypatch.setattr(planmod, "LOCK_WAIT", 0.4)


def _sessions(tmp_path: Path) -> Path:
    folder = tmp_path / "home" / "webui" / "sessions"
    folder.mkdir(parents=True)
    (folder / "b.json").write_bytes(b'{"b": 1}')
    return folder


def test_without_flock_a_lock_file_excludes_a_second_writer_and_is_removed_after(
    tmp_path, no_flock, monkeypatch
) -> None:
    """Rule: two writers never write one home at once, also where there is no flock (O_EXCL lock file)."""
    folder = _sessions(tmp_path)
    log = WriteLog(tmp_path / "state")
    other = WriteLog(tmp_path / "other-state")  # another state folder: the lock is still the same
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with write_lock([folder], log):
            lock = planmod._shared_lock_file(folder)
            held = lock.with_name(lock.name + ".held")
            assert held.read_text().split()[0] == str(os.getpid())
            assert oct(held.stat().st_mode & 0o777) == oct(0o600)
        assert not held.exists(), "the lock file stayed after the write"
        # a lock held by a live process (here: another one's pid and start time) refuses after the wait
        facts = portable.process_facts(holder.pid)
        held.write_text(f"{holder.pid} {facts.started_at!r}\n")
        before = (folder / "b.json").read_bytes()
        slept: list[float] = []  # what the lock asks to sleep: not how long a busy machine takes

        def sleep(seconds: float) -> None:
            slept.append(seconds)
            time.sleep(seconds)

        clock = {name: getattr(time, name) for name in dir(time) if not name.startswith("_")}
        monkeypatch.setattr(planmod, "time", types.SimpleNamespace(**{**clock, "sleep": sleep}))
        t0 = time.monotonic()
        with pytest.raises(WriteBusy, match="another hermes-inspector"):
            apply_plan(
                Plan(
                    "second",
                    "b",
                    [FileChange(folder / "b.json", before, b"{}", Fingerprint.of_bytes(before))],
                ),
                other,
            )
        waited = time.monotonic() - t0
        monkeypatch.setattr(planmod, "time", time)
        # it waited LOCK_WAIT (a wall clock only runs longer on a busy machine), in 50 ms steps, and
        # then refused: it never asked to sleep past LOCK_WAIT (the 60 s only stops a hung test). A
        # process descheduled past the deadline before its first look refuses without sleeping at all
        assert 0.35 <= waited < 60 and (folder / "b.json").read_bytes() == before
        assert set(slept) <= {0.05} and sum(slept) <= 0.4 + 0.05 + 1e-9, slept
        assert held.exists(), "a live writer's lock was taken away"
    finally:
        holder.kill()
        holder.wait()
    # the holder died without releasing: its lock is taken over, the write goes through, and undone
    rec = apply_plan(
        Plan(
            "after",
            "b",
            [FileChange(folder / "b.json", b'{"b": 1}', b"{}", Fingerprint.of_bytes(b'{"b": 1}'))],
        ),
        other,
    )
    assert (folder / "b.json").read_bytes() == b"{}"
    undo_write(rec.write_id, other)
    assert (folder / "b.json").read_bytes() == b'{"b": 1}'
    assert sorted(p.name for p in folder.iterdir()) == ["b.json"], (
        "the lock made a file in the sessions folder"
    )
    assert not list(held.parent.glob(held.name + "*")), "a lock file (or a stale one set aside) was left"


def test_a_lock_file_of_a_reused_pid_is_stale(tmp_path, no_flock) -> None:
    """A pid that now names a process started later than the lock's maker: the lock is stale."""
    folder = _sessions(tmp_path)
    log = WriteLog(tmp_path / "state")
    with write_lock([folder], log):
        pass
    lock = planmod._shared_lock_file(folder)
    held = lock.with_name(lock.name + ".held")
    held.write_text(f"{os.getpid()} 12.5\n")  # this pid, but a start time long before this process
    with write_lock([folder], log, wait=0.2):
        assert held.read_text().split()[0] == str(os.getpid()) and "12.5" not in held.read_text()
    assert not held.exists()


def test_a_lock_file_being_written_is_waited_for(tmp_path, no_flock) -> None:
    """An empty (half-made) lock file is never judged stale: the second writer waits, then refuses."""
    folder = _sessions(tmp_path)
    log = WriteLog(tmp_path / "state")
    with write_lock([folder], log):
        pass
    lock = planmod._shared_lock_file(folder)
    lock.with_name(lock.name + ".held").write_bytes(b"")
    with pytest.raises(WriteBusy), write_lock([folder], log, wait=0.2):
        pass
