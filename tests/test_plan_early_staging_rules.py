"""Early staging (``plan.early_staging``) and the side-by-side write: the rules each step keeps when
something goes wrong (issue 21, the sixth session's survivors of ``plan.py``).

Rules pinned, each on real files (expected values written out by hand):
* the sweep of ``backups/`` removes only the ``.early-<pid>-*`` folders of processes that ended, and
  in them only the regular files this code writes: a living process's folder, a folder of a write,
  a name that is not ``.early-<number>-``, a link named like a dead folder and a link inside one are
  left; one folder it cannot empty does not stop it; a ``backups/`` it cannot list does not stop the
  early copy;
* a file staged early for a replaced file carries that file's extended attributes, and is the very
  file swapped in; a look at the attributes that fails stages the change again;
* a staged file that no longer fits and cannot be removed is left, and the change staged again;
* an early copy that failed, or that cannot be moved to the write's backup, is never the backup: the
  write writes its own (and a copy it could not move is removed);
* what no write took is removed at the end even when one of those files is gone already, and a
  folder holding someone else's file is left without an error;
* a change that cannot be staged early (a removal, a folder reached through a link) does not stop
  the changes after it from being staged early;
* the private folder of the early copies is 0700; one path is copied early once, and never in a
  folder reached through a link;
* the side-by-side write (many new files) removes a file a plan removes; a staged file or backup
  that cannot be removed when the write stops does not stop the others from being removed, and the
  write still says why it stopped;
* the staging threads are named ``inspector-stage`` (a write of many files) and ``inspector-early``
  (what a thread dump of a slow write shows).
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path

import pytest

from inspector import plan as planmod
from inspector.plan import (
    FileChange,
    Plan,
    WriteFailed,
    WriteLog,
    apply_plan,
    back_up_early,
    early_staging,
    stage_early,
)
from inspector.store.files import Fingerprint

TMP = ".inspector.tmp."


@pytest.fixture(autouse=True)
def _either_way(both_ways) -> None:
    """Every rule here holds whether the small files are flushed together or fsynced one by one."""


def _temps(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if TMP in p.name)


def _replaced(folder: Path, name: str = "_index.json", before: bytes = b"[old]", after: bytes = b"[new]"):
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    target.write_bytes(before)
    return FileChange(target, before, after, fingerprint=Fingerprint.of_bytes(before, target.stat()))


def _wait(early) -> None:
    """Every job started so far is done (the staging threads are quick)."""
    for pool in (early._serial, early._pool, early._big):
        if pool is not None:
            pool.shutdown(wait=True)


def _counting_stage(monkeypatch) -> list[str]:
    """The target names ``plan._stage`` writes a temp file for, in order (in any thread)."""
    calls: list[str] = []
    real = planmod._stage

    def stage(target, data, attributes, xattrs=None, **kw):
        calls.append(target.name)
        return real(target, data, attributes, xattrs, **kw)

    monkeypatch.setattr(planmod, "_stage", stage)
    return calls


def _copies(log: WriteLog) -> list[Path]:
    return sorted((log.root / "backups").glob(".early-*/*"))


# ---------------------------------------------------------------- the sweep of dead processes' folders


def test_the_sweep_removes_only_dead_processes_early_folders(tmp_path: Path, monkeypatch) -> None:
    log = WriteLog(tmp_path / "state")
    log._ensure()
    backups = log.root / "backups"
    backups.mkdir(exist_ok=True)
    alive_pids = {700001, 700002}
    monkeypatch.setattr(planmod, "_pid_alive", lambda pid: pid in alive_pids)

    def folder(name: str, *files: str) -> Path:
        made = backups / name
        made.mkdir()
        for f in files:
            (made / f).write_bytes(b"[old]")
        return made

    # left alone: a write's own backups, a folder whose name has digits where a pid would be but
    # not the mark, a name with no number, living processes' folders
    kept = [
        folder("20261202T040000-aaaa1111", "0-_index.json"),
        folder("backup-900001-x", "copy"),
        folder(".early-abc-x", "copy"),
        folder(".early-700001-aaaa", "copy"),
        folder(".early-700002-bbbb", "copy"),
    ]
    (backups / ".early-900002-file").write_bytes(b"a file, not a folder")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "theirs").write_bytes(b"someone else's")
    (backups / ".early-900003-link").symlink_to(elsewhere)  # a link named like a dead folder
    with_link = folder(".early-900004-cccc")
    (tmp_path / "target").write_bytes(b"the link's target")
    (with_link / "link").symlink_to(tmp_path / "target")  # not a file this code wrote
    stuck = folder(".early-900005-dddd", "copy")
    (stuck / "sub").mkdir()  # cannot be emptied: the sweep goes on with the next
    dead = [
        folder(".early-900006-eeee", "copy", "copy2"),
        folder(".early-900007-ab-cd", "copy"),  # a dash in the random part: still pid 900007's
        folder(".early-900008-ffff"),
    ]
    order = [*kept, backups / ".early-900002-file", backups / ".early-900003-link", with_link, stuck, *dead]
    real_scandir = os.scandir

    def scandir(path="."):
        # the folders looked at in this order: every kind that is left before the dead ones, so a
        # sweep that stops at one of them leaves the dead folders behind
        if Path(path) == backups:
            entries = {e.name: e for e in real_scandir(path)}
            return iter([entries[p.name] for p in order if p.name in entries])
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    change = _replaced(tmp_path / "s")
    with early_staging(log) as early:
        stage_early([change])
        _wait(early)
        monkeypatch.setattr(os, "scandir", real_scandir)
        for d in dead:
            assert not d.exists(), d.name
        for k in kept:
            assert (k / ("0-_index.json" if k.name.startswith("2026") else "copy")).read_bytes() == b"[old]"
        assert (backups / ".early-900002-file").read_bytes() == b"a file, not a folder"
        assert (elsewhere / "theirs").read_bytes() == b"someone else's"
        assert (
            os.path.islink(with_link / "link") and (tmp_path / "target").read_bytes() == b"the link's target"
        )
        assert (stuck / "sub").is_dir() and not (stuck / "copy").exists()
        (own,) = [p for p in _copies(log) if p.parent.name.startswith(f".early-{os.getpid()}-")]
        assert own.read_bytes() == b"[old]"


def test_a_backups_folder_that_cannot_be_listed_does_not_stop_the_early_copy(
    tmp_path: Path, monkeypatch
) -> None:
    log = WriteLog(tmp_path / "state")
    log._ensure()
    backups = log.root / "backups"
    real_scandir = os.scandir
    refused: list[str] = []

    def scandir(path="."):
        if Path(path) == backups and not refused:
            refused.append(str(path))
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    change = _replaced(tmp_path / "s")
    with early_staging(log) as early:
        stage_early([change])
        _wait(early)
        assert refused == [str(backups)]
        (copy,) = _copies(log)
        copied = os.stat(copy).st_ino
        rec = apply_plan(Plan("test", None, [change]), log)
    assert os.stat(rec.files[0]["backup"]).st_ino == copied  # the early copy is the backup


# ---------------------------------------------------------------- extended attributes


def _with_xattr(path: Path) -> None:
    try:
        os.setxattr(path, "user.hermes", b"kept", follow_symlinks=False)
    except OSError as exc:  # pragma: no cover - a file system without user xattrs
        pytest.skip(f"no user extended attributes here ({exc})")


def test_a_file_staged_early_carries_the_replaced_files_xattrs_and_is_swapped_in(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a folder with no extended attributes of its own
    change = _replaced(tmp_path / "s")
    _with_xattr(change.path)
    calls = _counting_stage(monkeypatch)
    with early_staging() as early:
        stage_early([change])
        _wait(early)
        (tmp,) = _temps(tmp_path / "s")
        assert os.getxattr(tmp, "user.hermes") == b"kept"  # staged with them
        apply_plan(Plan("test", None, [change]), WriteLog(tmp_path / "state"))
    assert change.path.read_bytes() == b"[new]"
    assert os.getxattr(change.path, "user.hermes") == b"kept"
    assert calls == ["_index.json"]  # the very file staged early was swapped in, not staged again
    assert _temps(tmp_path / "s") == []


def test_a_look_at_the_attributes_that_fails_stages_the_change_again(tmp_path: Path, monkeypatch) -> None:
    change = _replaced(tmp_path / "s")
    armed = threading.Event()
    real = planmod._xattrs_for

    def xattrs_for(c):
        if armed.is_set():
            armed.clear()  # once: the look of the take
            raise OSError(errno.EIO, "Input/output error")
        return real(c)

    monkeypatch.setattr(planmod, "_xattrs_for", xattrs_for)
    calls = _counting_stage(monkeypatch)
    with early_staging() as early:
        stage_early([change])
        _wait(early)
        armed.set()
        apply_plan(Plan("test", None, [change]), WriteLog(tmp_path / "state"))
    assert not armed.is_set()
    assert change.path.read_bytes() == b"[new]"
    assert calls == ["_index.json", "_index.json"]  # staged again: not taken without the look
    assert _temps(tmp_path / "s") == []


def test_a_staged_file_that_no_longer_fits_and_cannot_be_removed_is_staged_again(
    tmp_path: Path, monkeypatch
) -> None:
    change = _replaced(tmp_path / "s")
    os.chmod(change.path, 0o640)
    real_unlink = os.unlink
    refused: list[str] = []

    with early_staging() as early:
        stage_early([change])
        _wait(early)
        (tmp,) = _temps(tmp_path / "s")

        def unlink(path, *a, **k):
            if Path(path) == tmp and not refused:
                refused.append(Path(path).name)
                raise PermissionError(errno.EPERM, "Operation not permitted", str(path))
            return real_unlink(path, *a, **k)

        monkeypatch.setattr(os, "unlink", unlink)
        os.chmod(change.path, 0o604)  # the mode changed since: the staged file does not fit
        apply_plan(Plan("test", None, [change]), WriteLog(tmp_path / "state"))
        monkeypatch.setattr(os, "unlink", real_unlink)
    assert refused == [tmp.name]
    assert change.path.read_bytes() == b"[new]" and stat.S_IMODE(change.path.stat().st_mode) == 0o604


# ---------------------------------------------------------------- the early copy of the previous bytes


def test_an_early_copy_that_failed_is_not_the_backup(tmp_path: Path, monkeypatch) -> None:
    change = _replaced(tmp_path / "s")
    log = WriteLog(tmp_path / "state")
    real = planmod._write_private

    def write_private(dest, data):
        if dest.parent.name.startswith(".early-"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(dest, data)

    monkeypatch.setattr(planmod, "_write_private", write_private)
    with early_staging(log) as early:
        stage_early([change])
        _wait(early)
        rec = apply_plan(Plan("test", None, [change]), log)
    assert Path(rec.files[0]["backup"]).read_bytes() == b"[old]"  # written by the write itself
    assert [p.name for p in (log.root / "backups").iterdir()] == [rec.write_id]


def _refuse_moving_early_copies(monkeypatch, moved: list[str]) -> None:
    real = os.replace

    def replace(src, dst, *a, **k):
        if Path(src).parent.name.startswith(".early-") and not Path(dst).parent.name.startswith(".early-"):
            moved.append(Path(src).name)
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", replace)


def test_an_early_copy_that_cannot_be_moved_is_removed_and_the_write_backs_up_itself(
    tmp_path: Path, monkeypatch
) -> None:
    change = _replaced(tmp_path / "s")
    log = WriteLog(tmp_path / "state")
    moved: list[str] = []
    with early_staging(log) as early:
        stage_early([change])
        _wait(early)
        (copy,) = _copies(log)
        _refuse_moving_early_copies(monkeypatch, moved)
        rec = apply_plan(Plan("test", None, [change]), log)
        assert not copy.exists()  # removed at once, not left for the end
    assert moved == [copy.name]
    assert Path(rec.files[0]["backup"]).read_bytes() == b"[old]"
    assert [p.name for p in (log.root / "backups").iterdir()] == [rec.write_id]
    assert change.path.read_bytes() == b"[new]"


def test_an_early_copy_that_can_be_neither_moved_nor_removed_does_not_stop_the_write(
    tmp_path: Path, monkeypatch
) -> None:
    change = _replaced(tmp_path / "s")
    log = WriteLog(tmp_path / "state")
    moved: list[str] = []
    real_unlink = os.unlink
    with early_staging(log) as early:
        stage_early([change])
        _wait(early)
        (copy,) = _copies(log)
        _refuse_moving_early_copies(monkeypatch, moved)

        def unlink(path, *a, **k):
            if Path(path) == copy:
                raise PermissionError(errno.EPERM, "Operation not permitted", str(path))
            return real_unlink(path, *a, **k)

        monkeypatch.setattr(os, "unlink", unlink)
        rec = apply_plan(Plan("test", None, [change]), log)
        monkeypatch.undo()
    assert moved == [copy.name]
    assert Path(rec.files[0]["backup"]).read_bytes() == b"[old]"
    assert change.path.read_bytes() == b"[new]"


def test_the_folder_of_the_early_copies_is_private(tmp_path: Path) -> None:
    log = WriteLog(tmp_path / "state")
    old = os.umask(0o002)
    try:
        with early_staging(log) as early:
            stage_early([_replaced(tmp_path / "s")])
            _wait(early)
            (copy,) = _copies(log)
            assert stat.S_IMODE(copy.parent.stat().st_mode) == 0o700
    finally:
        os.umask(old)


def test_one_path_is_copied_early_once(tmp_path: Path) -> None:
    change = _replaced(tmp_path / "s")
    log = WriteLog(tmp_path / "state")
    with early_staging(log) as early:
        back_up_early(change.path, change.before)
        back_up_early(change.path, change.before)  # asked twice (two reads of the plan)
        _wait(early)
        assert len(_copies(log)) == 1
    assert list((log.root / "backups").iterdir()) == []  # and nothing left when no write took it


def test_a_file_in_a_folder_reached_through_a_link_is_not_copied_early(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere"
    real.mkdir()
    (real / "_index.json").write_bytes(b"[old]")
    (tmp_path / "home").mkdir()
    linked = tmp_path / "home" / "sessions"
    linked.symlink_to(real)
    log = WriteLog(tmp_path / "state")
    with early_staging(log) as early:
        back_up_early(linked / "_index.json", b"[old]")
        assert early._pool is None  # nothing started
    assert not (log.root / "backups").exists() or list((log.root / "backups").iterdir()) == []


# ---------------------------------------------------------------- what no write took


def test_what_no_write_took_is_removed_even_when_one_is_gone_already(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    changes = [FileChange(folder / f"s{i}.json", None, b"{}") for i in range(4)]
    with early_staging() as early:
        stage_early(changes)
        _wait(early)
        first = next(p for p in _temps(folder) if p.name.startswith(".s0.json"))
        os.unlink(first)  # someone removed the first staged file meanwhile
    assert list(folder.iterdir()) == []


def test_an_early_folder_holding_someone_elses_file_is_left_without_an_error(tmp_path: Path) -> None:
    log = WriteLog(tmp_path / "state")
    with early_staging(log) as early:
        stage_early([_replaced(tmp_path / "s")])
        _wait(early)
        (copy,) = _copies(log)
        (copy.parent / "theirs").write_bytes(b"not ours")
    assert [p.name for p in copy.parent.iterdir()] == ["theirs"]  # our copy removed, theirs kept


@pytest.mark.parametrize("first", ["a removal", "a folder reached through a link"])
def test_a_change_not_staged_early_does_not_stop_the_ones_after_it(tmp_path: Path, first: str) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    if first == "a removal":
        gone = folder / "gone.json"
        gone.write_bytes(b"{}")
        head = FileChange(gone, b"{}", None, fingerprint=Fingerprint.of_bytes(b"{}", gone.stat()))
    else:
        (tmp_path / "elsewhere").mkdir()
        (tmp_path / "linked").symlink_to(tmp_path / "elsewhere")
        head = FileChange(tmp_path / "linked" / "a.json", None, b"{}")
    news = [FileChange(folder / f"s{i}.json", None, b"{}") for i in range(3)]
    with early_staging() as early:
        stage_early([head, *news])
        _wait(early)
        assert sorted(p.name.split(TMP)[0] for p in _temps(folder)) == [".s0.json", ".s1.json", ".s2.json"]


# ---------------------------------------------------------------- the side-by-side write


def test_a_side_by_side_write_removes_a_file_the_plan_removes(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    gone = folder / "gone.json"
    gone.write_bytes(b'{"old": 1}')
    changes = [FileChange(folder / f"s{i:03d}.json", None, b"{}") for i in range(planmod.PARALLEL_FSYNC_MIN)]
    changes.append(
        FileChange(gone, b'{"old": 1}', None, fingerprint=Fingerprint.of_bytes(b'{"old": 1}', gone.stat()))
    )
    rec = apply_plan(Plan("test", None, changes), WriteLog(tmp_path / "state"))
    assert not gone.exists()
    assert sorted(p.name for p in folder.iterdir()) == [
        f"s{i:03d}.json" for i in range(planmod.PARALLEL_FSYNC_MIN)
    ]
    assert Path(rec.files[-1]["backup"]).read_bytes() == b'{"old": 1}'


def test_a_staged_file_that_cannot_be_removed_when_the_write_stops_does_not_stop_the_others(
    tmp_path: Path, monkeypatch
) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    changes = [FileChange(folder / f"s{i:03d}.json", None, b"{}") for i in range(planmod.PARALLEL_FSYNC_MIN)]
    index = folder / "_index.json"
    index.write_bytes(b"[]")
    changes.append(FileChange(index, b"[]", b"[1]", fingerprint=Fingerprint.of_bytes(b"[]", index.stat())))

    def no_backup(folder, i, change, early=None):
        if change.before is not None:
            raise OSError(errno.ENOSPC, "No space left on device")
        return None

    real_unlink = os.unlink
    refused: list[str] = []

    def unlink(path, *a, **k):
        if TMP in Path(path).name and not refused:
            refused.append(Path(path).name)
            raise PermissionError(errno.EPERM, "Operation not permitted", str(path))
        return real_unlink(path, *a, **k)

    monkeypatch.setattr(planmod, "_save_backup", no_backup)
    monkeypatch.setattr(os, "unlink", unlink)
    with pytest.raises(WriteFailed, match="could not keep a backup"):
        apply_plan(Plan("test", None, changes), WriteLog(tmp_path / "state"))
    monkeypatch.setattr(os, "unlink", real_unlink)
    assert len(refused) == 1
    assert sorted(p.name for p in folder.iterdir()) == sorted(["_index.json", refused[0]])
    assert index.read_bytes() == b"[]"


def test_a_backup_that_cannot_be_removed_when_the_write_stops_does_not_stop_the_others(
    tmp_path: Path, monkeypatch
) -> None:
    changes = [_replaced(tmp_path / "s", f"s{i}.json", b"[%d]" % i) for i in range(4)]
    real_save = planmod._save_backup

    def save_backup(folder, i, change, early=None):
        if i == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_save(folder, i, change, early)

    real_unlink = Path.unlink
    refused: list[str] = []

    def unlink(self, *a, **k):
        if self.parent.parent.name == "backups" and not refused:
            refused.append(self.name)
            raise PermissionError(errno.EPERM, "Operation not permitted", str(self))
        return real_unlink(self, *a, **k)

    monkeypatch.setattr(planmod, "_save_backup", save_backup)
    monkeypatch.setattr(Path, "unlink", unlink)
    log = WriteLog(tmp_path / "state")
    with pytest.raises(WriteFailed, match="could not keep a backup"):
        apply_plan(Plan("test", None, changes), log)
    monkeypatch.setattr(Path, "unlink", real_unlink)
    (folder,) = (log.root / "backups").iterdir()
    assert [p.name for p in folder.iterdir()] == refused  # only the one that could not be removed
    assert [c.path.read_bytes() for c in changes] == [b"[0]", b"[1]", b"[2]", b"[3]"]


@pytest.mark.parametrize("early", [False, True], ids=["side by side", "early"])
def test_the_staging_threads_are_named_for_a_thread_dump(tmp_path: Path, monkeypatch, early: bool) -> None:
    """A write of many files, or a plan staged early, stages in threads named ``inspector-stage`` or
    ``inspector-early`` (what a thread dump of a slow write shows), never on the caller's thread."""
    folder = tmp_path / "s"
    folder.mkdir()
    changes = [FileChange(folder / f"s{i:03d}.json", None, b"{}") for i in range(planmod.PARALLEL_FSYNC_MIN)]
    names: list[str] = []
    real = planmod._stage

    def stage(target, data, attributes, xattrs=None, **kw):
        names.append(threading.current_thread().name)
        return real(target, data, attributes, xattrs, **kw)

    monkeypatch.setattr(planmod, "_stage", stage)
    if early:
        with early_staging() as staging:
            stage_early(changes)
            _wait(staging)
    else:
        apply_plan(Plan("test", None, changes), WriteLog(tmp_path / "state"))
    prefix = "inspector-early_" if early else "inspector-stage_"
    assert len(names) == planmod.PARALLEL_FSYNC_MIN
    assert [n for n in names if not n.startswith(prefix)] == []


def test_a_big_file_is_staged_beside_the_small_ones_not_behind_them(tmp_path: Path, monkeypatch) -> None:
    """A file of ``EARLY_BIG_BYTES`` or more (a home-wide write's index) is staged, and its previous
    version copied, by threads of its own (``inspector-early-big``) as soon as it is asked, while
    every thread of the shared pool is still busy with small files; each is still the file the write
    takes."""
    folder = tmp_path / "s"
    big_staged = threading.Event()
    small = [FileChange(folder / f"s{i:03d}.json", None, b"{}") for i in range(2 * planmod._FSYNC_THREADS)]
    index = _replaced(
        folder,
        before=b"[" + b"0" * planmod.EARLY_BIG_BYTES + b"]",
        after=b"[" + b"1" * planmod.EARLY_BIG_BYTES + b"]",
    )
    names: dict[str, str] = {}
    real = planmod._stage

    def stage(target, data, attributes, xattrs=None, **kw):
        names[target.name] = threading.current_thread().name
        if len(data) < planmod.EARLY_BIG_BYTES:
            assert big_staged.wait(10), "the big file waited behind the small ones"
        out = real(target, data, attributes, xattrs, **kw)
        if len(data) >= planmod.EARLY_BIG_BYTES:
            big_staged.set()
        return out

    monkeypatch.setattr(planmod, "_stage", stage)
    log = WriteLog(tmp_path / "state")
    with early_staging(log) as staging:
        stage_early(small)  # every shared thread now waits for the big file
        back_up_early(index.path, index.before)
        stage_early([index])
        assert big_staged.wait(10)
        _wait(staging)
        apply_plan(Plan("test", None, [*small, index]), log)
    assert names["_index.json"].startswith("inspector-early-big_")
    assert {n for k, n in names.items() if k != "_index.json"} <= {f"inspector-early_{i}" for i in range(8)}
    assert index.path.read_bytes() == index.after and all(c.path.read_bytes() == b"{}" for c in small)
    assert _temps(folder) == []
