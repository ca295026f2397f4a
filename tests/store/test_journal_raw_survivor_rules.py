"""The raw journal view, rule by rule: the words of each anomaly and drop reason, the line a deep or
invalid byte is pinned to, the parse of a line hermes cannot read, and line lookups out of range
(mutation survivors of ``inspector/store/journal_raw.py``)."""

from __future__ import annotations

import json

import pytest

from inspector.store.journal_raw import RawJournal, index_journal
from tests.store.test_journal_raw import RUN, SID, raw, rec

NEVER_DEEP = b"[" * 2000 + b"]" * 2000  # nested deeper than any hermes reader goes


def _line(**changes) -> bytes:
    """``rec(1)`` with some fields replaced (a value of ``...`` removes the field)."""
    obj = json.loads(rec(1))
    for key, value in changes.items():
        if value is ...:
            del obj[key]
        else:
            obj[key] = value
    return json.dumps(obj).encode() + b"\n"


def test_a_line_of_invalid_utf8_is_still_parsed_with_its_bad_bytes_kept():
    """Rule: a line with an invalid UTF-8 byte is parsed as text that keeps the byte (surrogate escape)."""
    line = RawJournal(b'{"a":"\xff"}\n').line(0)
    assert line.value == {"a": "\udcff"}
    assert line.parse_error is None
    assert line.dropped == "journal unreadable (invalid UTF-8; this line holds the invalid byte)"


def test_a_line_that_is_not_json_carries_the_parsers_message():
    """Rule: a line that does not parse says why, in the stdlib's words, as parse_error and drop reason."""
    line = RawJournal(b"not json\n").line(0)
    assert line.value is None
    assert line.parse_error == "Expecting value: line 1 column 1 (char 0)"
    assert line.dropped == "not JSON: Expecting value: line 1 column 1 (char 0)"


def test_only_a_last_line_without_newline_is_called_torn():
    """Rule: "(torn last line without newline)" is added only to a last line that lacks its newline."""
    journal = RawJournal(b"bad\nnot json")
    assert journal.line(0).dropped == "not JSON: Expecting value: line 1 column 1 (char 0)"
    assert journal.line(1).dropped == (
        "not JSON: Expecting value: line 1 column 1 (char 0) (torn last line without newline)"
    )
    assert journal.line(1).data == b"not json"


def test_a_last_line_without_newline_keeps_all_its_bytes():
    """Rule: only a "\\n" terminator is cut from a line; a last line without one keeps its last byte."""
    line = RawJournal(b'{"a":1}').line(0)
    assert line.data == b'{"a":1}'
    assert line.value == {"a": 1}
    assert line.length == 7


def test_a_first_seq_other_than_1_is_compared_with_the_start_of_the_file():
    """Rule: the first event's seq must be 1, "the start of the file" (with and without an index)."""
    data = rec(2)
    assert raw(data).line(0).anomalies == ("seq 2 does not follow the start of the file (expected 1)",)
    indexed = RawJournal(
        data, session_id=SID, run_id=RUN, index=index_journal(data, session_id=SID, run_id=RUN)
    )
    assert indexed.line(0).anomalies == ("seq 2 does not follow the start of the file (expected 1)",)


def test_seq_below_one_missing_or_not_a_number_is_named():
    """Rule: a seq of 0, no seq and a seq that is an array each get their own words."""
    assert raw(rec(0)).line(0).anomalies[0] == "seq 0 is below 1"
    assert raw(_line(seq=...)).line(0).anomalies[0] == "seq is missing"
    assert raw(_line(seq=[1])).line(0).anomalies[0] == "seq is an array, not an integer"


def test_a_good_record_has_no_seq_anomaly():
    """Rule: seq 1 first in the file, with matching ids, has no anomaly at all."""
    assert raw(rec(1)).line(0).anomalies == ()


def test_each_field_mismatch_is_named_with_the_values_found():
    """Rule: a wrong event_id, event differing from type, a terminal flag without state and a payload
    that is not an object are each reported with the values the record holds."""
    data = _line(event_id="x", type="tok", terminal=True, payload=[1])
    assert raw(data).line(0).anomalies == (
        "event_id 'x' is not \"<run_id>:<seq>\"",
        "event 'token' differs from type 'tok'",
        "terminal flag disagrees with terminal_state",
        "payload is an array, not an object (the repair uses {})",
    )


def test_a_torn_line_gives_no_seq_to_the_lines_after_it():
    """Rule: hermes reads a torn line as fragments, so its whole-line seq does not count for the next line."""
    data = b'{"seq":1,"a":"x\xe2\x80\xa8y"}\n' + rec(2)
    assert raw(data).line(1).anomalies == ("seq 2 does not follow the start of the file (expected 1)",)


def test_a_deep_line_is_pinned_to_its_own_index():
    """Rule: the journal names the 0-based index of the line nested too deeply (not the verdict flag)."""
    data = rec(1) + rec(2) + rec(3) + NEVER_DEEP + b"\n" + rec(4)
    journal = raw(data)
    assert journal.deep_line == 3
    assert journal.unreadable == "line 4 is nested 994 or more levels deep, deeper than hermes' reader can go"
    index = index_journal(data)
    assert index.deep_line == 3
    assert index.unreadable == "line 4 is nested 994 or more levels deep, deeper than hermes' reader can go"


def test_the_deep_line_and_the_others_say_why_hermes_reads_nothing():
    """Rule: the deep line says "this line is", every other line names the deep line's number."""
    journal = raw(rec(1) + rec(2) + rec(3) + NEVER_DEEP + b"\n" + rec(4))
    assert journal.line(3).dropped == (
        "journal unreadable (this line is nested too deeply for hermes' reader, which then fails on "
        "the whole journal: a known hermes defect)"
    )
    assert journal.line(0).dropped == (
        "journal unreadable (line 4 is nested too deeply for hermes' reader, which then fails on "
        "the whole journal: a known hermes defect)"
    )


def test_invalid_utf8_wins_over_a_deep_line_in_the_index():
    """Rule: with an invalid UTF-8 byte the index looks for no deep line; the byte is the reason."""
    data = NEVER_DEEP + b"\n" + b'{"a":"\xff"}\n'
    index = index_journal(data)
    assert index.deep_line is None
    assert index.depth_unsure is None
    assert index.unreadable == "invalid UTF-8 at byte 4007: hermes cannot read any of this journal"
    journal = RawJournal(data, index=index)
    assert journal.line(0).dropped == "journal unreadable (invalid UTF-8; another line holds an invalid byte)"


def test_the_invalid_byte_belongs_to_the_line_it_starts_not_the_one_before():
    """Rule: a bad byte at a line's first byte is that line's, not the previous line's (whose end it is)."""
    journal = RawJournal(b"{}\n\xff\n")
    assert journal.line(0).dropped == "journal unreadable (invalid UTF-8; another line holds an invalid byte)"
    assert journal.line(1).dropped == "journal unreadable (invalid UTF-8; this line holds the invalid byte)"


def test_a_torn_last_line_without_newline_counts_once_as_anomalous():
    """Rule: the index counts a torn line that also lacks its final newline as one anomalous line."""
    stats = index_journal(b'{"a":1}\x0b{"b":2}').stats
    assert stats == {"lines": 1, "events": 0, "dropped": 1, "torn": 1, "anomalous": 1}


@pytest.mark.parametrize(("index", "named"), [(3, "3"), (-4, "-1")])
def test_a_line_out_of_range_raises_index_error_naming_it(index, named):
    """Rule: asking for a line past either end raises IndexError naming the (normalised) index."""
    journal = RawJournal(b"{}\n{}\n{}\n")
    with pytest.raises(IndexError) as caught:
        journal.line(index)
    assert str(caught.value) == named


def test_an_invalid_byte_on_a_torn_line_is_placed_from_the_files_start():
    """Rule: a line torn by a lone "\\r" is decoded on its own; its bad byte's offset in the reason is
    counted from the file's first byte (line 2 starts at byte 8, the byte is its tenth: byte 17)."""
    data = b'{"a":1}\n{"b":"x\rx\xff"}\n'
    assert data[17] == 0xFF
    index = index_journal(data)
    assert index.unreadable == "invalid UTF-8 at byte 17: hermes cannot read any of this journal"


def test_an_event_name_seen_before_is_looked_up_not_coded_again(monkeypatch):
    """Rule (index_journal's fast path): a text event name already coded takes its code from the
    table; only a name new to the pass, or one that is not text, goes to ``_event_code``."""
    from inspector.store import journal_raw

    asked = []
    real = journal_raw._event_code
    monkeypatch.setattr(
        journal_raw, "_event_code", lambda codes, name: asked.append(name) or real(codes, name)
    )
    names = ["token", "token", "tool", "token", None, None, "tool"]
    data = b"".join(
        rec(seq, name) if name else _line(seq=seq, event_id=f"{RUN}:{seq}", event=None)
        for seq, name in enumerate(names, 1)
    )
    index = index_journal(data, session_id=SID, run_id=RUN)
    assert asked == ["token", "tool", None, None]
    assert list(index.kinds) == [1, 1, 2, 1, 3, 3, 2]


def test_a_plain_line_is_parsed_once_by_orjson_not_by_the_stdlib(monkeypatch):
    """Rule: lines orjson reads exactly as the stdlib does (no run of 19+ digits, not deep) are not
    handed to the stdlib parse; a line with a long digit run is."""
    from inspector.store import journal_raw

    if journal_raw._orjson_loads is None:
        pytest.skip("orjson is not installed")
    parsed = []
    real = journal_raw.loads_from_a_fresh_stack
    monkeypatch.setattr(
        journal_raw, "loads_from_a_fresh_stack", lambda text: parsed.append(text) or real(text)
    )
    long = _line(seq=3, event_id=f"{RUN}:3", payload={"n": 10**30})
    index_journal(rec(1) + rec(2) + long, session_id=SID, run_id=RUN)
    assert parsed == [long[:-1].decode()]
