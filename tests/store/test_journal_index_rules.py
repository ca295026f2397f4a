"""The journal index's event counts and seq search (``JournalIndex.event_counts``, ``RawJournal.find_seq``).

Rules found by mutation testing (tests/MUTATION.md, third session); every expected list is written
out by hand.
"""

from __future__ import annotations

from array import array

from inspector.store.journal_raw import JournalIndex, RawJournal


def _index(kinds: bytes, names: tuple[str, ...], counts: dict[int, int]) -> JournalIndex:
    return JournalIndex(
        size=0,
        starts=array("q", range(len(kinds))),
        unreadable=None,
        bad_byte_offset=None,
        torn=frozenset(),
        seq_notes={},
        stats={},
        kinds=kinds,
        event_names=names,
        kind_counts=counts,
    )


def test_event_counts_are_the_whole_files_counts_not_the_lines_at_hand():
    """Rule: the counts ``index_journal`` made over the whole file win over counting ``kinds``."""
    index = _index(b"\x01\x02", ("token", "tool"), {1: 5, 2: 1})
    assert index.event_counts() == [("token", 5), ("tool", 1)]


def test_an_index_without_counts_counts_its_kinds():
    """Rule: an index with per-line kinds but no counts (one made before counts were kept) counts the
    kinds; code 0 (a line with no event) is no event name."""
    index = _index(b"\x01\x02\x01\x00\x01", ("token", "tool"), {})
    assert index.event_counts() == [("token", 3), ("tool", 1)]


def test_an_event_name_with_no_line_is_not_listed():
    """Rule: only names that have lines are listed (no name with a count of 0 or 1 by default)."""
    index = _index(b"\x01\x01", ("token", "tool", "done"), {1: 2})
    assert index.event_counts() == [("token", 2)]


def test_equal_counts_are_listed_by_name():
    """Rule: most frequent first, then by name (not by the order the names were first seen)."""
    index = _index(b"\x01\x02\x03\x03", ("tool", "done", "token"), {1: 1, 2: 1, 3: 2})
    assert index.event_counts() == [("token", 2), ("done", 1), ("tool", 1)]


def test_find_seq_takes_only_an_integer():
    """Rule: hermes' seq is an int: a float (even one equal to a line's seq) or a bool finds nothing."""
    data = b'{"seq": 3.0, "event": "token"}\n{"seq": 1, "event": "token"}\n'
    journal = RawJournal(data)
    assert journal.find_seq(3.0) is None
    assert journal.find_seq(True) is None
    assert journal.find_seq(1) == 1
