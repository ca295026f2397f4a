"""The raw journal's searches by text and by seq: the rules mutation testing found unpinned.

Fifth session of issue 21 (tests/MUTATION.md). The journals are a few plain lines, so each
expected line number is read off by eye.
"""

from __future__ import annotations

from inspector.store.journal_raw import RawJournal

# line:   0     1
SPLIT = b"ab\ncd\n"  # "b\nc" crosses the end of line 0


def test_a_text_across_a_line_break_is_found_from_the_top():
    """Rule: from no line (after=-1) the search covers the whole journal, line breaks included."""
    assert RawJournal(SPLIT).find_line("b\nc") == 0


def test_forward_wrap_covers_only_the_bytes_before_the_end_of_line_after():
    """Rule: forward from line ``after``, the search looks past the end of that line, then wraps
    over the bytes *before* that end only: a match crossing it is in neither part, so none."""
    assert RawJournal(SPLIT).find_line("b\nc", after=0) is None
    assert RawJournal(SPLIT).find_line("ab", after=0) == 0  # a match wholly before the end: found


def test_backward_wrap_covers_only_the_bytes_from_the_start_of_line_after():
    """Rule: backward from line ``after``, the search looks before that line's first byte, then
    wraps over the bytes *from* it to the end only: a match crossing it is in neither part."""
    assert RawJournal(SPLIT).find_line("b\nc", after=1, backward=True) is None
    assert RawJournal(SPLIT).find_line("cd", after=1, backward=True) == 1  # wholly after: found


def test_a_seq_written_as_a_float_is_not_that_integer_seq():
    """Rule: ``find_seq(5)`` finds the record whose seq is the integer 5, not one whose seq is
    written 5E0, 5e0 or 5.0 (which JSON reads as the float 5.0, equal to 5 in Python)."""
    floats = b'{"seq": 5E0}\n{"seq": 5e0}\n{"seq": 5.0}\n'
    assert RawJournal(floats).find_seq(5) is None
    assert RawJournal(floats + b'{"seq": 5}\n').find_seq(5) == 3
    assert RawJournal(b'{"seq": 5E0}\n{"seq": 5}\n').find_seq(5) == 1
    assert RawJournal(b'{"seq": 5e0}\n{"seq": 5}\n').find_seq(5) == 1
