"""The single write path: Plan -> preview (diff) -> apply -> undo.

A repair never writes. It returns a :class:`Plan`: for each file, the bytes before (with
the fingerprint taken when they were read) and the bytes after. :func:`render_diff` shows
it; :func:`apply_plan` writes exactly those bytes after re-checking every fingerprint,
keeps the previous bytes as a private backup outside the sessions folder and appends an
entry to the write log; :func:`undo_write` puts a logged write back if nothing changed
since.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import stat
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from inspector.store.jsonfmt import Fingerprint, sha256_hex

# New sidecars get hermes' permissions: the process umask applied to 0666 (0644 observed).
DEFAULT_NEW_FILE_MODE = 0o644


@dataclass(frozen=True)
class Clock:
    """The explicit clock of a repair: wall time and the WebUI process start time."""

    now: float
    server_started_at: float


@dataclass(frozen=True)
class FileChange:
    """One file of a plan. ``before is None`` creates it, ``after is None`` deletes it."""

    path: Path
    before: bytes | None
    after: bytes | None
    fingerprint: Fingerprint | None = None
    new_mode: int = DEFAULT_NEW_FILE_MODE

    @property
    def kind(self) -> str:
        if self.before is None:
            return "create"
        if self.after is None:
            return "delete"
        return "modify"


@dataclass
class Plan:
    """What a repair would write, and why. Producing one writes nothing."""

    action: str
    session_id: str | None
    changes: list[FileChange] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    refusal: str | None = None
    result: dict = field(default_factory=dict)

    @property
    def is_noop(self) -> bool:
        return self.refusal is None and not self.changes

    def to_json(self, diff: bool = True) -> dict:
        return {
            "action": self.action,
            "session_id": self.session_id,
            "refusal": self.refusal,
            "summary": self.summary,
            "warnings": self.warnings,
            "result": self.result,
            "changes": [
                {
                    "path": str(c.path),
                    "kind": c.kind,
                    "sha256_before": sha256_hex(c.before) if c.before is not None else None,
                    "sha256_after": sha256_hex(c.after) if c.after is not None else None,
                    **({"diff": file_diff(c)} if diff else {}),
                }
                for c in self.changes
            ],
        }


class ApplyError(Exception):
    """Apply or undo refused or failed; nothing (further) was written. The message says why."""


# ---------------------------------------------------------------- preview


def _text_lines(data: bytes | None) -> list[str]:
    if data is None:
        return []
    text = data.decode("utf-8", errors="replace")
    return text.splitlines(keepends=True) if text else []


def file_diff(change: FileChange, context: int = 3) -> str:
    """Unified diff of one change. hermes' files are indented JSON, so lines are readable."""
    before = _text_lines(change.before)
    after = _text_lines(change.after)
    a = "/dev/null" if change.before is None else f"a/{change.path.name}"
    b = "/dev/null" if change.after is None else f"b/{change.path.name}"
    lines = difflib.unified_diff(before, after, fromfile=a, tofile=b, n=context)
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def render_diff(plan: Plan) -> str:
    """The whole preview as text: summary, warnings, then one diff per file."""
    parts = [f"# {plan.action} {plan.session_id or '(all eligible sessions)'}\n"]
    if plan.refusal:
        parts.append(f"REFUSED: {plan.refusal}\n")
    for line in plan.summary:
        parts.append(f"* {line}\n")
    for line in plan.warnings:
        parts.append(f"! {line}\n")
    for change in plan.changes:
        parts.append(f"\n--- {change.kind}: {change.path}\n")
        parts.append(file_diff(change))
    return "".join(parts)


# ---------------------------------------------------------------- apply


def _current_bytes(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def check_fingerprints(plan: Plan) -> list[str]:
    """Paths whose content differs from what the plan was built on (empty = all unchanged)."""
    changed = []
    for c in plan.changes:
        now = _current_bytes(c.path)
        if c.before is None:
            if now is not None:
                changed.append(f"{c.path} now exists (it did not when the preview was made)")
        elif now is None:
            changed.append(f"{c.path} was removed since the preview")
        elif sha256_hex(now) != sha256_hex(c.before):
            changed.append(f"{c.path} changed since the preview")
    return changed


def _temp_name(target: Path) -> Path:
    # hermes sweeps `*.tmp.*` files older than an hour and never lists names that do not
    # end in `.json`, so a crash here never leaves something hermes would load as a session.
    return target.with_name(f".{target.name}.inspector.tmp.{os.getpid()}.{threading.get_ident()}")


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write(target: Path, data: bytes, *, mode: int, create_only: bool) -> None:
    """temp file beside the target, fsync, then atomic replace (or link, for create-only)."""
    tmp = _temp_name(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            view = memoryview(data)
            written = 0
            # os.write may write less than asked; loop until everything is down.
            while written < len(data):
                written += os.write(fd, view[written:])
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        if create_only:
            os.link(tmp, target)  # fails with FileExistsError instead of clobbering
        else:
            os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    _fsync_dir(target.parent)


def _mode_of(path: Path, default: int) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return default


@dataclass(frozen=True)
class WriteRecord:
    """An entry of the write log. ``complete`` is False for a write that was interrupted."""

    write_id: str
    time: float
    action: str
    session_id: str | None
    files: list[dict]
    complete: bool = True

    def to_json(self) -> dict:
        return {
            "write_id": self.write_id,
            "time": self.time,
            "action": self.action,
            "session_id": self.session_id,
            "files": self.files,
            "complete": self.complete,
        }


class WriteLog:
    """Backups and the append-only write log, kept in a private folder outside the home.

    Default location: ``$XDG_STATE_HOME/hermes-inspector`` (``~/.local/state/...``).
    The folder is 0700 and every file in it 0600: backups hold private chats.
    """

    def __init__(self, root: Path):
        self.root = root

    @classmethod
    def default(cls) -> WriteLog:
        override = os.environ.get("HERMES_INSPECTOR_STATE_DIR")
        if override:
            return cls(Path(override).expanduser())
        base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        return cls(Path(base) / "hermes-inspector")

    @property
    def log_path(self) -> Path:
        return self.root / "writes.jsonl"

    def _ensure(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.root, 0o700)
        (self.root / "backups").mkdir(exist_ok=True, mode=0o700)
        os.chmod(self.root / "backups", 0o700)

    def backup_dir(self, write_id: str) -> Path:
        return self.root / "backups" / write_id

    def append(self, record: WriteRecord, state: str = "done") -> None:
        self._ensure()
        entry = {**record.to_json(), "state": state}
        entry.pop("complete")
        line = (json.dumps(entry, ensure_ascii=True) + "\n").encode("ascii")
        fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    def records(self) -> list[WriteRecord]:
        try:
            text = self.log_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        # Each write logs a "started" entry before touching any file and a "done" entry after;
        # a write with no "done" was interrupted (its files may be old or new, never torn).
        records: dict[str, WriteRecord] = {}
        for line in text.splitlines():
            try:
                obj = json.loads(line)
                rec = WriteRecord(obj["write_id"], obj["time"], obj["action"], obj.get("session_id"),
                                  obj["files"], obj.get("state", "done") == "done")
            except (ValueError, KeyError, TypeError, AttributeError):
                continue  # a torn last line after a crash: skip it, never fail the history
            if rec.complete or rec.write_id not in records:
                records[rec.write_id] = rec
        return list(records.values())

    def find(self, write_id: str) -> WriteRecord | None:
        for rec in self.records():
            if rec.write_id == write_id:
                return rec
        return None


def _save_backup(folder: Path, index: int, change: FileChange) -> str | None:
    if change.before is None:
        return None
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    dest = folder / f"{index:02d}-{change.path.name}"
    tmp = dest.with_name(dest.name + ".part")
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as fh:
        fh.write(change.before)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, dest)
    return str(dest)


def apply_plan(plan: Plan, log: WriteLog, *, clock_now: float | None = None) -> WriteRecord:
    """Write exactly the previewed bytes, or refuse and write nothing.

    Order: re-check every fingerprint; back up every previous version (0600, outside the
    sessions folder); write each file atomically; log the write. A crash part-way leaves
    each target either old or new, and the backups hold every old version.
    """
    if plan.refusal:
        raise ApplyError(f"refused: {plan.refusal}")
    if not plan.changes:
        raise ApplyError("nothing to write")
    stale = check_fingerprints(plan)
    if stale:
        raise ApplyError("the files changed since the preview; nothing was written:\n  " + "\n  ".join(stale))
    write_id = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + uuid.uuid4().hex[:8]
    log._ensure()
    folder = log.backup_dir(write_id)
    files = []
    for i, change in enumerate(plan.changes):
        backup = _save_backup(folder, i, change)
        files.append({
            "path": str(change.path),
            "kind": change.kind,
            "sha256_before": sha256_hex(change.before) if change.before is not None else None,
            "sha256_after": sha256_hex(change.after) if change.after is not None else None,
            "backup": backup,
        })
    record = WriteRecord(write_id, time.time() if clock_now is None else clock_now, plan.action,
                         plan.session_id, files, complete=False)
    log.append(record, state="started")
    for change in plan.changes:
        if change.after is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(change.path)
            continue
        change.path.parent.mkdir(parents=True, exist_ok=True)
        mode = _mode_of(change.path, change.new_mode)
        atomic_write(change.path, change.after, mode=mode, create_only=change.before is None)
    record = WriteRecord(record.write_id, record.time, record.action, record.session_id, files, complete=True)
    log.append(record, state="done")
    return record


def undo_write(write_id: str, log: WriteLog) -> WriteRecord:
    """Restore every file of a logged write, if each still holds what was written."""
    rec = log.find(write_id)
    if rec is None:
        raise ApplyError(f"no write with id {write_id} in {log.log_path}")
    problems = []
    to_restore = []
    for f in rec.files:
        now = _current_bytes(Path(f["path"]))
        now_sha = sha256_hex(now) if now is not None else None
        if now_sha == f["sha256_before"] and not rec.complete:
            continue  # an interrupted write never reached this file
        if now_sha != f["sha256_after"]:
            problems.append(f"{f['path']} changed after the write; undo would lose that change")
        elif f["backup"] is not None and not Path(f["backup"]).is_file():
            problems.append(f"backup {f['backup']} is missing")
        else:
            to_restore.append((f, now))
    if problems:
        raise ApplyError("nothing was written:\n  " + "\n  ".join(problems))
    if not to_restore:
        raise ApplyError(f"nothing to undo: the files of {write_id} already hold their previous bytes")
    changes = []
    for f, current in to_restore:
        previous = Path(f["backup"]).read_bytes() if f["backup"] else None
        fp = Fingerprint.of_bytes(current) if current is not None else None
        changes.append(FileChange(path=Path(f["path"]), before=current, after=previous, fingerprint=fp))
    undo_plan = Plan(action=f"undo:{rec.action}", session_id=rec.session_id, changes=changes)
    return apply_plan(undo_plan, log)
