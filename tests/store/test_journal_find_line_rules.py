"""Finding a text in the raw journal (``RawJournal.find_line``): where the search starts, how it wraps.

Rules found by mutation testing (tests/MUTATION.md, third session); the journals are plain lines
so each expected line number can be read off by eye.
"""

from __future__ import annotations

from inspector.store.journal_raw import RawJournal

# line:        0                1          2          3
DATA = b"needle at start\nhaystack\nneedle two\nlast line\n"


def journal() -> RawJournal:
    return RawJournal(DATA)


def test_forward_from_no_line_starts_at_the_first_byte():
    """Rule: after=-1 searches from the journal's first byte: a match at byte 0 is line 0."""
    assert journal().find_line("needle") == 0
    assert journal().find_line("NEEDLE AT") == 0  # ASCII letters in any case


def test_forward_wraps_to_a_match_at_the_first_byte():
    """Rule: nothing after line ``after``: the search wraps to the top, byte 0 included."""
    assert journal().find_line("at start", after=1) == 0
    assert journal().find_line("needle at", after=2) == 0


def test_forward_from_a_line_out_of_range_starts_at_the_top():
    """Rule: an ``after`` that names no line (past the end, or below -1) searches from the top."""
    j = journal()
    assert j.find_line("needle", after=4) == 0
    assert j.find_line("needle", after=40) == 0
    assert j.find_line("needle", after=-2) == 0


def test_backward_from_no_line_finds_the_last_match_in_the_last_line():
    """Rule: backward with after=-1 searches the whole journal from its end: the last line counts."""
    assert journal().find_line("line", backward=True) == 3
    assert (
        journal().find_line("e", backward=True) == 3
    )  # "e" is in lines 0-2 too: the last line is searched first
    assert journal().find_line("needle", backward=True) == 2


def test_backward_finds_a_match_at_the_first_byte_before_wrapping():
    """Rule: backward from line 1 looks at every byte before it, byte 0 included."""
    assert journal().find_line("needle at", after=1, backward=True) == 0
    assert journal().find_line("needle", after=2, backward=True) == 0


def test_backward_from_a_line_out_of_range_searches_from_the_end():
    """Rule: an ``after`` past the last line searches backward from the journal's end."""
    j = journal()
    assert j.find_line("needle", after=4, backward=True) == 2
    assert j.find_line("line", after=4, backward=True) == 3


def test_backward_wraps_to_the_last_match_after_the_line():
    """Rule: nothing before line ``after``: the search wraps to the last match after it."""
    assert journal().find_line("two", after=0, backward=True) == 2
    assert journal().find_line("needle", after=0, backward=True) == 2


def test_a_text_in_no_line_is_none_both_ways():
    """Rule: no match anywhere is None (forward and backward), and so is an empty text."""
    j = journal()
    assert j.find_line("absent") is None
    assert j.find_line("absent", after=1, backward=True) is None
    assert j.find_line("absent", backward=True) is None
    assert j.find_line("") is None
