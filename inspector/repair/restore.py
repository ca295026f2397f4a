"""Action ``restore-backup``: replace ``<sid>.json`` with its ``.bak``, as hermes does.

hermes' ``recover_session`` (session-recovery §6.1) copies ``<sid>.json.bak`` over
``<sid>.json`` when the backup-restore decision (§5, :func:`inspect_session_recovery_status`)
says ``restore``; the ``.bak`` is kept and ``_index.json`` is not touched. The plan is one
FileChange whose new bytes are exactly the ``.bak`` bytes that were read.

An *orphan* backup (the live file is missing) is recreated only when hermes' startup
recovery would do it (§6.2): the ``.bak`` is readable, the id is not in the durable
tombstone and state.db still knows the session (fail-open when state.db is missing or
unreadable).

Unlike hermes, the replaced live bytes are not lost: apply keeps them as a private backup.
Ids must be plain file stems (``A-Z a-z 0-9 _ . -``, not starting with ``.`` or ``_``), so
no path can leave the sessions folder.
"""

from __future__ import annotations

import re

from inspector.plan import FileChange, Plan
from inspector.repair.context import RepairContext
from inspector.repair.registry import HERMES, SESSION, STATE_DB, ActionSpec
from inspector.store.backup import (
    FLAG_EXPLANATIONS,
    RESTORE,
    bak_path_for,
    eligible_orphans,
    inspect_session_recovery_status,
    orphan_restore_blocker,
    recovery_raises_on,
    restorable_live_ids,
    startup_recovery_raises_on,
    status_flag,
)
from inspector.store.sidecar import SidecarError, parse_sidecar_bytes

NAME = "restore-backup"

SPEC = ActionSpec(
    name=NAME,
    label="Restore from backup",
    scope=SESSION,
    origin=HERMES,
    mirrors="api.session_recovery.recover_session",
    help="hermes' restore of a shrunken or corrupt sidecar from its .bak",
    answers=("corrupt_sidecar",),
    needs=frozenset({"bak"}),
    recommendations=("restore_from_bak",),
    hermes_reads=frozenset({STATE_DB}),
)
_STEM = re.compile(r"[A-Za-z0-9_.-]+")


def is_plain_stem(session_id: object) -> bool:
    """A file stem that cannot leave the sessions folder and is not hidden or ``_``-reserved."""
    return (
        isinstance(session_id, str)
        and _STEM.fullmatch(session_id) is not None
        and not session_id.startswith((".", "_"))
    )


def _no_action_line(status: dict) -> str:
    live, bak = status["live_messages"], status["bak_messages"]
    if status["recommend"] == "no_backup":
        return f"nothing to do: {status['session_id']}.json has no .bak"
    flag = status_flag(status)
    if flag:
        return (
            f"nothing to do: decision no_action ({flag}: {FLAG_EXPLANATIONS[flag]}); "
            f"live {live} messages, bak {bak} messages"
        )
    if bak < 0:
        return f"nothing to do: the .bak is unreadable (live {live} messages)"
    return (
        f"nothing to do: decision no_action, the .bak ({bak} messages) is not larger than the "
        f"live file ({live})"
    )


def _live_warning(data: bytes | None, name: str) -> str | None:
    if data is None:
        return None
    try:
        parse_sidecar_bytes(data)
    except SidecarError as exc:
        return f"{name} is unreadable ({exc}) and will be overwritten by the backup [Q5]"
    return None


def _plan_orphan(ctx: RepairContext, sid: str, p: Plan) -> bool:
    """False (with the reason in the summary) when an orphan .bak must not be restored."""
    blocker = orphan_restore_blocker(ctx.session_dir, sid, ctx.home.state_db(), ctx.snapshot)
    if blocker is not None:
        p.summary.append(f"nothing to do: {sid}.json is missing and its backup is not restored: {blocker}")
        return False
    p.warnings.append(
        f"{sid} is not in _index.json until the index is rebuilt; run rebuild-index "
        "afterwards (hermes' startup recovery rebuilds it after a restore)"
    )
    return True


def _add_change(ctx: RepairContext, sid: str, status: dict, p: Plan) -> None:
    live = ctx.session_dir / f"{sid}.json"
    bak_raw = ctx.snapshot.read(bak_path_for(live))
    live_raw = ctx.snapshot.read(live)
    if bak_raw is None:
        p.refusal = f"{bak_path_for(live).name} disappeared while planning"
        return
    p.changes.append(
        FileChange(
            path=live,
            before=live_raw.data if live_raw else None,
            after=bak_raw.data,
            fingerprint=live_raw.fingerprint if live_raw else None,
        )
    )
    if live_raw is None:
        p.summary.append(
            f"create {live.name} from {live.name}.bak ({status['bak_messages']} messages); the .bak is kept"
        )
        return
    p.summary.append(
        f"replace {live.name} ({status['live_messages']} messages) with {live.name}.bak "
        f"({status['bak_messages']} messages); the .bak is kept"
    )
    p.warnings.append(
        f"the current {live.name} is replaced; hermes keeps no copy of it, the inspector "
        "keeps a private backup"
    )
    warning = _live_warning(live_raw.data, live.name)
    if warning:
        p.warnings.append(warning)


def plan(ctx: RepairContext, session_id: str | None) -> Plan:
    """Plan hermes' ``recover_session`` for one session (``None`` is refused: use eligible())."""
    p = Plan(action=NAME, session_id=session_id)
    if session_id is None:
        p.refusal = "restore-backup works on one session at a time (the CLI's --all plans eligible() ids)"
        return p
    if not is_plain_stem(session_id):
        p.refusal = f"{session_id!r} is not a plain session file name"
        return p
    live = ctx.session_dir / f"{session_id}.json"
    if live.exists() and not live.is_file():
        p.refusal = f"{live} is not a regular file"
        return p
    try:
        too_deep = recovery_raises_on(ctx.session_dir, session_id, ctx.snapshot)
        if too_deep is not None:
            p.refusal = (
                f"hermes' recover_session fails on this session: {too_deep} is nested too deeply for "
                "its json.loads (RecursionError), so hermes restores nothing and neither does the "
                "inspector; both files are left as they are"
            )
            if not live.exists():
                p.refusal += (
                    "; hermes' startup recovery, which reads every orphan .bak before it restores "
                    "anything, stops at this one and restores no session at all"
                )
            return p
        status = inspect_session_recovery_status(ctx.session_dir, session_id, ctx.snapshot)
        would_restore = status["recommend"] == RESTORE
        if would_restore and not live.exists():
            would_restore = _plan_orphan(ctx, session_id, p)
        if would_restore:
            _add_change(ctx, session_id, status, p)
    except OSError as exc:
        p.refusal = f"cannot read the session files: {exc}"
        return p
    p.result = {**status, "restored": would_restore and p.refusal is None}
    if not would_restore and not p.summary:
        missing = not live.exists() and status["recommend"] == "no_backup"
        p.summary.append(
            f"nothing to do: neither {live.name} nor its .bak exists" if missing else _no_action_line(status)
        )
    return p


def eligible(ctx: RepairContext) -> list[str]:
    """Ids hermes' startup recovery would restore: live files whose decision is ``restore``, then
    orphans; not those it raises on (a file nested too deeply, :func:`recovery_raises_on`). Where an
    orphan ``.bak`` is nested too deeply, hermes' startup recovery restores nothing at all
    (:func:`startup_recovery_raises_on`): the only id is that one, whose plan is refused and says so."""
    stopper = startup_recovery_raises_on(ctx.session_dir, ctx.snapshot)
    if stopper is not None:
        return [stopper] if is_plain_stem(stopper) else []
    live = restorable_live_ids(ctx.session_dir, ctx.snapshot)
    orphans = eligible_orphans(ctx.session_dir, ctx.home.state_db(), ctx.snapshot)
    return [
        sid
        for sid in live + orphans
        if is_plain_stem(sid) and recovery_raises_on(ctx.session_dir, sid, ctx.snapshot) is None
    ]
