"""Which journal events became which transcript rows. Pure Python, no Qt (tested headless).

hermes' materialization (spec run-journal §3.9) turns a run's events into rows: consecutive
``token``/``reasoning`` events form one segment that a flush (``interim_assistant``, ``tool``,
a terminal event, the end) turns into one assistant row tagged ``_recovered_stream_id = run``;
a ``tool`` event becomes a tool card with ``tid = "journal-<seq>"`` hanging under the row at
``assistant_msg_idx``, and its ``tool_complete`` finishes that card. Replaying the segmentation
and matching segments to the tagged rows by text tells, for a recovered row, the events it came
from, and for an event, the row it became. Rows hermes de-duplicated onto older untagged rows
cannot be told apart from ordinary rows, so they are not linked.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

TERMINAL_EVENTS = frozenset({"done", "cancel", "apperror", "error", "stream_end"})


def normalize(text: Any) -> str:
    """hermes' normalize: whitespace runs become one space, ends trimmed."""
    if text is None:
        return ""
    return " ".join(str(text).split())


@dataclass
class Segment:
    """One flushed row's worth of events: its text, its reasoning and the event rows."""

    content: str
    reasoning: str
    rows: list[int]


@dataclass
class RunLinks:
    """Event row (position in the journal table) <-> message index, for one run."""

    event_to_message: dict[int, int] = field(default_factory=dict)
    message_to_events: dict[int, list[int]] = field(default_factory=dict)

    def add(self, row: int, message: int) -> None:
        self.event_to_message[row] = message
        self.message_to_events.setdefault(message, []).append(row)


def _payload(ev: dict) -> dict:
    p = ev.get("payload")
    return p if isinstance(p, dict) else {}


def replay_segments(events: Iterable[tuple[int, dict]]) -> tuple[list[Segment], dict[int, list[int]]]:
    """Segments in order, and for each ``tool`` event's seq the rows of it and its ``tool_complete``."""
    segments: list[Segment] = []
    text: list[str] = []
    reasoning: list[str] = []
    rows: list[int] = []
    tools: dict[int, list[int]] = {}
    open_cards: list[tuple[str, int, list[bool]]] = []  # (name, seq, [done])

    def flush() -> None:
        content = "".join(text).strip()
        thought = "".join(reasoning).strip()
        if content or thought:
            segments.append(Segment(content, thought, list(rows)))
        text.clear()
        reasoning.clear()
        rows.clear()

    for position, (row, ev) in enumerate(events, start=1):
        name = ev.get("event")
        payload = _payload(ev)
        if name == "reasoning":
            value = payload.get("text") or payload.get("reasoning") or payload.get("thinking")
            if value:
                reasoning.append(str(value))
                rows.append(row)
        elif name == "token":
            value = str(payload.get("text") or "")
            if value:
                text.append(value)
                rows.append(row)
        elif name == "interim_assistant":
            if payload.get("already_streamed"):
                flush()
                continue
            value = str(payload.get("text") or "").strip()
            if not value:
                continue
            if text and not "".join(text).endswith(("\n", " ")):
                text.append("\n\n")
            text.append(value)
            rows.append(row)
            flush()
        elif name == "tool":
            flush()
            seq = ev.get("seq") or position
            tools.setdefault(seq, []).append(row)
            open_cards.append((str(payload.get("name") or "tool"), seq, [False]))
        elif name == "tool_complete":
            wanted = str(payload.get("name") or "")
            for card_name, seq, done in reversed(open_cards):
                if not done[0] and (not wanted or card_name == wanted):
                    done[0] = True
                    tools[seq].append(row)
                    break
        elif name in TERMINAL_EVENTS:
            flush()
    flush()
    return segments, tools


def _linkable(messages: list, tool_calls: Any, run_id: str) -> tuple[list[int], dict, dict]:
    """The transcript rows tagged with this run, rows by ``_recovered_event_id``, and the tool cards."""
    tagged = [
        i
        for i, m in enumerate(messages)
        if isinstance(m, dict) and m.get("_recovered_stream_id") == run_id and m.get("role") == "assistant"
    ]
    by_event_id = {
        m.get("_recovered_event_id"): i
        for i, m in enumerate(messages)
        if isinstance(m, dict) and m.get("_recovered_event_id")
    }
    cards = [c for c in tool_calls if isinstance(c, dict)] if isinstance(tool_calls, list) else []
    run_cards = {c.get("tid"): c for c in cards if c.get("_recovered_stream_id") in (run_id, None)}
    return tagged, by_event_id, run_cards


def needs_events(messages: list, tool_calls: Any, run_id: str) -> bool:
    """Whether :func:`link_run` can find any link for this run (else it needs no events at all)."""
    return any(_linkable(messages, tool_calls, run_id))


def link_run(messages: list, tool_calls: Any, run_id: str, events: Iterable[tuple[int, dict]]) -> RunLinks:
    """Links between one run's events (``(table row, event)`` pairs) and the transcript rows."""
    links = RunLinks()
    tagged, by_event_id, run_cards = _linkable(messages, tool_calls, run_id)
    if not tagged and not by_event_id and not run_cards:
        return links
    materialized = list(events)
    segments, tools = replay_segments(materialized)
    _link_segments(links, messages, tagged, segments)
    for seq, rows in tools.items():
        card = run_cards.get(f"journal-{seq}")
        idx = card.get("assistant_msg_idx") if card else None
        if isinstance(idx, int) and not isinstance(idx, bool) and 0 <= idx < len(messages):
            for row in rows:
                links.add(row, idx)
    if by_event_id:
        for row, ev in materialized:
            idx = by_event_id.get(ev.get("event_id"))
            if idx is not None:
                links.add(row, idx)
    for rows in links.message_to_events.values():
        rows.sort()
    return links


def _link_segments(links: RunLinks, messages: list, tagged: list[int], segments: list[Segment]) -> None:
    claimed: set[int] = set()
    for seg in segments:
        want_content = normalize(seg.content)
        want_reasoning = normalize(seg.reasoning)
        for idx in tagged:
            if idx in claimed:
                continue
            msg = messages[idx]
            content = normalize(msg.get("content") if isinstance(msg.get("content"), str) else "")
            if content != want_content:
                continue
            if not want_content and normalize(msg.get("reasoning")) != want_reasoning:
                continue  # a reasoning-only row is identified by its reasoning
            claimed.add(idx)
            for row in seg.rows:
                links.add(row, idx)
            break
