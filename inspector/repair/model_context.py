"""Text normalisation, the pending-prompt matches and the model-context projection.

Spec run-journal-and-promotion §3.2 (``_normalize_journal_recovery_text``, the checkpoint
and text matches of the pending prompt) and §3.7 (``context_messages``: which rows the
model sees, and ``_append_recovered_turn_to_context``). Ported from hermes-webui byte for
byte; ``append_to_context`` mutates the session *dict* in place, as hermes mutates its
``Session``.

The code keeps hermes' Python expressions (``str(x or '')``, ``int(...)``, truthiness) on
purpose: the same expressions give the same bytes and raise the same exceptions on odd input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

CONTEXT_DEDUPE_WINDOW = 8


# ---------------------------------------------------------------- matching (§3.2)


def normalize(value: Any) -> str:
    """hermes' ``_normalize_journal_recovery_text``: str(), split on whitespace, join with one space."""
    return " ".join(str(value or "").split())


def checkpoint_match(message: Any, pending_text: Any, timestamp: Any, source: Any, attachments: Any) -> bool:
    """The pending prompt's identity: same text, int timestamp, source and attachments."""
    if not isinstance(message, dict) or message.get("role") != "user":
        return False
    try:
        message_ts = int(message.get("timestamp"))
        expected_ts = int(timestamp)
    except (TypeError, ValueError):  # hermes lets OverflowError (inf) escape: so do we
        return False
    return (
        normalize(message.get("content")) == normalize(pending_text)
        and message_ts == expected_ts
        and (message.get("_source") or "webui") == (source or "webui")
        and list(message.get("attachments") or []) == list(attachments or [])
    )


def text_match(message: Any, pending_text: Any) -> bool:
    """A user row with the same normalized text as the pending prompt."""
    if not isinstance(message, dict) or message.get("role") != "user":
        return False
    return normalize(message.get("content")) == normalize(pending_text)


def latest_user_text_matches(messages: Any, pending_text: Any) -> bool:
    """Does the newest user row of ``messages`` text-match the pending prompt?"""
    if not isinstance(messages, list) or not pending_text:
        return False
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return text_match(message, pending_text)
    return False


# ---------------------------------------------------------------- context projection (§3.7)


def _reasoning_only_parts(content: Any) -> bool:
    if not isinstance(content, list) or not content:
        return False
    saw_reasoning = False
    for part in content:
        if not isinstance(part, dict):
            if str(part or "").strip():
                return False
            continue
        kind = str(part.get("type") or "").lower()
        if kind in {"thinking", "reasoning"}:
            text = part.get("thinking") or part.get("reasoning") or part.get("text") or ""
            saw_reasoning = saw_reasoning or bool(str(text).strip())
            continue
        if kind == "text" and str(part.get("text") or part.get("content") or "").strip():
            return False
        if kind not in {"text", "thinking", "reasoning"}:
            return False
    return saw_reasoning


def context_projection(message: Any, normalize: Callable[[Any], str] = normalize) -> dict | None:
    """The row the model would see for ``message``, or None when it never enters the context
    (``normalize``: :func:`normalize`, or a caller's memo of it)."""
    if not isinstance(message, dict):
        return None
    projected = dict(message)
    projected.pop("reasoning", None)
    if projected.get("_error"):
        return None
    if _reasoning_only_parts(projected.get("content")):
        if not projected.get("tool_calls"):
            return None
        projected["content"] = ""
    if (
        not normalize(projected.get("content"))
        and not projected.get("tool_call_id")
        and not projected.get("tool_calls")
    ):
        return None
    return projected


def _context_already_has(context: list, row: dict) -> bool:
    text = normalize(row.get("content"))
    if not text:
        return False
    if row.get("role") == "user":
        last = context[-1] if context else None
        return checkpoint_match(
            last, row.get("content"), row.get("timestamp"), row.get("_source"), row.get("attachments")
        )
    for existing in reversed(context[-CONTEXT_DEDUPE_WINDOW:]):
        if (
            isinstance(existing, dict)
            and existing.get("role") == row.get("role")
            and normalize(existing.get("content")) == text
        ):
            return True
    return False


def append_to_context(session: dict, message: dict) -> None:
    """``_append_recovered_turn_to_context``: seed an empty context, then append unless present."""
    context = session.get("context_messages")
    if not isinstance(context, list):
        context = []
        session["context_messages"] = context
    if not context:
        # Seeding projects every current message, the one being added included.
        for existing in session.get("messages") or []:
            projected = context_projection(existing)
            if projected is not None:
                context.append(projected)
    projected = context_projection(message)
    if projected is not None and not _context_already_has(context, projected):
        context.append(dict(projected))
