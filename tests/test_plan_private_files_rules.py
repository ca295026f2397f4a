"""The write log's lines, its records' fields and the private files of a write (backups, the log).

Found by mutation testing (tests/MUTATION.md, seventeenth session): a record's ``session_id`` key, the
state a line gets when none is given, a log line with a name that is not ASCII, and the mode the log,
a backup and its folder have *from their creation* (the chmod that follows hid a wrong creation mode)
were not pinned by a test reaching these functions. Expected values written out by hand.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

import inspector.plan as planmod
from inspector.plan import FileChange, WriteLog, WriteRecord

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")


def _record(session_id: str | None = "s1", path: str = "/h/webui/sessions/s1.json") -> WriteRecord:
    return WriteRecord("20261203T120000-abcd1234", 1796300000.0, "restore", session_id, [{"path": path}])


def test_a_record_as_json_has_every_field_by_its_name():
    """Rule: a record's JSON form (the CLI's ``history --json`` and ``undo --json``) names its fields
    write_id, time, action, session_id, files, complete."""
    assert _record().to_json() == {
        "write_id": "20261203T120000-abcd1234",
        "time": 1796300000.0,
        "action": "restore",
        "session_id": "s1",
        "files": [{"path": "/h/webui/sessions/s1.json"}],
        "complete": True,
    }


def test_a_line_appended_without_a_state_is_a_done_write(tmp_path: Path):
    """Rule: ``append`` without a state logs the write as done: the line's state is "done", with no
    "complete" key, and the reader lists it as complete."""
    log = WriteLog(tmp_path / "state")
    log.append(_record())
    (line,) = log.log_path.read_bytes().splitlines()
    assert json.loads(line) == {
        "write_id": "20261203T120000-abcd1234",
        "time": 1796300000.0,
        "action": "restore",
        "session_id": "s1",
        "files": [{"path": "/h/webui/sessions/s1.json"}],
        "state": "done",
    }
    (rec,) = log.records()
    assert rec.complete is True
    assert rec.session_id == "s1"


def test_a_line_with_names_that_are_not_ascii_is_written_in_ascii_escapes(tmp_path: Path):
    """Rule: the log's lines are ASCII (non-ASCII letters as JSON escapes), so a session id or path
    in any script is logged, never an encoding error, and read back as it was."""
    log = WriteLog(tmp_path / "state")
    log.append(_record("sé", "/h/webui/sessions/sé.json"), "started")
    raw = log.log_path.read_bytes()
    assert raw == (
        b'{"write_id": "20261203T120000-abcd1234", "time": 1796300000.0, "action": "restore", '
        b'"session_id": "s\\u00e9", "files": [{"path": "/h/webui/sessions/s\\u00e9.json"}], '
        b'"state": "started"}\n'
    )
    (rec,) = log.records()
    assert (rec.session_id, rec.complete) == ("sé", False)


@pytest.fixture
def no_chmod_after(monkeypatch):
    """The chmod/fchmod that follow a creation made no-ops, and the umask 0, so a file's or folder's
    mode is the one it was created with."""
    monkeypatch.setattr(planmod.portable, "fchmod", lambda fd, mode: None)
    monkeypatch.setattr(planmod.os, "chmod", lambda *a, **k: None)
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


@posix_only
def test_the_log_is_private_from_its_creation(tmp_path: Path, no_chmod_after):
    """Rule: the write log is created 0600, not made private only by the chmod after (a fresh log is
    never readable by others, not even for an instant)."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    log = WriteLog(state)
    log._ensure()
    log.append(_record())
    assert stat.S_IMODE(log.log_path.stat().st_mode) == 0o600


@posix_only
def test_a_backup_and_its_folder_are_private_from_their_creation(tmp_path: Path, no_chmod_after):
    """Rule: a write's backup folder is created 0700 and each backup 0600, before any chmod."""
    folder = tmp_path / "backups" / "w1"
    change = FileChange(tmp_path / "s1.json", b'{"a": 1}', b'{"a": 2}')
    saved = planmod._save_backup(folder, 0, change)
    assert saved == str(folder / "00-s1.json")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "00-s1.json").stat().st_mode) == 0o600
    assert (folder / "00-s1.json").read_bytes() == b'{"a": 1}'


def test_a_backup_folder_is_made_with_its_parents(tmp_path: Path):
    """Rule: the backup folder is made with any missing parent (``backups/`` itself included)."""
    folder = tmp_path / "state" / "backups" / "w1"
    change = FileChange(tmp_path / "s1.json", b"old", b"new")
    assert planmod._save_backup(folder, 3, change) == str(folder / "03-s1.json")
    assert (folder / "03-s1.json").read_bytes() == b"old"
    assert sorted(p.name for p in folder.iterdir()) == ["03-s1.json"]


def test_a_private_write_replaces_a_longer_part_left_by_a_crash(tmp_path: Path):
    """Rule: a ``.part`` file left by an earlier crash is truncated, not written over: the backup
    holds exactly the new bytes, and no ``.part`` is left."""
    dest = tmp_path / "00-s1.json"
    (tmp_path / "00-s1.json.part").write_bytes(b"x" * 100)
    planmod._write_private(dest, b"abc")
    assert dest.read_bytes() == b"abc"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["00-s1.json"]
