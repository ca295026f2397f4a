"""``Session.save`` expressed as file changes (spec session-storage §4.1, §3.2).

Given a modified in-memory session, return what hermes' save would write:

1. the sidecar (``updated_at = now`` when touching), skipped when an empty transcript
   would overwrite a non-empty one while a turn is live;
2. ``<sid>.json.bak`` holding the previous bytes when the save shrinks ``messages``;
3. ``_index.json`` through the fast path (or a full rebuild when the index is unusable);
4. when the session has messages, its id removed from both tombstone files (a file that
   becomes empty is deleted).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from inspector.plan import FileChange
from inspector.store.files import FileSnapshot
from inspector.store.index import compact, index_after_save, index_path, parse_index, rebuild_index
from inspector.store.jsonfmt import Fingerprint, RawFile, dumps_pretty, loads_bytes
from inspector.store.sidecar import (
    LoadedSession,
    SidecarError,
    count_messages_in_bytes,
    dump_session,
    is_safe_session_id,
    read_sidecar,
    sidecar_paths,
)

TOMBSTONE_FILES = ("_deleted_webui_sessions.json", "_pruned_webui_orphans.json")


class IndexRebuildError(ValueError):
    """A sidecar hermes' own index rebuild would crash on (the message names it)."""


@dataclass(frozen=True)
class SaveContext:
    """Where and when a save happens."""

    session_dir: Path
    snapshot: FileSnapshot
    now: float
    cwd: Path


def _change(ctx: SaveContext, path: Path, after: bytes | None) -> FileChange | None:
    raw = ctx.snapshot.read(path)
    before = raw.data if raw is not None else None
    if before == after:
        return None
    return FileChange(path=path, before=before, after=after,
                      fingerprint=raw.fingerprint if raw is not None else None)


def rebuilt_index_bytes(ctx: SaveContext, overrides: dict[Path, bytes] | None = None,
                        skipped: list[str] | None = None) -> bytes:
    """A full index rebuild from every loadable sidecar (``overrides`` = bytes about to be written).

    hermes leaves sidecars it cannot load out of the index without a word; ``skipped``, when
    given, collects one line per such file so a preview can say which rows disappear and why.
    """
    skipped = [] if skipped is None else skipped
    overrides = overrides or {}
    paths = set(sidecar_paths(ctx.session_dir)) | set(overrides)
    sessions: list[LoadedSession] = []
    for path in sorted(paths):
        data = overrides.get(path)
        if data is None:
            try:
                raw = ctx.snapshot.read(path)
            except OSError as exc:  # a folder named *.json or an unreadable file: hermes skips it too
                skipped.append(f"{path.name} cannot be read ({exc.strerror or exc}): left out of the index, "
                               "as hermes does")
                continue
            if raw is None:
                continue
            data = raw.data
        try:
            sess = read_sidecar(RawFile(path, data, Fingerprint.of_bytes(data)), now=ctx.now, cwd=ctx.cwd)
        except (SidecarError, RecursionError) as exc:
            skipped.append(f"{path.name} cannot be loaded ({exc}): left out of the index, as hermes does")
            continue
        try:
            compact(sess)
        except (ValueError, TypeError, OverflowError) as exc:
            raise IndexRebuildError(f"{path.name}: hermes' index row for it cannot be computed ({exc})") from exc
        sessions.append(sess)
    try:
        return rebuild_index(sessions)
    except UnicodeEncodeError as exc:
        raise IndexRebuildError(f"a sidecar holds text that cannot be written as UTF-8 ({exc.reason}: "
                                f"{exc.object[max(0, exc.start - 20):exc.end + 20]!r})") from exc


def _exists(path: Path) -> bool:
    try:
        return os.path.exists(path)
    except (OSError, ValueError):
        return False


def _tombstone_after(data: bytes | None, sid: str) -> tuple[bool, bytes | None]:
    """(changed, new bytes or None to delete) after removing ``sid`` from a tombstone file."""
    if data is None:
        return False, None
    try:
        obj = loads_bytes(data)
    except (UnicodeDecodeError, ValueError):
        return False, data
    if not isinstance(obj, dict) or not isinstance(obj.get("ids"), list):
        return False, data
    ids = [i for i in obj["ids"] if isinstance(i, str) and i.strip()]
    if sid not in {i.strip() for i in ids}:
        return False, data
    remaining = sorted({i.strip() for i in ids if i.strip() != sid})
    if not remaining:
        return True, None
    return True, dumps_pretty({"version": 1, "ids": remaining})


def save_session(
    ctx: SaveContext,
    session: LoadedSession,
    *,
    touch_updated_at: bool,
    skip_index: bool = False,
) -> list[FileChange]:
    """The file changes of ``session.save(touch_updated_at=...)``; [] when hermes would skip."""
    sid = session.session_id
    if not is_safe_session_id(sid):
        raise ValueError(f"unsafe session id {sid!r}: hermes refuses to save it")
    data = session.data
    if touch_updated_at:
        data["updated_at"] = ctx.now
    path = ctx.session_dir / f"{sid}.json"
    existing = ctx.snapshot.data(path)
    new_bytes = dump_session(data)
    changes: list[FileChange] = []
    existing_count = count_messages_in_bytes(existing) if existing is not None else 0
    incoming = len(data["messages"])
    if existing is not None and existing_count > 0 and incoming == 0 and (
        data.get("active_stream_id") or data.get("pending_user_message")
    ):
        return []
    if existing is not None and existing_count > incoming:
        bak = _change(ctx, path.with_name(f"{sid}.json.bak"), existing)
        if bak:
            changes.append(bak)
    main = _change(ctx, path, new_bytes)
    if main:
        changes.append(main)
    if not skip_index:
        ipath = index_path(ctx.session_dir)
        rows = parse_index(ctx.snapshot.data(ipath))
        if rows is None:
            after = rebuilt_index_bytes(ctx, {path: new_bytes})
        else:
            after = index_after_save(
                # hermes checks existence with a stat, not a read: so do we (no need to hash every sidecar)
                rows, session, lambda rid: rid == sid or _exists(ctx.session_dir / f"{rid}.json")
            )
        idx = _change(ctx, ipath, after)
        if idx:
            changes.append(idx)
    if data["messages"]:
        for name in TOMBSTONE_FILES:
            tpath = ctx.session_dir / name
            changed, after = _tombstone_after(ctx.snapshot.data(tpath), sid)
            if changed:
                tc = _change(ctx, tpath, after)
                if tc:
                    changes.append(tc)
    return changes
