"""Staging while the plan is made (``plan.early_staging`` / ``plan.stage_early``), for a command that
plans and writes in one go (``repair --write``: a materialize stages its new sidecars while its index
is rebuilt).

Rules pinned (``EarlyStaging``'s docstring):
* outside ``early_staging()`` (a preview, the window) ``stage_early`` writes nothing;
* inside it, each change with new bytes is staged as ``apply_plan`` stages it (a fsynced temp file
  beside its target) and ``apply_plan`` swaps in that very file instead of staging it again;
* a staged file is taken only if it still fits: the same inode, and the attributes (mode, extended
  attributes) the change would be staged with now; otherwise the change is staged again, and a file
  that is no longer ours is never removed;
* a folder reached through a symbolic link, or a path the write path refuses, is never staged early;
* whatever no write took (a refused plan, a plan never applied) is removed when ``early_staging``
  ends, and a write refused before its swaps leaves nothing behind;
* a write of many files stages them while its backups are written: a backup that fails stops the
  write with nothing written and no staged file left;
* with the write log given, the previous version of each replaced file is copied early (0600,
  fsynced) into a private folder of the log's ``backups/``, and the write moves that very copy to its
  backup's place; a copy no write took, or one changed since, is removed with its folder.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from inspector import cli
from inspector import plan as planmod
from inspector.plan import (
    ApplyError,
    FileChange,
    Plan,
    WriteFailed,
    WriteLog,
    apply_plan,
    early_staging,
    stage_early,
)
from inspector.store.files import Fingerprint
from tests.recovery_helpers import home_dirs, seed_state_db, sidecar, write_json


@pytest.fixture(autouse=True)
def _either_way(both_ways) -> None:
    """Every rule here holds whether the small files are flushed together or fsynced one by one."""


def _temps(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if ".inspector.tmp." in p.name)


def _settle(early) -> None:
    """Every staging job started so far is done (each pool's threads end)."""
    for pool in (early._serial, early._pool, early._big):
        if pool is not None:
            pool.shutdown(wait=True)


def _new_files(folder: Path, n: int) -> Plan:
    folder.mkdir(parents=True, exist_ok=True)
    return Plan(
        "test", None, [FileChange(folder / f"s{i:03d}.json", None, b'{"n": %d}' % i) for i in range(n)]
    )


def _counting_stage(monkeypatch) -> list[str]:
    """The target names ``plan._stage`` writes a temp file for, in order."""
    calls: list[str] = []
    real = planmod._stage

    def stage(target, data, attributes, xattrs=None, **kw):
        calls.append(target.name)
        return real(target, data, attributes, xattrs, **kw)

    monkeypatch.setattr(planmod, "_stage", stage)
    return calls


def test_outside_early_staging_nothing_is_staged(tmp_path: Path) -> None:
    plan = _new_files(tmp_path / "s", 3)
    stage_early(plan.changes)
    assert list((tmp_path / "s").iterdir()) == []


@pytest.mark.parametrize("n", [2, planmod.PARALLEL_FSYNC_MIN + 4])  # one at a time; side by side
def test_apply_swaps_in_the_very_files_staged_early(tmp_path: Path, monkeypatch, n: int) -> None:
    plan = _new_files(tmp_path / "s", n)
    calls = _counting_stage(monkeypatch)
    with early_staging():
        stage_early(plan.changes)
        stage_early(plan.changes)  # asked twice: staged once
        staged = {}
        for _ in range(100):  # the threads are quick; wait for every temp file to be there
            staged = {
                p.name.split(".inspector.tmp.")[0][1:]: os.stat(p).st_ino for p in _temps(tmp_path / "s")
            }
            if len(staged) == n:
                break
            import time

            time.sleep(0.05)
        assert len(staged) == n
        apply_plan(plan, WriteLog(tmp_path / "state"))
    assert sorted(calls) == sorted(c.path.name for c in plan.changes)  # nothing staged twice
    for c in plan.changes:
        assert c.path.read_bytes() == c.after
        assert os.stat(c.path).st_ino == staged[c.path.name]
        assert stat.S_IMODE(os.stat(c.path).st_mode) == 0o666 & ~planmod.current_umask()
    assert _temps(tmp_path / "s") == []


def test_what_no_write_took_is_removed(tmp_path: Path) -> None:
    plan = _new_files(tmp_path / "s", 5)
    with early_staging():
        stage_early(plan.changes)
    assert list((tmp_path / "s").iterdir()) == []


def test_a_refused_write_leaves_no_staged_file(tmp_path: Path) -> None:
    plan = _new_files(tmp_path / "s", planmod.PARALLEL_FSYNC_MIN + 4)
    with early_staging():
        stage_early(plan.changes)
        plan.changes[3].path.write_bytes(b"hermes saved it meanwhile")
        with pytest.raises(ApplyError, match="changed since the preview"):
            apply_plan(plan, WriteLog(tmp_path / "state"))
    assert [p.name for p in (tmp_path / "s").iterdir()] == [plan.changes[3].path.name]


def test_a_changed_mode_is_staged_again_with_the_new_one(tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    target = folder / "_index.json"
    target.write_bytes(b"[old]")
    os.chmod(target, 0o640)
    change = FileChange(target, b"[old]", b"[new]", fingerprint=Fingerprint.of_bytes(b"[old]", target.stat()))
    plan = Plan("test", None, [change])
    calls = _counting_stage(monkeypatch)
    with early_staging() as early:
        stage_early(plan.changes)
        _settle(early)
        os.chmod(target, 0o604)  # after it was staged: the write must keep the mode of now
        apply_plan(plan, WriteLog(tmp_path / "state"))
    assert calls == ["_index.json", "_index.json"]
    assert target.read_bytes() == b"[new]" and stat.S_IMODE(target.stat().st_mode) == 0o604
    assert _temps(folder) == []


def test_a_temp_file_replaced_by_someone_else_is_staged_again_and_left_alone(tmp_path: Path) -> None:
    plan = _new_files(tmp_path / "s", 1)
    (change,) = plan.changes
    with early_staging() as early:
        stage_early(plan.changes)
        _settle(early)
        (tmp,) = _temps(tmp_path / "s")
        os.unlink(tmp)
        tmp.write_bytes(b"not ours at all")  # the same name, another file (maybe the same inode number)
        apply_plan(plan, WriteLog(tmp_path / "state"))
    assert change.path.read_bytes() == change.after
    assert tmp.read_bytes() == b"not ours at all"  # never removed: it is not ours


def test_a_folder_reached_through_a_link_is_not_staged_early(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere"
    real.mkdir()
    (tmp_path / "home").mkdir()
    linked = tmp_path / "home" / "sessions"
    linked.symlink_to(real)
    plan = Plan("test", None, [FileChange(linked / "a.json", None, b"{}")])
    with early_staging() as early:
        stage_early(plan.changes)
        assert early._pool is None and early._serial is None
    assert list(real.iterdir()) == []


def test_a_path_the_write_path_refuses_is_not_staged_early(tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    monkeypatch.chdir(tmp_path)
    odd = Path("s") / "a.json"  # not an absolute path: apply_plan refuses it
    with early_staging() as early:
        stage_early([FileChange(odd, None, b"{}")])
        assert early._pool is None and early._serial is None
    assert list(folder.iterdir()) == []


def test_a_failed_backup_stops_the_write_and_removes_the_staged_files(tmp_path: Path, monkeypatch) -> None:
    plan = _new_files(tmp_path / "s", planmod.PARALLEL_FSYNC_MIN + 4)
    index = tmp_path / "s" / "_index.json"
    index.write_bytes(b"[]")
    plan.changes.append(
        FileChange(index, b"[]", b"[1]", fingerprint=Fingerprint.of_bytes(b"[]", index.stat()))
    )

    def no_backup(folder, i, change, early=None):
        if change.before is not None:
            raise OSError(28, "No space left on device")
        return None

    monkeypatch.setattr(planmod, "_save_backup", no_backup)
    for early in (False, True):
        with early_staging() if early else _nothing():
            if early:
                stage_early(plan.changes)
            with pytest.raises(WriteFailed, match="could not keep a backup"):
                apply_plan(plan, WriteLog(tmp_path / f"state-{early}"))
        assert [p.name for p in (tmp_path / "s").iterdir()] == ["_index.json"]
        assert index.read_bytes() == b"[]"


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _materialize_home(tmp_path: Path, rows: int) -> Path:
    home, sessions, db = home_dirs(tmp_path)
    for i in range(5):
        write_json(sessions / f"have{i}.json", sidecar(f"have{i}", 2, updated_at=float(i)))
    for i in range(rows):
        seed_state_db(db, sid=f"row{i:03d}", messages=2, create=i == 0)
    return home


def _repair(home: Path, tmp_path: Path, capsys, monkeypatch, name: str, write: bool = True) -> bytes:
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(tmp_path / f"state-{name}"))
    args = [
        "repair",
        "--home",
        str(home),
        "--action",
        "materialize",
        "--all",
        "--json",
        "--now",
        "1780000000",
    ]
    assert cli.main([*args, "--write"] if write else args) == 0
    return capsys.readouterr().out.encode()


def test_repair_write_of_a_materialize_writes_what_the_plain_apply_writes(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    rows = planmod.PARALLEL_FSYNC_MIN + 3
    one, two = _materialize_home(tmp_path / "one", rows), _materialize_home(tmp_path / "two", rows)
    took: list[int] = []
    real_take = planmod.EarlyStaging.take

    def take(self, change, umask=None):
        got = real_take(self, change, umask)
        took.append(got is not None)
        return got

    monkeypatch.setattr(planmod.EarlyStaging, "take", take)
    _repair(one, tmp_path, capsys, monkeypatch, "one")
    assert took and all(took) and len(took) == rows + 1  # every new sidecar and the index
    monkeypatch.setattr(planmod, "stage_early", lambda changes: None)  # the plain path: staged in the write
    monkeypatch.setattr("inspector.repair.materialize.stage_early", lambda changes: None)
    took.clear()
    _repair(two, tmp_path, capsys, monkeypatch, "two")
    assert not any(took)

    def files(home: Path) -> dict[str, bytes]:
        sessions = home / "webui" / "sessions"
        return {p.name: p.read_bytes().replace(str(home).encode(), b"HOME") for p in sessions.iterdir()}

    assert files(one) == files(two)
    assert not [n for n in files(one) if ".tmp." in n]
    modes = {stat.S_IMODE(p.stat().st_mode) for p in (one / "webui" / "sessions").iterdir()}
    assert modes == {0o666 & ~planmod.current_umask()}


def test_a_preview_stages_nothing(tmp_path: Path, capsys, monkeypatch) -> None:
    home = _materialize_home(tmp_path, planmod.PARALLEL_FSYNC_MIN + 3)
    before = sorted(p.name for p in (home / "webui" / "sessions").iterdir())
    calls = _counting_stage(monkeypatch)
    _repair(home, tmp_path, capsys, monkeypatch, "preview", write=False)
    assert calls == []
    assert sorted(p.name for p in (home / "webui" / "sessions").iterdir()) == before


def _index_change(folder: Path, before: bytes = b"[old]", after: bytes = b"[new]") -> FileChange:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "_index.json"
    target.write_bytes(before)
    return FileChange(target, before, after, fingerprint=Fingerprint.of_bytes(before, target.stat()))


def test_the_previous_version_copied_early_is_the_backup(tmp_path: Path, monkeypatch) -> None:
    change = _index_change(tmp_path / "s")
    plan = Plan("test", None, [change])
    log = WriteLog(tmp_path / "state")
    writes: list[str] = []
    real = planmod._write_private

    def write_private(dest, data):
        writes.append(dest.parent.name)
        return real(dest, data)

    monkeypatch.setattr(planmod, "_write_private", write_private)
    with early_staging(log) as early:
        stage_early(plan.changes)
        _settle(early)
        (copy,) = (log.root / "backups").glob(".early-*/*")
        assert copy.read_bytes() == b"[old]" and stat.S_IMODE(copy.stat().st_mode) == 0o600
        copied = os.stat(copy).st_ino
        rec = apply_plan(plan, log)
    (entry,) = rec.files
    backup = Path(entry["backup"])
    assert backup.read_bytes() == b"[old]" and stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert os.stat(backup).st_ino == copied  # moved into place, not written again
    assert [w for w in writes if not w.startswith(".early-")] == []
    assert [p.name for p in (log.root / "backups").iterdir()] == [rec.write_id]
    assert change.path.read_bytes() == b"[new]"


def test_a_copy_no_write_took_is_removed_with_its_folder(tmp_path: Path) -> None:
    change = _index_change(tmp_path / "s")
    log = WriteLog(tmp_path / "state")
    with early_staging(log):
        stage_early([change])
    assert list((log.root / "backups").iterdir()) == []
    assert change.path.read_bytes() == b"[old]" and _temps(tmp_path / "s") == []


def test_another_write_log_writes_its_own_backup(tmp_path: Path) -> None:
    change = _index_change(tmp_path / "s")
    with early_staging(WriteLog(tmp_path / "state-early")):
        stage_early([change])
        rec = apply_plan(Plan("test", None, [change]), WriteLog(tmp_path / "state"))
    assert Path(rec.files[0]["backup"]).read_bytes() == b"[old]"
    assert list((tmp_path / "state-early" / "backups").iterdir()) == []


def test_a_copy_changed_since_is_not_taken(tmp_path: Path) -> None:
    change = _index_change(tmp_path / "s")
    log = WriteLog(tmp_path / "state")
    with early_staging(log) as early:
        stage_early([change])
        _settle(early)
        (copy,) = (log.root / "backups").glob(".early-*/*")
        copy.write_bytes(b"[tampered]")
        rec = apply_plan(Plan("test", None, [change]), log)
    assert Path(rec.files[0]["backup"]).read_bytes() == b"[old]"
    assert [p.name for p in (log.root / "backups").iterdir()] == [rec.write_id]


def test_the_switch_interval_is_given_back_when_the_staging_ends(tmp_path: Path) -> None:
    import sys

    before = sys.getswitchinterval()
    plan = _new_files(tmp_path / "s", 3)
    with early_staging():
        assert sys.getswitchinterval() == before  # nothing staged yet: untouched
        stage_early(plan.changes)
        assert sys.getswitchinterval() == min(before, planmod.EARLY_SWITCH_INTERVAL)
    assert sys.getswitchinterval() == before


def test_the_copies_of_a_process_that_ended_without_its_write_are_removed(
    tmp_path: Path, monkeypatch
) -> None:
    log = WriteLog(tmp_path / "state")
    log._ensure()
    backups = log.root / "backups"
    dead, alive = backups / ".early-999999-aaaa", backups / f".early-{os.getppid()}-bbbb"
    for folder in (dead, alive):
        folder.mkdir()
        (folder / "copy").write_bytes(b"[old]")
    monkeypatch.setattr(planmod, "_pid_alive", lambda pid: pid != 999999)
    change = _index_change(tmp_path / "s")
    with early_staging(log) as early:
        stage_early([change])
        _settle(early)
        assert not dead.exists()
        assert (alive / "copy").read_bytes() == b"[old]"  # another process's, still running


def test_a_copy_made_from_the_bytes_read_is_taken_only_for_those_very_bytes(tmp_path: Path) -> None:
    from inspector.plan import back_up_early

    read = b"[old]"
    one = _index_change(tmp_path / "one", before=read)
    log = WriteLog(tmp_path / "state")
    with early_staging(log) as early:
        back_up_early(one.path, one.before)  # as soon as the plan read it, before the new bytes exist
        _settle(early)
        (copy,) = (log.root / "backups").glob(".early-*/*")
        copied = os.stat(copy).st_ino
        rec = apply_plan(Plan("test", None, [one]), log)
    assert os.stat(rec.files[0]["backup"]).st_ino == copied
    two = _index_change(tmp_path / "two")
    equal_not_same = bytes(bytearray(two.before))  # equal bytes, another object: not what was read
    log2 = WriteLog(tmp_path / "state2")
    with early_staging(log2) as early:
        back_up_early(two.path, equal_not_same)
        _settle(early)
        (copy,) = (log2.root / "backups").glob(".early-*/*")
        copied = os.stat(copy).st_ino
        rec = apply_plan(Plan("test", None, [two]), log2)
    backup = Path(rec.files[0]["backup"])
    assert backup.read_bytes() == b"[old]" and os.stat(backup).st_ino != copied
    assert [p.name for p in (log2.root / "backups").iterdir()] == [rec.write_id]
