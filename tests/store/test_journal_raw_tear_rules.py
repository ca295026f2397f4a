"""The raw journal's words for a line hermes tears apart (``str.splitlines()`` breaks it at an
invisible line-break character) and the events hermes reads from its pieces (seventh session of
issue 21, tests/MUTATION.md).

Rules pinned here:

* the reason names each tearing character once, sorted (``U+2028``, ``\\v``), the number of pieces,
  and how many were read as events and how many skipped as malformed (blank pieces are neither);
* when no piece is an event the reason says "all skipped as malformed";
* hermes reads every piece that is a JSON object, past a blank piece and past a malformed one.
"""

from __future__ import annotations

from inspector.store.journal_raw import RawJournal


def test_the_reason_names_the_characters_and_counts_the_pieces() -> None:
    """Rule: U+2028 and \\v tear the line into 3 pieces: 2 events, 1 skipped as malformed."""
    line = RawJournal('{"a": 1}\u2028junk\x0b{"b": 2}\n'.encode()).line(0)
    assert line.dropped == (
        "split apart by an invisible line-break character (U+2028, \\v) that hermes reads as a "
        "line end, into 3 pieces (2 read as events, 1 skipped as malformed)"
    )
    assert list(line.hermes_events) == [{"a": 1}, {"b": 2}]  # the one after the malformed piece too


def test_no_event_among_the_pieces_is_all_skipped() -> None:
    """Rule: neither piece is a JSON object: "all skipped as malformed"."""
    line = RawJournal(b"junk\x0bmore\n").line(0)
    assert line.dropped == (
        "split apart by an invisible line-break character (\\v) that hermes reads as a "
        "line end, into 2 pieces (all skipped as malformed)"
    )
    assert list(line.hermes_events) == []


def test_a_blank_piece_is_passed_over_and_the_next_one_read() -> None:
    """Rule: a line starting with \\v: a blank piece (not counted as malformed), then an event."""
    line = RawJournal(b'\x0b{"a": 1}\n').line(0)
    assert list(line.hermes_events) == [{"a": 1}]
    assert line.dropped.endswith("into 2 pieces (1 read as events, 0 skipped as malformed)")
