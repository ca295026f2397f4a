"""The recovered pending user turn: the pending prompt put back as a ``_recovered`` row.

Spec run-journal-and-promotion §3.5 (``_append_recovered_pending_turn``, ``stamp_message_source``
and the process-wakeup display metadata, the context-only row of branch A2) and §3.6
(clearing the five pending fields). Works on the session *dict* in place, as hermes works
on its ``Session``; time is passed in by the caller, never read from the system.
"""

from __future__ import annotations

import re
from typing import Any

from inspector.repair.model_context import append_to_context

_WAKEUP_COMPLETION = re.compile(
    r"\A\[IMPORTANT: Background process (?P<sid>[^\n]*?) completed "
    r"\(exit_code=(?P<exit_code>[^)\n]*)\)\.\n"
    r"Command: (?P<cmd>[^\n]*)\n"
    r"Output:\n"
)
_WAKEUP_WATCH_MATCH = re.compile(
    r"\A\[IMPORTANT: Background process (?P<sid>[^\n]*?) matched watch pattern "
    r"\"(?P<pattern>.*)\"\.\n"
    r"Command: (?P<cmd>[^\n]*)\n"
    r"Matched output:\n"
)


def wakeup_display_meta(text: Any) -> dict | None:
    """Header fields of a process-wakeup prompt (completion or watch match), else None."""
    body = str(text or "")
    m = _WAKEUP_COMPLETION.match(body)
    if m:
        exit_code: Any = m.group("exit_code")
        try:
            exit_code = int(exit_code)
        except ValueError:
            pass
        return {
            "type": "completion",
            "task_id": m.group("sid"),
            "command": m.group("cmd"),
            "exit_code": exit_code,
        }
    m = _WAKEUP_WATCH_MATCH.match(body)
    if m:
        return {
            "type": "watch_match",
            "task_id": m.group("sid"),
            "command": m.group("cmd"),
            "pattern": m.group("pattern"),
        }
    return None


def stamp_source(row: dict, source: Any) -> None:
    """``stamp_message_source``: ``_source`` for non-webui turns, ``_wakeup_meta`` for wakeups."""
    if not source or source == "webui":
        return
    row["_source"] = source
    if source != "process_wakeup" or row.get("_wakeup_meta"):
        return
    try:
        meta = wakeup_display_meta(row.get("content"))
    except Exception:  # hermes: display metadata is best-effort and never fails the repair
        return
    if meta:
        row["_wakeup_meta"] = meta


def recovered_ts(session: dict, now: float) -> int:
    """``int(pending_started_at)`` when it is a positive number, else ``int(now)``."""
    started = session.get("pending_started_at")
    if isinstance(started, (int, float)) and started > 0:
        return int(started)
    return int(now)


def append_recovered_pending_turn(session: dict, *, timestamp: int) -> dict | None:
    """``_append_recovered_pending_turn``: the pending prompt as a ``_recovered`` user row."""
    if not str(session.get("pending_user_message") or ""):
        return None
    row: dict = {
        "role": "user",
        "content": session.get("pending_user_message"),
        "timestamp": timestamp,
        "_recovered": True,
    }
    stamp_source(row, session.get("pending_user_source"))
    if session.get("pending_attachments"):
        row["attachments"] = list(session["pending_attachments"])
    session["messages"].append(row)
    append_to_context(session, row)
    if session.get("truncation_watermark"):
        session["truncation_watermark"] = timestamp
    return row


def context_only_recovered_turn(session: dict, *, timestamp: int) -> dict:
    """The A2 row when the tail already holds the prompt: projected into context only."""
    row: dict = {
        "role": "user",
        "content": session.get("pending_user_message"),
        "timestamp": timestamp,
        "_recovered": True,
    }
    source = session.get("pending_user_source")
    if source and source != "webui":
        row["_source"] = source  # never _wakeup_meta on this path
    if session.get("pending_attachments"):
        row["attachments"] = list(session["pending_attachments"])
    append_to_context(session, row)
    return row


def clear_pending(session: dict) -> None:
    """§3.6: every branch that returns True clears the five pending fields."""
    session["active_stream_id"] = None
    session["pending_user_message"] = None
    session["pending_attachments"] = []
    session["pending_started_at"] = None
    session["pending_user_source"] = None
