"""What the two run-journal repairs share, ported from hermes-webui byte for byte.

Spec run-journal-and-promotion §3.2-§3.11: text normalisation and the pending-prompt
matches, the model-context projection, the interrupted marker (cause and wording), the
recovered pending user turn, journal materialisation (``_append_journaled_partial_output``),
the gateway terminal-error recovery and ``_run_journal_has_visible_output``.

Everything here works on a session *dict* (the ``LoadedSession.data`` of
:mod:`inspector.store.sidecar`, deep-copied by the planner) and mutates it in place, the
way hermes mutates its ``Session`` object. The code keeps hermes' Python expressions
(``str(x or '')``, ``int(...)``, truthiness) on purpose: the same expressions give the
same bytes and raise the same exceptions on odd input. Time comes from the explicit
clock, never from the system.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.plan import Clock
from inspector.repair.context import RepairContext
from inspector.store.files import FileSnapshot
from inspector.store.journal import (
    JournalUnreadable,
    authoritative_terminal_event,
    event_owns_run,
    journal_path,
    parse_journal_bytes,
)
from inspector.store.journal_raw import torn_line_numbers
from inspector.store.jsonfmt import RawFile
from inspector.store.sidecar import LoadedSession, SidecarError, is_safe_session_id, read_sidecar

# ---------------------------------------------------------------- wording (§3.8)

MARKER_HEAD = (
    "**Response interrupted.**\n\n"
    "The live response stream stopped before this turn finished. "
)
RECOVERED_OUTCOME = (
    "The partial output above was recovered from the run journal, "
    "but the interrupted agent process could not continue."
)
PENDING_RETRY_OUTCOME = "Recovering the partial output from the run journal \u2014 reload this session to retry."
NO_OUTPUT_OUTCOME = "The user message above was preserved, but no agent output was recovered."
# Fixed wordings of the lazy retry: no Evidence sentence.
RECOVERED_WORDING = MARKER_HEAD + RECOVERED_OUTCOME
NEUTRAL_WORDING = MARKER_HEAD + "Partial output may have been lost."
# Legacy constants: never produced by new repairs, still found in old sidecars.
LEGACY_NO_OUTPUT_WORDING = MARKER_HEAD + NO_OUTPUT_OUTCOME
LEGACY_PENDING_RETRY_WORDING = MARKER_HEAD + PENDING_RETRY_OUTCOME

CAUSE_EVIDENCE = {
    "process_restart": (
        "Evidence: the WebUI process started after this turn began, so this "
        "looks like a real process crash or restart."
    ),
    "stream_run_split_brain": (
        "Evidence: the browser response stream was gone but the worker registry "
        "still listed the run. This is a stream/run bookkeeping split-brain."
    ),
    "lost_worker_bookkeeping": (
        "Evidence: the stream was gone and worker bookkeeping no longer had an "
        "active run for it. This usually means the worker state was lost or "
        "cleaned up without a terminal event."
    ),
    "unknown": (
        "Evidence: the stream stopped, but the WebUI could not classify the "
        "interruption more precisely."
    ),
}
RETRY_KEYS = (
    "_pending_journal_recovery",
    "_journal_retry_stream_id",
    "_journal_retry_attempts",
    "_journal_retry_first_seen_ts",
)
FLUSH_EVENTS = frozenset({"done", "stream_end", "cancel", "apperror", "error"})
TOOL_ARG_LIMIT = 4
TOOL_ARG_CHARS = 120
SUBSTRING_MATCH_MIN = 24
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


def context_projection(message: Any) -> dict | None:
    """The row the model would see for ``message``, or None when it never enters the context."""
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
    if not normalize(projected.get("content")) and not projected.get("tool_call_id") \
            and not projected.get("tool_calls"):
        return None
    return projected


def _context_already_has(context: list, row: dict) -> bool:
    text = normalize(row.get("content"))
    if not text:
        return False
    if row.get("role") == "user":
        last = context[-1] if context else None
        return checkpoint_match(last, row.get("content"), row.get("timestamp"), row.get("_source"),
                                row.get("attachments"))
    for existing in reversed(context[-CONTEXT_DEDUPE_WINDOW:]):
        if isinstance(existing, dict) and existing.get("role") == row.get("role") \
                and normalize(existing.get("content")) == text:
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


# ---------------------------------------------------------------- the marker (§3.8)


def classify_cause(stream_id: Any, pending_started_at: Any, server_started_at: float) -> str:
    """Why the stream died, as hermes would say it in a process started at ``server_started_at``.

    Offline no worker registry exists, so a known stream is never "still listed":
    ``stream_run_split_brain`` cannot occur and a known stream id gives
    ``lost_worker_bookkeeping``.
    """
    try:
        started = float(pending_started_at) if pending_started_at else None
    except (TypeError, ValueError):
        started = None
    if started is not None and float(server_started_at or 0.0) > started:
        return "process_restart"
    if stream_id:
        return "lost_worker_bookkeeping"
    return "unknown"


def marker_content(*, recovered_output: bool, pending_retry: bool, cause: str) -> str:
    """Freshly built marker text: head, the cause's Evidence sentence, the outcome."""
    if recovered_output:
        outcome = RECOVERED_OUTCOME
    elif pending_retry:
        outcome = PENDING_RETRY_OUTCOME
    else:
        outcome = NO_OUTPUT_OUTCOME
    evidence = CAUSE_EVIDENCE.get(cause, CAUSE_EVIDENCE["unknown"])
    return f"{MARKER_HEAD}{evidence} {outcome}"


def interrupted_marker(clock: Clock, *, recovered_output: bool = False, pending_retry: bool = False,
                       stream_id: Any = None, pending_started_at: Any = None) -> dict:
    """``_interrupted_recovery_marker``: the assistant row that closes an interrupted turn."""
    cause = classify_cause(stream_id, pending_started_at, clock.server_started_at)
    marker = {
        "role": "assistant",
        "content": marker_content(recovered_output=recovered_output, pending_retry=pending_retry, cause=cause),
        "timestamp": int(clock.now),
        "_error": True,
        "type": "interrupted",
        "interruption_cause": cause,
    }
    if pending_retry and not recovered_output:
        marker["_pending_journal_recovery"] = True
    return marker


def marker_with_retry_hook(clock: Clock, *, recovered_output: bool, stream_id: Any,
                           pending_started_at: Any) -> dict:
    """Recovered variant, no-output variant (no stream id) or the armed pending-retry variant."""
    if recovered_output:
        return interrupted_marker(clock, recovered_output=True, stream_id=stream_id,
                                  pending_started_at=pending_started_at)
    if not stream_id:
        # hermes does not pass the stream id here: the cause can only be restart or unknown.
        return interrupted_marker(clock, pending_started_at=pending_started_at)
    marker = interrupted_marker(clock, pending_retry=True, stream_id=stream_id,
                                pending_started_at=pending_started_at)
    marker["_journal_retry_stream_id"] = str(stream_id)
    marker["_journal_retry_attempts"] = 0
    marker["_journal_retry_first_seen_ts"] = int(clock.now)
    return marker


def strip_retry_keys(marker: dict) -> None:
    """Remove the four lazy-retry keys from a marker."""
    for key in RETRY_KEYS:
        marker.pop(key, None)


# ---------------------------------------------------------------- recovered user turn (§3.5)

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
        return {"type": "completion", "task_id": m.group("sid"), "command": m.group("cmd"),
                "exit_code": exit_code}
    m = _WAKEUP_WATCH_MATCH.match(body)
    if m:
        return {"type": "watch_match", "task_id": m.group("sid"), "command": m.group("cmd"),
                "pattern": m.group("pattern")}
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


# ---------------------------------------------------------------- reading the journal (§1.7)


@dataclass(frozen=True)
class JournalRead:
    """One run journal as the repair sees it, read once through the snapshot."""

    stream_id: Any
    path: Path | None
    exists: bool
    size: int
    events: list[dict]
    malformed: list[dict]
    error: str | None  # why hermes cannot read it (then it behaves as if there were no output)
    torn_lines: list[int]  # physical lines str.splitlines() tore apart (U+2028 and friends)

    @property
    def readable(self) -> bool:
        """False when hermes' reader failed (bad id, I/O error, invalid UTF-8)."""
        return self.error is None


def read_journal(snapshot: FileSnapshot, session_dir: Path, session_id: str, stream_id: Any) -> JournalRead:
    """Read S's journal the way ``read_run_events`` does; never raises."""
    def failed(reason: str, path: Path | None = None, exists: bool = False, size: int = 0) -> JournalRead:
        return JournalRead(stream_id, path, exists, size, [], [], reason, [])

    if not stream_id:
        return failed("no stream id")
    if not isinstance(stream_id, str):
        return failed(f"stream id {stream_id!r} is not a string")
    try:
        path = journal_path(session_dir, session_id, stream_id)
    except ValueError as exc:
        return failed(str(exc))
    try:
        raw = snapshot.read(path)
    except OSError as exc:
        return failed(f"cannot read {path.name}: {exc}", path, True)
    if raw is None:
        return JournalRead(stream_id, path, False, 0, [], [], None, [])
    try:
        parsed = parse_journal_bytes(raw.data)
    except JournalUnreadable as exc:
        return failed(str(exc), path, True, len(raw.data))
    torn = torn_line_numbers(raw.data.decode("utf-8"))
    return JournalRead(stream_id, path, True, len(raw.data), parsed.events, parsed.malformed, None, torn)


def journal_has_visible_output(journal: JournalRead) -> bool:
    """``_run_journal_has_visible_output``: a token, a fresh interim, reasoning or any tool."""
    for event in journal.events:
        name = str(event.get("event") or event.get("type") or "")
        payload = event.get("payload") if isinstance(event.get("payload"), dict) else {}
        if name == "token" and str(payload.get("text") or ""):
            return True  # whitespace-only counts here (quirk 6)
        if name == "interim_assistant" and not payload.get("already_streamed") \
                and str(payload.get("text") or "").strip():
            return True
        if name == "reasoning":
            text = payload.get("text") or payload.get("reasoning") or payload.get("thinking") or ""
            if str(text).strip():
                return True
        if name == "tool":
            return True
    return False


def journal_completed(session_id: str, stream_id: Any, journal: JournalRead) -> bool:
    """A1: the owned authoritative terminal event is a ``completed`` done/stream_end."""
    if not stream_id or not journal.events:
        return False
    event = authoritative_terminal_event(journal.events)
    return (
        event is not None
        and event.get("terminal") is True
        and event.get("terminal_state") == "completed"
        and event_owns_run(event, session_id, stream_id)
    )


# ---------------------------------------------------------------- materialization (§3.9)


@dataclass
class MaterializeReport:
    """What one materialization pass did, for the plan summary and warnings."""

    recovered: bool = False  # hermes' return value
    rows_added: list[int] = field(default_factory=list)
    anchors_added: list[int] = field(default_factory=list)
    anchor_reused: bool = False
    reasoning_attached: list[int] = field(default_factory=list)
    rows_matched: list[int] = field(default_factory=list)  # dedupe: existing rows that hold the text
    earlier_turn_matches: list[tuple[int, str]] = field(default_factory=list)  # quirk 3
    reasoning_rows_matched: list[int] = field(default_factory=list)
    cards_added: list[dict] = field(default_factory=list)
    cards_skipped: list[str] = field(default_factory=list)  # dedupe: already present
    duplicate_cards: list[str] = field(default_factory=list)  # quirk 2
    whitespace_tokens: int = 0  # quirk 6
    truthy_is_error: list[tuple[str, Any]] = field(default_factory=list)  # quirk 7
    events: int = 0


def _tool_args(args: Any) -> dict:
    """First 4 entries, keys and values through Python str(), values cut at 120 code points."""
    if not isinstance(args, dict):
        return {}
    out = {}
    for key, value in list(args.items())[:TOOL_ARG_LIMIT]:
        text = str(value)
        out[str(key)] = text[:TOOL_ARG_CHARS] + ("..." if len(text) > TOOL_ARG_CHARS else "")
    return out


def tool_card_present(session: dict, name: str, preview: str, stream_id: Any) -> bool:
    """``_journal_tool_already_present``: same name and preview, not tagged with another stream."""
    preview_text = normalize(preview)
    stream = str(stream_id) if stream_id else None
    for card in session.get("tool_calls") or []:
        if not isinstance(card, dict) or str(card.get("name") or "") != name:
            continue
        if normalize(card.get("preview") or card.get("snippet") or "") != preview_text:
            continue
        tagged = card.get("_recovered_stream_id")
        if stream is not None and tagged and str(tagged) != stream:
            continue
        return True
    return False


def _attach_reasoning(message: dict, reasoning: str) -> bool:
    if not reasoning or str(message.get("reasoning") or "").strip():
        return False
    message["reasoning"] = reasoning
    return True


class _Materializer:
    """The state of one ``_append_journaled_partial_output`` pass (hermes keeps it in closures)."""

    def __init__(self, session: dict, stream_id: Any, *, dedupe: bool, now: float, report: MaterializeReport):
        self.s = session
        self.stream_id = stream_id
        self.dedupe = dedupe
        self.now = now
        self.report = report
        self.text_parts: list[str] = []
        self.reasoning_parts: list[str] = []
        self.started_at: Any = None
        self.current: int | None = None
        self.cards: list[dict] = []
        self.initial_count = len(session.get("messages") or [])
        self.claimed: set[int] = set()

    # -------------------------------------------------- flush

    def flush(self) -> int | None:
        content = "".join(self.text_parts).strip()
        reasoning = "".join(self.reasoning_parts).strip()
        self.text_parts, self.reasoning_parts = [], []
        if not content and not reasoning:
            return self.current
        if self.dedupe and content:
            idx = self._content_match(content, reasoning)
            if idx is not None:
                return self._claim_content_match(idx, reasoning, content)
        if self.dedupe and reasoning and not content:
            idx = self._reasoning_only_match(reasoning)
            if idx is not None:
                self.claimed.add(idx)
                self.current, self.started_at = idx, None
                self.report.reasoning_rows_matched.append(idx)
                return idx
        return self._append_row(content, reasoning)

    def _find_existing(self, content: str, excluded: set[int]) -> int | None:
        candidate = normalize(content)
        if not candidate:
            return None
        messages = self.s.get("messages") or []
        substring = None
        for idx in range(min(len(messages), self.initial_count)):
            message = messages[idx]
            if idx in excluded or not isinstance(message, dict) or message.get("role") != "assistant":
                continue
            if message.get("_error"):
                continue
            existing = normalize(message.get("content"))
            if not existing:
                continue
            if existing == candidate:
                return idx
            if substring is None and len(candidate) >= SUBSTRING_MATCH_MIN and candidate in existing:
                substring = idx
        return substring

    def _content_match(self, content: str, reasoning: str) -> int | None:
        excluded = set(self.claimed)
        while True:
            idx = self._find_existing(content, excluded)
            if idx is None or not reasoning or self._belongs_to_current_turn(idx):
                return idx
            excluded.add(idx)

    def _pending_checkpoint(self, message: Any) -> bool:
        s = self.s
        return checkpoint_match(message, s.get("pending_user_message"), s.get("pending_started_at"),
                                s.get("pending_user_source"), s.get("pending_attachments"))

    def _belongs_to_current_turn(self, idx: int) -> bool:
        messages = self.s.get("messages") or []
        owner = next((j for j in range(idx - 1, -1, -1)
                      if isinstance(messages[j], dict) and messages[j].get("role") == "user"), None)
        if owner is None:
            return False
        pending = normalize(self.s.get("pending_user_message"))
        if pending and not self._pending_checkpoint(messages[owner]):
            return False
        for j in range(idx + 1, self.initial_count):
            row = messages[j]
            if not isinstance(row, dict) or row.get("role") != "user":
                continue
            if pending and self._pending_checkpoint(row) and row.get("_recovered"):
                continue
            return False
        return True

    def _claim_content_match(self, idx: int, reasoning: str, content: str) -> int:
        self.claimed.add(idx)
        self.current, self.started_at = idx, None
        self.report.rows_matched.append(idx)
        if self._before_current_turn(idx):
            self.report.earlier_turn_matches.append((idx, content))
        messages = self.s["messages"]
        if 0 <= idx < len(messages):
            existing = messages[idx]
            append_to_context(self.s, _without_reasoning(existing))
            if _attach_reasoning(existing, reasoning):
                self.report.recovered = True
                self.report.reasoning_attached.append(idx)
        return idx

    def _before_current_turn(self, idx: int) -> bool:
        # Only for the warning: a match that lies before the newest user row of the
        # session as it was is text from an earlier turn (quirk 3), not this turn's reply.
        messages = self.s.get("messages") or []
        last_user = next((j for j in range(self.initial_count - 1, -1, -1)
                          if isinstance(messages[j], dict) and messages[j].get("role") == "user"), -1)
        return idx < last_user

    def _reasoning_only_match(self, reasoning: str) -> int | None:
        messages = self.s["messages"]
        for idx in range(self.initial_count):
            if idx in self.claimed:
                continue
            m = messages[idx]
            if (isinstance(m, dict) and m.get("_recovered_from_run_journal")
                    and m.get("_recovered_stream_id") == self.stream_id and m.get("role") == "assistant"
                    and not str(m.get("content") or "").strip()
                    and str(m.get("reasoning") or "").strip() == reasoning):
                return idx
        return None

    def _append_row(self, content: str, reasoning: str) -> int:
        row = {
            "role": "assistant",
            "content": content,
            "timestamp": int(self.started_at or self.now),
            "_recovered_from_run_journal": True,
            "_recovered_stream_id": self.stream_id,
        }
        _attach_reasoning(row, reasoning)
        self.s["messages"].append(row)
        append_to_context(self.s, _without_reasoning(row))
        self.current = len(self.s["messages"]) - 1
        self.started_at = None
        self.report.recovered = True
        self.report.rows_added.append(self.current)
        return self.current

    # -------------------------------------------------- anchors and tools

    def ensure_anchor(self, created_at: Any) -> int:
        idx = self.flush()
        if idx is not None:
            return idx
        messages = self.s["messages"]
        for j in range(len(messages) - 1, -1, -1):
            m = messages[j]
            if (isinstance(m, dict) and m.get("_recovered_from_run_journal")
                    and m.get("_recovered_stream_id") == self.stream_id and m.get("role") == "assistant"
                    and not str(m.get("content") or "").strip() and not str(m.get("reasoning") or "").strip()):
                self.current = j
                self.report.anchor_reused = True
                return j
        messages.append({
            "role": "assistant",
            "content": "",
            "timestamp": int(created_at or self.now),
            "_recovered_from_run_journal": True,
            "_recovered_stream_id": self.stream_id,
        })
        self.current = len(messages) - 1
        self.report.recovered = True
        self.report.anchors_added.append(self.current)
        return self.current

    def on_tool(self, event: dict, payload: dict, created_at: Any) -> None:
        anchor = self.flush()
        if anchor is None:
            anchor = self.ensure_anchor(created_at)
        name = str(payload.get("name") or "tool")
        preview = str(payload.get("preview") or "")
        if self.dedupe and tool_card_present(self.s, name, preview, self.stream_id):
            self.current = anchor
            self.report.cards_skipped.append(name)
            return
        card = {
            "name": name,
            "preview": preview,
            "snippet": preview,
            "tid": f"journal-{event.get('seq') or len(self.cards) + 1}",
            "assistant_msg_idx": anchor,
            "args": _tool_args(payload.get("args") or {}),
            "done": False,
            "_recovered_from_run_journal": True,
            "_recovered_stream_id": self.stream_id,
        }
        if self.dedupe and self._same_stream_card_named(name):
            self.report.duplicate_cards.append(name)
        self.cards.append(card)
        self.report.recovered = True
        self.report.cards_added.append(card)
        self.current = anchor

    def _same_stream_card_named(self, name: str) -> bool:
        return any(isinstance(c, dict) and str(c.get("name") or "") == name
                   and c.get("_recovered_stream_id") == self.stream_id for c in self.s.get("tool_calls") or [])

    def on_tool_complete(self, payload: dict) -> None:
        name = str(payload.get("name") or "")
        for card in reversed(self.cards):
            if card.get("done") or (name and card.get("name") != name):
                continue
            card["done"] = True
            if payload.get("preview"):
                card["preview"] = str(payload.get("preview") or "")
                card["snippet"] = str(payload.get("preview") or "")
            if payload.get("duration") is not None:
                card["duration"] = payload.get("duration")
            raw = payload.get("is_error", False)
            if isinstance(raw, (str, list, dict)):
                self.report.truthy_is_error.append((card["name"], raw))
            card["is_error"] = bool(raw)
            return

    # -------------------------------------------------- text events

    def _start(self, created_at: Any, *, reasoning: bool) -> None:
        idle = not self.text_parts and (not reasoning or not self.reasoning_parts)
        if idle and self.started_at is None:
            self.started_at = created_at or self.now

    def on_reasoning(self, payload: dict, created_at: Any) -> None:
        text = str(payload.get("text") or payload.get("reasoning") or payload.get("thinking") or "")
        if text:
            self._start(created_at, reasoning=True)
            self.reasoning_parts.append(text)

    def on_token(self, payload: dict, created_at: Any) -> None:
        text = str(payload.get("text") or "")
        if not text:
            return
        if not text.strip():
            self.report.whitespace_tokens += 1
        self._start(created_at, reasoning=False)
        self.text_parts.append(text)

    def on_interim(self, payload: dict, created_at: Any) -> None:
        if payload.get("already_streamed"):
            self.flush()
            return
        text = str(payload.get("text") or "").strip()
        if not text:
            return
        self._start(created_at, reasoning=False)
        if self.text_parts and not "".join(self.text_parts).endswith(("\n", " ")):
            self.text_parts.append("\n\n")
        self.text_parts.append(text)
        self.flush()

    # -------------------------------------------------- the pass

    def run(self, events: list[dict]) -> None:
        for event in events:
            self.report.events += 1
            name = str(event.get("event") or event.get("type") or "")
            payload = event.get("payload") if isinstance(event.get("payload"), dict) else {}
            created_at = event.get("created_at") if isinstance(event.get("created_at"), (int, float)) else None
            if name == "reasoning":
                self.on_reasoning(payload, created_at)
            elif name == "token":
                self.on_token(payload, created_at)
            elif name == "interim_assistant":
                self.on_interim(payload, created_at)
            elif name == "tool":
                self.on_tool(event, payload, created_at)
            elif name == "tool_complete":
                self.on_tool_complete(payload)
            elif name in FLUSH_EVENTS:
                self.flush()
        self.flush()
        if self.cards:
            self.s["tool_calls"] = list(self.s.get("tool_calls") or []) + self.cards
            self.report.recovered = True


def _without_reasoning(message: dict) -> dict:
    projected = dict(message)
    projected.pop("reasoning", None)
    return projected


def append_journaled_partial_output(session: dict, stream_id: Any, journal: JournalRead, *,
                                    dedupe: bool, now: float) -> MaterializeReport:
    """``_append_journaled_partial_output``: journaled text, reasoning and tool cards into the session.

    ``report.recovered`` is hermes' return value. An unreadable journal or no events
    recovers nothing. Odd values inside events raise exactly where hermes raises.
    """
    report = MaterializeReport()
    if not stream_id or not journal.readable or not journal.events:
        return report
    _Materializer(session, stream_id, dedupe=dedupe, now=now, report=report).run(journal.events)
    return report


# ---------------------------------------------------------------- gateway terminal error (§3.11)


@dataclass(frozen=True)
class GatewayTerminalError:
    """An unsaved gateway error row embedded in S's owned terminal ``apperror``."""

    row: dict
    event_id: str
    stream_id: str


def _embedded_error_row(messages: Any) -> dict | None:
    if not isinstance(messages, list):
        return None
    last_user = max((i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"),
                    default=-1)
    row = next((m for m in reversed(messages[last_user + 1:])
                if isinstance(m, dict) and m.get("role") == "assistant"), None)
    if row is None or row.get("_error") is not True:
        return None
    content = row.get("content")
    return row if isinstance(content, str) and content else None


def detect_gateway_terminal_error(session_id: str, stream_id: Any, journal: JournalRead) -> GatewayTerminalError | None:
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
    if payload.get("terminal_session_persisted") is True \
            and payload.get("terminal_session_persisted_session_id") == session_id:
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
            if m.get("role") == "assistant" and m.get("_error") is True \
                    and m.get("content") == found.row.get("content"):
                _tag_recovered_error(m, found)
                return "tagged"
    row = dict(found.row)
    _tag_recovered_error(row, found)
    messages.append(row)
    return "appended"


# ---------------------------------------------------------------- loading for a repair


@dataclass(frozen=True)
class SessionSource:
    """A sidecar loaded for a repair, or the reason the repair refuses to touch it."""

    path: Path
    raw: RawFile | None
    loaded: LoadedSession | None
    refusal: str | None


def load_session_for_repair(ctx: RepairContext, session_id: str) -> SessionSource:
    """Read ``<sid>.json`` through the snapshot; refuse unsafe ids and unusable sidecars."""
    if not is_safe_session_id(session_id):
        return SessionSource(Path(), None, None,
                             f"unsafe session id {session_id!r}: only letters, digits, '_' and '-' are allowed")
    path = ctx.session_dir / f"{session_id}.json"
    try:
        raw = ctx.snapshot.read(path)
    except OSError as exc:
        return SessionSource(path, None, None, f"cannot read {path}: {exc}")
    if raw is None:
        return SessionSource(path, None, None, f"no sidecar {path.name} in {ctx.session_dir}")
    try:
        loaded = read_sidecar(raw, now=ctx.clock.now, cwd=ctx.cwd)
    except (SidecarError, RecursionError, TypeError, ValueError) as exc:
        return SessionSource(path, raw, None, f"{path.name} cannot be loaded as hermes loads it: {exc}")
    inner = loaded.data.get("session_id")
    if not inner:
        return SessionSource(path, raw, None,
                             f"{path.name} has no session_id (hermes would invent a random one)")
    if inner != session_id:
        return SessionSource(path, raw, None,
                             f"{path.name} names session {inner!r}, not {session_id!r}")
    return SessionSource(path, raw, loaded, None)


# ---------------------------------------------------------------- plain-words notes


@dataclass
class Notes:
    """What a planner tells the user: the summary lines and the warnings."""

    summary: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def describe_output(report: MaterializeReport, where: str) -> str | None:
    """One summary line for what materialization added, e.g. "adds 2 recovered assistant rows ..."."""
    parts = []
    if report.rows_added:
        parts.append(_plural(len(report.rows_added), "recovered assistant row"))
    if report.anchors_added:
        parts.append(_plural(len(report.anchors_added), "empty anchor row") + " for tool cards")
    if report.cards_added:
        parts.append(_plural(len(report.cards_added), "tool card"))
    text = f"adds {' and '.join(parts)} {where}" if parts else ""
    if report.rows_matched:
        held = f"{_plural(len(report.rows_matched), 'journaled text segment')} already in the transcript"
        text = f"{text}; {held}" if text else f"adds nothing for {held}"
    if report.reasoning_attached:
        attach = f"attaches journaled reasoning to {_plural(len(report.reasoning_attached), 'existing row')}"
        text = f"{text}; {attach}" if text else attach
    return text or None


def journal_notes(journal: JournalRead, notes: Notes) -> None:
    """Warnings for the journal quirks that apply to this file (§6.2 items 4 and 5)."""
    name = journal.path.name if journal.path is not None else "the run journal"
    if journal.error and journal.exists:
        notes.warnings.append(f"{name}: {journal.error}; hermes treats the run as having no output")
    if journal.torn_lines:
        lines = ", ".join(str(n) for n in journal.torn_lines[:10])
        notes.warnings.append(
            f"{name}: line(s) {lines} contain U+2028, U+2029, U+0085 or another character "
            "str.splitlines() splits on; hermes tears those records apart and loses them")
    if journal.malformed:
        lines = ", ".join(str(m["line"]) for m in journal.malformed[:10])
        notes.warnings.append(
            f"{name}: hermes skips {_plural(len(journal.malformed), 'unreadable line')} (not a JSON object; "
            f"its splitlines() line numbers: {lines})")


def output_warnings(report: MaterializeReport, notes: Notes) -> None:
    """Warnings for materialization quirks that showed up in this pass (§6.2 items 2, 3, 7)."""
    for idx, text in report.earlier_turn_matches:
        snippet = text if len(text) <= 60 else text[:57] + "..."
        notes.warnings.append(
            f"journaled text {snippet!r} equals (or is contained in) row {idx} from an earlier turn; "
            "hermes' session-wide dedupe treats it as already present and recovers nothing for it")
    for name in report.duplicate_cards:
        notes.warnings.append(
            f"a {name!r} tool card recovered from this stream already exists with another preview; "
            "hermes adds another card (repeated dedupe runs duplicate cards)")
    for name, raw in report.truthy_is_error:
        notes.warnings.append(
            f"tool_complete for {name!r} has is_error={raw!r}; hermes uses truthiness, "
            f"so the card gets is_error={bool(raw)}")
