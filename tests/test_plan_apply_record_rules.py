"""What a write records, and what it says when it stops early: rules found by mutation testing
(tests/MUTATION.md, seventeenth session).

Each test applies a small plan (``apply_plan``) or builds one write-log file entry (``_file_entry``)
in ``tmp_path`` and checks the write id, the log's lines, the records handed to the log, the
backups and the failure messages against values written out by hand.
"""

from __future__ import annotations

import errno
import json
import os
import re
import sys
import threading
import time
from pathlib import Path

import pytest

import inspector.plan as planmod
from inspector.plan import ApplyError, FileChange, Plan, WriteLog, apply_plan

SHA_OLD = "cba06b5736faf67e54b07b561eae94395e774c517a7d910a54369e1263ccfbd4"  # sha256 of b"old"
SHA_NEW = "11507a0e2f5e69d5dfa40a62a1bd7b6ee57e6bcd85c67c9b8431b36fff21c437"  # sha256 of b"new"


def _one_file(tmp_path: Path) -> tuple[Path, Plan, WriteLog]:
    """A session file holding b"old", a plan writing b"new" over it, and a write log outside."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    target = folder / "s1.json"
    target.write_bytes(b"old")
    plan = Plan("restore", "s1", [FileChange(target, b"old", b"new")])
    return target, plan, WriteLog(tmp_path / "state")


def _raising(code: int, text: str):
    """A stand-in for a function of the write path that fails with ``OSError(code, text)``."""

    def fail(*args, **kwargs):
        raise OSError(code, text)

    return fail


def _log_lines(log: WriteLog) -> list[dict]:
    return [json.loads(line) for line in log.log_path.read_text(encoding="utf-8").splitlines()]


def test_the_write_id_is_the_utc_time_then_eight_hex_digits(tmp_path: Path, monkeypatch) -> None:
    """Rule: a write's id is its UTC time as ``YYYYmmddTHHMMSS`` (from ``time.gmtime``, never the
    local time), a hyphen, then 8 lowercase hex digits; its backups go in ``backups/<id>``."""
    fixed = time.struct_time((2001, 2, 3, 4, 5, 6, 5, 34, 0))
    real_gmtime = time.gmtime
    monkeypatch.setattr(time, "gmtime", lambda *args: real_gmtime(*args) if args else fixed)
    target, plan, log = _one_file(tmp_path)
    record = apply_plan(plan, log, clock_now=1000.0)
    assert re.fullmatch(r"20010203T040506-[0-9a-f]{8}", record.write_id), record.write_id
    assert target.read_bytes() == b"new"
    assert record.files[0]["backup"] == str(tmp_path / "state" / "backups" / record.write_id / "00-s1.json")
    assert [line["write_id"] for line in _log_lines(log)] == [record.write_id, record.write_id]


def test_a_write_logs_started_then_done_with_its_session(tmp_path: Path) -> None:
    """Rule: a write appends two lines to the write log, "started" (before any file changes) and
    "done", each with the write's id, time, action, session id and files, and no "complete" field."""
    target, plan, log = _one_file(tmp_path)
    mode = os.stat(target).st_mode & 0o777
    record = apply_plan(plan, log, clock_now=1000.0)
    files = [
        {
            "path": str(target),
            "kind": "modify",
            "sha256_before": SHA_OLD,
            "sha256_after": SHA_NEW,
            "backup": str(tmp_path / "state" / "backups" / record.write_id / "00-s1.json"),
            "mode": mode,
        }
    ]
    common = {
        "write_id": record.write_id,
        "time": 1000.0,
        "action": "restore",
        "session_id": "s1",
        "files": files,
    }
    assert _log_lines(log) == [{**common, "state": "started"}, {**common, "state": "done"}]
    assert (record.session_id, record.complete) == ("s1", True)


def test_the_record_logged_as_started_is_incomplete_and_the_done_one_complete(tmp_path: Path) -> None:
    """Rule: the record a write hands the log as "started" (before any file changes) is an
    incomplete one (``complete is False``) of the plan's session; the "done" one is complete."""
    target, plan, _ = _one_file(tmp_path)
    handed: list[tuple[str, str | None, object]] = []

    class SpyLog(WriteLog):
        def append(self, record, state="done"):
            handed.append((state, record.session_id, record.complete))
            super().append(record, state)

    apply_plan(plan, SpyLog(tmp_path / "state"))
    assert handed == [("started", "s1", False), ("done", "s1", True)]
    assert target.read_bytes() == b"new"


def test_a_small_plan_is_staged_in_the_calling_thread(tmp_path: Path, monkeypatch) -> None:
    """Rule: a plan with fewer new files than PARALLEL_FSYNC_MIN (32) stages them one by one in
    the thread that writes, not in the side-by-side pool's threads."""
    target, plan, log = _one_file(tmp_path)
    threads: list[int] = []
    real = planmod._stage_change

    def spy(change, *args):
        threads.append(threading.get_ident())
        return real(change, *args)

    monkeypatch.setattr(planmod, "_stage_change", spy)
    apply_plan(plan, log)
    assert threads == [threading.get_ident()]
    assert target.read_bytes() == b"new"


def test_an_early_copy_made_for_another_log_is_not_taken_as_the_backup(tmp_path: Path) -> None:
    """Rule: a write takes the early copies of previous versions only when they were made for its
    own write log; a copy made for another log stays where it was (the write keeps its own backup)."""
    target, plan, log = _one_file(tmp_path)
    other = WriteLog(tmp_path / "other-state")
    with planmod.early_staging(other) as early:
        early.back_up(target, plan.changes[0].before)
        deadline = time.monotonic() + 2.0
        copies: list[Path] = []
        while time.monotonic() < deadline:
            copies = [
                p
                for p in (other.root / "backups").glob(".early-*/*")
                if re.fullmatch(r"[0-9a-f]{32}", p.name)
            ]
            if copies:
                break
            time.sleep(0.005)
        assert len(copies) == 1
        assert copies[0].read_bytes() == b"old"
        record = apply_plan(plan, log)
        assert copies[0].read_bytes() == b"old"  # still there: not moved to this write's backups
        backup = Path(record.files[0]["backup"])
        assert backup == tmp_path / "state" / "backups" / record.write_id / "00-s1.json"
        assert backup.read_bytes() == b"old"
        assert os.lstat(backup).st_ino != os.lstat(copies[0]).st_ino
    assert target.read_bytes() == b"new"


def test_a_backup_that_cannot_be_kept_says_every_file_is_as_it_was(tmp_path: Path, monkeypatch) -> None:
    """Rule: when a previous version cannot be backed up, the write stops before logging anything
    and says so: "could not keep a backup in <its backups folder> (<reason>); nothing was written,
    every file is as it was"."""
    target, plan, log = _one_file(tmp_path)

    monkeypatch.setattr(planmod, "_save_backup", _raising(errno.ENOSPC, "No space left on device"))
    with pytest.raises(ApplyError) as caught:
        apply_plan(plan, log)
    message = str(caught.value)
    prefix = f"could not keep a backup in {tmp_path / 'state' / 'backups'}{os.sep}"
    assert message.startswith(prefix), message
    assert message.endswith(" (No space left on device); nothing was written, every file is as it was"), (
        message
    )
    assert caught.value.outcome == "nothing"
    assert target.read_bytes() == b"old"
    assert not log.log_path.exists()


def test_a_failure_before_the_first_file_is_staged_names_the_first_file(tmp_path: Path, monkeypatch) -> None:
    """Rule: a write that fails before staging anything (sweeping old temp files) names the plan's
    first file in its message, writes nothing and logs nothing."""
    target, plan, log = _one_file(tmp_path)

    monkeypatch.setattr(planmod, "sweep_stale_temps", _raising(errno.EIO, "Input/output error"))
    with pytest.raises(ApplyError) as caught:
        apply_plan(plan, log)
    assert str(caught.value) == (
        f"could not write {target} (Input/output error); nothing was written, every file is as it was"
    )
    assert target.read_bytes() == b"old"
    assert not log.log_path.exists()
    assert sorted(p.name for p in target.parent.iterdir()) == ["s1.json"]


def test_the_entry_of_a_file_gone_since_its_check_has_no_mode_and_no_attributes(tmp_path: Path) -> None:
    """Rule: a file entry of the write log is made even when its file cannot be read any more
    (the OSError of reading its mode or its extended attributes is not raised): mode None, no xattrs."""
    change = FileChange(tmp_path / "gone.json", b"old", b"new")
    assert planmod._file_entry(change, "/backups/00-gone.json") == {
        "path": str(tmp_path / "gone.json"),
        "kind": "modify",
        "sha256_before": SHA_OLD,
        "sha256_after": SHA_NEW,
        "backup": "/backups/00-gone.json",
        "mode": None,
    }


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes and extended attributes")
def test_an_entry_whose_attributes_cannot_be_read_keeps_its_mode(tmp_path: Path, monkeypatch) -> None:
    """Rule: when the extended attributes of a file cannot be read (an I/O error), its write-log
    entry still has its mode and simply no "xattrs"."""
    path = tmp_path / "s.json"
    path.write_bytes(b"old")
    os.chmod(path, 0o640)

    monkeypatch.setattr(planmod, "read_xattrs", _raising(errno.EIO, "Input/output error"))
    entry = planmod._file_entry(FileChange(path, b"old", None), None)
    assert entry == {
        "path": str(path),
        "kind": "delete",
        "sha256_before": SHA_OLD,
        "sha256_after": None,
        "backup": None,
        "mode": 0o640,
    }


def test_an_entry_keeps_the_attributes_in_base64_sorted_by_name(tmp_path: Path, monkeypatch) -> None:
    """Rule: a replaced file's extended attributes are kept in its entry, sorted by name, each value
    as base64 text (so undo re-creating a deleted file gives them back)."""
    path = tmp_path / "s.json"
    path.write_bytes(b"old")
    monkeypatch.setattr(planmod, "read_xattrs", lambda p: {"user.b": b"\x00\xff", "user.a": b"val"})
    entry = planmod._file_entry(FileChange(path, b"old", b"new"), None)
    assert list(entry["xattrs"].items()) == [("user.a", "dmFs"), ("user.b", "AP8=")]


def test_a_save_between_the_started_line_and_the_check_is_refused_in_words(tmp_path: Path) -> None:
    """Rule: when the file changes after the write logged itself as started (hermes saved meanwhile),
    the write is refused with the reason and the file named, the new save is kept, and a failure to
    log the write as aborted is not raised in its place."""
    target, plan, _ = _one_file(tmp_path)
    handed: list[str] = []

    class SavedMeanwhileLog(WriteLog):
        def append(self, record, state="done"):
            handed.append(state)
            if state == "aborted":
                raise OSError(errno.EIO, "Input/output error")
            super().append(record, state)
            if state == "started":
                target.write_bytes(b"hermes' save")

    with pytest.raises(ApplyError) as caught:
        apply_plan(plan, SavedMeanwhileLog(tmp_path / "state"))
    assert str(caught.value) == (
        f"the files changed while the write was being prepared; nothing was written:\n"
        f"  {target} changed since the preview"
    )
    assert handed == ["started", "aborted"]
    assert target.read_bytes() == b"hermes' save"


def test_a_write_whose_done_line_cannot_be_logged_says_all_was_written_and_how_to_undo(
    tmp_path: Path,
) -> None:
    """Rule: when every file was written but the "done" line cannot be logged, the failure says so
    (outcome "all"), lists the files written, names the write to undo, and the write is listed as
    interrupted."""
    target, plan, _ = _one_file(tmp_path)

    class FullDiskAtTheEndLog(WriteLog):
        def append(self, record, state="done"):
            if state == "done":
                raise OSError(errno.ENOSPC, "No space left on device")
            super().append(record, state)

    log = FullDiskAtTheEndLog(tmp_path / "state")
    with pytest.raises(planmod.WriteFailed) as caught:
        apply_plan(plan, log)
    (started,) = log.records()
    failure = caught.value
    assert (failure.outcome, failure.written, failure.write_id) == ("all", (target,), started.write_id)
    assert str(failure) == (
        "every file was written, but the write log could not be marked complete (No space left on "
        f"device); `hermes-inspector undo {started.write_id}` puts the previous versions back (the "
        f"write is listed as interrupted). Written: {target}; previous versions kept in "
        f"{log.root / 'backups' / started.write_id}; log {log.log_path}"
    )
    assert started.complete is False
    assert target.read_bytes() == b"new"
