"""The write log read for people (issue 16's History): the home of a write, whether it was
undone and by which write, and the diff it made, rebuilt from the backups."""

from __future__ import annotations

from pathlib import Path

from inspector.history import home_of, undone_by, write_diff
from inspector.plan import FileChange, Plan, WriteLog, WriteRecord, apply_plan, undo_write
from inspector.store.files import Fingerprint


def _sessions(tmp_path: Path) -> Path:
    folder = tmp_path / "home" / "webui" / "sessions"
    folder.mkdir(parents=True)
    return folder


def _write(path: Path, after: bytes, log: WriteLog, action: str = "restore-backup") -> WriteRecord:
    before = path.read_bytes() if path.exists() else None
    fp = Fingerprint.of_bytes(before) if before is not None else None
    return apply_plan(Plan(action, path.stem, [FileChange(path, before, after, fp)]), log)


def test_an_undone_write_names_the_undo_and_a_standing_one_does_not(tmp_path):
    target = _sessions(tmp_path) / "s1.json"
    target.write_bytes(b'{\n  "a": 1\n}')
    log = WriteLog(tmp_path / "state")
    first = _write(target, b'{\n  "a": 2\n}', log)
    undo = undo_write(first.write_id, log)
    second = _write(target, b'{\n  "a": 3\n}', log)
    assert undone_by(log.records()) == {first.write_id: undo.write_id}
    assert second.write_id not in undone_by(log.records())


def test_an_undo_of_another_session_is_not_taken_for_this_ones(tmp_path):
    rec = WriteRecord(
        "w1", 1.0, "x", "s1", [{"path": "/h/s1.json", "sha256_before": "a", "sha256_after": "b"}]
    )
    other = WriteRecord(
        "w2", 2.0, "undo:x", "s2", [{"path": "/h/s2.json", "sha256_before": "b", "sha256_after": "a"}]
    )
    assert undone_by([rec, other]) == {}


def test_home_of_a_write_is_the_folder_above_webui_sessions(tmp_path):
    rec = WriteRecord(
        "w",
        1.0,
        "x",
        "s",
        [
            {"path": str(tmp_path / "h" / "webui" / "sessions" / "s.json")},
            {"path": str(tmp_path / "h" / "webui" / "sessions" / "_index.json")},
        ],
    )
    assert home_of(rec) == str(tmp_path / "h")
    assert home_of(WriteRecord("w", 1.0, "x", None, [])) == ""
    plain = WriteRecord("w", 1.0, "x", "s", [{"path": str(tmp_path / "elsewhere" / "s.json")}])
    assert home_of(plain) == str(tmp_path / "elsewhere")


def test_the_diff_of_a_past_write_comes_from_its_backup_and_the_file(tmp_path):
    target = _sessions(tmp_path) / "s1.json"
    target.write_bytes(b'{\n  "a": 1\n}')
    log = WriteLog(tmp_path / "state")
    rec = _write(target, b'{\n  "a": 2\n}', log)
    diff = write_diff(rec, log.records())
    assert '-  "a": 1' in diff and '+  "a": 2' in diff


def test_after_an_undo_the_diff_comes_from_the_undos_backup(tmp_path):
    target = _sessions(tmp_path) / "s1.json"
    target.write_bytes(b'{\n  "a": 1\n}')
    log = WriteLog(tmp_path / "state")
    rec = _write(target, b'{\n  "a": 2\n}', log)
    undo_write(rec.write_id, log)  # the file holds "a": 1 again; the undo's backup holds "a": 2
    diff = write_diff(rec, log.records())
    assert '-  "a": 1' in diff and '+  "a": 2' in diff


def test_a_write_whose_bytes_are_gone_says_so_in_words(tmp_path):
    target = _sessions(tmp_path) / "s1.json"
    target.write_bytes(b"old\n")
    log = WriteLog(tmp_path / "state")
    rec = _write(target, b"new\n", log)
    target.write_bytes(b"changed by someone else\n")
    assert "the file has changed since this write" in write_diff(rec, log.records())
    Path(rec.files[0]["backup"]).unlink()
    assert "not in its backup any more" in write_diff(rec, log.records())


def test_a_created_file_diffs_from_nothing(tmp_path):
    target = _sessions(tmp_path) / "new.json"
    log = WriteLog(tmp_path / "state")
    rec = _write(target, b"hello\n", log, action="materialize")
    diff = write_diff(rec, log.records())
    assert "--- /dev/null" in diff and "+hello" in diff
