"""The words of a turn-journal shard hermes may not read for its depth (``turn_journal._parse_shard``,
tests/MUTATION.md, fourth session): a line in the unsure band (901-993 levels), and a line the stdlib
runs out of room on from a deep caller."""

from __future__ import annotations

import sys

import pytest

from inspector.store.turn_journal import TurnJournal, TurnJournalError, _parse_shard


def test_an_unsure_line_is_named_with_its_levels():
    """Rule: a line of 950 levels: whether hermes reads it depends on hermes itself; named by line."""
    data = b'{"turn_id": "a"}\n' + b"[" * 950 + b"]" * 950 + b"\n"
    with pytest.raises(TurnJournalError) as caught:
        _parse_shard(data, "s~1.jsonl", TurnJournal(session_id="s"))
    assert str(caught.value) == (
        "turn journal s~1.jsonl line 2 is nested 950 levels deep: whether hermes reads it or fails "
        "depends on hermes itself"
    )


def test_a_line_the_parser_has_no_room_for_is_named():
    """Rule: the stdlib's RecursionError on a line (here 880 levels read by the stdlib from 200 frames down)
    fails the shard, naming the line."""
    # a 24-digit number makes the shard one orjson may not read exactly: the stdlib reads every line
    data = b'{"n": 123456789012345678901234}\n' + b"[" * 880 + b"]" * 880 + b"\n"

    def dive(n: int) -> None:
        if n:
            dive(n - 1)
            return
        _parse_shard(data, "s~1.jsonl", TurnJournal(session_id="s"))

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # the interpreter's default, whatever ran before
    try:
        with pytest.raises(TurnJournalError) as caught:
            dive(200)
    finally:
        sys.setrecursionlimit(old)
    assert str(caught.value) == "turn journal s~1.jsonl line 2 is nested too deeply"
