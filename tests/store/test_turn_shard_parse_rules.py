"""Parsing one turn-journal shard as hermes' ``read_turn_journal`` does (``turn_journal._parse_shard``).

Rules found by mutation testing (tests/MUTATION.md, third session), from hermes' reader: every
non-blank line is ``json.loads``-ed, an object is an event, anything else a malformed line (its number,
its text and the shard's name); blank lines are skipped, not an end; a line nested too deeply makes
hermes' read fail. Expected values written by hand.
"""

from __future__ import annotations

import pytest

from inspector.store.turn_journal import TurnJournal, TurnJournalError, _parse_shard
from inspector.store.turn_journal import _stem as turn_stem


def _parsed(data: bytes) -> TurnJournal:
    journal = TurnJournal(session_id="s1")
    _parse_shard(data, "s1~7.jsonl", journal)
    return journal


def test_blank_lines_are_skipped_and_malformed_lines_kept_with_their_text():
    """Rule: a blank line does not end the shard; a line that is not a JSON object is malformed,
    recorded as ``{"line", "raw", "shard"}``."""
    journal = _parsed(b'{"event": "a"}\n\n   \nnot json\n[1, 2]\n{"event": "b"}\n')
    assert journal.events == [{"event": "a"}, {"event": "b"}]
    assert journal.malformed == [
        {"line": 4, "raw": "not json", "shard": "s1~7.jsonl"},
        {"line": 5, "raw": "[1, 2]", "shard": "s1~7.jsonl"},
    ]


def test_a_shard_with_integers_beyond_64_bits_is_read_exactly():
    """Rule: an integer of 24 digits is read as that integer (the stdlib's reading), not a float."""
    journal = _parsed(b'{"event": "a", "n": 123456789012345678901234}\n{"event": "b"}\n')
    assert journal.events == [{"event": "a", "n": 123456789012345678901234}, {"event": "b"}]
    assert isinstance(journal.events[0]["n"], int)


def test_a_line_nested_too_deeply_fails_the_read_naming_the_shard_and_line():
    """Rule: a line too deeply nested for hermes' json.loads fails the read: shard name and line number."""
    data = b'{"event": "a"}\n' + b'{"a":' * 100000 + b"1" + b"}" * 100000 + b"\n"
    with pytest.raises(TurnJournalError) as caught:
        _parsed(data)
    assert str(caught.value) == (
        "turn journal s1~7.jsonl line 2 is nested 994 or more levels deep, deeper than hermes' reader can go"
    )


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        ("s1~7.jsonl", "s1~7"),
        ("a.b", "a"),
        ("ab.c", "ab"),
        ("a.b.c", "a.b"),
        (".x", ".x"),
        ("a.", "a."),
        ("n", "n"),
    ],
)
def test_a_shard_names_stem_is_purepaths_stem(name, stem):
    """Rule: the shard's stem is ``PurePath(name).stem`` (the name without its last suffix)."""
    assert turn_stem(name) == stem
