"""Undo's refusals and what it gives back: every file is checked before any is written, and each
refusal names the file and why (the words a support person reads before deciding what to do)."""

from __future__ import annotations

import errno
import stat
from pathlib import Path

import pytest

from inspector import plan as planmod
from inspector.plan import ApplyError, FileChange, Plan, WriteLog, apply_plan, undo_write


def _write(tmp_path: Path, *changes: tuple[str, bytes | None, bytes | None]):
    """Apply one logged write of ``changes`` (name, bytes before, bytes after) in a sessions folder."""
    folder = tmp_path / "sessions"
    folder.mkdir(exist_ok=True)
    for name, before, _after in changes:
        if before is not None:
            (folder / name).write_bytes(before)
    log = WriteLog(tmp_path / "state")
    plan = Plan("test", None, [FileChange(folder / name, before, after) for name, before, after in changes])
    return folder, log, apply_plan(plan, log)


def _backup(rec, name: str) -> Path:
    return Path(next(f["backup"] for f in rec.files if f["path"].endswith("/" + name)))


def test_every_file_that_stops_an_undo_is_named_in_order(tmp_path: Path, monkeypatch) -> None:
    """A link in place of a file, a file that cannot be read and a file changed since are all listed, one a line."""
    folder, log, rec = _write(
        tmp_path, ("a.json", b"a0", b"a1"), ("b.json", b"b0", b"b1"), ("c.json", b"c0", b"c1")
    )
    a, b, c = folder / "a.json", folder / "b.json", folder / "c.json"
    a.unlink()
    a.symlink_to(tmp_path / "elsewhere")
    real = planmod._current_bytes

    def unreadable_b(path: Path):
        if path == b:
            raise OSError(errno.EIO, "Input/output error", str(path))
        return real(path)

    monkeypatch.setattr(planmod, "_current_bytes", unreadable_b)
    c.write_bytes(b"hermes saved c")
    with pytest.raises(ApplyError) as exc:
        undo_write(rec.write_id, log)
    assert str(exc.value) == (
        "nothing was written:\n"
        f"  {a} is a symbolic link; the inspector never writes through or replaces a link\n"
        f"  {b} cannot be read (Input/output error)\n"
        f"  {c} changed after the write; undo would lose that change"
    )
    assert (b.read_bytes(), c.read_bytes()) == (b"b1", b"hermes saved c")


def test_a_file_already_back_to_its_old_bytes_does_not_stop_the_others(tmp_path: Path) -> None:
    """The first file put back by hand is left alone; the second is still restored."""
    folder, log, rec = _write(tmp_path, ("a.json", b"a0", b"a1"), ("b.json", b"b0", b"b1"))
    (folder / "a.json").write_bytes(b"a0")
    undo_write(rec.write_id, log)
    assert (folder / "a.json").read_bytes() == b"a0"
    assert (folder / "b.json").read_bytes() == b"b0"


def test_nothing_to_undo_names_the_write(tmp_path: Path) -> None:
    """A second undo of the same write is refused with the write's id in the message."""
    _folder, log, rec = _write(tmp_path, ("a.json", b"a0", b"a1"))
    undo_write(rec.write_id, log)
    with pytest.raises(ApplyError) as exc:
        undo_write(rec.write_id, log)
    assert str(exc.value) == f"nothing to undo: the files of {rec.write_id} already hold their previous bytes"


def test_a_missing_backup_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    """The backup's own path is in the refusal; the written file stays as the write left it."""
    folder, log, rec = _write(tmp_path, ("a.json", b"a0", b"a1"))
    backup = _backup(rec, "a.json")
    backup.unlink()
    with pytest.raises(ApplyError) as exc:
        undo_write(rec.write_id, log)
    assert str(exc.value) == f"nothing was written:\n  backup {backup} is missing"
    assert (folder / "a.json").read_bytes() == b"a1"


def test_an_unreadable_backup_is_named_with_the_reason(tmp_path: Path, monkeypatch) -> None:
    """A backup that is there but cannot be read: its path and the system's reason, nothing written."""
    folder, log, rec = _write(tmp_path, ("a.json", b"a0", b"a1"))
    backup = _backup(rec, "a.json")
    real = Path.read_bytes

    def failing(self: Path) -> bytes:
        if self == backup:
            raise OSError(errno.EIO, "Input/output error", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", failing)
    with pytest.raises(ApplyError) as exc:
        undo_write(rec.write_id, log)
    assert str(exc.value) == f"backup {backup} cannot be read (Input/output error); nothing was written"
    assert (folder / "a.json").read_bytes() == b"a1"


def test_a_backup_holding_other_bytes_is_refused(tmp_path: Path) -> None:
    """A backup whose bytes are not the logged previous bytes names both the backup and the file."""
    folder, log, rec = _write(tmp_path, ("a.json", b"a0", b"a1"))
    backup = _backup(rec, "a.json")
    backup.write_bytes(b"not a0")
    with pytest.raises(ApplyError) as exc:
        undo_write(rec.write_id, log)
    assert str(exc.value) == (
        f"backup {backup} does not hold the previous bytes of {folder / 'a.json'}; nothing was written"
    )
    assert (folder / "a.json").read_bytes() == b"a1"


def _deleted(tmp_path: Path, mode: int):
    """A logged write that deleted ``sessions/a.json`` (bytes a0), whose mode was ``mode``."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    target = folder / "a.json"
    target.write_bytes(b"a0")
    target.chmod(mode)
    log = WriteLog(tmp_path / "state")
    rec = apply_plan(Plan("test", None, [FileChange(target, b"a0", None)]), log)
    assert not target.exists()
    return target, log, rec


def test_undo_of_a_delete_gives_the_file_back_its_mode(tmp_path: Path) -> None:
    """A deleted file comes back with the mode it had (0640 here), not a new file's 0644."""
    target, log, rec = _deleted(tmp_path, 0o640)
    undo_write(rec.write_id, log)
    assert target.read_bytes() == b"a0"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_logged_mode_that_is_not_a_number_gives_a_new_files_mode(tmp_path: Path) -> None:
    """A hand-edited log whose mode is text: the file comes back with hermes' mode for a new file."""
    target, log, rec = _deleted(tmp_path, 0o600)
    text = log.log_path.read_text(encoding="utf-8")
    assert '"mode": 384' in text
    log.log_path.write_text(text.replace('"mode": 384', '"mode": "0600"'), encoding="utf-8")
    undo_write(rec.write_id, log)
    assert target.read_bytes() == b"a0"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~planmod.current_umask()


def test_undo_run_from_the_folder_that_holds_the_state_folder(tmp_path: Path, monkeypatch) -> None:
    """Where the command runs from does not matter: only the files' own folders are checked and locked."""
    folder, log, rec = _write(tmp_path, ("a.json", b"a0", b"a1"))
    monkeypatch.chdir(tmp_path)  # holds tmp_path/state, the write log
    undo_write(rec.write_id, log)
    assert (folder / "a.json").read_bytes() == b"a0"


def test_undo_after_the_sessions_folder_went_away_is_refused_in_words(tmp_path: Path) -> None:
    """A folder that cannot be locked is locked through a file in the state folder; the undo is then refused."""
    folder, log, rec = _write(tmp_path, ("a.json", b"a0", b"a1"))
    (folder / "a.json").unlink()
    folder.rmdir()
    with pytest.raises(ApplyError) as exc:
        undo_write(rec.write_id, log)
    assert str(exc.value) == (
        f"nothing was written:\n  {folder / 'a.json'} changed after the write; undo would lose that change"
    )
    assert not folder.exists()
