"""RawJournal.find_line: the session find bar's journal search (issue 16), a byte search that
wraps round the journal and never parses it."""

from __future__ import annotations

from inspector.store.journal_raw import RawJournal

DATA = (
    b'{"event":"token","payload":{"text":"Hello there"}}\n'
    b"not json at all\n"
    b'{"event":"token","payload":{"text":"say hello again"}}\n'
    b'{"event":"done","payload":{"text":"caf\\u00e9"}}'
)


def test_forward_finds_the_next_line_and_wraps():
    raw = RawJournal(DATA)
    assert raw.find_line("hello") == 0  # from the top, case-insensitive
    assert raw.find_line("hello", 0) == 2
    assert raw.find_line("hello", 2) == 0  # round the end
    assert raw.find_line("NOT JSON", 3) == 1  # dropped lines are searched too


def test_backward_finds_the_previous_line_and_wraps():
    raw = RawJournal(DATA)
    assert raw.find_line("hello", 2, backward=True) == 0
    assert raw.find_line("hello", 0, backward=True) == 2  # round the start
    assert raw.find_line("hello", backward=True) == 2  # from the end


def test_no_match_and_empty_text_are_none():
    raw = RawJournal(DATA)
    assert raw.find_line("absent") is None and raw.find_line("") is None
    assert RawJournal(b"").find_line("x") is None


def test_text_is_found_as_the_file_writes_it():
    raw = RawJournal(DATA)
    assert raw.find_line("caf\\u00e9") == 3  # the escape, as on disk
    assert raw.find_line("[x]") is None  # the text is literal, not a pattern
    assert raw.line_at(0) == 0 and raw.line_at(len(DATA) - 1) == 3


def test_find_seq_is_the_records_own_seq_not_a_nested_one_nor_a_prefix():
    raw = RawJournal(b'{"seq":1,"payload":{"seq":7}}\n{"seq":12}\n{"seq": 7}\nnot json "seq":7\n{"seq":70}\n')
    assert raw.find_seq(7) == 2  # line 0 has 7 only inside its payload; line 3 is dropped text
    assert raw.find_seq(1) == 0 and raw.find_seq(12) == 1 and raw.find_seq(70) == 4
    assert raw.find_seq(2) is None and raw.find_seq(True) is None
