"""The disk says no: a full disk, a read-only folder or a permission error at any step of a write.

Every disk-changing call apply makes is failed in turn (ENOSPC, EROFS, EACCES, EIO). Each time
the user gets one clear sentence naming the file and the reason; every target holds its old or
its new bytes; when nothing was written no temp file, backup or history entry is left behind;
when some files were written the message says so and `undo` puts them back exactly.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest

import inspector.plan as planmod
from inspector.actions import make_context, plan_action
from inspector.home import locate_home
from inspector.plan import ApplyError, Plan, WriteLog, undo_write
from tests.safety.helpers import CLOCK, demo, tree_diff, tree_state

HOOKED = ("open", "write", "fsync", "fchmod", "close", "replace", "link", "unlink", "mkdir", "chmod")
TEMP_MARK = ".inspector.tmp."


class Injector:
    """Count disk-changing os calls inside apply; fail call number ``fail_at`` with ``err``."""

    def __init__(self, monkeypatch, fail_at: int, err: int, active: bool = True):
        self.active = active  # False: count nothing until activated (reads also use os.open)
        self.count = 0
        self.fail_at = fail_at
        self.err = err
        self.failed: str | None = None
        for name in HOOKED:
            monkeypatch.setattr(planmod.os, name, self._wrap(name, getattr(os, name)))
        # the atomic exchange that swaps each file in (renameat2, called through ctypes)
        monkeypatch.setattr(planmod, "_exchange", self._wrap("exchange", planmod._exchange))

    def _wrap(self, name, real):
        def wrapper(*args, **kwargs):
            if not self.active:
                return real(*args, **kwargs)
            self.count += 1
            if self.count == self.fail_at:
                self.failed = name
                if name == "close":  # the descriptor is gone either way
                    real(*args, **kwargs)
                raise OSError(self.err, os.strerror(self.err))
            return real(*args, **kwargs)

        return wrapper


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> tuple[Path, dict]:
    d, _ = demo(tmp_path_factory.mktemp("faults") / "home")
    return d.home, d.sessions


def _plan(source: tuple[Path, dict], work: Path, scenario: str) -> tuple[Path, Plan]:
    src, sessions = source
    root = work / "home"
    shutil.copytree(src, root, symlinks=True)
    home = locate_home(home=root, env={})
    action, sid = {
        "materialize": ("materialize", None),  # creates a sidecar, rewrites the index
        "repair-interrupted": ("repair-interrupted", sessions["stale_pending"]),
        "restore-backup": ("restore-backup", sessions["shrunken"]),
    }[scenario]
    (plan,) = plan_action(make_context(home, CLOCK), action, sid)
    assert plan.changes and not plan.refusal
    return root, plan


def _count_calls(source, tmp_path: Path, scenario: str, monkeypatch) -> int:
    root, plan = _plan(source, tmp_path / "count", scenario)
    with monkeypatch.context() as m:
        inj = Injector(m, 0, errno.ENOSPC)
        planmod.apply_plan(plan, WriteLog(tmp_path / "count-state"))
    return inj.count


FAULTS = [
    ("materialize", errno.ENOSPC),
    ("repair-interrupted", errno.ENOSPC),
    ("restore-backup", errno.ENOSPC),
    ("materialize", errno.EROFS),
    ("repair-interrupted", errno.EACCES),
    ("restore-backup", errno.EIO),
]


@pytest.mark.parametrize(("scenario", "err"), FAULTS, ids=[f"{s}-{errno.errorcode[e]}" for s, e in FAULTS])
def test_a_failing_disk_at_every_step_gives_a_clear_error_and_loses_nothing(
    tmp_path, monkeypatch, source, scenario, err
) -> None:
    total = _count_calls(source, tmp_path, scenario, monkeypatch)
    assert total > 10
    for fail_at in range(1, total + 1):
        work = tmp_path / f"n{fail_at}"
        root, plan = _plan(source, work, scenario)
        pristine = tree_state(root)
        log = WriteLog(work / "state")
        with monkeypatch.context() as m:
            inj = Injector(m, fail_at, err)
            try:
                planmod.apply_plan(plan, log)
                outcome = None
            except ApplyError as exc:
                outcome = str(exc)
        where = f"{scenario}: {os.strerror(err)} at call {fail_at} ({inj.failed})"
        now = tree_state(root)
        temps = [rel for rel in now if TEMP_MARK in rel]
        # Only a temp file whose own removal failed, after its link was made, may stay (hermes
        # sweeps *.tmp.* after an hour); it is never named like a session.
        leftover_ok = outcome is None and inj.failed == "unlink"
        assert not temps or leftover_ok, f"{where}: temp files left: {temps}"
        assert not any(t.endswith((".json", ".jsonl", ".bak")) for t in temps)
        for change in plan.changes:
            rel = str(change.path.relative_to(root))
            held = now.get(rel, (None, None))[1]
            assert held in (change.before, change.after), f"{where}: {rel} is torn"
        if outcome is None:
            # A failure the write does not depend on (a folder fsync): the write went through.
            assert inj.failed is not None and all(
                now.get(str(c.path.relative_to(root)), (0, None))[1] == c.after for c in plan.changes
            )
            continue
        assert os.strerror(err) in outcome, f"{where}: the message does not say why: {outcome}"
        assert "/" in outcome, f"{where}: the message names no file: {outcome}"
        records = log.records()
        if "nothing was written" in outcome or "no file was changed" in outcome:
            assert not tree_diff(pristine, now), (
                f"{where}: said nothing was written, but: {tree_diff(pristine, now)}"
            )
            assert records == [], f"{where}: a write that changed nothing is in the history"
            backups = log.root / "backups"
            assert not backups.exists() or not any(backups.iterdir()), (
                f"{where}: backups of a write that never was"
            )
        elif "undo them" in outcome:
            (rec,) = records
            assert not rec.complete
            undo_write(rec.write_id, log)
            assert not tree_diff(pristine, tree_state(root)), f"{where}: undo did not restore the home"
        else:
            assert "every file was written" in outcome, f"{where}: unexpected message {outcome}"
            assert all(now[str(c.path.relative_to(root))][1] == c.after for c in plan.changes if c.after)


def test_the_cli_says_not_written_and_why(tmp_path, monkeypatch, capsys) -> None:
    from inspector import cli

    d, _ = demo(tmp_path / "home")
    sid = d.sessions["shrunken"]
    live = d.session_dir / f"{sid}.json"
    before = live.read_bytes()
    injector = Injector(monkeypatch, 7, errno.ENOSPC, active=False)
    real_apply = planmod.apply_plan

    def apply_counting(*args, **kwargs):
        injector.active = True  # count the disk calls of the write only, not of planning
        try:
            return real_apply(*args, **kwargs)
        finally:
            injector.active = False

    monkeypatch.setattr(planmod, "apply_plan", apply_counting)  # the CLI imports it when it writes
    code = cli.main(["repair", sid, "--action", "restore-backup", "--home", str(d.home), "--write"])
    out = capsys.readouterr().out
    assert code == 1
    assert "NOT WRITTEN" in out and "No space left on device" in out
    assert live.read_bytes() == before


def test_a_write_log_that_cannot_be_written_stops_before_any_file(tmp_path, source) -> None:
    root, plan = _plan(source, tmp_path, "restore-backup")
    pristine = tree_state(root)
    blocker = tmp_path / "state-is-a-file"
    blocker.write_bytes(b"not a folder")
    with pytest.raises(ApplyError, match="nothing was written"):
        planmod.apply_plan(plan, WriteLog(blocker))
    assert not tree_diff(pristine, tree_state(root))
