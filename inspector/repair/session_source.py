"""Loading a session sidecar for a run-journal repair, or the reason to refuse it.

Shared by the interrupted-stream repair (spec run-journal-and-promotion §3) and the lazy
journal retry (§4): ``<sid>.json`` is read through the snapshot and parsed the way hermes
loads it; unsafe ids, unreadable sidecars and sidecars naming another session are refused.

The parse is :func:`~inspector.repair.save.parse_sidecar_exact` (orjson where it gives exactly the
stdlib's value or error, :func:`~inspector.store.jsonfmt.loads_bytes_fast`), then
:func:`~inspector.store.sidecar.load_session`: what :func:`~inspector.store.sidecar.read_sidecar`
does with the stdlib's parse (tests/repair/test_session_source_rules.py holds the two equal).
"""

from __future__ import annotations

import copy
import sys
from dataclasses import dataclass
from pathlib import Path

from inspector.repair.context import RepairContext
from inspector.repair.save import parse_sidecar_exact
from inspector.store.files import RawFile
from inspector.store.jsonfmt import nesting_exceeds
from inspector.store.sidecar import LoadedSession, SidecarError, is_safe_session_id, load_session

# A session nested at most this deep is deep-copied without fail (two frames of ``copy.deepcopy``
# per level, far below the recursion limit); see ``shared`` in :func:`load_session_for_repair`.
SHARED_MAX_DEPTH = min(64, sys.getrecursionlimit() // 8)


@dataclass(frozen=True)
class SessionSource:
    """A sidecar loaded for a repair, or the reason the repair refuses to touch it."""

    path: Path
    raw: RawFile | None
    loaded: LoadedSession | None
    refusal: str | None
    working: dict | None = None  # loaded.data for the planner to change: a deep copy, or itself


def read_sidecar_exact(raw: RawFile, *, now: float, cwd: Path) -> LoadedSession:
    """:func:`~inspector.store.sidecar.read_sidecar` with the parse of :func:`parse_sidecar_exact`:
    the same session, or the same error with the same words."""
    data = parse_sidecar_exact(raw.data)
    try:
        return load_session(data, now=now, cwd=cwd)
    except (ValueError, TypeError, OSError, OverflowError, RuntimeError) as exc:
        # e.g. a NUL in workspace: hermes' Path.resolve() raises and the sidecar is unloadable
        raise SidecarError(f"hermes cannot load it: {exc}") from exc


def load_session_for_repair(ctx: RepairContext, session_id: str, *, shared: bool = False) -> SessionSource:
    """Read ``<sid>.json`` through the snapshot; refuse unsafe ids and unusable sidecars.

    ``working`` is a deep copy of ``loaded.data``, so the planner's changes leave ``loaded`` as
    the file holds it. ``shared=True`` is for a planner that reads ``loaded.data`` only before it
    changes ``working``: then ``working`` *is* ``loaded.data`` (the parse's own objects, shared
    with nothing else) when the copy could not fail, i.e. the session nests at most
    :data:`SHARED_MAX_DEPTH` levels; a deeper one is still copied, so one that is too deep to
    copy is refused with the same words.
    """
    if not is_safe_session_id(session_id):
        return SessionSource(
            Path(),
            None,
            None,
            f"unsafe session id {session_id!r}: only letters, digits, '_' and '-' are allowed",
        )
    path = ctx.session_dir / f"{session_id}.json"
    try:
        raw = ctx.snapshot.read(path)
    except OSError as exc:
        return SessionSource(path, None, None, f"cannot read {path}: {exc}")
    if raw is None:
        return SessionSource(path, None, None, f"no sidecar {path.name} in {ctx.session_dir}")
    try:
        loaded = read_sidecar_exact(raw, now=ctx.clock.now, cwd=ctx.cwd)
    except (SidecarError, RecursionError, TypeError, ValueError) as exc:
        return SessionSource(path, raw, None, f"{path.name} cannot be loaded as hermes loads it: {exc}")
    if loaded.odd_lists:
        # hermes keeps such a value as it is (``value or []``) and its repair works on it; the
        # inspector reads it as [] and would write a different file
        return SessionSource(
            path,
            raw,
            None,
            f"{path.name} holds {' and '.join(loaded.odd_lists)} that "
            f"{'is' if len(loaded.odd_lists) == 1 else 'are'} not a list: not repaired",
        )
    if loaded.collapsed_partials:
        # hermes' Session.load drops them and immediately re-saves the file (leaving a .bak) before
        # the repair runs: a write during the load that the inspector does not reproduce
        return SessionSource(
            path,
            raw,
            None,
            f"{path.name} holds adjacent duplicate partial replies; hermes rewrites the file "
            "when it loads it (keeping the first of each, and a .bak), before any repair. "
            "Open the session in hermes-webui once, then repair it",
        )
    inner = loaded.data.get("session_id")
    if not inner:
        return SessionSource(
            path, raw, None, f"{path.name} has no session_id (hermes would invent a random one)"
        )
    if inner != session_id:
        return SessionSource(path, raw, None, f"{path.name} names session {inner!r}, not {session_id!r}")
    if shared and not nesting_exceeds(loaded.data, SHARED_MAX_DEPTH):
        return SessionSource(path, raw, loaded, None, loaded.data)
    try:
        working = copy.deepcopy(loaded.data)
    except RecursionError:
        # json parses deeper than Python can copy or walk; hermes' own repair would crash here.
        return SessionSource(path, raw, None, f"{path.name} nests its messages too deeply to repair safely")
    return SessionSource(path, raw, loaded, None, working)
