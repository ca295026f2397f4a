"""Shared tools of the safety suite: a home to break, a snapshot of every byte, and a workout
that drives every reader, report and repair planner the way a user would.

The workout is the whole read side of the inspector: the catalogue, hermes' audit plus the
inspector's findings, every session's detail and journals (hermes' view and the raw view),
and every action planned for every session and home-wide, each rendered as a diff. It must
never raise, and it must never change a byte of the home (:func:`tree_state` before/after).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import io
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from inspector import cli
from inspector.actions import make_context, plan_action
from inspector.demo import DemoHome, build_demo_home
from inspector.home import Home, locate_home
from inspector.load import full_audit, load_catalogue
from inspector.plan import Clock, Plan, WriteLog, apply_plan, render_diff, undo_write
from inspector.repair import home_wide, registry
from inspector.report import (
    detail_to_json,
    format_audit,
    format_detail,
    format_journal,
    format_list,
    journal_to_json,
)
from inspector.session_detail import load_detail
from inspector.store.journal import RUN_JOURNAL_DIR
from inspector.store.journal_raw import RawJournal

NOW = 1_780_000_000.0
# The clock every planner gets: an hour after the demo was made, the server restarted since.
CLOCK = Clock(now=NOW + 3600.0, server_started_at=NOW + 60.0)
ACTIONS = tuple(sorted(registry.names()))
# The os functions the write path (inspector.plan) calls: the safety harnesses wrap each of them to
# count, fail or kill at every call (tests/safety/test_write_path.py, bench/crash_loop.py).
HOOKED = (
    "open",
    "write",
    "fsync",
    "fchmod",
    "fchown",
    "close",
    "replace",
    "link",
    "unlink",
    "rename",
    "mkdir",
    "chmod",
    "rmdir",
)


_PRISTINE: list[DemoHome] = []


def demo(root: Path) -> tuple[DemoHome, Home]:
    """A fresh demo home (every kind of broken chat) at ``root``, and its located Home.

    The home is built once per process and copied (building it commits two SQLite databases,
    which costs fsyncs). Its sidecars name workspaces under the first build's folder; nothing
    here depends on where workspaces are.
    """
    if not _PRISTINE:
        base = Path(tempfile.mkdtemp(prefix="inspector-demo-"))
        atexit.register(shutil.rmtree, base, True)
        _PRISTINE.append(build_demo_home(base / "home", now=NOW))
    pristine = _PRISTINE[0]
    shutil.copytree(pristine.home, root, symlinks=True)
    d = dataclasses.replace(pristine, home=Path(root).resolve())
    return d, locate_home(home=d.home, env={})


# ---------------------------------------------------------------- every byte of a tree


def tree_state(root: Path) -> dict[str, tuple]:
    """``relative path -> (kind, content, mode)`` for everything under ``root``, links not followed.

    Regular files carry their bytes, links their target; FIFOs, sockets and devices are never
    opened (only their kind is recorded).
    """
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            st = os.lstat(path)
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path), None)
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", None, mode)
            elif stat.S_ISREG(st.st_mode):
                try:
                    out[rel] = ("file", path.read_bytes(), mode)
                except PermissionError:
                    out[rel] = ("file", "<unreadable>", mode)
            else:
                out[rel] = ("other", None, mode)
    return out


def tree_diff(before: dict[str, tuple], after: dict[str, tuple]) -> list[str]:
    """Readable differences between two :func:`tree_state` snapshots (empty = identical)."""
    out = []
    for rel in sorted(set(before) | set(after)):
        a, b = before.get(rel), after.get(rel)
        if a == b:
            continue
        if a is None:
            out.append(f"created {rel}")
        elif b is None:
            out.append(f"removed {rel}")
        elif a[0] != b[0] or a[1] != b[1]:
            out.append(f"changed {rel}")
        else:
            out.append(f"mode of {rel}: {a[2]:o} -> {b[2]:o}")
    return out


def assert_unchanged(before: dict[str, tuple], root: Path, ignore: Iterable[str] = ()) -> None:
    after = tree_state(root)
    for rel in ignore:
        before.pop(rel, None)
        after.pop(rel, None)
    diff = tree_diff(before, after)
    assert not diff, "the inspector changed the home while reading it: " + "; ".join(diff)


# ---------------------------------------------------------------- paths built from data

_NAME_OK = re.compile(r"[^/\x00]+")


def assert_inside(session_dir: Path, path: Path) -> None:
    """A path a plan writes must be a plain child of the sessions folder."""
    text = str(path)
    assert "\x00" not in text, f"NUL in a planned path: {text!r}"
    norm = Path(os.path.normpath(text))
    assert norm == path, f"planned path {text!r} is not normalized"
    assert norm.parent == Path(os.path.normpath(session_dir)), f"{text!r} is outside {session_dir}"
    assert norm.name not in (".", "..") and _NAME_OK.fullmatch(norm.name), f"bad file name {norm.name!r}"


# ---------------------------------------------------------------- the workout


@dataclass
class Workout:
    """What one pass over a home saw (for assertions on messages)."""

    findings: list[dict] = field(default_factory=list)
    audit: dict | None = None
    plans: list[Plan] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join(self.texts)

    def messages(self) -> str:
        """Every finding message and every plan's refusal/summary/warning, one per line."""
        lines = [f["message"] for f in self.findings]
        for p in self.plans:
            lines += ([p.refusal] if p.refusal else []) + p.summary + p.warnings
        return "\n".join(lines)


def plan_everything(home: Home, ids: Iterable[str], clock: Clock = CLOCK) -> list[Plan]:
    """Every action for every id, plus ``--all`` and the home-wide actions; paths checked."""
    plans: list[Plan] = []
    for action in ACTIONS:
        ctx = make_context(home, clock)
        plans += plan_action(ctx, action, None)
        if home_wide(action):
            continue
        for sid in ids:
            plans += plan_action(make_context(home, clock), action, sid)
    for p in plans:
        render_diff(p)
        json.dumps(p.to_json(), ensure_ascii=True, default=str)
        for change in p.changes:
            assert_inside(home.session_dir, change.path)
    return plans


def _journal_files(session_dir: Path) -> list[Path]:
    root = session_dir / RUN_JOURNAL_DIR
    out = []
    with contextlib.suppress(OSError):
        for folder in sorted(root.iterdir()):
            if folder.is_dir() and not folder.is_symlink():
                out += sorted(p for p in folder.iterdir() if p.suffix == ".jsonl" and p.is_file())
    return out


def inspect_everything(
    home: Home, ids: Iterable[str] | None = None, *, plans: bool = True, extra_ids: Iterable[str] = ()
) -> Workout:
    """Drive every reader, report and planner over ``home``. Any exception is a test failure.

    ``ids`` defaults to every id the catalogue lists; ``extra_ids`` are added (ids a user types).
    """
    w = Workout()
    cat = load_catalogue(home, now=CLOCK.now)
    w.texts.append(format_list(cat.sorted_rows(), cat.home_findings))
    report = full_audit(home, now=CLOCK.now)
    json.dumps(report, ensure_ascii=True, default=str)
    w.audit = report
    w.findings = list(report["inspector"]["findings"])
    w.texts.append(format_audit(report))
    ids = (list(cat.rows) if ids is None else list(ids)) + list(extra_ids)
    for sid in ids:
        detail = load_detail(home, sid)
        json.dumps(detail_to_json(detail), ensure_ascii=True, default=str)
        json.dumps(journal_to_json(detail, detail.runs), ensure_ascii=True, default=str)
        w.texts += [format_detail(detail), format_journal(detail, detail.runs)]
        w.findings += [f.to_json() for f in detail.findings]
    for path in _journal_files(home.session_dir):
        with contextlib.suppress(PermissionError):
            journal = RawJournal.from_path(path)
            journal.stats()
            journal.hermes_view()
    if plans:
        w.plans = plan_everything(home, ids)
    return w


def run_cli(*argv: str) -> tuple[int, str, str]:
    """``hermes-inspector ARGV`` in-process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(list(argv))
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


# ---------------------------------------------------------------- apply, then undo: nothing lost


def apply_then_undo(plan: Plan, log: WriteLog, root: Path) -> None:
    """Apply a plan and undo it: every replaced byte is in a backup, and undo restores ``root`` exactly.

    Modes are compared too, except that a file the plan created and undo removed is simply gone.
    """
    before = tree_state(root)
    rec = apply_plan(plan, log)
    for entry, change in zip(rec.files, plan.changes, strict=True):
        assert (
            change.path.read_bytes() == change.after if change.after is not None else not change.path.exists()
        )
        if change.before is not None:
            backup = Path(entry["backup"])
            assert backup.read_bytes() == change.before, (
                f"backup of {change.path} does not hold its old bytes"
            )
            assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    undo_write(rec.write_id, log)
    diff = tree_diff(before, tree_state(root))
    assert not diff, "undo did not restore the home exactly: " + "; ".join(diff)
