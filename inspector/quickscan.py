"""A cheap first look at a home's sessions, for the window's first rows. Reads only. No Qt.

:func:`quick_rows` lists the sessions folder once (``os.scandir`` + ``stat``), newest file
first, and reads only the metadata prefix of each sidecar: hermes writes the metadata keys
before ``"messages"``, so the JSON object up to that key holds the title, profile, times and
``message_count``. It does not read ``_index.json`` or ``state.db`` and finds no problems: the
rows it returns have no findings. The full :func:`inspector.load.load_catalogue` replaces
them.
"""

from __future__ import annotations

import heapq
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from inspector import portable
from inspector.catalogue import SessionRow, SidecarSummary
from inspector.store.jsonfmt import fast_loads

PREFIX_BYTES = 16_384  # hermes' metadata is 1-3 KB; a long title or pending prompt fits too
MAX_PREFIX_BYTES = 262_144  # past this, give up on the prefix (the full scan reads the file)
FIRST_BATCH = 200
TRIM_EVERY = 4_096  # with ``newest``: the listing keeps at most this many sidecars more than that
_BULK = frozenset({"messages", "tool_calls", "anchor_activity_scenes", "context_messages"})
_CUTS = (b'\n  "messages":', b'"messages":')


def prefix_meta(head: bytes) -> dict | None:
    """The metadata keys of a sidecar from its first bytes (the JSON object up to the top-level
    ``"messages"`` key), or None when that prefix is not there or is not plain JSON."""
    for cut in _CUTS:
        end = head.find(cut)
        if end < 0:
            continue
        text = head[:end].rstrip()
        if text.endswith(b","):
            text = text[:-1]
        try:
            obj = fast_loads(text + b"}")
        except (UnicodeDecodeError, ValueError, RecursionError):
            continue
        if isinstance(obj, dict):
            return {k: v for k, v in obj.items() if k not in _BULK}
    return None


def read_prefix(path: str, size: int) -> dict | None:
    """:func:`prefix_meta` of the file, reading no more than needed (never raises). Links are
    not followed and the open never blocks (a FIFO named like a sidecar)."""
    try:
        fd = os.open(
            path,
            os.O_RDONLY
            | getattr(os, "O_NONBLOCK", 0)
            | getattr(os, "O_NOFOLLOW", 0)
            | getattr(os, "O_CLOEXEC", 0)
            | portable.O_BINARY,
        )
    except OSError:
        return None
    try:
        want = PREFIX_BYTES
        while True:
            head = portable.pread(fd, min(want, max(size, 1)), 0)
            meta = prefix_meta(head)
            if meta is not None or len(head) < want or want >= MAX_PREFIX_BYTES:
                return meta
            want *= 4
    except OSError:
        return None
    finally:
        os.close(fd)


# scandir of an open folder (Linux, macOS...): its entries' stat is fstatat of the name in that
# folder. At 50,000 sessions the window's first rows listed the folder in 238 ms, 189 ms so
_SCANDIR_FD = os.scandir in os.supports_fd


def _newest_first(sidecar: tuple[str, str, int, float, bool]) -> tuple[float, str]:
    return -sidecar[3], sidecar[0]


def list_sessions_by_mtime(
    session_dir: Path, newest: int | None = None
) -> tuple[list[tuple[str, str, int, float, bool]], set[str]]:
    """``(session id, path, size, mtime, is a regular file)`` of every ``<sid>.json`` sidecar (its own
    lstat: links are not followed), newest first, and the
    ids that have a ``<sid>.json.bak``. Empty when the folder cannot be listed. ``newest``: only
    that many sidecars, the first ones of the whole list (``heapq.nsmallest``, equal to sorting all
    and cutting: the window's first rows of a big home need 200 of 50,000, and one ``list.sort``
    of 50,000 tuples is a single C call that holds the GIL 40-80 ms in a thread of the window,
    where ``nsmallest`` loops in Python and lets it go).

    The window lists in one of its threads, so nothing here may hold the GIL long: each entry
    (with the stat it caches) goes as the next one comes, and with ``newest`` the sidecars are
    cut back to the newest ones every :data:`TRIM_EVERY`. Freeing 50,000 entries at once (a
    ``list(scandir)`` going out of scope) is one C call that held the GIL 13-16 ms on a quiet
    machine and 40-60 ms on a busy one, the window's longest stall (issue 18)."""
    sidecars: list[tuple[str, str, int, float, bool]] = []
    baks: set[str] = set()
    folder = str(session_dir)
    fd = None
    try:
        if _SCANDIR_FD:  # each stat then looks the name up in the open folder, not the whole path
            fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
        with os.scandir(folder if fd is None else fd) as it:
            for entry in it:
                name = entry.name
                if name.startswith("_"):
                    continue
                if name.endswith(".json"):
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    # (the name where the path goes: the paths of those kept are made at the end)
                    sidecars.append((name[:-5], name, st.st_size, st.st_mtime, stat.S_ISREG(st.st_mode)))
                    if newest is not None and len(sidecars) >= newest + TRIM_EVERY:
                        sidecars = heapq.nsmallest(newest, sidecars, key=_newest_first)
                elif name.endswith(".json.bak"):
                    baks.add(name[:-9])
    except OSError:  # the folder cannot be listed, or its listing failed part way
        return [], set()
    finally:
        if fd is not None:
            os.close(fd)
    if newest is not None and newest < len(sidecars):
        sidecars = heapq.nsmallest(newest, sidecars, key=_newest_first)
    else:
        sidecars.sort(key=_newest_first)
    join = os.path.join
    return [
        (sid, join(folder, name), size, mtime, regular) for sid, name, size, mtime, regular in sidecars
    ], baks


def _row(sid: str, path: str, size: int, mtime: float, has_bak: bool, regular: bool = True) -> SessionRow:
    meta = (read_prefix(path, size) if regular else None) or {}
    if not isinstance(meta.get("updated_at"), (int, float)) or isinstance(meta.get("updated_at"), bool):
        meta["updated_at"] = mtime  # hermes stamps the file when it saves: a fair stand-in
    summary = SidecarSummary(sid, str(path), size, mtime, meta=meta)
    row = SessionRow(sid, sidecar=summary, has_bak=has_bak)
    title = meta.get("title")
    row.title = title if isinstance(title, str) else ""
    prof = meta.get("profile")
    row.profile = prof if isinstance(prof, str) and prof else "default"
    return row


def quick_batches(
    session_dir: Path,
    first: int = FIRST_BATCH,
    batch: int = 2_000,
    check: Callable[[], None] = lambda: None,
    newest: int | None = None,
) -> Iterator[list[SessionRow]]:
    """Rows for every sidecar (the newest ``newest`` when given), newest first, in batches: the first
    holds the newest ``first`` sidecars (shown at once), the others ``batch`` each. ``check``
    raises to stop."""
    sidecars, baks = list_sessions_by_mtime(session_dir, newest)
    start, size = 0, first
    while start < len(sidecars):
        check()
        chunk = sidecars[start : start + size]
        yield [_row(sid, path, sz, mt, sid in baks, regular) for sid, path, sz, mt, regular in chunk]
        start += size
        size = batch


def quick_rows(session_dir: Path, limit: int | None = None) -> list[SessionRow]:
    """Rows for the newest ``limit`` sidecars (all when None), newest first."""
    out: list[SessionRow] = []
    for rows in quick_batches(session_dir, first=limit or FIRST_BATCH, newest=limit):
        out += rows
        if limit is not None and len(out) >= limit:
            return out[:limit]
    return out
