"""``_index.json``: hermes' ``Session.compact()`` rows and the two ways hermes rewrites the index.

* the **save fast path** (every ``Session.save``): keep rows whose sidecar is listed in the
  folder, replace or append the saved session's row, re-sort by ``updated_at`` descending;
* the **full rebuild** (index missing/unreadable/not a list of objects, and the recovery
  rebuild): one row per loadable sidecar, keyed by the id *inside* the file, the larger
  ``message_count`` winning.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import Path, PurePath
from typing import Any

from inspector.store.jsonfmt import dumps_pretty_fast, loads_bytes_fast, loads_or_none
from inspector.store.sidecar import LoadedSession, load_session, resolve_path

INDEX_NAME = "_index.json"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def last_message_at(data: dict) -> float:
    """Timestamp of the newest non-tool, non-empty-partial row; else ``updated_at``."""
    pending = data.get("pending_user_message")
    if pending and data.get("pending_started_at"):
        return data["pending_started_at"]
    for msg in reversed(data.get("messages") or []):
        if not isinstance(msg, dict) or msg.get("role") == "tool":
            continue
        if msg.get("role") == "assistant" and msg.get("_partial") and not msg.get("content"):
            continue
        ts = msg.get("_ts") or msg.get("timestamp")
        if _is_number(ts) and ts:
            return float(ts)
    return data.get("updated_at")


def cache_hit_percent(data: dict) -> int | None:
    inp = data.get("input_tokens") or 0
    read = data.get("cache_read_tokens") or 0
    if not _is_number(inp) or not _is_number(read) or inp <= 0:
        return None
    return min(100, round(100 * read / inp))


def compact(session: LoadedSession) -> dict:
    """``Session.compact()``: the sidebar row hermes writes to ``_index.json``."""
    d = session.data
    count = session.count_hint if session.count_hint is not None else len(d["messages"])
    if d.get("pending_user_message"):
        count = max(count, 1)
    row: dict[str, Any] = {
        "session_id": d["session_id"],
        "title": d["title"],
        "workspace": d["workspace"],
        "model": d["model"],
        "model_provider": d["model_provider"],
        "message_count": count,
        "created_at": d["created_at"],
        "updated_at": d["updated_at"],
        "last_message_at": last_message_at(d),
    }
    for key in ("pinned", "archived", "project_id", "profile", "input_tokens", "output_tokens",
                "estimated_cost", "cache_read_tokens", "cache_write_tokens"):
        row[key] = d[key]
    row["cache_hit_percent"] = cache_hit_percent(d)
    for key in ("personality", "compression_anchor_visible_idx", "compression_anchor_message_key",
                "compression_anchor_summary", "pre_compression_snapshot", "context_engine",
                "compression_anchor_engine", "compression_anchor_mode", "compression_anchor_details",
                "context_engine_state", "context_length", "threshold_tokens", "last_prompt_tokens",
                "post_compression_context_tokens_estimate", "compression_recovery",
                "recommended_recovery_action", "gateway_routing", "gateway_routing_history",
                "manual_title"):
        row[key] = d[key]
    if d.get("parent_session_id"):
        row["parent_session_id"] = d["parent_session_id"]
    row["created_workspace"] = d["created_workspace"]
    if d.get("compression_recovery_source_session_id") or d.get("compression_recovery_action"):
        row["compression_recovery_source_session_id"] = d["compression_recovery_source_session_id"]
        row["compression_recovery_action"] = d["compression_recovery_action"]
    if d.get("worktree_path"):
        for key in ("worktree_path", "worktree_branch", "worktree_repo_root", "worktree_created_at"):
            row[key] = d[key]
    row["user_message_count"] = sum(
        1 for m in d["messages"] if isinstance(m, dict) and m.get("role") == "user"
    )
    row["active_stream_id"] = d["active_stream_id"]
    row["pending_user_message"] = d["pending_user_message"]
    row["has_pending_user_message"] = bool(d["pending_user_message"])
    for key in ("is_cli_session", "source_tag", "raw_source", "session_source", "source_label",
                "read_only", "enabled_toolsets", "composer_draft", "process_wakeup_pause",
                "share_token", "share_created_at"):
        row[key] = d[key]
    row["is_streaming"] = False
    return row


def _sort_key(row: dict) -> float:
    value = row.get("updated_at")
    return float(value) if _is_number(value) else 0.0


def sort_rows(rows: list[dict]) -> list[dict]:
    """Newest ``updated_at`` first; ties keep their order (Python's stable sort)."""
    return sorted(rows, key=_sort_key, reverse=True)


def parse_index(data: bytes | None) -> list[dict] | None:
    """The index rows, or None when hermes would fall back to a full rebuild."""
    obj = loads_or_none(data)
    if not isinstance(obj, list) or not all(isinstance(r, dict) for r in obj):
        return None
    return obj


def parse_index_exact(data: bytes | None) -> list[dict] | None:
    """:func:`parse_index` with exactly the stdlib's verdict, also on pathologically deep rows.

    (:func:`parse_index` may accept a row nested 1,000 levels deep that hermes' ``json.loads``
    rejects; the save path must take hermes' branch, so it uses this one.)
    """
    if data is None:
        return None
    try:
        obj = loads_bytes_fast(data)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(obj, list) or not all(isinstance(r, dict) for r in obj):
        return None
    return obj


def index_after_save(existing: list[dict], saved: LoadedSession, on_disk_ids: Collection[str]) -> bytes | None:
    """The index bytes after ``Session.save`` of ``saved`` (hermes' fast path), or None where that
    path raises and hermes falls back to a full rebuild.

    ``on_disk_ids`` are hermes' ``_persisted_session_ids_snapshot()``: the stems of the
    non-``_`` ``*.json`` names of one listing of the sessions folder (:func:`on_disk_session_ids`).
    As ``_write_session_index(updates=[saved])``: keep the rows whose ``session_id`` is the saved
    session's (it is in memory) or on disk, append the new row when the session has none, put it
    in place of *every* row of the session, sort by the raw ``updated_at`` (0 when missing),
    newest first. An unhashable ``session_id``, ``updated_at`` values that do not compare, or a
    row holding a lone surrogate (its UTF-8 write fails) raise there: None here.
    """
    sid = saved.session_id
    in_memory = {sid}
    new_row = compact(saved)
    try:
        rows = [row for row in existing
                if row.get("session_id") in in_memory or row.get("session_id") in on_disk_ids]
    except TypeError:
        return None
    if sid not in {row.get("session_id") for row in rows}:
        rows.append(new_row)
    rows = [new_row if row.get("session_id") == sid else row for row in rows]
    try:
        rows.sort(key=lambda row: row.get("updated_at", 0), reverse=True)
        return dumps_pretty_fast(rows)
    except (TypeError, UnicodeEncodeError):  # hermes' write of a lone surrogate raises too
        return None


def on_disk_session_ids(sidecar_names: Iterable[str]) -> frozenset[str]:
    """hermes' ``_persisted_session_ids_snapshot``: ``p.stem`` of each non-``_`` ``*.json`` name."""
    return frozenset(PurePath(name).stem for name in sidecar_names)


def rebuild_rows(rows: Iterable[dict]) -> list[dict]:
    """The rows of a full rebuild from ``compact()`` rows in directory order.

    Keyed by the ``session_id`` inside each row (rows without one are left out); of two rows
    with the same id the one with the larger ``message_count`` wins, in the first one's place.
    """
    best: dict[str, tuple[int, dict]] = {}
    for row in rows:
        sid = row["session_id"]
        if not sid:
            continue
        count = row["message_count"] if isinstance(row["message_count"], int) else 0
        if sid not in best or count > best[sid][0]:
            best[sid] = (count, row)
    return sort_rows([row for _, row in best.values()])


def rebuild_index(sessions: list[LoadedSession]) -> bytes:
    """Index bytes of a full rebuild from the given loaded sidecars (in directory order)."""
    return dumps_pretty_fast(rebuild_rows(compact(sess) for sess in sessions if sess.session_id))


def index_path(session_dir: Path) -> Path:
    return session_dir / INDEX_NAME


# ---------------------------------------------------------------- rows straight from parsed sidecars




class PathResolver:
    """:func:`~inspector.store.sidecar.resolve_path` against one ``cwd``, each value resolved once.

    A full rebuild resolves two paths per sidecar, nearly all the same few workspaces; one
    resolver per rebuild answers each distinct value from one ``realpath`` (an error is kept and
    raised again), i.e. one consistent view of the file system for the whole rebuild.
    """

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self._done: dict[str, tuple[str | None, Exception | None]] = {}

    def __call__(self, value: str) -> str:
        got = self._done.get(value)
        if got is None:
            try:
                got = (resolve_path(value, self.cwd), None)
            except Exception as exc:  # noqa: BLE001 - re-raised below, every time it is asked
                got = (None, exc)
            self._done[value] = got
        if got[1] is not None:
            raise got[1].with_traceback(None)
        return got[0]


def load_for_index(raw: dict, *, now: float, resolve: PathResolver) -> LoadedSession:
    """:func:`~inspector.store.sidecar.load_session` of a parsed sidecar, for ``compact()``: the
    paths resolved by ``resolve`` (one ``realpath`` per distinct value), no ``dropped_keys``.
    ``tests/store/test_index_rows.py`` holds it to ``load_session`` on every fixture and on
    generated sidecars."""
    return load_session(raw, now=now, cwd=resolve.cwd, resolve=resolve, dropped_keys=False)
