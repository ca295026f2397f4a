"""The raw journal's whole-file index (``RawJournal.index``, ``index_journal``): the rules
mutation testing found unpinned (seventh session of issue 21, tests/MUTATION.md).

Rules pinned here:

* the index checks every record's ids against the journal's expected ones (the folder's session
  id, the file's run id): a record naming another session or run is flagged;
* ``events`` receives ``(line, event)`` for every event hermes reads, in file order (a line that is
  not a JSON object gives none), even when the journal was indexed before;
* ``check`` is called while indexing, so a check that raises cancels it;
* ``RawJournal.from_path`` keeps the path it read;
* an index of another length is refused, with both sizes in the error;
* event names that are not text share one name per JSON type ("(event name not text: a number)"),
  a record without one (or ``null``) is "(no event name)";
* the lines orjson may not read exactly are found by their runs of 19 or more digits
  (``_long_digit_offsets``: where each run starts, an 18-digit run is none), at the start of the
  data too, and whole whichever side of the end of a chunk (just after the first line end past 4 MiB) it lies;
* one pass over a journal with a clean line, a CRLF line, junk, a torn line, a duplicate seq of
  another run and a last line without a newline gives, written out by hand: the line starts, the
  counts, the flagged lines, the torn line, the seq note's line, the newest time (from a torn
  line's fragment too), the events with their lines, each line's event code; no digest unless asked;
* a name that already has its code keeps it after the 254 codes one byte tells apart are taken
  (only names new by then share "(other event names)");
* a journal whose first seq is not 1 has a seq note on its first line;
* a journal hermes cannot read (an invalid UTF-8 byte) drops every line; its anomalies are only the
  line ends: each line ending in CR, and a last line without a newline unless it ends in CR.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.store import journal_raw
from inspector.store.journal_raw import RawJournal, index_journal

SID = "a1b2c3d4e5f6"
RUN = "7c8b4108d52b4aba9af362d3a54f47ac"


def rec(seq: int, event: object = "token", *, sid: str = SID, run: str = RUN, drop: tuple = ()) -> bytes:
    """A journal line as hermes' append_run_event writes it; ``drop``: keys left out."""
    obj = {
        "version": 1,
        "event_id": f"{run}:{seq}",
        "seq": seq,
        "run_id": run,
        "session_id": sid,
        "event": event,
        "type": event,
        "created_at": 1.0,
        "terminal": False,
        "terminal_state": None,
        "payload": {"text": "t"},
    }
    for key in drop:
        del obj[key]
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def test_records_naming_another_session_or_run_are_flagged() -> None:
    """Rule: the expected ids are checked: line 0 (another session) and 1 (another run) are flagged."""
    data = rec(1, sid="other") + rec(2, run="elsewhere") + rec(3)
    index = RawJournal(data, session_id=SID, run_id=RUN).index()
    assert list(index.flagged) == [0, 1]
    assert index.stats["anomalous"] == 2


def test_every_event_is_handed_over_with_its_line_even_after_an_earlier_index() -> None:
    """Rule: ``events`` gets ``(line, record)`` for lines 0 and 2 (line 1 is not a JSON object)."""
    journal = RawJournal(rec(1) + b"junk\n" + rec(2), session_id=SID, run_id=RUN)
    journal.index()
    events: list = []
    journal.index(events=events)
    assert [(line, event["seq"]) for line, event in events] == [(0, 1), (2, 2)]


def test_a_check_that_raises_cancels_the_index() -> None:
    """Rule: ``check`` is called while indexing; what it raises ends the pass."""

    def cancelled() -> None:
        raise InterruptedError("cancelled")

    with pytest.raises(InterruptedError):
        RawJournal(rec(1), session_id=SID, run_id=RUN).index(check=cancelled)


def test_from_path_keeps_the_path(tmp_path: Path) -> None:
    """Rule: the journal read from a path remembers it (and takes its ids from it)."""
    path = tmp_path / "_run_journal" / SID / f"{RUN}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(rec(1))
    journal = RawJournal.from_path(path)
    assert (journal.path, journal.session_id, journal.run_id) == (path, SID, RUN)


def test_event_names_that_are_not_text_share_one_name_per_json_type() -> None:
    """Rule: 5 and 7 are "a number", true "a boolean", [1] "an array"; no "event" key and null are
    "(no event name)"."""
    data = rec(1, 5) + rec(2, 7) + rec(3, True) + rec(4, drop=("event",)) + rec(5, None) + rec(6, [1])
    assert index_journal(data).event_counts() == [
        ("(event name not text: a number)", 2),
        ("(no event name)", 2),
        ("(event name not text: a boolean)", 1),
        ("(event name not text: an array)", 1),
    ]


def test_a_name_that_has_its_code_keeps_it_once_the_codes_run_out() -> None:
    """Rule: "(no event name)" took code 1; after 253 more names (254 codes, all one byte tells
    apart) a second record without a name still counts under it, not "(other event names)"."""
    data = rec(1, None) + b"".join(rec(i, f"e{i}") for i in range(2, 255)) + rec(255, None)
    index = index_journal(data)
    assert len(index.event_names) == 254
    assert dict(index.event_counts())["(no event name)"] == 2
    assert "(other event names)" not in index.event_names
    data = b"".join(rec(i, f"e{i}") for i in range(1, 255)) + rec(255, "e1")  # the same for a text name
    assert dict(index_journal(data).event_counts())["e1"] == 2


def test_a_journal_that_does_not_start_at_seq_1_has_a_note_on_its_first_line() -> None:
    """Rule: seqs 2, 3: line 0 has a seq note (hermes' runs start at 1), line 1 none."""
    index = index_journal(rec(2) + rec(3), session_id=SID, run_id=RUN)
    assert list(index.seq_notes) == [0] and list(index.flagged) == [0]
    assert index_journal(rec(1) + rec(2), session_id=SID, run_id=RUN).seq_notes == {}


def test_an_index_of_other_bytes_is_refused_with_both_sizes() -> None:
    """Rule: an index made of a journal of another length is not adopted; the error gives both sizes."""
    index = index_journal(rec(1))
    size = len(rec(1))
    with pytest.raises(ValueError) as refused:
        RawJournal(rec(1) + rec(2), index=index)
    assert str(refused.value) == f"the index covers {size} bytes, the journal has {2 * size}"


def test_runs_of_19_digits_or_more_are_found_where_they_start() -> None:
    """Rule: runs at offsets 0 (19 digits) and 39 (20 digits); the 18-digit run at 20 is none."""
    data = b"1234567890123456789,123456789012345678,12345678901234567890\n"
    assert journal_raw._long_digit_offsets(data) == [0, 39]


def test_a_run_at_either_side_of_a_chunks_end_is_found_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: a run ending at the first line end past the chunk size, and a run starting just after
    it, are each found at their first digit (the chunk ends just after that line end). The chunk
    size (4 MiB) is made 64 bytes here, so the data stays small."""
    monkeypatch.setattr(journal_raw, "_DIGIT_CHUNK", 64)
    before = b"a" * 100 + b"1" * 19 + b"\n"  # the run ends at the first chunk's line end
    assert journal_raw._long_digit_offsets(before) == [100]
    after = b"a" * 100 + b"\n" + b"1" * 19 + b"\n"  # the run starts the second chunk
    assert journal_raw._long_digit_offsets(after) == [101]


def _line(seq: int, created: float, *, run: str = RUN, end: bytes = b"\n") -> bytes:
    obj = {
        "version": 1,
        "event_id": f"{run}:{seq}",
        "seq": seq,
        "run_id": run,
        "session_id": SID,
        "event": "token",
        "type": "token",
        "created_at": created,
        "terminal": False,
        "terminal_state": None,
        "payload": {"text": "t"},
    }
    return json.dumps(obj, separators=(",", ":")).encode() + end


def test_one_pass_over_every_kind_of_line_written_out() -> None:
    """Rule: the whole index of six lines: 0 clean; 1 ends in CRLF (noted, read); 2 junk (dropped);
    3 torn by U+2028 into a record (created 9.0) and {"x": 1} (dropped, both read by hermes); 4 seq 2
    again, of another run (noted); 5 has no newline (noted)."""
    lines = [
        _line(1, 5.0),
        _line(2, 7.0, end=b"\r\n"),
        b"junk\n",
        '{"seq": 9, "created_at": 9.0}\u2028{"x": 1}\n'.encode(),
        _line(2, 1.0, run="another-run"),
        _line(3, 1.0, end=b""),
    ]
    data = b"".join(lines)
    events: list = []
    index = index_journal(data, session_id=SID, run_id=RUN, events=events)
    assert list(index.starts) == [sum(len(x) for x in lines[:i]) for i in range(6)]
    assert index.size == len(data) and index.unreadable is None and index.digest is None
    assert index.stats == {"lines": 6, "events": 4, "dropped": 2, "torn": 1, "anomalous": 3}
    assert list(index.flagged) == [1, 2, 3, 4, 5]
    assert index.torn == frozenset({3}) and list(index.seq_notes) == [4]
    assert index.last_time == 9.0
    assert [(line, event.get("seq")) for line, event in events] == [
        (0, 1),
        (1, 2),
        (3, 9),
        (3, None),
        (4, 2),
        (5, 3),
    ]
    assert index.kinds == bytes([1, 1, 0, 0, 1, 1]) and index.event_counts() == [("token", 4)]


def test_an_unreadable_journal_drops_every_line_and_keeps_only_the_line_end_notes() -> None:
    """Rule: line 0 ends in CRLF, line 1 holds the byte 0xff, line 2 has no newline: 3 lines dropped,
    2 anomalous; ending in a bare CR instead, the last line is anomalous once (for the CR)."""
    index = index_journal(b'{"a":1}\r\n\xff\n{"b":2}')
    assert index.unreadable is not None
    assert index.stats == {"lines": 3, "events": 0, "dropped": 3, "torn": 0, "anomalous": 2}
    assert list(index.flagged) == [0, 1, 2] and index.kinds == bytes(3) and index.event_counts() == []
    index = index_journal(b'{"a":1}\n\xff\r')
    assert index.stats == {"lines": 2, "events": 0, "dropped": 2, "torn": 0, "anomalous": 1}
