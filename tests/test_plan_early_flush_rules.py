"""Rules: the files staged early are made durable by one flush of their file system where that is as
safe (``inspector.fs_flush``), and each by its own ``fsync`` everywhere else.

* With a flusher for the folder, the small new files (from the first call that hands over
  ``PARALLEL_FSYNC_MIN`` or more of them on) are written one after the other by one thread
  named ``inspector-early_0``, none of them fsynced, and one ``syncfs`` runs after the last of them
  (asked with ``flush_early``, or by the write itself) and before anything is swapped in.
* A file staged after that flush gets one of its own before the write takes it.
* When the flush fails, no file it was to cover is taken: each is staged again and fsynced by the
  write (the staged copies removed), and the write still puts every new version in place.
* A write of a few files, or one without a flusher (another system, another file system, a machine busy
  writing), has every file fsynced by the pool of threads, as before, and nothing is flushed.
* A big file (the index) is always fsynced on its own threads.
* A materialize asks for the flush once its last new sidecar is staged, before the index is made.
"""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest

from inspector import plan as planmod
from inspector.plan import FileChange, Plan, WriteLog, apply_plan, early_staging, flush_early, stage_early
from inspector.repair import materialize
from tests.recovery_helpers import make_ctx
from tests.repair.test_materialize_warning_rules import _home

TMP = ".inspector.tmp."


def _files(folder: Path, n: int, size: int = 10) -> list[FileChange]:
    folder.mkdir(parents=True, exist_ok=True)
    return [FileChange(folder / f"s{i:03d}.json", None, b"%d" % i + b" " * size) for i in range(n)]


def _record(monkeypatch, flushes: int | None = None) -> list[tuple]:
    """Events in order: ("fsync", temp name, thread), ("flush", fds), ("stage", name, thread, sync),
    ("swap",). ``flushes``: a flusher is given for every folder (a real descriptor), and the flush
    fails from the ``flushes``-th call on (None: never)."""
    events: list[tuple] = []
    lock = threading.Lock()

    def add(event: tuple) -> None:
        with lock:
            events.append(event)

    real_fsync, real_stage, real_swap = os.fsync, planmod._stage, planmod._swap_all

    def fsync(fd: int) -> None:
        name = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
        if TMP in name:
            add(("fsync", name.split(TMP)[0][1:], threading.current_thread().name))
        real_fsync(fd)

    def stage(target, data, attributes, xattrs=None, **kw):
        add(("stage", target.name, threading.current_thread().name, kw.get("sync", True)))
        return real_stage(target, data, attributes, xattrs, **kw)

    def swap(*args, **kwargs):
        add(("swap",))
        return real_swap(*args, **kwargs)

    monkeypatch.setattr(planmod.os, "fsync", fsync)
    monkeypatch.setattr(planmod, "_stage", stage)
    monkeypatch.setattr(planmod, "_swap_all", swap)
    if flushes is not None:
        calls = [0]

        def open_flusher(folder):
            return os.open(folder, os.O_RDONLY)

        def flush(fd: int) -> None:
            calls[0] += 1
            add(("flush", calls[0]))
            if calls[0] >= flushes:
                raise OSError(errno.EIO, "write-back failed")

        monkeypatch.setattr(planmod.fs_flush, "open_flusher", open_flusher)
        monkeypatch.setattr(planmod.fs_flush, "flush", flush)
    else:
        monkeypatch.setattr(planmod.fs_flush, "open_flusher", lambda folder: None)
    return events


NEVER = 10**9
MANY = planmod.PARALLEL_FSYNC_MIN  # small files handed over at once from which they are flushed together

linux_proc = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="reads /proc/self/fd")


@linux_proc
def test_small_files_are_written_by_one_thread_and_flushed_once_before_the_swap(tmp_path: Path, monkeypatch):
    changes = _files(tmp_path / "s", planmod.PARALLEL_FSYNC_MIN + 3)
    events = _record(monkeypatch, flushes=NEVER)
    with early_staging(WriteLog(tmp_path / "state")):
        stage_early(changes)
        flush_early()
        flush_early()  # nothing staged since: no second flush
        apply_plan(Plan("test", None, changes), WriteLog(tmp_path / "state"))
    staged = [e for e in events if e[0] == "stage"]
    assert [e[1] for e in staged] == [c.path.name for c in changes]  # each once, in order
    assert {(e[2], e[3]) for e in staged} == {("inspector-early_0", False)}
    assert [e for e in events if e[0] == "fsync"] == []
    kinds = [e[0] for e in events]
    assert kinds.count("flush") == 1
    assert kinds.index("flush") > max(i for i, k in enumerate(kinds) if k == "stage")
    assert kinds.index("swap") > kinds.index("flush")
    assert all(c.path.read_bytes() == c.after for c in changes)
    assert [p for p in (tmp_path / "s").iterdir() if TMP in p.name] == []


@linux_proc
def test_the_write_asks_for_the_flush_when_nobody_did(tmp_path: Path, monkeypatch):
    changes = _files(tmp_path / "s", MANY)
    events = _record(monkeypatch, flushes=NEVER)
    with early_staging():
        stage_early(changes)
        apply_plan(Plan("test", None, changes), WriteLog(tmp_path / "state"))
    kinds = [e[0] for e in events]
    assert kinds.count("flush") == 1 and kinds.index("flush") < kinds.index("swap")
    assert [e for e in events if e[0] == "fsync"] == []
    assert all(c.path.read_bytes() == c.after for c in changes)


@linux_proc
def test_a_file_staged_after_the_flush_gets_a_flush_of_its_own(tmp_path: Path, monkeypatch):
    *first, later = _files(tmp_path / "s", MANY + 1)
    events = _record(monkeypatch, flushes=NEVER)
    with early_staging():
        stage_early(first)
        flush_early()
        stage_early([later])  # one file, but after many: flushed too
        apply_plan(Plan("test", None, [*first, later]), WriteLog(tmp_path / "state"))
    order = [
        (e[0], e[1]) if e[0] == "stage" else (e[0],) for e in events if e[0] in ("stage", "flush", "swap")
    ]
    assert order == [
        *(("stage", c.path.name) for c in first),
        ("flush",),
        ("stage", later.path.name),
        ("flush",),
        ("swap",),
    ]
    assert [e for e in events if e[0] == "fsync"] == []
    assert all(c.path.read_bytes() == c.after for c in [*first, later])


@linux_proc
@pytest.mark.parametrize("failing", [1, 2])  # the first flush fails; the second one (a later file's) fails
def test_a_failed_flush_means_the_write_stages_and_fsyncs_those_files_again(
    tmp_path: Path, monkeypatch, failing: int
):
    changes = _files(tmp_path / "s", MANY + 2)
    events = _record(monkeypatch, flushes=failing)
    with early_staging():
        stage_early(changes[:MANY])
        flush_early()
        stage_early(changes[MANY:])
        apply_plan(Plan("test", None, changes), WriteLog(tmp_path / "state"))
    again = [e[1] for e in events if e[0] == "stage" and e[3]]  # staged by the write, fsynced
    lost = [c.path.name for c in changes] if failing == 1 else [c.path.name for c in changes[MANY:]]
    assert sorted(again) == lost
    assert sorted(e[1] for e in events if e[0] == "fsync") == sorted(f"{n}" for n in lost)
    assert all(c.path.read_bytes() == c.after for c in changes)
    assert [p for p in (tmp_path / "s").iterdir() if TMP in p.name] == []  # the unflushed copies removed


@linux_proc
def test_without_a_flusher_each_file_is_fsynced_by_the_pool(tmp_path: Path, monkeypatch):
    changes = _files(tmp_path / "s", planmod.PARALLEL_FSYNC_MIN)
    events = _record(monkeypatch, flushes=None)
    with early_staging() as early:
        stage_early(changes)
        flush_early()  # nothing to flush: no serial thread
        assert early._serial is None
        apply_plan(Plan("test", None, changes), WriteLog(tmp_path / "state"))
    assert [e for e in events if e[0] == "flush"] == []
    fsynced = [e for e in events if e[0] == "fsync"]
    assert sorted(e[1] for e in fsynced) == sorted(c.path.name for c in changes)
    assert {e[2].rsplit("_", 1)[0] for e in fsynced} == {"inspector-early"}
    assert {e[3] for e in events if e[0] == "stage"} == {True}


@linux_proc
def test_a_big_file_is_fsynced_on_its_own_threads_beside_the_flushed_ones(tmp_path: Path, monkeypatch):
    small = _files(tmp_path / "s", MANY)
    big = FileChange(tmp_path / "s" / "_index.json", None, b"[" + b"1" * planmod.EARLY_BIG_BYTES + b"]")
    events = _record(monkeypatch, flushes=NEVER)
    with early_staging():
        stage_early([*small, big])
        flush_early()
        apply_plan(Plan("test", None, [*small, big]), WriteLog(tmp_path / "state"))
    assert [(e[1], e[2].rsplit("_", 1)[0]) for e in events if e[0] == "fsync"] == [
        ("_index.json", "inspector-early-big")
    ]
    assert big.path.read_bytes() == big.after and all(c.path.read_bytes() == c.after for c in small)


def test_a_materialize_asks_for_the_flush_after_its_last_new_sidecar(tmp_path: Path, monkeypatch):
    sids = [f"s{i:03d}" for i in range(materialize.STAGE_BATCH + 3)]
    home = _home(tmp_path, sids)
    calls: list[str] = []
    real_stage = materialize.stage_early
    monkeypatch.setattr(
        materialize,
        "stage_early",
        lambda changes: (calls.append(f"stage {len(changes)}"), real_stage(changes)),
    )
    monkeypatch.setattr(materialize, "flush_early", lambda: calls.append("flush"))
    with early_staging():
        p = materialize.plan(make_ctx(home), None)
    assert p.refusal is None
    assert calls == [f"stage {materialize.STAGE_BATCH}", "stage 3", "flush", "stage 1"]  # the index last


@linux_proc
@pytest.mark.parametrize("fails", [False, True])
def test_a_flush_asked_once_the_thread_has_ended_is_made_by_the_caller(
    tmp_path: Path, monkeypatch, fails: bool
):
    changes = _files(tmp_path / "s", MANY)
    events = _record(monkeypatch, flushes=1 if fails else NEVER)
    with early_staging() as early:
        stage_early(changes)
        early._serial.shutdown(wait=True)  # every write done, the thread gone
        apply_plan(Plan("test", None, changes), WriteLog(tmp_path / "state"))
    assert [e[0] for e in events if e[0] == "flush"] == ["flush"]
    again = sorted(e[1] for e in events if e[0] == "stage" and e[3])
    assert again == ([c.path.name for c in changes] if fails else [])
    assert all(c.path.read_bytes() == c.after for c in changes)
    assert [p for p in (tmp_path / "s").iterdir() if TMP in p.name] == []


@linux_proc
def test_the_flush_is_of_each_folders_own_descriptor_which_is_closed_at_the_end(tmp_path: Path, monkeypatch):
    """One descriptor per folder, opened before its first file is written, flushed, and closed when
    the staging ends."""
    from tests.conftest import always_flusher

    if not planmod.fs_flush.system_can_flush():
        pytest.skip("no syncfs here")
    changes = _files(tmp_path / "a", MANY) + _files(tmp_path / "b", 1)
    opened: list[int] = []
    flushed: list[str] = []
    closed: list[int | None] = []
    real_flush, real_close = planmod.fs_flush.flush, planmod.fs_flush.close

    def open_flusher(folder):
        fd = always_flusher(folder)
        opened.append(fd)
        assert not any(TMP in p.name for p in Path(folder).iterdir())  # before any file of it is written
        return fd

    def flush(fd):
        flushed.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_flush(fd)

    monkeypatch.setattr(planmod.fs_flush, "open_flusher", open_flusher)
    monkeypatch.setattr(planmod.fs_flush, "flush", flush)
    monkeypatch.setattr(planmod.fs_flush, "close", lambda fd: (closed.append(fd), real_close(fd)))
    with early_staging():
        stage_early(changes)
        flush_early()
        apply_plan(Plan("test", None, changes), WriteLog(tmp_path / "state"))
        assert closed == []
    assert flushed == [str(tmp_path / "a"), str(tmp_path / "b")]
    assert sorted(closed) == sorted(opened) and None not in opened
    assert all(c.path.read_bytes() == c.after for c in changes)


@linux_proc
def test_a_file_of_exactly_the_big_size_is_fsynced_on_the_big_threads(tmp_path: Path, monkeypatch):
    (tmp_path / "s").mkdir()
    edge = FileChange(tmp_path / "s" / "edge.json", None, b"1" * planmod.EARLY_BIG_BYTES)
    below = FileChange(tmp_path / "s" / "below.json", None, b"1" * (planmod.EARLY_BIG_BYTES - 1))
    fillers = _files(tmp_path / "s", MANY - 1)  # with `below`, many small files
    events = _record(monkeypatch, flushes=NEVER)
    with early_staging():
        stage_early([*fillers, edge, below])
        flush_early()
        apply_plan(Plan("test", None, [*fillers, edge, below]), WriteLog(tmp_path / "state"))
    staged = {e[1]: (e[2].rsplit("_", 1)[0], e[3]) for e in events if e[0] == "stage"}
    assert staged["edge.json"] == ("inspector-early-big", True) and staged["below.json"] == (
        "inspector-early",
        False,
    )


@linux_proc
def test_an_unflushed_copy_already_gone_does_not_stop_the_write(tmp_path: Path, monkeypatch):
    """The flush failed, and hermes' sweep (or anyone) removed the staged copies before the write
    took them: the write stages each again and puts every new version in place."""
    changes = _files(tmp_path / "s", MANY)
    _record(monkeypatch, flushes=1)
    with early_staging() as early:
        stage_early(changes)
        for _change, future, _seq in list(early._staged.values()):
            future.result()  # written
        for p in (tmp_path / "s").iterdir():
            if TMP in p.name:
                p.unlink()
        apply_plan(Plan("test", None, changes), WriteLog(tmp_path / "state"))
    assert all(c.path.read_bytes() == c.after for c in changes)
    assert [p for p in (tmp_path / "s").iterdir() if TMP in p.name] == []


@linux_proc
@pytest.mark.parametrize("n", [1, MANY - 1])
def test_a_write_of_a_few_files_fsyncs_each_as_before(tmp_path: Path, monkeypatch, n: int):
    """Fewer than PARALLEL_FSYNC_MIN small files handed over at once (and none flushed before):
    each is fsynced by the pool, no syncfs (which also waits for other programs' unwritten data)."""
    changes = _files(tmp_path / "s", n)
    events = _record(monkeypatch, flushes=NEVER)
    with early_staging() as early:
        stage_early(changes)
        flush_early()
        apply_plan(Plan("test", None, changes), WriteLog(tmp_path / "state"))
        assert early._serial is None
    assert [e for e in events if e[0] == "flush"] == []
    assert sorted(e[1] for e in events if e[0] == "fsync") == sorted(c.path.name for c in changes)
    assert all(c.path.read_bytes() == c.after for c in changes)


@linux_proc
def test_a_big_file_does_not_count_toward_the_many(tmp_path: Path, monkeypatch):
    """``PARALLEL_FSYNC_MIN - 1`` small files and one of exactly ``EARLY_BIG_BYTES``: not many small
    ones, so each small one is fsynced as before."""
    small = _files(tmp_path / "s", MANY - 1)
    edge = FileChange(tmp_path / "s" / "edge.json", None, b"1" * planmod.EARLY_BIG_BYTES)
    events = _record(monkeypatch, flushes=NEVER)
    with early_staging():
        stage_early([*small, edge])
        flush_early()
        apply_plan(Plan("test", None, [*small, edge]), WriteLog(tmp_path / "state"))
    assert [e for e in events if e[0] == "flush"] == []
    assert {e[3] for e in events if e[0] == "stage"} == {True}


@linux_proc
def test_a_flushed_copy_whose_target_changed_mode_is_staged_again(tmp_path: Path, monkeypatch):
    """A successful flush does not make a copy fit: the target's mode changed after it was staged,
    so the write stages it again with the new mode (and fsyncs it)."""
    import stat

    from inspector.store.files import Fingerprint

    folder = tmp_path / "s"
    folder.mkdir()
    changes = []
    for i in range(MANY):
        target = folder / f"s{i:03d}.json"
        target.write_bytes(b"old %d" % i)
        os.chmod(target, 0o640)
        changes.append(
            FileChange(
                target,
                b"old %d" % i,
                b"new %d" % i,
                fingerprint=Fingerprint.of_bytes(b"old %d" % i, target.stat()),
            )
        )
    events = _record(monkeypatch, flushes=NEVER)
    with early_staging() as early:
        stage_early(changes)
        flush_early()
        for _change, written, _seq in list(early._staged.values()):
            written.result()
        os.chmod(changes[0].path, 0o604)  # after it was staged
        apply_plan(Plan("test", None, changes), WriteLog(tmp_path / "state"))
    again = [e[1] for e in events if e[0] == "stage" and e[3]]
    assert again == [changes[0].path.name]
    assert stat.S_IMODE(changes[0].path.stat().st_mode) == 0o604
    assert all(c.path.read_bytes() == c.after for c in changes)
