"""Action ``rebuild-from-state-db``: an *inspector* step, not a hermes-webui repair.

A sidecar hermes cannot load (bad UTF-8, bad JSON, not an object) whose chat is still in the
agent's ``state.db`` has no hermes repair: hermes' materialization (session-recovery §6.3)
only creates a sidecar that is *missing*, and nothing in hermes moves an unreadable one aside.
This step does exactly those two things, in one plan through the normal write path:

1. the unreadable ``<sid>.json`` is set aside: its bytes are the plan's "before" (fingerprinted,
   kept in the write's backup outside the home, put back by Undo);
2. in its place, the bytes hermes' own materialization writes for that state.db row
   (``materialize.state_db_row_to_sidecar`` in hermes' byte format, the same warnings), and ``_index.json``
   rebuilt from every sidecar as hermes does right after materializing.

So the result is what hermes would produce had the unreadable file been deleted first. When a
readable ``.bak`` exists, restoring it (``restore-backup``, a hermes repair) comes first and this
step does nothing. Unlike a materialized file, the rebuilt one keeps the unreadable file's mode.
"""

from __future__ import annotations

from inspector.plan import FileChange, Plan
from inspector.repair import materialize
from inspector.repair.context import RepairContext
from inspector.repair.registry import INSPECTOR, SESSION, ActionSpec
from inspector.store.backup import BAK_SUFFIX
from inspector.store.jsonfmt import dumps_pretty_fast
from inspector.store.sidecar import SidecarError, is_safe_session_id, parse_sidecar_bytes, read_sidecar
from inspector.store.statedb import read_missing_sidecar_rows

NAME = "rebuild-from-state-db"

SPEC = ActionSpec(
    name=NAME,
    label="Rebuild from state.db (inspector step, not hermes)",
    scope=SESSION,
    origin=INSPECTOR,
    mirrors=None,
    help="an inspector step: an unreadable sidecar set aside, hermes' materialization of its state.db row in its place",
    answers=("corrupt_sidecar",),
    needs=frozenset({"state_db_messages"}),
)
INSPECTOR_STEP = (
    "inspector step, not a hermes-webui repair: the unreadable sidecar is set aside (kept in this "
    "write's backup; Undo puts it back) and hermes' own materialization rebuilds it from state.db"
)


def _unreadable(ctx: RepairContext, raw) -> str | None:
    """Why hermes cannot load the sidecar (None: it can)."""
    try:
        read_sidecar(raw, now=ctx.clock.now, cwd=ctx.cwd)
    except (SidecarError, RecursionError, TypeError, ValueError) as exc:
        return str(exc) or exc.__class__.__name__
    return None


def _readable_bak(ctx: RepairContext, session_id: str) -> int | None:
    """Messages in a ``.bak`` hermes can load (None: no usable backup)."""
    try:
        raw = ctx.snapshot.read(ctx.session_dir / f"{session_id}{BAK_SUFFIX}")
    except OSError:
        return None
    if raw is None:
        return None
    try:
        data = parse_sidecar_bytes(raw.data)
    except (SidecarError, RecursionError):
        return None
    messages = data.get("messages")
    return len(messages) if isinstance(messages, list) else None


def _no_row_reason(ctx: RepairContext, db, session_id: str) -> str:
    for row in read_missing_sidecar_rows(
        ctx.session_dir, db, include_empty=True, sidecar_exists=lambda sid: sid != session_id
    ):
        if str(row.get("id") or "").strip() == session_id:
            if row.get("_state_db_deleted_webui_tombstone"):
                return "the user deleted this chat (durable tombstone): hermes never brings it back"
            return "state.db has no messages for this chat"
    return "state.db has no WebUI chat with this id (hermes materializes only WebUI rows)"


def plan(ctx: RepairContext, session_id: str | None) -> Plan:
    p = Plan(action=NAME, session_id=session_id)
    p.result = {"inspector_step": True, "rebuilt": False}
    if session_id is None or not is_safe_session_id(session_id):
        p.refusal = f"{session_id!r} is not a safe session id (only A-Z a-z 0-9 _ -)"
        return p
    path = ctx.session_dir / f"{session_id}.json"
    try:
        raw = ctx.snapshot.read(path)
    except OSError as exc:
        p.refusal = f"cannot read {path.name}: {exc.strerror or exc}"
        return p
    if raw is None:
        p.summary.append(f"nothing to do: {path.name} is missing (Materialize from state.db creates it)")
        return p
    problem = _unreadable(ctx, raw)
    if problem is None:
        p.summary.append(f"nothing to do: hermes can load {path.name}")
        return p
    bak_messages = _readable_bak(ctx, session_id)
    if bak_messages is not None:
        p.summary.append(
            f"nothing to do: a readable backup with {bak_messages} messages exists; "
            "Restore from backup (hermes' own repair) comes first"
        )
        return p
    db = ctx.home.state_db()
    if materialize._db_unusable(db, p):
        return p
    exists = materialize._sidecar_exists_check(ctx.session_dir)
    rows = materialize._rows_for(ctx, db, session_id, lambda sid: sid != session_id and exists(sid))
    if not rows:
        p.summary.append(f"nothing to do: {_no_row_reason(ctx, db, session_id)}")
        return p
    row = rows[0]
    payload = materialize.state_db_row_to_sidecar(row)
    try:
        data = dumps_pretty_fast(payload)
    except (TypeError, ValueError) as exc:
        p.refusal = f"its state.db messages cannot be written as JSON ({exc}); hermes would crash"
        return p
    p.summary.append(INSPECTOR_STEP)
    p.summary.append(
        f"set aside the unreadable {path.name} ({len(raw.data):,} bytes; hermes cannot load it: {problem})"
    )
    p.summary.append(
        f"write {path.name} as hermes materializes it from state.db ({len(payload['messages'])} messages)"
    )
    p.changes.append(FileChange(path=path, before=raw.data, after=data, fingerprint=raw.fingerprint))
    p.warnings.extend(materialize._row_warnings(ctx, db, row, payload, materialize._has_count_column(db)))
    p.warnings.extend(materialize._index_change(ctx, {path: data}, p))
    if p.refusal is None:
        p.result = {
            "inspector_step": True,
            "rebuilt": True,
            "messages": len(payload["messages"]),
            "set_aside_bytes": len(raw.data),
        }
    return p


def eligible(ctx: RepairContext) -> list[str]:
    """Sidecars hermes cannot load, without a readable ``.bak``, whose chat state.db still has."""
    out: list[str] = []
    if not ctx.session_dir.is_dir():
        return out
    for path in sorted(ctx.session_dir.glob("*.json")):
        sid = path.name[: -len(".json")]
        if sid.startswith("_") or not is_safe_session_id(sid):
            continue
        planned = plan(ctx, sid)
        if planned.refusal is None and planned.changes:
            out.append(sid)
    return out
