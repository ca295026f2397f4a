"""``<sid>.json.bak`` snapshots and hermes' backup-restore decision.

Spec session-recovery §3.1 (message count), §5 (the decision
``inspect_session_recovery_status`` with its three intentional-shrink guards) and §6.2
(orphan-backup eligibility). Every file is read through a :class:`FileSnapshot`, so a plan
built on a decision carries exactly the bytes the decision was made on. Nothing here writes.

Existence checks use ``Path.exists()`` like hermes (a directory named ``x.json`` exists);
content reads that fail with an OS error count as unreadable (-1), never as a crash.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from inspector.store.files import FileSnapshot
from inspector.store.jsonfmt import fast_loads, loads_or_none
from inspector.store.sidecar import count_messages_in_bytes, sidecar_paths
from inspector.store.statedb import state_db_has_session
from inspector.store.tombstone import TOMBSTONE_NAME, is_durably_tombstoned

BAK_SUFFIX = ".json.bak"
RESTORE, NO_ACTION, NO_BACKUP = "restore", "no_action", "no_backup"
FLAG_CLEAR = "intentional_clear_truncate"
FLAG_COMPRESS = "intentional_compress_shrink"
FLAG_GENERATION = "intentional_message_shrink"
FLAG_EXPLANATIONS = {
    FLAG_CLEAR: "the live file records a /clear made after the backup was taken (clear_generation)",
    FLAG_COMPRESS: "the live file records a manual /compress and the backup predates it",
    FLAG_GENERATION: "the live file records an intentional shrink (undo/retry/truncate) the backup predates",
}
_UUID4_HEX = re.compile(r"[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}")
_CLEAR_EXPECTED: tuple[tuple[str, Any], ...] = (
    ("messages", []),
    ("context_messages", []),
    ("truncation_watermark", 0.0),
    ("truncation_boundary", 0.0),
    ("active_stream_id", None),
    ("pending_user_message", None),
    ("pending_attachments", []),
    ("pending_started_at", None),
    ("pending_user_source", None),
)
_MARKER_PART_TYPES = frozenset({"text", "input_text", "output_text"})


# ---------------------------------------------------------------- reading


def read_bytes(snapshot: FileSnapshot, path: Path) -> bytes | None:
    """The file's bytes through the snapshot; None when missing or unreadable (a folder, EACCES)."""
    try:
        return snapshot.data(path)
    except OSError:
        return None


def message_count(snapshot: FileSnapshot, path: Path) -> int:
    """hermes' ``_msg_count``: len(messages), -1 when missing/unreadable/not an object/no list."""
    return count_messages_in_bytes(read_bytes(snapshot, path))


def too_deep_for_hermes(snapshot: FileSnapshot, path: Path) -> bool:
    """True when hermes' ``json.loads`` of the file raises RecursionError (JSON nested too deeply).

    ``_msg_count`` and the intentional-shrink guards catch only OSError and ValueError, so on such a
    file hermes' ``recover_session`` raises instead of deciding. A missing, unreadable or otherwise
    broken file is not too deep (hermes counts it as -1)."""
    data = read_bytes(snapshot, path)
    if data is None:
        return False
    try:
        fast_loads(data)
    except RecursionError:
        return True
    except ValueError:  # UnicodeDecodeError included: hermes' read_text fails first
        return False
    return False


def recovery_raises_on(session_dir: Path, sid: str, snapshot: FileSnapshot) -> str | None:
    """The name of the file hermes' ``recover_session(<sid>.json)`` raises RecursionError on, or None.

    It counts the live file's messages first, then (when the ``.bak`` exists) the backup's; the
    first one nested too deeply for its ``json.loads`` ends the call (:func:`too_deep_for_hermes`;
    a missing file is not too deep)."""
    live_path = session_dir / f"{sid}.json"
    for path in (live_path, bak_path_for(live_path)):
        if too_deep_for_hermes(snapshot, path):
            return path.name
    return None


def startup_recovery_raises_on(session_dir: Path, snapshot: FileSnapshot) -> str | None:
    """The id of the orphan ``.bak`` hermes' startup recovery raises RecursionError on, or None.

    ``recover_all_sessions_on_startup`` lists the orphan backups (``_orphaned_backup_live_paths``,
    which counts each one's messages) before it restores anything, outside its per-session
    ``try``: the first orphan ``.bak`` nested too deeply ends the whole recovery, and no session is
    restored (the server swallows the error)."""
    for bak in orphan_backup_paths(session_dir):
        if too_deep_for_hermes(snapshot, bak):
            return session_id_of_bak(bak)
    return None


def _count_and_object(snapshot: FileSnapshot, path: Path) -> tuple[int, dict | None]:
    """(:func:`message_count`, the object it counted in, or None where the file is none), from
    one parse, made as deep in the stack as :func:`message_count`'s (see :func:`_counted`)."""
    return _counted(read_bytes(snapshot, path))


def _counted(data: bytes | None) -> tuple[int, dict | None]:
    """:func:`count_messages_in_bytes` of ``data`` and the object it counted in (None: no object)."""
    obj = loads_or_none(data)
    if not isinstance(obj, dict):
        return -1, None
    messages = obj.get("messages")
    return (len(messages) if isinstance(messages, list) else -1), obj


def _load_object(snapshot: FileSnapshot, path: Path) -> dict | None:
    data = read_bytes(snapshot, path)
    obj = loads_or_none(data)
    return obj if isinstance(obj, dict) else None


def bak_path_for(live_path: Path) -> Path:
    """``<sid>.json`` -> ``<sid>.json.bak``."""
    return live_path.with_name(live_path.name + ".bak")


live_sidecar_paths = sidecar_paths  # the audit's and the restore's name for hermes' enumeration


def orphan_backup_paths(session_dir: Path) -> list[Path]:
    """Every ``*.json.bak`` whose ``<sid>.json`` is missing and whose name is not ``_``-prefixed."""
    try:
        baks = sorted(session_dir.glob("*" + BAK_SUFFIX))
    except OSError:
        return []
    out = []
    for bak in baks:
        live = bak.with_suffix("")
        if live.exists() or live.name.startswith("_"):
            continue
        out.append(bak)
    return out


def session_id_of_bak(bak_path: Path) -> str:
    """The session id hermes derives from a backup path (stem of the live name)."""
    return bak_path.with_suffix("").stem


# ---------------------------------------------------------------- intentional-shrink guards


def _clear_sentinel(live: dict, bak: dict) -> bool:
    generation = live.get("clear_generation")
    if not isinstance(generation, str) or not generation or bak.get("clear_generation") == generation:
        return False
    exact_empty = all(key in live and live.get(key) == value for key, value in _CLEAR_EXPECTED)
    if exact_empty:
        return True
    messages = live.get("messages")
    return (
        isinstance(messages, list)
        and len(messages) > 0
        and live.get("truncation_watermark") == 0.0
        and live.get("truncation_boundary") == 0.0
    )


def _records_intentional_compress(live: dict) -> bool:
    context, messages = live.get("context_messages"), live.get("messages")
    shorter = isinstance(context, list) and isinstance(messages, list) and len(context) < len(messages)
    if str(live.get("compression_anchor_mode") or "").strip().lower() == "manual":
        return True
    summary = str(live.get("compression_anchor_summary") or "").strip()
    if shorter and summary and live.get("compression_anchor_message_key") is not None:
        return True
    return shorter and live.get("truncation_watermark") is not None


def _typed_parts_text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text") or p.get("content") or "")
            for p in content
            if isinstance(p, dict) and p.get("type") in _MARKER_PART_TYPES
        ).strip()
    return str(content or "").strip()


def _plain_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            p if isinstance(p, str) else p["text"]
            for p in content
            if isinstance(p, str) or (isinstance(p, dict) and isinstance(p.get("text"), str))
        )
    return ""


def is_compaction_marker(message: Any) -> bool:
    """A ``[context compaction...`` summary row (hermes' marker test used by the compress guard)."""
    if not isinstance(message, dict):
        return False
    role = message.get("role")
    if not role or role == "tool":
        return False
    first = _typed_parts_text(message.get("content", "")).lower().lstrip()
    synthetic = bool(message.get("_compressed_summary"))
    if not (
        first.startswith("[context compaction")
        or (synthetic and first.startswith("context compaction"))
        or first.startswith("[your active task list was preserved across context compression]")
        or first.startswith("[session arc summary")
    ):
        return False
    text = _plain_text(message.get("content")).lower().lstrip()
    return text.startswith("[context compaction") or text.startswith("context compaction")


def _backup_predates_compress(live: dict, bak: dict) -> bool:
    bak_ctx = bak.get("context_messages")
    bak_ctx = bak_ctx if isinstance(bak_ctx, list) else []
    if any(is_compaction_marker(m) for m in bak_ctx):
        return False
    live_ctx = live.get("context_messages")
    return len(bak_ctx) > (len(live_ctx) if isinstance(live_ctx, list) else 0)


def is_uuid4_hex(value: Any) -> bool:
    """Exactly the shape of ``uuid4().hex``: 32 lowercase hex, version 4, variant 8/9/a/b."""
    return isinstance(value, str) and _UUID4_HEX.fullmatch(value) is not None


def _generation_shrink(live: dict, bak: dict) -> bool:
    generation = live.get("intentional_shrink_generation")
    if not is_uuid4_hex(generation):
        return False
    bak_generation = bak.get("intentional_shrink_generation")
    if bak_generation is None:
        return True
    return is_uuid4_hex(bak_generation) and bak_generation != generation


def intentional_shrink_flag(live: dict | None, bak: dict | None) -> str | None:
    """The first intentional-shrink guard that applies (§5 order), or None (restore goes ahead)."""
    if live is None or bak is None:
        return None
    if _clear_sentinel(live, bak):
        return FLAG_CLEAR
    if _records_intentional_compress(live) and _backup_predates_compress(live, bak):
        return FLAG_COMPRESS
    if _generation_shrink(live, bak):
        return FLAG_GENERATION
    return None


# ---------------------------------------------------------------- the decision


def inspect_session_recovery_status(
    session_dir: Path, sid: str, snapshot: FileSnapshot | None = None
) -> dict:
    """hermes' ``inspect_session_recovery_status(<session_dir>/<sid>.json)``.

    Returns ``{session_id, live_messages, bak_messages, recommend}`` where recommend is
    ``restore``, ``no_action`` or ``no_backup``; a guarded ``no_action`` carries one flag
    (``intentional_clear_truncate``, ``intentional_compress_shrink`` or
    ``intentional_message_shrink``) set to True.
    """
    snapshot = snapshot if snapshot is not None else FileSnapshot()
    live_path = session_dir / f"{sid}.json"
    bak_path = bak_path_for(live_path)
    live_count, live = _count_and_object(snapshot, live_path)
    status: dict[str, Any] = {"session_id": live_path.stem, "live_messages": live_count}
    if not bak_path.exists():
        return {**status, "bak_messages": -1, "recommend": NO_BACKUP}
    bak_count, bak = _count_and_object(snapshot, bak_path)
    status["bak_messages"] = bak_count
    if bak_count <= live_count:
        return {**status, "recommend": NO_ACTION}
    # hermes parses both files again for the guards: the objects the counts were taken from are
    # the same (the backup's is one: it has messages); a live file that gave none is parsed again
    # as hermes does (a nesting at the edge of the recursion limit may parse one frame higher up)
    if live is None:
        live = _load_object(snapshot, live_path)
    flag = intentional_shrink_flag(live, bak)
    if flag is not None:
        return {**status, "recommend": NO_ACTION, flag: True}
    return {**status, "recommend": RESTORE}


def status_flag(status: dict) -> str | None:
    """The intentional-shrink flag set in a decision dict, if any."""
    return next((f for f in FLAG_EXPLANATIONS if status.get(f)), None)


def orphan_restore_blocker(
    session_dir: Path,
    sid: str,
    state_db_path: Path | None,
    snapshot: FileSnapshot | None = None,
) -> str | None:
    """Why hermes' startup recovery would *not* recreate ``<sid>.json`` from its orphan ``.bak``.

    None means eligible (§6.2): the bak is readable, the id is not durably tombstoned and
    the fail-open state.db check says the session still exists.
    """
    snapshot = snapshot if snapshot is not None else FileSnapshot()
    bak = session_dir / f"{sid}{BAK_SUFFIX}"
    if message_count(snapshot, bak) < 0:
        return f"{bak.name} is unreadable (not JSON, not an object, or no messages list)"
    if is_durably_tombstoned(session_dir, sid, snapshot):
        return f"{sid} is in {TOMBSTONE_NAME}: the user deleted this session"
    if not state_db_has_session(state_db_path, sid):
        return f"state.db has no session {sid} (treated as deleted)"
    return None


def eligible_orphans(
    session_dir: Path, state_db_path: Path | None, snapshot: FileSnapshot | None = None
) -> list[str]:
    """Ids of orphan backups hermes' startup recovery would restore, in file-name order."""
    snapshot = snapshot if snapshot is not None else FileSnapshot()
    ids = (session_id_of_bak(p) for p in orphan_backup_paths(session_dir))
    return [sid for sid in ids if orphan_restore_blocker(session_dir, sid, state_db_path, snapshot) is None]


def restorable_live_ids(session_dir: Path, snapshot: FileSnapshot | None = None) -> list[str]:
    """Ids of live sidecars that have a ``.bak`` and whose decision is ``restore``."""
    snapshot = snapshot if snapshot is not None else FileSnapshot()
    out = []
    for live in live_sidecar_paths(session_dir):
        if bak_path_for(live).exists():
            if inspect_session_recovery_status(session_dir, live.stem, snapshot)["recommend"] == RESTORE:
                out.append(live.stem)
    return out
