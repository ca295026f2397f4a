"""``recover-from-journal``: which runs hold output the transcript does not show, what each one
counts, and where its rows would go (``unshown_runs`` on a session held in memory; an inspector
step, spec run-journal-and-promotion §4.3-4.4; the counting and the words are the project's own).

The sessions are small and written out here: a first turn (user row ``U1`` at 100, a reply
``C_OLD`` with reasoning ``R_OLD`` at 110, a reply ``C2`` without reasoning at 120), then the
turn of the run (user row ``U2`` at 200, hermes' neutral give-up marker at 210, row 4). The run's
journal events are stamped from 300 on, so the run answers ``U2``.

Rules pinned here:

* a journaled row counts only when no assistant row of the transcript (not a user row, not an
  ``_error`` row) already holds its text, and none holds its reasoning; a shown row is passed
  over and the rows after it still count; the first text is the first counted row's text, else
  its reasoning, else empty;
* reasoning hermes attaches to a row of the turn counts as one row (its characters) unless a
  row of the transcript already holds that reasoning;
* a text hermes' dedupe finds inside a longer row is not a row the transcript lacks;
* the journaled output events are named by ``event``, else by ``type``;
* the marker: a pending marker naming the run, wherever it is; else the newest interrupted
  assistant row of the turn, the turn being the rows after the newest user row sent at or
  before the run's first event, up to the next user row (no such user row: from row 0); a turn
  without one gets the rows at its end;
* a run ended by a terminal record is passed over, and the runs after it are still looked at.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.repair import from_journal
from inspector.repair.from_journal import UnshownRun
from inspector.repair.journal_read import JournalRead
from inspector.repair.marker import MARKER_HEAD, NEUTRAL_WORDING, PENDING_RETRY_OUTCOME

RUN = "0a1b2c3d4e5f60718293a4b5c6d7e8f9"
NOW = 1_000_000.0
U1 = "Plan the database migration."
C_OLD = "Here is the plan: export, dual-write, cut over."  # 47 characters
R_OLD = "The user wants a migration plan."  # 32 characters
C2 = "Anything else?"  # 14 characters
U2 = "Now the rollback script."  # 24 characters
R_NEW = "Rollback means reversing each step."  # 35 characters
HALF = "Half of the answer."  # 19 characters
FRESH = "Fresh words."  # 12 characters

NEUTRAL = 'hermes gave up (the marker says "Partial output may have been lost")'
NO_MARKER = "the turn has no interrupted marker, so hermes never tries to recover it"
LAZY = "hermes' lazy retry gives up on it before reading the journal (24 hours or 12 attempts)"


def _user(content: str, ts: int) -> dict:
    return {"role": "user", "content": content, "timestamp": ts}


def _reply(content: str, ts: int, **extra) -> dict:
    return {"role": "assistant", "content": content, "timestamp": ts, **extra}


def _marker(ts: int) -> dict:
    return _reply(NEUTRAL_WORDING, ts, _error=True, type="interrupted")


def _pending(ts: int, **extra) -> dict:
    """A pending marker hermes' lazy retry has given up on (12 attempts counted)."""
    row = _reply(MARKER_HEAD + PENDING_RETRY_OUTCOME, ts, _error=True, type="interrupted")
    row.update(_pending_journal_recovery=True, _journal_retry_attempts=12, _journal_retry_first_seen_ts=1.0)
    row.update(extra)
    return row


def _base() -> list[dict]:
    return [
        _user(U1, 100),
        _reply(C_OLD, 110, reasoning=R_OLD),
        _reply(C2, 120),
        _user(U2, 200),
        _marker(210),
    ]


def _ev(seq: int, event: str, payload: dict, *, named_by: str = "both") -> dict:
    record = {"seq": seq, "created_at": 300.0 + seq, "payload": payload, "terminal": False}
    if named_by in ("both", "event"):
        record["event"] = event
    if named_by in ("both", "type"):
        record["type"] = event
    return record


def _token(seq: int, text: str, **kw) -> dict:
    return _ev(seq, "token", {"text": text}, **kw)


def _reasoning(seq: int, text: str, **kw) -> dict:
    return _ev(seq, "reasoning", {"text": text}, **kw)


def _tool(seq: int) -> dict:
    return _ev(seq, "tool", {"name": "terminal", "preview": "ls", "args": {}})


def _journal(events: list[dict], run: str = RUN) -> JournalRead:
    return JournalRead(run, Path(f"{run}.jsonl"), True, 1, events, [], None, [])


def _found(messages: list[dict], *events: dict, run: str = RUN) -> list[tuple]:
    """unshown_runs of one journal, each run as (rows, chars, cards, first_text, marker, insert_at)."""
    session = {"messages": messages, "tool_calls": [], "context_messages": []}
    return [
        (f.rows, f.chars, f.cards, f.first_text, f.marker_idx, f.insert_at)
        for f in from_journal.unshown_runs(session, [(run, _journal(list(events), run))], NOW)
    ]


def _one(messages: list[dict], *events: dict, run: str = RUN) -> UnshownRun:
    session = {"messages": messages, "tool_calls": [], "context_messages": []}
    (found,) = from_journal.unshown_runs(session, [(run, _journal(list(events), run))], NOW)
    return found


# ---------------------------------------------------------------- which rows count


def test_text_and_reasoning_both_on_an_earlier_reply_are_shown() -> None:
    """Rule: hermes appends the row (the match lies in an earlier turn), but an earlier reply holds
    both its text and its reasoning: nothing is missing."""
    assert _found(_base(), _reasoning(1, R_OLD), _token(2, C_OLD)) == []


def test_shown_text_with_reasoning_no_row_holds_counts_both() -> None:
    """Rule: the text is on an earlier reply but its reasoning is on no row: the row counts, with
    the characters of its text and its reasoning."""
    assert _found(_base(), _reasoning(1, R_NEW), _token(2, C_OLD)) == [(1, 82, 0, C_OLD, 4, 4)]


def test_reasoning_alone_held_by_an_earlier_reply_is_shown() -> None:
    """Rule: a reasoning-only row whose reasoning an untagged earlier reply holds is shown."""
    assert _found(_base(), _reasoning(1, R_OLD)) == []


def test_reasoning_alone_no_row_holds_counts_and_is_the_first_text() -> None:
    """Rule: a reasoning-only row no row holds counts its reasoning's characters, and its reasoning
    is the first text."""
    assert _found(_base(), _reasoning(1, R_NEW)) == [(1, 35, 0, R_NEW, 4, 4)]


def test_reasoning_that_reads_like_a_missing_value_is_not_shown_by_rows_without_reasoning() -> None:
    """Rule: rows without reasoning hold no reasoning, whatever the journal's reasoning says."""
    assert _found(_base(), _reasoning(1, "XXXX")) == [(1, 4, 0, "XXXX", 4, 4)]


def test_a_second_copy_of_an_earlier_text_is_shown_and_the_first_text_stays_empty() -> None:
    """Rule: the second journaled copy of an earlier reply's text (the first copy claimed that reply)
    is shown; only the tool card is missing, so no row, no character and no first text."""
    found = _one(_base(), _token(1, C_OLD), _tool(2), _token(3, C_OLD))
    assert (found.rows, found.chars, found.cards, found.first_text) == (0, 0, 1, "")
    assert found.output_events == 3


def test_a_user_rows_text_does_not_show_a_reply() -> None:
    """Rule: only assistant rows show a journaled text: the user's own words do not."""
    assert _found(_base(), _token(1, U2)) == [(1, 24, 0, U2, 4, 4)]


def test_an_error_rows_text_does_not_show_a_reply() -> None:
    """Rule: an ``_error`` assistant row does not show a journaled text."""
    messages = _base()
    messages[2]["_error"] = True
    assert _found(messages, _token(1, C2)) == [(1, 14, 0, C2, 4, 4)]


def test_a_shown_row_is_passed_over_and_the_rows_after_it_still_count() -> None:
    """Rule: a shown reasoning-only row before a tool card, then a new text: the new text counts
    (one row, its characters, the first text)."""
    assert _found(_base(), _reasoning(1, R_OLD), _tool(2), _token(3, FRESH)) == [(1, 12, 1, FRESH, 4, 4)]


def test_a_text_dedupe_finds_inside_a_longer_reply_is_not_missing() -> None:
    """Rule: a journaled text of 24 characters or more inside an earlier reply is that reply (hermes'
    dedupe), not a row the transcript lacks."""
    assert _found(_base(), _token(1, "export, dual-write, cut over.")) == []


# ---------------------------------------------------------------- reasoning hermes attaches to a row


def _turn_with_a_reply() -> list[dict]:
    """The run's turn already holds a reply without reasoning (row 4), the marker is row 5."""
    messages = _base()
    messages.insert(4, _reply(HALF, 205))
    return messages


def test_reasoning_attached_to_the_turns_reply_counts_as_one_row() -> None:
    """Rule: the journaled text is the turn's reply, its reasoning is on no row: one row, the
    reasoning's characters, no first text."""
    assert _found(_turn_with_a_reply(), _reasoning(1, R_NEW), _token(2, HALF)) == [(1, 35, 0, "", 5, 5)]


def test_reasoning_attached_that_a_row_already_holds_is_shown() -> None:
    """Rule: the reasoning hermes attaches is already an earlier reply's reasoning: nothing missing."""
    assert _found(_turn_with_a_reply(), _reasoning(1, R_OLD), _token(2, HALF)) == []


def test_attached_reasoning_that_reads_like_a_missing_value_still_counts() -> None:
    """Rule: rows without reasoning do not hold the attached reasoning, whatever it says."""
    assert _found(_turn_with_a_reply(), _reasoning(1, "XXXX"), _token(2, HALF)) == [(1, 4, 0, "", 5, 5)]


def test_attached_reasoning_adds_to_the_rows_and_characters_before_it() -> None:
    """Rule: a new row and an attached reasoning: two rows, their characters added up."""
    found = _found(_turn_with_a_reply(), _reasoning(1, R_NEW), _token(2, HALF), _tool(3), _token(4, FRESH))
    assert found == [(2, 47, 1, FRESH, 5, 5)]


# ---------------------------------------------------------------- the journaled output events


@pytest.mark.parametrize("named_by", ["event", "type"])
def test_output_events_are_named_by_event_else_by_type(named_by: str) -> None:
    """Rule: an event with only ``event`` or only ``type`` is an output event all the same."""
    events = [_reasoning(1, R_NEW, named_by=named_by), _token(2, FRESH, named_by=named_by)]
    assert _one(_base(), *events).output_events == 2


# ---------------------------------------------------------------- where the rows go


def test_a_pending_marker_naming_the_run_is_its_marker_even_in_an_earlier_turn() -> None:
    """Rule: the pending marker (row 1) names the run: it is the marker, though the run's first event
    comes after the next turn's user row."""
    messages = [_user(U1, 100), _pending(110, _journal_retry_stream_id=RUN), _user(U2, 200), _reply(C2, 210)]
    found = _one(messages, _token(1, FRESH))
    assert (found.marker_idx, found.insert_at, found.state) == (1, 1, LAZY)


def test_a_pending_marker_just_before_the_last_row_is_found() -> None:
    """Rule: the pending marker is row 1 of 3, the last row a user row after it."""
    messages = [_user(U1, 100), _pending(110, _journal_retry_stream_id=RUN), _user(U2, 200)]
    found = _one(messages, _token(1, FRESH))
    assert (found.marker_idx, found.insert_at, found.state) == (1, 1, LAZY)


def test_a_pending_marker_that_is_the_last_row_is_found() -> None:
    """Rule: the pending marker is the session's last row, in a later turn than the run's first event."""
    messages = [_user(U1, 100), _reply(C2, 110), _user(U2, 200), _pending(210, _journal_retry_stream_id=RUN)]
    found = _one(messages, _token(1, FRESH) | {"created_at": 150.0})
    assert (found.marker_idx, found.insert_at, found.state) == (3, 3, LAZY)


def test_a_pending_marker_without_a_stream_is_no_runs_marker() -> None:
    """Rule: a pending marker naming no stream is not the marker of a run, whatever the run's id
    (even the text a missing value could be mistaken for); the run's turn has no marker."""
    messages = [_user(U1, 100), _pending(110), _user(U2, 200), _reply(C2, 210)]
    found = _one(messages, _token(1, FRESH), run="XXXX")
    assert (found.marker_idx, found.insert_at, found.state) == (None, 4, NO_MARKER)


def test_a_user_row_sent_at_the_first_events_time_opens_the_runs_turn() -> None:
    """Rule: "at or before": the user row of 200 owns a run whose first event is at 200."""
    found = _one(_base(), _token(1, FRESH) | {"created_at": 200.0})
    assert (found.marker_idx, found.insert_at, found.state) == (4, 4, NEUTRAL)


def test_without_a_user_row_before_the_run_its_turn_starts_at_row_0() -> None:
    """Rule: the only user row comes after the run's first event: the turn is rows 0 to 0, and its
    marker is row 0."""
    found = _one([_marker(50), _user(U1, 500)], _token(1, FRESH) | {"created_at": 100.0})
    assert (found.marker_idx, found.insert_at, found.state) == (0, 0, NEUTRAL)


def test_a_later_turns_marker_is_not_the_runs() -> None:
    """Rule: the run's turn is empty (the first row is a later user row); the marker at the end of
    the session belongs to that later turn: the rows go to row 0, with no marker."""
    found = _one([_user(U1, 500), _marker(510)], _token(1, FRESH) | {"created_at": 100.0})
    assert (found.marker_idx, found.insert_at, found.state) == (None, 0, NO_MARKER)


def test_the_newest_interrupted_assistant_row_of_the_turn_is_the_marker() -> None:
    """Rule: a reply after the marker in the same turn is not the marker."""
    messages = [_user(U1, 100), _marker(110), _reply(C2, 120)]
    found = _one(messages, _token(1, FRESH) | {"created_at": 105.0})
    assert (found.marker_idx, found.insert_at, found.state) == (1, 1, NEUTRAL)


def test_an_empty_transcript_gets_the_rows_at_row_0_with_no_marker() -> None:
    """Rule: a session without rows: the run's rows go to row 0, and the state says there is no marker."""
    found = _one([], _token(1, FRESH))
    assert (found.marker_idx, found.insert_at, found.state) == (None, 0, NO_MARKER)


# ---------------------------------------------------------------- which runs


def test_a_run_ended_by_a_terminal_record_does_not_hide_the_runs_after_it() -> None:
    """Rule: the ended run is passed over; the open run after it is still found."""
    done = {"seq": 2, "event": "done", "type": "done", "created_at": 302.0, "payload": {}, "terminal": True}
    session = {"messages": _base(), "tool_calls": [], "context_messages": []}
    journals = [("ended", _journal([_token(1, FRESH), done], "ended")), (RUN, _journal([_token(1, FRESH)]))]
    assert [f.run_id for f in from_journal.unshown_runs(session, journals, NOW)] == [RUN]
