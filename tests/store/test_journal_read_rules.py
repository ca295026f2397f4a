"""Reading a run journal: the streamed summary and the repair's reader (mutation testing, tests/MUTATION.md).

hermes' ``latest_run_summary`` takes the terminal state from the last terminal record that is not
``stream_end``, else from the last ``stream_end`` (``api/run_journal.py``); a journal too large to
load whole must give the same summary read piece by piece.
"""

from __future__ import annotations

import json

import pytest

from inspector.store.journal import JournalUnreadable, _open_by_full_parse, read_run_events, stream_summary

SID, RUN = "s1", "r1"


def _line(seq: int, event: str, terminal_state: str | None = None) -> bytes:
    obj = {
        "event_id": f"{RUN}:{seq}",
        "seq": seq,
        "run_id": RUN,
        "session_id": SID,
        "event": event,
        "terminal": terminal_state is not None,
        "terminal_state": terminal_state,
    }
    return json.dumps(obj).encode() + b"\n"


def test_a_stream_end_before_the_last_event_still_gives_the_terminal_state(tmp_path):
    """Rule: a ``stream_end`` that is not the last record, with no other terminal record, is the
    authoritative terminal event of the streamed summary."""
    path = tmp_path / f"{RUN}.jsonl"
    path.write_bytes(_line(1, "token") + _line(2, "stream_end", "cancelled") + _line(3, "token"))
    summary = stream_summary(path, SID, RUN).summary
    assert (summary["terminal"], summary["terminal_state"]) == (True, "cancelled")
    assert (summary["event_count"], summary["last_seq"], summary["last_event"]) == (3, 3, "token")


def test_a_journal_that_cannot_be_read_says_why(tmp_path):
    """Rule: a journal path that is not a readable file (here a folder) is JournalUnreadable with the
    OS's words and the path, not an empty journal."""
    path = tmp_path / f"{RUN}.jsonl"
    path.mkdir()
    with pytest.raises(JournalUnreadable) as caught:
        read_run_events(path)
    assert str(path) in str(caught.value)
    assert read_run_events(tmp_path / "missing.jsonl").events == []  # a missing journal is empty


def test_a_journal_hermes_cannot_read_is_not_an_open_run():
    """Rule: invalid UTF-8 (hermes reads nothing) is not an open run; a journal with no terminal is."""
    assert _open_by_full_parse(b"\xff\n") is False
    assert _open_by_full_parse(_line(1, "token")) is True
    assert _open_by_full_parse(_line(1, "token") + _line(2, "done", "completed")) is False
