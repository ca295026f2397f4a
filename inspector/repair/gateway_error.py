"""Gateway terminal-error recovery: the unsaved error row of S's owned terminal ``apperror``.

Spec run-journal-and-promotion §3.11 (``_recoverable_unsaved_gateway_terminal_error``, run
after materialization): detect the error row hermes embedded in the journal but never saved,
then tag the matching transcript row or append the row. Ported from hermes-webui byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspector.repair.journal_read import JournalRead
from inspector.repair.model_context import normalize, text_match
from inspector.store.journal import authoritative_terminal_event, event_owns_run


@dataclass(frozen=True)
class GatewayTerminalError:
    """An unsaved gateway error row embedded in S's owned terminal ``apperror``."""

    row: dict
    event_id: str
    stream_id: str


def _embedded_error_row(messages: Any) -> dict | None:
    """The last assistant row after the last user row, if it is an error with text: no user row
    at all is no current turn, and whitespace is no text (hermes ``content.strip()``)."""
    if not isinstance(messages, list):
        return None
    last_user = max(
        (i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"), default=None
    )
    if last_user is None:
        return None
    row = next(
        (
            m
            for m in reversed(messages[last_user + 1 :])
            if isinstance(m, dict) and m.get("role") == "assistant"
        ),
        None,
    )
    if row is None or row.get("_error") is not True:
        return None
    content = row.get("content")
    return row if isinstance(content, str) and content.strip() else None


def detect_gateway_terminal_error(
    session_id: str, stream_id: Any, journal: JournalRead
) -> GatewayTerminalError | None:
    """``_recoverable_unsaved_gateway_terminal_error``: the owned apperror whose session was not saved."""
    if not stream_id or not journal.events:
        return None
    event = authoritative_terminal_event(journal.events)
    if event is None or event.get("event") != "apperror" or event.get("type") != "apperror":
        return None
    if event.get("terminal") is not True or not event_owns_run(event, session_id, stream_id):
        return None
    payload = event.get("payload")
    if not isinstance(payload, dict) or payload.get("session_id") != session_id:
        return None
    embedded = payload.get("session")
    if not isinstance(embedded, dict) or embedded.get("session_id") != session_id:
        return None
    if (
        payload.get("terminal_session_persisted") is True
        and payload.get("terminal_session_persisted_session_id") == session_id
    ):
        return None  # hermes saved it already
    row = _embedded_error_row(embedded.get("messages"))
    if row is None:
        return None
    return GatewayTerminalError(row=row, event_id=event["event_id"], stream_id=stream_id)


def _tag_recovered_error(row: dict, found: GatewayTerminalError) -> None:
    row["_recovered_from_run_journal"] = True
    row["_recovered_stream_id"] = found.stream_id
    row["_recovered_event_id"] = found.event_id


def materialize_gateway_terminal_error(session: dict, found: GatewayTerminalError) -> str:
    """Put the error row into the transcript; returns how: "present", "tagged" or "appended"."""
    messages = session["messages"]
    if any(isinstance(m, dict) and m.get("_recovered_event_id") == found.event_id for m in messages):
        return "present"
    pending = session.get("pending_user_message")
    # The turn start needs the pending prompt; during the lazy retry it is gone, so the
    # row is always appended there.
    start = None
    if normalize(pending):
        start = next((i for i in range(len(messages) - 1, -1, -1) if text_match(messages[i], pending)), None)
    if start is not None:
        for j in range(len(messages) - 1, start, -1):
            m = messages[j]
            if not isinstance(m, dict):
                continue
            tagged = m.get("_recovered_stream_id")
            if tagged and tagged != found.stream_id:
                continue
            if (
                m.get("role") == "assistant"
                and m.get("_error") is True
                and m.get("content") == found.row.get("content")
            ):
                _tag_recovered_error(m, found)
                return "tagged"
    row = dict(found.row)
    _tag_recovered_error(row, found)
    messages.append(row)
    return "appended"
