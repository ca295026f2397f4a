"""``_index.json``: hermes' ``Session.compact()`` rows and the two ways hermes rewrites the index.

* the **save fast path** (every ``Session.save``): keep rows whose sidecar still exists,
  replace every row of the saved session (or append it), re-sort by raw ``updated_at``;
* the **full rebuild** (the index missing, or the fast path raising; and the recovery
  rebuild): one row per loadable sidecar, keyed by the id *inside* the file, the larger
  ``message_count`` winning, ties kept in walking order (the folder's own order in a save,
  name order in the recovery rebuild).

Rows are ``compact()`` of the session as hermes' ``Session.__init__`` builds it, with hermes'
coercions (see :func:`inspector.store.sidecar.load_session`); where hermes' sort or write
raises, the callers refuse.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from pathlib import Path
from typing import Any

from inspector.store.index_json import dumps_index_rows, parse_index_rows
from inspector.store.index_splice import SpliceFacts, index_after_save_spliced
from inspector.store.jsonfmt import dumps_pretty_fast, loads_or_none
from inspector.store.sidecar import LoadedSession, load_session, resolve_path

INDEX_NAME = "_index.json"


def _message_time(msg: Any) -> float | None:
    """A row's ``_ts`` (else ``timestamp``) as hermes reads it: ``float(value)``, so numeric strings
    count; None when absent or not convertible. ``float()`` of a huge int raises OverflowError."""
    if not isinstance(msg, dict):
        return None
    value = msg.get("_ts") or msg.get("timestamp")
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _is_empty_partial(msg: Any) -> bool:
    """An assistant ``_partial`` row without reply text (cancelled activity): not a message time."""
    if not isinstance(msg, dict) or msg.get("role") != "assistant" or not msg.get("_partial"):
        return False
    content = msg.get("content", "")
    if isinstance(content, str):
        return not content.strip()
    if isinstance(content, list):
        for part in content:
            if isinstance(part, dict):
                if part.get("type") == "text" and str(part.get("text") or part.get("content") or "").strip():
                    return False
            elif str(part or "").strip():
                return False
        return True
    return not str(content or "").strip()


def _newest_message_time(messages: Any) -> float | None:
    """Newest truthy time of a non-tool, non-empty-partial row, scanning from the end."""
    if not isinstance(messages, list):
        return None
    for msg in reversed(messages):
        if isinstance(msg, dict) and msg.get("role") == "tool":
            continue
        if _is_empty_partial(msg):
            continue
        ts = _message_time(msg)
        if ts:
            return ts
    return None


def last_message_at(data: dict, messages: Any = None) -> Any:
    """``pending_started_at`` while a prompt is pending; else the newest message time; else ``updated_at``.

    The messages are scanned first in every case, as hermes does: a time ``float()`` cannot take
    (an integer past the float range) raises even when a pending prompt's time wins.
    """
    newest = _newest_message_time(data["messages"] if messages is None else messages)
    if data.get("pending_user_message") and data.get("pending_started_at"):
        return data["pending_started_at"]
    return newest or data.get("updated_at")


def _int_or_zero(value: Any) -> int:
    """``int(value or 0)``; 0 when that raises TypeError/ValueError (an infinity's OverflowError is not caught)."""
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def cache_hit_percent(data: dict) -> int | None:
    """hermes' ``prompt_cache_hit_percent(cache_read_tokens, input_tokens)``.

    Both counters are read with ``int(value or 0)`` (floats truncated, numeric strings accepted,
    anything else 0); None when either is <= 0; else ``round(read / prompt * 100)`` capped at 100.
    """
    read = _int_or_zero(data.get("cache_read_tokens"))
    prompt = _int_or_zero(data.get("input_tokens"))
    if read <= 0 or prompt <= 0:
        return None
    return min(100, round((read / prompt) * 100))


def compact(session: LoadedSession) -> dict:
    """``Session.compact()``: the sidebar row hermes writes to ``_index.json``."""
    d = session.data
    messages = session.odd_messages if session.odd_messages is not None else d["messages"]
    count = session.count_hint if session.count_hint is not None else len(messages)
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
        "last_message_at": last_message_at(d, messages),
    }
    for key in (
        "pinned",
        "archived",
        "project_id",
        "profile",
        "input_tokens",
        "output_tokens",
        "estimated_cost",
        "cache_read_tokens",
        "cache_write_tokens",
    ):
        row[key] = d[key]
    row["cache_hit_percent"] = cache_hit_percent(d)
    for key in (
        "personality",
        "compression_anchor_visible_idx",
        "compression_anchor_message_key",
        "compression_anchor_summary",
        "pre_compression_snapshot",
        "context_engine",
        "compression_anchor_engine",
        "compression_anchor_mode",
        "compression_anchor_details",
        "context_engine_state",
        "context_length",
        "threshold_tokens",
        "last_prompt_tokens",
        "post_compression_context_tokens_estimate",
        "compression_recovery",
        "recommended_recovery_action",
        "gateway_routing",
        "gateway_routing_history",
        "manual_title",
    ):
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
    )  # a non-list ``messages`` counts 0 users
    row["active_stream_id"] = d["active_stream_id"]
    row["pending_user_message"] = d["pending_user_message"]
    row["has_pending_user_message"] = bool(d["pending_user_message"])
    for key in (
        "is_cli_session",
        "source_tag",
        "raw_source",
        "session_source",
        "source_label",
        "read_only",
        "enabled_toolsets",
        "composer_draft",
        "process_wakeup_pause",
        "share_token",
        "share_created_at",
    ):
        row[key] = d[key]
    row["is_streaming"] = False
    return row


class IndexSortError(TypeError):
    """hermes' sort of the index rows raises on these ``updated_at`` values (e.g. text next to numbers)."""


def _updated_at(row: dict) -> Any:
    return row.get("updated_at", 0)


def sort_rows(rows: list[dict]) -> list[dict]:
    """hermes' ``sort(key=updated_at, reverse=True)`` on the raw values: newest first, ties in
    their given order (a stable sort). Raises :class:`IndexSortError` where hermes' sort raises
    ``TypeError`` (values Python cannot order, e.g. a string next to a number)."""
    try:
        return sorted(rows, key=_updated_at, reverse=True)
    except TypeError as exc:
        raise IndexSortError(f"hermes' index sort by updated_at fails: {exc}") from exc


def parse_index(data: bytes | None) -> list[dict] | None:
    """The index rows, or None when hermes would fall back to a full rebuild."""
    obj = loads_or_none(data)
    if not isinstance(obj, list) or not all(isinstance(r, dict) for r in obj):
        return None
    return obj


class FastPathFailed(Exception):
    """hermes' index fast path raises here; hermes then falls back to a full rebuild."""


def parse_index_json(data: bytes) -> Any:
    """The index parsed with exactly the stdlib's verdict (whatever JSON value it holds);
    raises ValueError/RecursionError where hermes' ``json.loads`` raises
    (:func:`~inspector.store.index_json.parse_index_rows`)."""
    return parse_index_rows(data)


def index_after_save(existing: Any, saved: LoadedSession, on_disk_ids: Container[str]) -> bytes:
    """The index bytes of hermes' fast path after ``Session.save`` of ``saved``.

    ``existing`` is the parsed index; ``on_disk_ids`` the stems of the folder's ``*.json``
    sidecars (the saved one included). Rows whose ``session_id`` is not on disk are dropped;
    every row of the saved id is replaced by its new row (duplicates stay duplicates), or the
    row is appended; then the rows are sorted by ``updated_at``. Raises :class:`FastPathFailed`
    wherever hermes' fast path raises (the index not a list, a row not an object, an
    unhashable id, ``compact()`` or the sort failing, text UTF-8 cannot hold).
    """
    try:
        if not isinstance(existing, list):
            raise ValueError("session index must be a list")
        new_row = compact(saved)
        sid = new_row["session_id"]
        rows = [row for row in existing if row.get("session_id") in on_disk_ids]
        if sid not in {row.get("session_id") for row in rows}:
            rows.append(new_row)
        rows = [new_row if row.get("session_id") == sid else row for row in rows]
        return dumps_index_rows(sort_rows(rows))
    except (AttributeError, TypeError, ValueError, OverflowError, RecursionError) as exc:
        # UnicodeEncodeError is a ValueError; IndexSortError a TypeError
        raise FastPathFailed(f"{type(exc).__name__}: {exc}") from exc


def index_after_save_from_bytes(
    data: bytes, saved: LoadedSession, on_disk_ids: Container[str], facts: SpliceFacts | None = None
) -> bytes | None:
    """:func:`index_after_save` of ``parse_index_json(data)`` as a splice of the index's own row
    bytes, where :mod:`inspector.store.index_splice` proves it the same bytes; None otherwise (the
    caller then parses and runs :func:`index_after_save`, which decides and raises as before).
    ``facts``: :func:`~inspector.store.index_splice.splice_facts` of these very bytes, when found
    before."""
    try:
        new_row = compact(saved)
    except Exception:  # noqa: BLE001 - index_after_save raises it again (FastPathFailed or not)
        return None
    return index_after_save_spliced(data, new_row, on_disk_ids, facts)


def rebuild_rows(rows: Iterable[dict]) -> list[dict]:
    """The rows of a full rebuild from ``compact()`` rows in directory order.

    Keyed by the ``session_id`` inside each row (rows without one are left out); of two rows
    with the same id the one with the larger ``message_count`` wins, in the first one's place.
    """
    best: dict[str, dict] = {}
    for row in rows:
        sid = row["session_id"]
        if not sid:
            continue
        if sid not in best or row["message_count"] > best[sid]["message_count"]:
            best[sid] = row
    return sort_rows(list(best.values()))


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
