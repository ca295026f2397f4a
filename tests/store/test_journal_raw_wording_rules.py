"""The raw journal's notes word for word, and the index's answers where it takes a path of its own
(tests/MUTATION.md, tenth session): each record anomaly's text, hermes' verdict on the lines of a
journal it cannot read (too deep, invalid UTF-8: which line is named), a line that is not JSON in
the middle and at the torn end, and a line asked for past the end. Every expected value is
written out here, not computed by the code under test."""

from __future__ import annotations

import json

import pytest

from inspector.store.journal_raw import RawJournal, index_journal
from tests.store.test_journal_raw import RUN, SID, rec

TOO_DEEP = b"[" * 2000 + b"]" * 2000  # no reader of hermes enters it
NOT_JSON = "Expecting value: line 1 column 1 (char 0)"  # json's own words for "junk"


def event(seq: int, /, **over) -> bytes:
    """:func:`tests.store.test_journal_raw.rec` (a line as hermes' append_run_event writes it) of
    ``seq``, with ``over`` replacing fields (``seq`` itself included)."""
    obj = json.loads(rec(seq))
    obj.update(over)
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def both(data: bytes) -> list[RawJournal]:
    """The journal read line by line, and the same through the one-pass index."""
    index = index_journal(data, session_id=SID, run_id=RUN)
    return [
        RawJournal(data, session_id=SID, run_id=RUN),
        RawJournal(data, session_id=SID, run_id=RUN, index=index),
    ]


def test_each_record_anomaly_is_worded_exactly():
    data = (
        event(1, event_id="x")
        + event(2, type="tool")
        + event(3, terminal=True)
        + event(4, payload=[1])
        + event(5, payload=None)
    )
    for journal in both(data):
        assert journal.line(0).anomalies == ("event_id 'x' is not \"<run_id>:<seq>\"",)
        assert journal.line(1).anomalies == ("event 'token' differs from type 'tool'",)
        assert journal.line(2).anomalies == ("terminal flag disagrees with terminal_state",)
        assert journal.line(3).anomalies == ("payload is an array, not an object (the repair uses {})",)
        assert journal.line(4).anomalies == ("payload is null, not an object (the repair uses {})",)


def test_the_line_too_deep_for_hermes_is_named_on_every_line():
    """The deep line is the third: "this line" there, "line 3" on the others (the index knows it
    as line index 2 too, and says what the journal says)."""
    data = event(1) + event(2) + TOO_DEEP + b"\n" + event(3)
    why = (
        "nested too deeply for hermes' reader, which then fails on the whole journal: a known hermes defect)"
    )
    for journal in both(data):
        assert journal.deep_line == 2
        assert (
            journal.unreadable
            == "line 3 is nested 994 or more levels deep, deeper than hermes' reader can go"
        )
        assert journal.line(2).dropped == f"journal unreadable (this line is {why}"
        assert journal.line(0).dropped == f"journal unreadable (line 3 is {why}"
        assert journal.line(3).dropped == f"journal unreadable (line 3 is {why}"
    index = index_journal(data, session_id=SID, run_id=RUN)
    assert (index.deep_line, index.depth_unsure, index.bad_byte_offset) == (2, None, None)


def test_the_line_holding_an_invalid_byte_is_the_one_it_starts():
    """The invalid byte is the first byte of line 2: line 2 holds it, line 1 (whose span ends
    right before it) does not."""
    data = event(1) + b'\xff{"seq": 2}\n' + event(3)
    offset = len(event(1))
    for journal in both(data):
        assert journal.bad_byte_offset == offset
        assert (
            journal.line(1).dropped == "journal unreadable (invalid UTF-8; this line holds the invalid byte)"
        )
        assert (
            journal.line(0).dropped
            == "journal unreadable (invalid UTF-8; another line holds an invalid byte)"
        )
        assert (
            journal.line(2).dropped
            == "journal unreadable (invalid UTF-8; another line holds an invalid byte)"
        )


def test_an_invalid_byte_hides_a_deep_line_from_the_index_as_from_the_journal():
    """hermes cannot decode the file, so it never meets the deep line: neither reader names it."""
    data = event(1) + TOO_DEEP + b"\n" + b'{"x": "\xff"}\n'
    reason = f"invalid UTF-8 at byte {len(event(1)) + len(TOO_DEEP) + 1 + 7}: hermes cannot read any of this journal"
    index = index_journal(data, session_id=SID, run_id=RUN)
    assert (index.unreadable, index.deep_line, index.depth_unsure) == (reason, None, None)
    plain = RawJournal(data, session_id=SID, run_id=RUN)
    assert (plain.unreadable, plain.deep_line, plain.depth_unsure) == (reason, None, None)


def test_not_json_in_the_middle_and_at_a_torn_end():
    data = event(1) + b"junk\n" + event(2) + b"junk"
    for journal in both(data):
        middle, last = journal.line(1), journal.line(3)
        assert (middle.dropped, middle.parse_error) == (f"not JSON: {NOT_JSON}", NOT_JSON)
        assert last.dropped == f"not JSON: {NOT_JSON} (torn last line without newline)"
        assert last.data == b"junk"  # the last byte of a line without "\n" is kept
        assert journal.line(2).data == event(2)[:-1]
    # two lines dropped; only the one without a newline has a note
    stats = index_journal(data, session_id=SID, run_id=RUN).stats
    assert stats == {"lines": 4, "events": 2, "dropped": 2, "torn": 0, "anomalous": 1}
    # the torn end given its newline and a CRLF line of junk added: that one has the note now
    stats = index_journal(data + b"\n" + b"junk\r\n", session_id=SID, run_id=RUN).stats
    assert stats == {"lines": 5, "events": 2, "dropped": 3, "torn": 0, "anomalous": 1}


def test_a_line_past_either_end_is_an_index_error_naming_the_index_asked():
    for journal in both(event(1) + event(2)):
        with pytest.raises(IndexError) as past:
            journal.line(2)
        assert past.value.args == (2,)
        with pytest.raises(IndexError) as before:
            journal.line(-3)
        assert before.value.args == (-1,)  # -3 counted from the end


def test_a_torn_last_line_without_newline_counts_once_as_anomalous():
    """A line ``str.splitlines`` tears (a raw U+2028 in a string) that is also the last line without
    a newline: dropped, torn and anomalous once each."""
    torn = '{"seq": 2, "text": "a\u2028b"}'.encode()
    index = index_journal(event(1) + torn, session_id=SID, run_id=RUN)
    assert index.stats == {"lines": 2, "events": 1, "dropped": 1, "torn": 1, "anomalous": 1}
    assert index.torn == frozenset({1})


def test_seq_notes_word_for_word():
    data = (
        event(0)
        + event(1, seq=None, event_id=f"{RUN}:None")
        + event(1, seq=1.5, event_id=f"{RUN}:1.5")
        + event(1, seq="4", event_id=f"{RUN}:4")
    )
    for journal in both(data):
        assert journal.line(0).anomalies == (
            "seq 0 is below 1",
            "seq 0 does not follow the start of the file (expected 1)",
        )
        assert journal.line(1).anomalies == ("seq is missing",)
        assert journal.line(2).anomalies == ("seq is a number, not an integer",)
        assert journal.line(3).anomalies == ("seq is a string ('4')",)


def test_a_torn_line_is_no_seq_for_the_line_after_it():
    """hermes tears line 2 (a raw U+2028 in a string) into pieces it reads or skips, never as the
    record with seq 2: line 3's seq follows seq 1."""
    torn = f'{{"seq": 2, "run_id": "{RUN}", "text": "a\u2028b"}}\n'.encode()
    for journal in both(event(1) + torn + event(3)):
        assert journal.line(2).anomalies == ("seq 3 does not follow seq 1 (expected 2)",)


def test_lines_deeper_than_the_stdlib_reads_have_no_value_whatever_orjson_could_read():
    """1,000 levels of arrays, or of objects: orjson would read them, hermes' reader cannot."""
    for deep in (b"[" * 1000 + b"]" * 1000, b'{"a":' * 1000 + b"1" + b"}" * 1000):
        line = RawJournal(event(1) + deep + b"\n").line(1)
        assert line.value is None
        assert "recursion" in line.parse_error


def test_a_line_with_an_invalid_byte_is_parsed_with_the_byte_kept_as_a_surrogate():
    line = RawJournal(event(1) + b'{"x": "\xff"}\n', session_id=SID, run_id=RUN).line(1)
    assert (line.value, line.parse_error) == ({"x": "\udcff"}, None)


def test_a_digit_run_at_the_very_end_of_the_journal_is_found_once():
    from inspector.store.journal_raw import _long_digit_offsets

    data = event(1) + b"9" * 25
    assert _long_digit_offsets(data) == [len(event(1))]
    index = index_journal(data, session_id=SID, run_id=RUN)
    assert index.stats == {"lines": 2, "events": 1, "dropped": 1, "torn": 0, "anomalous": 1}
