"""The repairs' streaming read where it counts a piece's lines instead of reading them, where a piece
starts with a character that is no ASCII, without orjson, and which terminal record it keeps
(tests/MUTATION.md, tenth session). Expected values are written out here: what hermes' ``_read_jsonl``
(``json.loads`` per ``str.splitlines()`` line) gives for these bytes."""

from __future__ import annotations

import json
from unittest import mock

import inspector.store.journal as journal
from inspector.store.journal import scan_journal_bytes
from tests.differential.parse_check import streamed_run_events


def test_values_over_two_lines_in_a_last_piece_without_newline_are_four_lines_hermes_skips():
    """msgspec reads three values here (``{"a":1}``, ``{}``, ``{}``) in five lines: the piece is not
    counted as three events."""
    assert streamed_run_events(b'{"a":1}\n{\n}\n{\n}') == (
        [{"a": 1}],
        [{"line": 2, "raw": "{"}, {"line": 3, "raw": "}"}, {"line": 4, "raw": "{"}, {"line": 5, "raw": "}"}],
    )
    assert len(scan_journal_bytes(b'{"a":1}\n{\n}\n{\n}').events) == 1


def test_a_blank_line_opening_a_counted_piece_still_numbers_the_lines_after_it():
    """Pieces of a few bytes: the second opens with the blank line; the junk on line 5 keeps its number."""
    data = b'{"a":1}\n\n{}\n{}\njunk\n'
    for block in (7, 8, 9):
        with mock.patch.object(journal, "BLOCK_BYTES", block):
            assert streamed_run_events(data) == ([{"a": 1}, {}, {}], [{"line": 5, "raw": "junk"}])


def test_a_piece_opening_with_a_line_separator_is_read_as_hermes_splits_it():
    """U+2028 (which ``str.splitlines`` breaks at) as the journal's first byte: the line is torn in
    two, the object after it is line 2."""
    data = "\u2028{}\n{}\n".encode()
    assert streamed_run_events(data) == ([{}, {}], [])
    scanned = scan_journal_bytes(data)
    assert scanned.torn_lines == [1] and scanned.malformed == []


def test_without_orjson_the_terminal_records_are_read_all_the_same():
    lines = [{"seq": 1, "event": "token"}, {"seq": 2, "event": "done", "terminal": True}]
    data = b"".join(json.dumps(x).encode() + b"\n" for x in lines)
    with mock.patch.object(journal, "_orjson_loads", None):
        assert streamed_run_events(data) == (lines, [])


def test_the_terminal_record_kept_is_the_last_one_that_is_not_stream_end():
    done = {"seq": 2, "event": "done", "terminal": True}
    end = {"seq": 3, "event": "stream_end", "terminal": True}
    data = b"".join(json.dumps(x).encode() + b"\n" for x in ({"seq": 1, "event": "token"}, done, end))
    assert scan_journal_bytes(data).events.authoritative_terminal == done
    only_end = b"".join(json.dumps(x).encode() + b"\n" for x in ({"seq": 1, "event": "token"}, end))
    assert scan_journal_bytes(only_end).events.authoritative_terminal == end


def test_the_walks_read_one_value_per_line_in_every_piece():
    """``StreamedEvents.outputs`` (what the repairs' walks read) of pieces of a few bytes where one
    line holds two values: hermes skips that line, so one event is left, wherever the line lies
    and whether or not the file ends with a newline."""
    for data in (b"{} {}\n{}\n", b"{}\n{} {}\n", b"{} {}\n{}", b"{}\n{} {}"):
        for block in (2, 3, 1 << 22):
            with mock.patch.object(journal, "BLOCK_BYTES", block):
                scanned = scan_journal_bytes(data)
                assert len(list(scanned.events.outputs())) == 1, (data, block)
                assert len(scanned.events) == 1 and len(scanned.malformed) == 1


def test_torn_lines_are_numbered_across_pieces_of_every_kind():
    """Line 3 holds U+2028 and line 5 a lone CR (hermes tears both); before, between and after them
    lines the scan counts whole (objects), reads one by one (``[1]``) or decodes (the torn ones),
    in pieces of any size: the torn lines are 3 and 5 wherever the pieces are cut."""
    data = '{"a":1}\n[1]\n{"b":"x\u2028y"}\n{"c":1}\n{"d":"p\rq"}\n{"e":1}\n[2]\n'.encode()
    for block in (1, 4, 9, 16, 30, 1 << 22):
        with mock.patch.object(journal, "BLOCK_BYTES", block):
            assert scan_journal_bytes(data).torn_lines == [3, 5], block


def test_a_blank_line_does_not_make_up_for_a_line_of_two_values():
    """As many values as lines, yet not one per line: the blank line holds none and line 3 two.
    hermes skips the blank line and fails on line 3, so only line 1 is an event, in pieces of any
    size (the whole file in one piece is where msgspec's count and the line count agree)."""
    data = b'{"seq":1}\n\n{"seq":2}{"seq":3}\n'
    for block in (3, 11, 1 << 22):
        with mock.patch.object(journal, "BLOCK_BYTES", block):
            scanned = scan_journal_bytes(data)
            assert list(scanned.events) == [{"seq": 1}], block
            assert scanned.malformed == [{"line": 3, "raw": '{"seq":2}{"seq":3}'}], block
            assert len(scanned.events) == 1 and len(list(scanned.events.outputs())) == 1, block


def test_a_value_over_two_lines_does_not_make_up_for_a_line_of_two_values():
    """Line 1 ends inside an object that line 2 closes before a second object starts: two values
    in two lines, neither of which json.loads reads alone, so there is no event at all."""
    data = b'{"a":{"b":1}\n}{"seq":2}\n'
    scanned = scan_journal_bytes(data)
    assert list(scanned.events) == [] and len(scanned.events) == 0
    assert scanned.malformed == [{"line": 1, "raw": '{"a":{"b":1}'}, {"line": 2, "raw": '}{"seq":2}'}]
    assert list(scanned.events.outputs()) == []


def test_one_value_per_line_is_judged_on_the_piece_alone():
    """The piece (lines 2-3 of a larger buffer) holds two objects on two lines: yes, and only for two.
    The lines before and after it (more line breaks, more "}\\n{") do not count."""
    piece = b'{"a":1}\n{}\n'
    data = b'{"z":0}\n' + piece + b'{"q":1}\n{"r":2}\n{"s":3}\n{"t"'
    start, end = 8, 8 + len(piece)
    assert journal._one_value_per_line(data, start, end, 2) is True
    assert journal._one_value_per_line(data, start, end, 1) is False
    assert journal._one_value_per_line(data, start, end, 3) is False
    assert journal._one_value_per_line(piece, 0, len(piece), 2) is True


def test_one_value_per_line_counts_a_last_line_without_its_newline_and_a_single_line():
    assert journal._one_value_per_line(b"{}\n{}", 0, 5, 2) is True
    assert journal._one_value_per_line(b'{"a":1}', 0, 7, 1) is True
    assert journal._one_value_per_line(b'{"a":1}\n', 0, 8, 1) is True
    assert journal._one_value_per_line(b"{}\n\n{}{}\n", 0, 9, 3) is False  # a blank line, a line of two
    assert journal._one_value_per_line(b'{"a":\n1}{}\n', 0, 11, 2) is False  # one over two lines, two on one


def _counting_checks(monkeypatch):
    calls = []
    real = journal._one_value_per_line

    def noting(data, start, end, values):
        calls.append((start, end))
        return real(data, start, end, values)

    monkeypatch.setattr(journal, "_one_value_per_line", noting)
    return calls


def test_a_piece_the_scan_counted_is_not_checked_again_by_the_walks(monkeypatch):
    """Three pieces of two lines each, every line an object with no terminal record: the scan's
    count checks each piece once, the walks take the scan's word (six events, the values as read)."""
    data = b'{"seq":1}\n{"seq":2}\n{"seq":3}\n{"seq":4}\n{"seq":5}\n{"seq":6}\n'
    calls = _counting_checks(monkeypatch)
    with mock.patch.object(journal, "BLOCK_BYTES", 20):
        scanned = scan_journal_bytes(data)
        assert calls == [(0, 20)] * 3  # each piece on its own (a copy of its bytes)
        assert [e.seq for e in scanned.events.outputs()] == [1, 2, 3, 4, 5, 6]
    assert calls == [(0, 20)] * 3


def test_a_piece_with_a_terminal_record_is_checked_by_the_walks(monkeypatch):
    """The second piece holds a terminal record: the scan reads it line by line (not counted), so the
    walks' msgspec read of it is checked there, once; the counted first piece is not checked again."""
    data = b'{"seq":1}\n{"seq":2}\n{"seq":3}\n{"terminal":true}\n'
    calls = _counting_checks(monkeypatch)
    with mock.patch.object(journal, "BLOCK_BYTES", 20):
        scanned = scan_journal_bytes(data)
        assert calls == [(0, 20)]  # the first piece on its own
        assert [e.seq for e in scanned.events.outputs()] == [1, 2, 3, None]
    assert calls == [(0, 20), (20, 48)]  # the second, in the journal's bytes


def test_the_walks_check_each_piece_when_nothing_was_counted(monkeypatch):
    """Events made from a plan without the scan's word (``StreamedEvents`` built by hand): every plain
    piece is checked, and a line of two values in one still leaves hermes' events."""
    data = b'{"seq":1}\n{"seq":2}{"seq":3}\n'
    events = journal.StreamedEvents(data, [(0, 10, True), (10, 29, True)], 2, None)
    calls = _counting_checks(monkeypatch)
    assert [e.seq for e in events.outputs()] == [1]
    assert calls == [(0, 10), (10, 29)]


def test_piece_events_checks_the_lines_unless_told_they_were_checked():
    """Rule: ``_piece_events`` without ``lines_checked`` looks at the lines itself: msgspec reads one
    value from ``{"a":`` / ``1}``, hermes two lines it skips, so no event; told the lines were checked
    (only the scan that counted them may say so) it takes msgspec's reading as it is."""
    data = b'{"a":\n1}\n'
    assert journal._plain_piece(data) is True
    assert journal._piece_events(data, 0, len(data), True) == []
    told = journal._piece_events(data, 0, len(data), True, True)
    assert [(e.event, e.payload) for e in told] == [(None, None)]
