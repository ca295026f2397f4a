"""Reading a journal as hermes does, rule by rule: which terminal event is authoritative, the torn
line numbers across pieces, pieces msgspec must not read, lines that start with a line separator,
reading without orjson, and exact big integers when streaming (mutation survivors of
``inspector/store/journal.py`` and ``jsonfmt.objects_per_line``)."""

from __future__ import annotations

from unittest import mock

from inspector.store import journal
from inspector.store.journal import scan_journal_bytes, stream_lines, torn_line_numbers
from inspector.store.jsonfmt import objects_per_line


def test_a_terminal_event_other_than_stream_end_is_authoritative_over_a_later_stream_end():
    """Rule: a terminal stream_end counts only when no other terminal event exists, even if it comes last."""
    data = b'{"event":"run_done","terminal":true}\n{"event":"stream_end","terminal":true}\n'
    scanned = scan_journal_bytes(data)
    assert scanned.events.authoritative_terminal == {"event": "run_done", "terminal": True}


def test_a_lone_terminal_stream_end_is_authoritative():
    """Rule: with only a terminal stream_end, that is the authoritative terminal event."""
    data = b'{"event":"token"}\n{"event":"stream_end","terminal":true}\n'
    scanned = scan_journal_bytes(data)
    assert scanned.events.authoritative_terminal == {"event": "stream_end", "terminal": True}


def test_torn_line_numbers_count_every_earlier_piece_in_one_line_pieces():
    """Rule: a torn line's number counts the "\\n"-lines of every piece before it, whichever way each
    piece was read (skipped lines, counted objects, torn lines)."""
    data = b'xx\nyy\n{"seq":1}\n{}\x0b{}\n[]\x0b[]\n'
    with mock.patch.object(journal, "BLOCK_BYTES", 1):
        scanned = scan_journal_bytes(data)
    assert scanned.torn_lines == [4, 5]
    assert scanned.malformed == [
        {"line": 1, "raw": "xx"},
        {"line": 2, "raw": "yy"},
        {"line": 6, "raw": "[]"},
        {"line": 7, "raw": "[]"},
    ]
    assert len(scanned.events) == 3


def test_a_line_starting_with_a_line_separator_is_torn_apart():
    """Rule: a U+2028 as a piece's very first bytes still tears the line (the object after it is read)."""
    scanned = scan_journal_bytes('\u2028{"seq":1}\n'.encode())
    assert scanned.torn_lines == [1]
    assert scanned.malformed == []
    assert len(scanned.events) == 1
    assert list(scanned.events) == [{"seq": 1}]


def test_without_orjson_every_piece_is_read_as_text():
    """Rule: with no orjson the scan reads each piece as text and still gives hermes' events and skips."""
    with mock.patch.object(journal, "_orjson_loads", None):
        scanned = scan_journal_bytes(b'{"seq":1}\nxx\n')
        assert list(scanned.events) == [{"seq": 1}]
    assert scanned.malformed == [{"line": 2, "raw": "xx"}]
    assert len(scanned.events) == 1


def _event_names(data: bytes) -> list:
    with mock.patch.object(journal, "BLOCK_BYTES", 1):
        return [event.event for event in scan_journal_bytes(data).events.outputs()]


def test_two_objects_on_one_line_are_no_events_after_an_earlier_piece():
    """Rule: a later piece whose one line holds two objects is a line hermes skips: no event from it."""
    assert _event_names(b'{"event":"c"}\n{"event":"a"}{"event":"b"}\n') == ["c"]


def test_two_objects_on_one_line_are_no_events_before_a_later_piece():
    """Rule: a first piece whose one line holds two objects gives no event, whatever lines follow."""
    assert _event_names(b'{"event":"a"}{"event":"b"}\n{"event":"c"}\n') == ["c"]


def test_a_streamed_line_keeps_an_integer_beyond_64_bits_exact(tmp_path):
    """Rule: stream_lines gives the exact integer of a 30-digit number, not a float."""
    path = tmp_path / "run.jsonl"
    path.write_bytes(b'{"seq":123456789012345678901234567890}\n')
    lines = list(stream_lines(path))
    assert lines == [(1, '{"seq":123456789012345678901234567890}', {"seq": 123456789012345678901234567890})]
    assert type(lines[0][2]["seq"]) is int


def test_objects_per_line_counts_a_line_longer_than_its_quick_look():
    """Rule: a long object line (700+ bytes, no deep nesting, no long digits) is still counted."""
    long_line = b'{"a":"' + b"x" * 700 + b'"}'
    assert objects_per_line(long_line) == 1
    assert objects_per_line(b"{}\n" + long_line) == 2


def test_a_line_holding_every_tearing_character_is_torn():
    """Rule: a line holding all eight one-character line breaks at once (and only CRLF ends) is torn."""
    text = "{}\n{}\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029{}\r\n"
    assert torn_line_numbers(text) == [2]
