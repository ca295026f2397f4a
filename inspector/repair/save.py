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

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from inspector.plan import FileChange
from inspector.store.files import FileSnapshot
from inspector.store.index import (
    PathResolver,
    compact,
    index_after_save,
    index_path,
    load_for_index,
    on_disk_session_ids,
    parse_index_exact,
    rebuild_rows,
)
from inspector.store.jsonfmt import (
    NotARegularFile,
    dumps_pretty,
    dumps_pretty_fast,
    loads_bytes,
    loads_bytes_fast,
    safe_parse_depth,
)
from inspector.store.sidecar import (
    LoadedSession,
    SidecarError,
    count_messages_in_bytes,
    is_safe_session_id,
    session_payload,
)


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


def sidecar_names(session_dir: Path) -> list[str]:
    """Names of :func:`~inspector.store.sidecar.sidecar_paths`, from one listing, as strings.

    ``session_dir.glob("*.json")`` (case-sensitive, dot-names included, folders included) minus
    the ``_``-prefixed names, sorted: for children of one folder ``Path`` order is name order.
    """
    try:
        names = os.listdir(session_dir)
    except (OSError, ValueError):
        return []
    return sorted(n for n in names if n.endswith(".json") and not n.startswith("_"))


def read_uncached(snapshot: FileSnapshot, path: Path) -> bytes | None:
    """A file's bytes (None when missing; other OSErrors propagate), not kept in ``snapshot``.

    For the files an index rebuild only reads (every other sidecar, 270 MB at 10,000 sessions):
    they are never written by the plan, so neither their bytes nor their hashes need keeping. A
    file the plan already read through the snapshot is answered from it, so one plan never sees
    two versions of a file.
    """
    known, data = snapshot.peek(path)
    if known:
        return data
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    try:  # read_regular() without its buffered file object: fstat, then read to the end
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotARegularFile(errno.EINVAL, "not a regular file", str(path))
        chunks = []
        want = st.st_size + 1
        while True:
            chunk = os.read(fd, max(want, 65536))
            if not chunk:
                break
            chunks.append(chunk)
            want -= len(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(fd)


def parse_sidecar_exact(data: bytes, depth_limit: int | None = None) -> dict:
    """:func:`~inspector.store.sidecar.parse_sidecar_bytes`, parsed by orjson where that is exact."""
    try:
        obj = loads_bytes_fast(data, depth_limit)
    except UnicodeDecodeError as exc:
        raise SidecarError(f"not valid UTF-8: {exc}") from exc
    except (ValueError, RecursionError) as exc:
        raise SidecarError(f"not valid JSON: {exc}") from exc
    if not isinstance(obj, dict):
        raise SidecarError(f"top-level JSON is {type(obj).__name__}, not an object")
    return obj


@dataclass
class RebuiltIndex:
    """A full index rebuild: the bytes to write and the rows' ``session_id`` (as ``str``), in order."""

    data: bytes
    row_ids: list[str] = field(default_factory=list)


def rebuild_index_from_sidecars(
    ctx: SaveContext,
    overrides: dict[Path, bytes] | None = None,
    skipped: list[str] | None = None,
    observe: Callable[[Path, dict], None] | None = None,
) -> RebuiltIndex:
    """A full index rebuild from every loadable sidecar (``overrides`` = bytes about to be written).

    hermes leaves sidecars it cannot load out of the index without a word; ``skipped``, when
    given, collects one line per such file so a preview can say which rows disappear and why.
    ``observe(path, parsed)``, when given, sees every sidecar that parses as an object (before
    hermes' load), so a caller needs no second pass over the folder.

    Each sidecar is read once, parsed, turned into its ``compact()`` row and dropped: only the
    rows are kept. The bytes are those of ``rebuild_index`` over ``read_sidecar`` of every file.
    """
    skipped = [] if skipped is None else skipped
    overrides = overrides or {}
    sdir = ctx.session_dir
    names = set(sidecar_names(sdir))
    if all(p.parent == sdir for p in overrides):
        by_name = {p.name: d for p, d in overrides.items()}
        paths: list[Path] = [sdir / n for n in sorted(names | set(by_name))]
        data_for: Callable[[Path], bytes | None] = lambda p: by_name.get(p.name)  # noqa: E731
    else:  # pragma: no cover - every caller overrides files of the sessions folder
        paths = sorted({sdir / n for n in names} | set(overrides))
        data_for = overrides.get
    resolve = PathResolver(ctx.cwd)
    depth_limit = safe_parse_depth()
    rows: list[dict] = []
    for path in paths:
        data = data_for(path)
        if data is None:
            try:
                data = read_uncached(ctx.snapshot, path)
            except OSError as exc:  # a folder named *.json or an unreadable file: hermes skips it too
                skipped.append(f"{path.name} cannot be read ({exc.strerror or exc}): left out of the index, "
                               "as hermes does")
                continue
            if data is None:
                continue
        try:
            obj = parse_sidecar_exact(data, depth_limit)
            if observe is not None:
                observe(path, obj)
            try:
                sess = load_for_index(obj, now=ctx.now, resolve=resolve)
            except (ValueError, TypeError, OSError) as exc:
                raise SidecarError(f"hermes cannot load it: {exc}") from exc
        except (SidecarError, RecursionError) as exc:
            skipped.append(f"{path.name} cannot be loaded ({exc}): left out of the index, as hermes does")
            continue
        try:
            row = compact(sess)
        except (ValueError, TypeError, OverflowError) as exc:
            raise IndexRebuildError(f"{path.name}: hermes' index row for it cannot be computed ({exc})") from exc
        rows.append(row)
    final = rebuild_rows(rows)
    try:
        out = dumps_pretty_fast(final)
    except UnicodeEncodeError as exc:
        raise IndexRebuildError(f"a sidecar holds text that cannot be written as UTF-8 ({exc.reason}: "
                                f"{exc.object[max(0, exc.start - 20):exc.end + 20]!r})") from exc
    return RebuiltIndex(out, [str(r["session_id"]) for r in final])


def rebuilt_index_bytes(ctx: SaveContext, overrides: dict[Path, bytes] | None = None,
                        skipped: list[str] | None = None) -> bytes:
    """The bytes of :func:`rebuild_index_from_sidecars`."""
    return rebuild_index_from_sidecars(ctx, overrides, skipped).data


class ListedNames:
    """One listing of the sessions folder: the names of its entries that are not symbolic links.

    Such a name existed at listing time, so a stat of it would say so; any other name (not
    listed, a link, a name with ``/``) must still be asked with a stat.
    """

    def __init__(self, session_dir: Path) -> None:
        plain: set[str] = set()
        try:
            with os.scandir(session_dir) as it:
                for entry in it:
                    try:
                        if not entry.is_symlink():
                            plain.add(entry.name)
                    except OSError:
                        continue
        except (OSError, ValueError):
            plain = set()
        if plain:  # a folder that can be listed but not searched (r without x): every stat fails
            try:
                os.stat(os.path.join(session_dir, next(iter(plain))))
            except (OSError, ValueError):
                plain = set()
        self.plain = plain


# hermes clears the orphan tombstone first, then the deleted-session one (one try around both).
TOMBSTONE_CAPS = {"_pruned_webui_orphans.json": 500, "_deleted_webui_sessions.json": 1000}
TOMBSTONE_VERSION = 1


class _TombstoneClearFails(Exception):
    """hermes' clear raises out of its loader: ``Session.save`` logs it and clears no further file."""


def _tombstone_ids(data: bytes) -> frozenset[str]:
    """hermes' ``_load_webui_*_tombstone``: the ids; none at all for a file it cannot use."""
    try:
        raw = loads_bytes(data)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return frozenset()
    if not isinstance(raw, dict):
        return frozenset()
    try:
        if int(raw.get("version", 0)) != TOMBSTONE_VERSION:
            return frozenset()
    except (TypeError, ValueError):
        return frozenset()
    except OverflowError as exc:  # int(Infinity): not caught by the loader
        raise _TombstoneClearFails from exc
    ids = raw.get("ids", [])
    if not isinstance(ids, list):
        return frozenset()
    try:
        return frozenset(str(i).strip() for i in ids if str(i or "").strip())
    except (RecursionError, ValueError) as exc:  # str() of a 1,000-deep list, a 5,000-digit int
        raise _TombstoneClearFails from exc


def _tombstone_after(data: bytes, sid: str, cap: int) -> bytes | None:
    """The tombstone file's bytes after hermes' ``_clear_webui_*_tombstone(sid)`` (None: deleted).

    The rest of the ids, stripped, deduplicated, sorted, the last ``cap`` kept, written as
    ``{"version": 1, "ids": [...]}``; the file is deleted when none is left. A file hermes cannot
    use (not JSON, not an object, another version, ``ids`` not a list) or without ``sid`` keeps its
    bytes, as does one whose rewrite cannot be encoded (hermes' write fails and is swallowed).
    """
    current = set(_tombstone_ids(data))
    if sid not in current:
        return data
    current.discard(sid)
    if not current:
        return None
    ids = sorted(current)[-cap:]  # hermes strips and drops blanks again: the loader already did
    try:
        return dumps_pretty({"version": TOMBSTONE_VERSION, "ids": ids})
    except UnicodeEncodeError:
        return data


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
    new_bytes = dumps_pretty_fast(session_payload(data))  # = dump_session(data)
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
        rows = parse_index_exact(ctx.snapshot.data(ipath))
        # hermes takes the ids on disk from one listing (no read: no need to hash every sidecar)
        after = None if rows is None else index_after_save(
            rows, session, on_disk_session_ids(sidecar_names(ctx.session_dir)))
        if after is None:  # no usable index, or hermes' fast path raises: a full rebuild
            after = rebuilt_index_bytes(ctx, {path: new_bytes})
        idx = _change(ctx, ipath, after)
        if idx:
            changes.append(idx)
    if data["messages"]:
        for name, cap in TOMBSTONE_CAPS.items():
            tpath = ctx.session_dir / name
            data_before = ctx.snapshot.data(tpath)
            if data_before is None:
                continue
            try:
                tc = _change(ctx, tpath, _tombstone_after(data_before, sid, cap))
            except _TombstoneClearFails:
                break
            if tc:
                changes.append(tc)
    return changes
