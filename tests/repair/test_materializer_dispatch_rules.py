"""The events the materialization hands to its handlers besides tokens and reasoning (hermes
``_append_journaled_partial_output``: ``interim_assistant``, ``tool``, ``tool_complete``), and what
the pass adds to the session at its end (issue 21, the sixth session's survivors of
``_Materializer._dispatch`` and ``_finish``), through the public ``append_journaled_partial_output``.

Rules pinned (expected transcripts written out by hand from hermes' closures):
* an interim text becomes a row stamped with the event's ``created_at`` (the clock only without one);
* an interim or tool event whose payload is not an object is read as an empty payload: no row, or a
  card named ``tool``;
* a tool card's ``tid`` is ``journal-<the event's seq>`` and its new anchor row is stamped with the
  event's ``created_at``; ``tool_complete`` marks the newest open card of that name done;
* the cards of the pass are appended after the session's own ``tool_calls`` (kept as they were), and
  a pass that added only cards reports ``recovered`` as True.
"""

from __future__ import annotations

import copy
from pathlib import Path

from inspector.repair.journal_read import JournalRead
from inspector.repair.journal_recovery import MaterializeReport, append_journaled_partial_output

S = "run_disp"
NOW = 1_800_000_000.0
TAG = {"_recovered_from_run_journal": True, "_recovered_stream_id": S}


def run(messages: list, events: list, **fields) -> tuple[dict, MaterializeReport]:
    session = {"messages": copy.deepcopy(messages), "tool_calls": [], **copy.deepcopy(fields)}
    journal = JournalRead(S, Path("j.jsonl"), True, 1, events, [], None, [])
    report = append_journaled_partial_output(session, S, journal, dedupe=True, now=NOW)
    return session, report


def _row(content: str, ts: float) -> dict:
    return {"role": "assistant", "content": content, "timestamp": int(ts), **TAG}


def _card(name: str, tid: str, idx: int, *, done: bool = False, preview: str = "", **extra) -> dict:
    return {
        "name": name,
        "preview": preview,
        "snippet": preview,
        "tid": tid,
        "assistant_msg_idx": idx,
        "args": {},
        "done": done,
        **TAG,
        **extra,
    }


def test_an_interim_text_is_a_row_stamped_with_the_events_time() -> None:
    events = [{"event": "interim_assistant", "created_at": 50.0, "payload": {"text": "  thinking aloud "}}]
    session, report = run([], events)
    assert session["messages"] == [_row("thinking aloud", 50.0)]
    assert report.rows_added == [0] and report.recovered is True


def test_an_interim_event_without_an_object_payload_adds_nothing() -> None:
    events = [{"event": "interim_assistant", "created_at": 50.0, "payload": "not an object"}]
    session, report = run([], events)
    assert session["messages"] == [] and session["tool_calls"] == []
    assert report.recovered is False and report.events == 1


def test_a_tool_card_is_named_by_the_events_seq_and_anchored_at_its_time() -> None:
    events = [
        {"event": "tool", "seq": 7, "created_at": 60.0, "payload": {"name": "terminal", "preview": "ls"}},
        {"event": "tool_complete", "seq": 8, "payload": {"name": "terminal", "duration": 1.5}},
    ]
    session, report = run([], events)
    assert session["messages"] == [_row("", 60.0)]
    assert session["tool_calls"] == [
        _card("terminal", "journal-7", 0, done=True, preview="ls", duration=1.5, is_error=False)
    ]
    assert report.recovered is True and report.anchors_added == [0]


def test_a_tool_event_without_an_object_payload_is_a_card_named_tool() -> None:
    events = [{"event": "tool", "seq": 3, "created_at": 60.0, "payload": ["not", "an", "object"]}]
    session, _report = run([], events)
    assert session["tool_calls"] == [_card("tool", "journal-3", 0)]


def test_the_cards_of_the_pass_follow_the_sessions_own_and_say_recovered() -> None:
    own = {"name": "search", "tid": "t-1", "assistant_msg_idx": 0, "done": True}
    said = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "earlier", "timestamp": 10}]
    events = [{"event": "tool", "seq": 4, "created_at": 70.0, "payload": {"name": "terminal"}}]
    session, report = run(said, events, tool_calls=[own])
    assert session["messages"] == [*said, _row("", 70.0)]
    assert session["tool_calls"] == [own, _card("terminal", "journal-4", 2)]
    assert report.recovered is True
    assert report.rows_added == [] and report.cards_added == [_card("terminal", "journal-4", 2)]
