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
import hashlib
import json
import os
import re
import stat
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from inspector.store.jsonfmt import Fingerprint, sha256_hex

# New sidecars get hermes' permissions: the process umask applied to 0666 (0644 observed, the
# mode under the usual umask 022). ``FileChange.new_mode=None`` means exactly that.
DEFAULT_NEW_FILE_MODE = 0o644


@dataclass(frozen=True)
class Clock:
    """The explicit clock of a repair: wall time and the WebUI process start time."""

    now: float
    server_started_at: float


@dataclass(frozen=True)
class FileChange:
    """One file of a plan. ``before is None`` creates it, ``after is None`` deletes it.

    A modified file keeps its mode and owner. A created file gets ``new_mode``, or, when
    that is None, hermes' own: 0666 minus the umask.
    """

    path: Path
    before: bytes | None
    after: bytes | None
    fingerprint: Fingerprint | None = None
    new_mode: int | None = None

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
    clock: Clock | None = None  # the clock it was planned with (``crosscheck`` runs hermes with it)

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


class WriteFailed(ApplyError, OSError):
    """The disk refused a write (full, read-only, permission denied...).

    The message names the file and the reason and says what is on disk now. It is also an
    OSError, so callers that catch OSError around a write keep working.
    """


# ---------------------------------------------------------------- preview


def _text_lines(data: bytes | None) -> list[str]:
    if data is None:
        return []
    text = data.decode("utf-8", errors="replace")
    return text.splitlines(keepends=True) if text else []


# difflib's matcher is roughly quadratic on long runs of similar lines (a 10,000-row _index.json
# has a million); past this many differing lines the preview lists them without alignment.
DIFF_ALIGN_LIMIT = 20_000
_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def _common_edges(before: list[str], after: list[str]) -> tuple[int, int]:
    """Lengths of the common leading and trailing runs of lines (not overlapping)."""
    limit = min(len(before), len(after))
    head = 0
    while head < limit and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < limit - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    return head, tail


def _shift_hunk(line: str, offset: int) -> str:
    m = _HUNK.match(line)
    if not m or not offset:
        return line
    a, a_len, b, b_len = m.groups()
    # a zero-length side is numbered from the line before it; shifting keeps that convention
    return f"@@ -{int(a) + offset}{a_len or ''} +{int(b) + offset}{b_len or ''} @@" + line[m.end():]


def file_diff(change: FileChange, context: int = 3) -> str:
    """Unified diff of one change. hermes' files are indented JSON, so lines are readable.

    The common head and tail are cut before diffing (line numbers stay those of the files),
    so a one-row change in a huge index costs nothing; a middle too large to align is
    shown as its removed and added lines, with a note.
    """
    before = _text_lines(change.before)
    after = _text_lines(change.after)
    a = "/dev/null" if change.before is None else f"a/{change.path.name}"
    b = "/dev/null" if change.after is None else f"b/{change.path.name}"
    head, tail = _common_edges(before, after)
    start = max(0, head - context)
    keep_tail = max(0, tail - context)
    mid_before, mid_after = before[start:len(before) - keep_tail], after[start:len(after) - keep_tail]
    if max(len(mid_before), len(mid_after)) > DIFF_ALIGN_LIMIT:
        return _coarse_diff(a, b, start, mid_before, mid_after)
    out = []
    for line in difflib.unified_diff(mid_before, mid_after, fromfile=a, tofile=b, n=context):
        line = _shift_hunk(line, start)
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


COARSE_SHOWN = 2_000  # lines of each side shown when a middle is too large to align


def _coarse_diff(a: str, b: str, start: int, before: list[str], after: list[str]) -> str:
    """Removed then added lines of a middle too large to align, each side cut to COARSE_SHOWN lines."""
    head = (f"--- {a}\n+++ {b}\n"
            f"@@ -{start + 1},{len(before)} +{start + 1},{len(after)} @@ "
            f"(too many differing lines to align: removed lines, then added lines)\n")
    parts = [head]
    for sign, side in (("-", before), ("+", after)):
        parts.extend(f"{sign}{x}" if x.endswith("\n") else f"{sign}{x}\n\\ No newline at end of file\n"
                     for x in side[:COARSE_SHOWN])
        if len(side) > COARSE_SHOWN:
            parts.append(f"\\ ... {len(side) - COARSE_SHOWN:,} more {'removed' if sign == '-' else 'added'} "
                         "lines not shown\n")
    return "".join(parts)


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


def _reason(exc: BaseException) -> str:
    return (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or type(exc).__name__


def _target_problem(path: Path) -> str | None:
    """Why ``path`` must not be written (a link, not a regular file, not a plain path), else None."""
    text = str(path)
    if "\x00" in text or os.path.normpath(text) != text or not path.is_absolute():
        return f"{text!r} is not a plain absolute path; the inspector only writes plain paths"
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{path} cannot be examined ({_reason(exc)})"
    if stat.S_ISLNK(st.st_mode):
        return f"{path} is a symbolic link; the inspector never writes through or replaces a link"
    if not stat.S_ISREG(st.st_mode):
        return f"{path} is not a regular file"
    return None


def check_fingerprints(plan: Plan) -> list[str]:
    """Why the plan must not be written now (empty = every file still holds what the preview read).

    Besides content changes this refuses targets that are symbolic links or not regular
    files (never followed, never replaced), paths that are not plain, and duplicate paths.
    """
    changed = []
    seen: set[Path] = set()
    for c in plan.changes:
        if c.path in seen:
            changed.append(f"{c.path} appears twice in the plan")
            continue
        seen.add(c.path)
        problem = _target_problem(c.path)
        if problem is not None:
            changed.append(problem)
            continue
        try:
            now = _current_bytes(c.path)
        except OSError as exc:
            changed.append(f"{c.path} cannot be read ({_reason(exc)})")
            continue
        if c.before is None:
            if now is not None:
                changed.append(f"{c.path} now exists (it did not when the preview was made)")
        elif now is None:
            changed.append(f"{c.path} was removed since the preview")
        elif sha256_hex(now) != sha256_hex(c.before):
            changed.append(f"{c.path} changed since the preview")
    return changed


_TEMP_MARK = ".inspector.tmp."


def _temp_prefix(target: Path) -> str:
    """``.<name>.inspector.tmp.``, with a long name shortened so the temp name fits in 255 bytes."""
    name = target.name
    if len(name.encode("utf-8", "surrogateescape")) > 180:
        digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        name = name.encode("utf-8", "surrogateescape")[:120].decode("utf-8", "ignore") + "~" + digest
    return f".{name}{_TEMP_MARK}"


def _temp_name(target: Path) -> Path:
    # hermes sweeps `*.tmp.*` files older than an hour and never lists names that do not
    # end in `.json`, so a crash here never leaves something hermes would load as a session.
    return target.with_name(f"{_temp_prefix(target)}{os.getpid()}.{threading.get_ident()}")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError, ValueError):
        return True  # someone else's process, or cannot tell: leave its file alone
    return True


def sweep_stale_temps(targets: list[Path]) -> int:
    """Remove the inspector's own temp files for ``targets`` left by a process that died.

    Only names ``.<target name>.inspector.tmp.<pid>.<tid>`` of a pid that no longer runs
    are removed; returns how many.
    """
    removed = 0
    by_parent: dict[Path, set[str]] = {}
    for t in targets:
        by_parent.setdefault(t.parent, set()).add(_temp_prefix(t))
    for parent, prefixes in by_parent.items():
        try:
            entries = list(os.scandir(parent))
        except OSError:
            continue
        for entry in entries:
            prefix = next((p for p in prefixes if entry.name.startswith(p)), None)
            if prefix is None:
                continue
            pid = entry.name[len(prefix):].split(".", 1)[0]
            if not pid.isdigit() or int(pid) == os.getpid() or _pid_alive(int(pid)):
                continue
            with contextlib.suppress(OSError):
                if entry.is_file(follow_symlinks=False):
                    os.unlink(entry.path)
                    removed += 1
    return removed


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def current_umask() -> int:
    """The process umask, read without changing it (other threads may be creating files)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _attributes(change: FileChange) -> tuple[int, int | None, int | None]:
    """(mode, uid, gid) the written file gets: those of the file it replaces, else hermes' own.

    A new file gets ``new_mode`` when the plan sets one (undo re-creating a file), else what
    hermes' writers produce: 0666 minus the umask. Run as root, a new file belongs to the
    owner of its folder, so the user's hermes can still read and rewrite it.
    """
    try:
        st = os.lstat(change.path)
        return stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid
    except OSError:
        pass
    mode = change.new_mode if change.new_mode is not None else 0o666 & ~current_umask()
    if os.geteuid() == 0:
        try:
            pst = os.stat(change.path.parent)
            return mode, pst.st_uid, pst.st_gid
        except OSError:
            pass
    return mode, None, None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    written = 0
    # os.write may write less than asked; loop until everything is down.
    while written < len(data):
        written += os.write(fd, view[written:])


def _stage(target: Path, data: bytes, attributes: tuple[int, int | None, int | None]) -> Path:
    """Write ``data`` to a fsynced temp file beside ``target`` with the given (mode, uid, gid)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    mode, uid, gid = attributes
    tmp = _temp_name(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            _write_all(fd, data)
            if uid is not None and (uid, gid) != (os.geteuid(), os.getegid()):
                with contextlib.suppress(OSError):  # only root (or a group member) may; best effort
                    os.fchown(fd, uid, gid)
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def _commit(change: FileChange, tmp: Path | None) -> None:
    """Put one staged change in place: replace, link (create-only, never clobbers) or unlink."""
    if tmp is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(change.path)
    elif change.before is None:
        os.link(tmp, change.path)  # fails with FileExistsError instead of clobbering
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    else:
        os.replace(tmp, change.path)


def _discard(staged: list[tuple[FileChange, Path | None]]) -> None:
    for _, tmp in staged:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def atomic_write(target: Path, data: bytes, *, mode: int, create_only: bool) -> None:
    """temp file beside the target, fsync, then atomic replace (or link, for create-only)."""
    tmp = _stage(target, data, (mode, None, None))
    try:
        _commit(FileChange(path=target, before=None if create_only else b"", after=data), tmp)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    _fsync_dir(target.parent)


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
            os.fchmod(fd, 0o600)  # whatever made it before, the log holds private chats' names
            _write_all(fd, line)
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
        # A write that failed before changing any file is logged "aborted" and not listed.
        records: dict[str, WriteRecord] = {}
        aborted: set[str] = set()
        for line in text.splitlines():
            try:
                obj = json.loads(line)
                state = obj.get("state", "done")
                rec = WriteRecord(obj["write_id"], obj["time"], obj["action"], obj.get("session_id"),
                                  obj["files"], state == "done")
                if not isinstance(rec.write_id, str):
                    continue
            except (ValueError, KeyError, TypeError, AttributeError):
                continue  # a torn last line after a crash: skip it, never fail the history
            if state == "aborted":
                aborted.add(rec.write_id)
                records.pop(rec.write_id, None)
            elif rec.write_id not in aborted and (rec.complete or rec.write_id not in records):
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
    os.chmod(folder, 0o700)
    dest = folder / f"{index:02d}-{change.path.name}"
    tmp = dest.with_name(dest.name + ".part")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        _write_all(fd, change.before)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, dest)
    return str(dest)


def _remove_backups(folder: Path) -> None:
    with contextlib.suppress(OSError):
        for p in folder.iterdir():
            with contextlib.suppress(OSError):
                p.unlink()
        folder.rmdir()


def _file_entry(change: FileChange, backup: str | None) -> dict:
    try:
        mode = stat.S_IMODE(os.lstat(change.path).st_mode) if change.before is not None else None
    except OSError:
        mode = None
    return {
        "path": str(change.path),
        "kind": change.kind,
        "sha256_before": sha256_hex(change.before) if change.before is not None else None,
        "sha256_after": sha256_hex(change.after) if change.after is not None else None,
        "backup": backup,
        "mode": mode,
    }


def _refuse(problems: list[str], why: str) -> ApplyError:
    return ApplyError(f"{why}; nothing was written:\n  " + "\n  ".join(problems))


def apply_plan(plan: Plan, log: WriteLog, *, clock_now: float | None = None) -> WriteRecord:
    """Write exactly the previewed bytes, or refuse and write nothing.

    Order, so that a crash at any point leaves every target either old or new:

    1. check every target (same bytes as the preview, a regular file, not a link);
    2. back up every previous version (0600, in the 0700 state folder, outside the home);
    3. stage every new version as a fsynced temp file beside its target;
    4. check every target again: hermes may have saved meanwhile (the window is now the
       time of a few renames, not of the writes and fsyncs);
    5. log the write as "started", then rename/link/unlink each target, fsync the folders,
       and log it "done".

    Any failure before step 5 removes the temp files and backups and raises ApplyError saying
    nothing was written. A failure during step 5 says which files were written and how to
    undo them. ApplyError messages name the file and the reason.
    """
    if plan.refusal:
        raise ApplyError(f"refused: {plan.refusal}")
    if not plan.changes:
        raise ApplyError("nothing to write")
    stale = check_fingerprints(plan)
    if stale:
        raise _refuse(stale, "the files changed since the preview (or cannot be written safely)")
    write_id = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + uuid.uuid4().hex[:8]
    folder = log.backup_dir(write_id)
    try:
        log._ensure()
        files = [_file_entry(change, _save_backup(folder, i, change)) for i, change in enumerate(plan.changes)]
    except OSError as exc:
        _remove_backups(folder)
        raise WriteFailed(f"could not keep a backup in {folder} ({_reason(exc)}); nothing was written, "
                         "every file is as it was") from exc
    staged: list[tuple[FileChange, Path | None]] = []
    record = WriteRecord(write_id, time.time() if clock_now is None else clock_now, plan.action,
                         plan.session_id, files, complete=False)
    current = plan.changes[0].path
    logged = False
    try:
        sweep_stale_temps([c.path for c in plan.changes])
        for change in plan.changes:
            current = change.path
            tmp = None if change.after is None else _stage(change.path, change.after, _attributes(change))
            staged.append((change, tmp))
        stale = check_fingerprints(plan)
        if stale:
            raise _refuse(stale, "the files changed while the write was being prepared")
        current = log.log_path
        logged = True
        log.append(record, state="started")
    except (OSError, ApplyError) as exc:
        _discard(staged)
        _remove_backups(folder)
        if logged:  # the "started" line may be on disk even though appending it failed
            with contextlib.suppress(OSError):
                log.append(record, state="aborted")
        if isinstance(exc, ApplyError):
            raise
        raise WriteFailed(f"could not write {current} ({_reason(exc)}); nothing was written, every file is "
                         "as it was") from exc
    done: list[Path] = []
    for i, (change, tmp) in enumerate(staged):
        try:
            _commit(change, tmp)
        except OSError as exc:
            _discard(staged[i:])
            if not done:
                _remove_backups(folder)
                with contextlib.suppress(OSError):
                    log.append(record, state="aborted")
                raise WriteFailed(f"could not write {change.path} ({_reason(exc)}); no file was changed, "
                                  "nothing was written") from exc
            raise WriteFailed(f"could not write {change.path} ({_reason(exc)}); {len(done)} of {len(staged)} "
                              f"files were already written ({', '.join(map(str, done))}); undo them with "
                              f"`hermes-inspector undo {write_id}`. Every previous version is kept in "
                              f"{folder}") from exc
        done.append(change.path)
    for parent in dict.fromkeys(c.path.parent for c in plan.changes):
        _fsync_dir(parent)
    record = WriteRecord(record.write_id, record.time, record.action, record.session_id, files, complete=True)
    try:
        log.append(record, state="done")
    except OSError as exc:
        raise WriteFailed(f"every file was written, but the write log {log.log_path} could not be completed "
                         f"({_reason(exc)}); the previous versions are in {folder}") from exc
    return record


def undo_write(write_id: str, log: WriteLog) -> WriteRecord:
    """Restore every file of a logged write, if each still holds what was written.

    A file that already holds its previous bytes (an interrupted write never reached it, or
    an interrupted undo already put it back) is left alone, so undo can always be re-run.
    """
    rec = log.find(write_id)
    if rec is None:
        raise ApplyError(f"no write with id {write_id} in {log.log_path}")
    problems = []
    to_restore = []
    for f in rec.files:
        path = Path(f["path"])
        problem = _target_problem(path)
        if problem is not None:
            problems.append(problem)
            continue
        try:
            now = _current_bytes(path)
        except OSError as exc:
            problems.append(f"{path} cannot be read ({_reason(exc)})")
            continue
        now_sha = sha256_hex(now) if now is not None else None
        if now_sha == f["sha256_before"]:
            continue  # already holds its previous bytes
        if now_sha != f["sha256_after"]:
            problems.append(f"{path} changed after the write; undo would lose that change")
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
        try:
            previous = Path(f["backup"]).read_bytes() if f["backup"] else None
        except OSError as exc:
            raise ApplyError(f"backup {f['backup']} cannot be read ({_reason(exc)}); nothing was written") from exc
        if previous is not None and sha256_hex(previous) != f["sha256_before"]:
            raise ApplyError(f"backup {f['backup']} does not hold the previous bytes of {f['path']}; "
                             "nothing was written")
        fp = Fingerprint.of_bytes(current) if current is not None else None
        mode = f.get("mode") if isinstance(f.get("mode"), int) else None
        changes.append(FileChange(path=Path(f["path"]), before=current, after=previous, fingerprint=fp,
                                  new_mode=mode))
    undo_plan = Plan(action=f"undo:{rec.action}", session_id=rec.session_id, changes=changes)
    return apply_plan(undo_plan, log)
