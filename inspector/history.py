"""The write log read for people (issue 16's History): which home a write belongs to, whether it
was undone (and by which write), and the diff it made, rebuilt from its backups.

Qt-free: the window's History dialog and the tests use it. Reads only; nothing here writes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from inspector.plan import FileChange, WriteRecord, file_diff
from inspector.store.files import read_regular, sha256_hex

MAX_DIFF_FILE_BYTES = 64 << 20


def undone_by(records: list[WriteRecord]) -> dict[str, str]:
    """``{write id: id of the later write that undid it}``. An undo is the write logged as
    ``undo:<action>`` for the same session that put every file back: its bytes before are the
    write's bytes after, and its bytes after the write's bytes before."""
    out: dict[str, str] = {}
    ordered = sorted(records, key=lambda r: r.time)
    for i, rec in enumerate(ordered):
        if rec.action.startswith("undo:") or not rec.files:
            continue
        wanted = {str(f.get("path")): (f.get("sha256_after"), f.get("sha256_before")) for f in rec.files}
        for later in ordered[i + 1 :]:
            if later.action != f"undo:{rec.action}" or later.session_id != rec.session_id:
                continue
            got = {str(f.get("path")): (f.get("sha256_before"), f.get("sha256_after")) for f in later.files}
            if all(got.get(path) == shas for path, shas in wanted.items() if shas[0] != shas[1]) and set(
                got
            ) <= set(wanted):
                out[rec.write_id] = later.write_id
                break
    return out


def home_of(rec: WriteRecord) -> str:
    """The home a write belongs to, from its files' paths: the folder above ``webui/sessions``
    (or above ``sessions``), else the files' common folder; "" when the record names no file."""
    paths = [str(f.get("path")) for f in rec.files if f.get("path")]
    if not paths:
        return ""
    try:
        common = Path(os.path.commonpath([os.path.dirname(p) for p in paths]))
    except ValueError:  # paths on different drives
        return os.path.dirname(paths[0])
    parts = common.parts
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] == "sessions":
            base = Path(*parts[:i])
            return str(base.parent if base.name == "webui" else base)
    return str(common)


def _read(path: str | None, sha: str | None, max_bytes: int = MAX_DIFF_FILE_BYTES) -> bytes | None:
    """The bytes at ``path`` when they are the ones logged as ``sha``; None otherwise."""
    if not path or not sha:
        return None
    try:
        data, _ = read_regular(Path(path), max_bytes)
    except OSError:
        return None
    return data if sha256_hex(data) == sha else None


def write_diff(
    rec: WriteRecord,
    records: list[WriteRecord] | None = None,
    max_bytes: int = MAX_DIFF_FILE_BYTES,
    check: Callable[[], None] = lambda: None,
) -> str:
    """The unified diff the write made, file by file: its bytes before come from its backup,
    its bytes after from the file itself when it still holds them, else from the backup an
    undo of it took. A file whose bytes cannot be found again is named with the reason.
    ``check()`` is called before each file (it raises to stop: the window's child jobs)."""
    later = [r for r in (records or []) if r.time >= rec.time and r.write_id != rec.write_id]
    parts: list[str] = []
    for f in rec.files:
        check()
        path = str(f.get("path"))
        before_sha, after_sha = f.get("sha256_before"), f.get("sha256_after")
        parts.append(f"--- {f.get('kind')}: {path}\n")
        before = None if before_sha is None else _read(f.get("backup"), before_sha, max_bytes)
        after = None if after_sha is None else _read(path, after_sha, max_bytes)
        if after is None and after_sha is not None:
            for other in later:
                for g in other.files:
                    if str(g.get("path")) == path and g.get("sha256_before") == after_sha:
                        after = _read(g.get("backup"), after_sha, max_bytes)
                        if after is not None:
                            break
                if after is not None:
                    break
        if before_sha is not None and before is None:
            parts.append(
                "(the bytes before this write are not in its backup any more, or too large "
                "to show here: no diff)\n\n"
            )
            continue
        if after_sha is not None and after is None:
            parts.append(
                "(the file has changed since this write and no backup holds what it wrote, or it is "
                "too large to show here: no diff)\n\n"
            )
            continue
        parts.append(file_diff(FileChange(path=Path(path), before=before, after=after)))
        parts.append("\n")
    return "".join(parts)
