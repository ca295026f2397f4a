"""Journal materialization: stream S's journaled output put into the session.

Spec run-journal-and-promotion §3.9 (``_append_journaled_partial_output(session, S, dedupe)``):
journaled text, reasoning and tool cards become ``_recovered_from_run_journal`` rows in
``messages`` and cards in ``tool_calls``, with the dedupe pass against rows already there.
Ported from hermes-webui byte for byte; the session *dict* is mutated in place, as hermes
mutates its ``Session``, and the quirks of §6.2 are reproduced and reported.

The code keeps hermes' Python expressions (``str(x or '')``, ``int(...)``, truthiness) on
purpose: the same expressions give the same bytes and raise the same exceptions on odd input.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from inspector.repair.journal_read import JournalRead, journal_outputs
from inspector.repair.model_context import (
    CONTEXT_DEDUPE_WINDOW,
    checkpoint_match,
    context_projection,
    normalize,
)

FLUSH_EVENTS = frozenset({"done", "stream_end", "cancel", "apperror", "error"})
_DISPATCHED = FLUSH_EVENTS | {"interim_assistant", "tool", "tool_complete"}  # see _Materializer._dispatch
TOOL_ARG_LIMIT = 4
TOOL_ARG_CHARS = 120
SUBSTRING_MATCH_MIN = 24


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
        # The cards not yet completed, as indices into ``cards`` (ascending): all of them, and by
        # name. A completed card stays listed until a look at the top of its list finds it done.
        self.open_cards: list[int] = []
        self.open_by_name: dict[str, list[int]] = {}
        # normalize() of the str contents already looked at, by the string's id (the string is
        # kept in the entry, so the id cannot be reused while the entry lives)
        self.normalized: dict[int, tuple[str, str]] = {}
        self.window: list | None = None  # see _window_of

    # -------------------------------------------------- normalized text and the model context

    def normalize(self, value: Any) -> str:
        """:func:`~inspector.repair.model_context.normalize`, remembered for a ``str`` (immutable:
        its normalized text never changes); any other value is normalized again each time."""
        if type(value) is not str:
            return normalize(value)
        known = self.normalized.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        text = normalize(value)
        self.normalized[id(value)] = (value, text)
        return text

    def append_to_context(self, message: dict) -> None:
        """:func:`~inspector.repair.model_context.append_to_context` (hermes'
        ``_append_recovered_turn_to_context``) with the window's texts normalized once each:
        the same rows appended (tests/repair/test_materialize_context_cache.py holds the two
        equal)."""
        s = self.s
        context = s.get("context_messages")
        if not isinstance(context, list):
            context = []
            s["context_messages"] = context
        if not context:
            for existing in s.get("messages") or []:
                projected = context_projection(existing)
                if projected is not None:
                    context.append(projected)
        projected = self._projection(message)
        if projected is not None and not self._context_already_has(context, projected):
            self._add_to_context(context, dict(projected))

    def _add_to_context(self, context: list, added: dict) -> None:
        context.append(added)
        window = self.window
        if window is not None and window[0] is context and window[1] == len(context) - 1:
            window[1] += 1
            window[2].append(added.get("role"))
            window[3].append(self.normalize(added.get("content")))

    def _append_own_row_to_context(self, message: dict) -> None:
        """:meth:`append_to_context` of a row :meth:`_append_row` made, without its reasoning: a
        fresh dict of ``role``, ``content`` (a ``str``), ``timestamp`` and the two recovery tags.
        Its projection is an equal copy of it (no ``reasoning``, ``_error``, ``tool_call_id`` or
        ``tool_calls``; a ``str`` content is never reasoning-only parts), or None when its text is
        blank; so the row itself is appended, held by nothing else, instead of two copies
        (tests/repair/test_materialize_context_cache.py holds the two paths equal)."""
        context = self.s.get("context_messages")
        if not isinstance(context, list) or not context:
            self.append_to_context(message)  # a context made or seeded first: the general path
            return
        if self.normalize(message["content"]) and not self._context_already_has(context, message):
            self._add_to_context(context, message)

    def _projection(self, message: Any) -> dict | None:
        """:func:`~inspector.repair.model_context.context_projection` of a row the pass adds (or
        claims), its text normalized through :meth:`normalize` (then found again by the window's
        look): the same projection."""
        return context_projection(message, self.normalize)

    def _window_of(self, context: list) -> list:
        """``[context, its length, roles, texts]`` of the last :data:`CONTEXT_DEDUPE_WINDOW`
        context rows (role and normalized text of each; ``None`` text for a row that is not a
        dict), kept up to date by :meth:`append_to_context` and made again whenever the context
        list is another one or changed otherwise (the pass never changes a row in it)."""
        window = self.window
        if window is None or window[0] is not context or window[1] != len(context):
            rows = context[-CONTEXT_DEDUPE_WINDOW:]
            dicts = [isinstance(e, dict) for e in rows]
            window = [
                context,
                len(context),
                deque(
                    (e.get("role") if d else None for e, d in zip(rows, dicts, strict=True)),
                    CONTEXT_DEDUPE_WINDOW,
                ),
                deque(
                    (
                        self.normalize(e.get("content")) if d else None
                        for e, d in zip(rows, dicts, strict=True)
                    ),
                    CONTEXT_DEDUPE_WINDOW,
                ),
            ]
            self.window = window
        return window

    def _context_already_has(self, context: list, row: dict) -> bool:
        text = self.normalize(row.get("content"))
        if not text:
            return False
        if row.get("role") == "user":
            last = context[-1] if context else None
            return checkpoint_match(
                last, row.get("content"), row.get("timestamp"), row.get("_source"), row.get("attachments")
            )
        # hermes: a row of the last 8 with the same role and normalized text (a dict; its text is
        # then a str, never None); most rows match none, which the text search says at once
        _, _, roles, texts = self._window_of(context)
        if text not in texts:
            return False
        role = row.get("role")
        return any(t is not None and r == role and t == text for r, t in zip(roles, texts, strict=True))

    # -------------------------------------------------- flush

    def flush(self) -> int | None:
        content = "".join(self.text_parts).strip()
        reasoning = "".join(self.reasoning_parts).strip()
        self.text_parts.clear()  # in place: run() holds these two lists
        self.reasoning_parts.clear()
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
            existing = self.normalize(message.get("content"))
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
        return checkpoint_match(
            message,
            s.get("pending_user_message"),
            s.get("pending_started_at"),
            s.get("pending_user_source"),
            s.get("pending_attachments"),
        )

    def _belongs_to_current_turn(self, idx: int) -> bool:
        messages = self.s.get("messages") or []
        owner = next(
            (
                j
                for j in range(idx - 1, -1, -1)
                if isinstance(messages[j], dict) and messages[j].get("role") == "user"
            ),
            None,
        )
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
            self.append_to_context(_without_reasoning(existing))
            if _attach_reasoning(existing, reasoning):
                self.report.recovered = True
                self.report.reasoning_attached.append(idx)
        return idx

    def _before_current_turn(self, idx: int) -> bool:
        # Only for the warning: a match that lies before the newest user row of the
        # session as it was is text from an earlier turn (quirk 3), not this turn's reply.
        messages = self.s.get("messages") or []
        last_user = next(
            (
                j
                for j in range(self.initial_count - 1, -1, -1)
                if isinstance(messages[j], dict) and messages[j].get("role") == "user"
            ),
            -1,
        )
        return idx < last_user

    def _reasoning_only_match(self, reasoning: str) -> int | None:
        messages = self.s["messages"]
        for idx in range(self.initial_count):
            if idx in self.claimed:
                continue
            m = messages[idx]
            if (
                isinstance(m, dict)
                and m.get("_recovered_from_run_journal")
                and m.get("_recovered_stream_id") == self.stream_id
                and m.get("role") == "assistant"
                and not str(m.get("content") or "").strip()
                and str(m.get("reasoning") or "").strip() == reasoning
            ):
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
        self._append_own_row_to_context(_without_reasoning(row))
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
            if (
                isinstance(m, dict)
                and m.get("_recovered_from_run_journal")
                and m.get("_recovered_stream_id") == self.stream_id
                and m.get("role") == "assistant"
                and not str(m.get("content") or "").strip()
                and not str(m.get("reasoning") or "").strip()
            ):
                self.current = j
                self.report.anchor_reused = True
                return j
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "timestamp": int(created_at or self.now),
                "_recovered_from_run_journal": True,
                "_recovered_stream_id": self.stream_id,
            }
        )
        self.current = len(messages) - 1
        self.report.recovered = True
        self.report.anchors_added.append(self.current)
        return self.current

    def on_tool(self, seq: Any, payload: dict, created_at: Any) -> None:
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
            "tid": f"journal-{seq or len(self.cards) + 1}",
            "assistant_msg_idx": anchor,
            "args": _tool_args(payload.get("args") or {}),
            "done": False,
            "_recovered_from_run_journal": True,
            "_recovered_stream_id": self.stream_id,
        }
        if self.dedupe and self._same_stream_card_named(name):
            self.report.duplicate_cards.append(name)
        self.open_cards.append(len(self.cards))
        self.open_by_name.setdefault(name, []).append(len(self.cards))
        self.cards.append(card)
        self.report.recovered = True
        self.report.cards_added.append(card)
        self.current = anchor

    def _same_stream_card_named(self, name: str) -> bool:
        return any(
            isinstance(c, dict)
            and str(c.get("name") or "") == name
            and c.get("_recovered_stream_id") == self.stream_id
            for c in self.s.get("tool_calls") or []
        )

    def on_tool_complete(self, payload: dict) -> None:
        # hermes walks the cards from the newest for the first one not done (of this name, when
        # the event names one); the lists of open cards give that card without the walk.
        name = str(payload.get("name") or "")
        stack = self.open_by_name.get(name, []) if name else self.open_cards
        while stack and self.cards[stack[-1]]["done"]:
            stack.pop()
        if stack:
            card = self.cards[stack[-1]]
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

    def run(self, events: Iterable[Any]) -> None:
        """The walk over the events, each a :class:`~inspector.store.journal.JournalEvent` (its
        fields are hermes' ``event.get(name)``).

        A token and a reasoning event (most of a journal) are handled in the loop itself, as
        :meth:`on_token` and :meth:`on_reasoning` handle them (``created_at`` looked at only
        when it starts the turn's text); ``tests/repair/test_materialize_loop_rules.py`` holds
        the loop to the plain per-event dispatch (:meth:`run_plain`)."""
        text_parts, reasoning_parts, report = self.text_parts, self.reasoning_parts, self.report
        seen = 0
        try:
            for event in events:
                seen += 1
                name = event.event or event.type or ""
                if type(name) is not str:
                    name = str(name)
                if name == "token":
                    payload = event.payload
                    if not isinstance(payload, dict):
                        continue  # {}: no text, nothing happens
                    text = payload.get("text") or ""
                    if type(text) is not str:
                        text = str(text)
                    if not text:
                        continue
                    if not text.strip():
                        report.whitespace_tokens += 1
                    if not text_parts and self.started_at is None:  # _start(reasoning=False)
                        self.started_at = _created_at(event) or self.now
                    text_parts.append(text)
                    continue
                if name == "reasoning":
                    payload = event.payload
                    if not isinstance(payload, dict):
                        continue
                    text = payload.get("text") or payload.get("reasoning") or payload.get("thinking") or ""
                    if type(text) is not str:
                        text = str(text)
                    if not text:
                        continue
                    # _start(reasoning=True)
                    if not text_parts and not reasoning_parts and self.started_at is None:
                        self.started_at = _created_at(event) or self.now
                    reasoning_parts.append(text)
                    continue
                if name in _DISPATCHED:  # any other event (metering, ...) does nothing
                    self._dispatch(name, event)
        finally:
            report.events += seen
        self._finish()

    def run_plain(self, events: Iterable[Any]) -> None:
        """:meth:`run` with every event through :meth:`_dispatch` (the handlers one by one, as
        hermes' loop reads): what the tests hold :meth:`run` to."""
        for event in events:
            self.report.events += 1
            name = str(event.event or event.type or "")
            if name in ("token", "reasoning"):
                payload = event.payload if isinstance(event.payload, dict) else {}
                created_at = event.created_at if isinstance(event.created_at, (int, float)) else None
                if name == "reasoning":
                    self.on_reasoning(payload, created_at)
                else:
                    self.on_token(payload, created_at)
            else:
                self._dispatch(name, event)
        self._finish()

    def _dispatch(self, name: str, event: Any) -> None:
        payload = event.payload if isinstance(event.payload, dict) else {}
        created_at = _created_at(event)
        if name == "interim_assistant":
            self.on_interim(payload, created_at)
        elif name == "tool":
            self.on_tool(event.seq, payload, created_at)
        elif name == "tool_complete":
            self.on_tool_complete(payload)
        elif name in FLUSH_EVENTS:
            self.flush()

    def _finish(self) -> None:
        self.flush()
        if self.cards:
            self.s["tool_calls"] = list(self.s.get("tool_calls") or []) + self.cards
            self.report.recovered = True


def _created_at(event: Any) -> Any:
    """The event's ``created_at`` as the handlers take it: a number, else None."""
    created_at = event.created_at
    return created_at if isinstance(created_at, (int, float)) else None


def _without_reasoning(message: dict) -> dict:
    projected = dict(message)
    projected.pop("reasoning", None)
    return projected


def append_journaled_partial_output(
    session: dict, stream_id: Any, journal: JournalRead, *, dedupe: bool, now: float
) -> MaterializeReport:
    """``_append_journaled_partial_output``: journaled text, reasoning and tool cards into the session.

    ``report.recovered`` is hermes' return value. An unreadable journal or no events
    recovers nothing. Odd values inside events raise exactly where hermes raises.
    """
    report = MaterializeReport()
    if not stream_id or not journal.readable or not journal.events:
        return report
    _Materializer(session, stream_id, dedupe=dedupe, now=now, report=report).run(
        journal_outputs(journal.events)
    )
    return report
