"""The durable delete tombstone, ``_deleted_webui_sessions.json`` (spec session-recovery §3.2).

Its own module because both the backup-restore decision (:mod:`inspector.store.backup`) and
hermes' state.db readers (:mod:`inspector.store.statedb`) ask it, and the first asks the second.
Read through a :class:`FileSnapshot`; nothing here writes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from inspector.store.files import FileSnapshot
from inspector.store.jsonfmt import loads_or_none

TOMBSTONE_NAME = "_deleted_webui_sessions.json"


def parse_tombstone(data: bytes | None) -> frozenset[str] | None:
    """The ids of ``_deleted_webui_sessions.json``, or None when missing or invalid.

    Valid means: UTF-8 JSON object, ``int(version) == 1``, ``ids`` a list. Ids are
    ``str(value).strip()``; values whose text is blank (and falsy values) are ignored.
    """
    raw = loads_or_none(data)
    if not isinstance(raw, dict):
        return None
    try:
        version = int(raw.get("version", 0))
    except (TypeError, ValueError, OverflowError):
        return None
    ids = raw.get("ids")
    if version != 1 or not isinstance(ids, list):
        return None
    return frozenset(str(v).strip() for v in ids if str(v or "").strip())


def load_tombstone_ids(session_dir: Path, snapshot: FileSnapshot | None = None) -> frozenset[str]:
    """The durable tombstone's ids; empty when the file is missing or invalid."""
    snapshot = snapshot if snapshot is not None else FileSnapshot()
    try:
        data = snapshot.data(session_dir / TOMBSTONE_NAME)
    except OSError:  # unreadable (a folder, EACCES): as invalid, hermes' read fails the same way
        data = None
    ids = parse_tombstone(data)
    return ids if ids is not None else frozenset()


def is_durably_tombstoned(session_dir: Path, sid: str, snapshot: FileSnapshot | None = None) -> bool:
    """hermes' ``_durable_tombstone_marks_deleted_webui_session`` (session-recovery §3.2).

    False when ``sid`` is empty or ``<sid>.json`` exists, and on any read/validation failure.
    The ``_index.json`` "looks deleted" heuristic is deliberately not used.
    """
    return durable_tombstone_check(session_dir, snapshot)(sid)


def durable_tombstone_check(session_dir: Path, snapshot: FileSnapshot | None = None) -> Callable[[str], bool]:
    """:func:`is_durably_tombstoned` for many ids: the tombstone is read and parsed at the first id
    that needs it, not once per id (with a snapshot every read gives the bytes it first read)."""
    ids: frozenset[str] | None = None

    def check(sid: str) -> bool:
        nonlocal ids
        if not sid or (session_dir / f"{sid}.json").exists():
            return False
        if ids is None:
            ids = load_tombstone_ids(session_dir, snapshot)
        return sid in ids

    return check
