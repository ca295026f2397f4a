"""Rule: the walk of a journal line (``json_depth.levels_entered`` / ``levels_needed`` /
``hermes_verdict``) counts the levels the stdlib's ``json.loads`` enters, and the room it needs:
the levels entered, or ``RAISE_LEVELS`` (3) more than the containers open where the C scanner
raises ``JSONDecodeError`` itself (a bad string, a missing ``:`` or ``,``, a key that is not a
string); a missing value ("Expecting value", raised once the scanner has unwound) and a complete
value need no more than the levels entered. Counting stops at ``stop_at``. A line with at most 900
opening brackets, or needing at most 900 levels, is read by every hermes reader.

Small hand-picked lines, each at one edge of the walk; expected values written by hand from the
stdlib's grammar (``json/decoder.py``, ``json/scanner.py``) and the room rule above (measured and
pinned against the C scanner by ``tests/store/test_json_depth.py``).
"""

from __future__ import annotations

import pytest

from inspector.store.json_depth import ALWAYS, UNSURE, hermes_verdict, levels_entered, levels_needed


@pytest.mark.parametrize(
    ("line", "entered", "needed"),
    [
        ("", 0, 0),  # nothing: "Expecting value" once unwound
        ("  ", 0, 0),
        ("1", 0, 0),  # a complete top-level value: no container, no raise
        ("true", 0, 0),
        ("[", 1, 1),  # cut after the opening: "Expecting value" at the end, after unwinding
        ("[]", 1, 1),  # an empty array closes the top level
        ("{}", 1, 1),  # an empty object closes with "}", not "]"
        ("{ }", 1, 1),
        ("[x", 1, 1),  # no value inside: raised after unwinding
        ("X", 0, 0),  # not a value: no container entered
        ("[X[[", 1, 1),
        ('"abc', 0, 3),  # an unterminated top-level string: the string scanner raises with 0 open
        ('"\\q"', 0, 3),  # a bad escape at the top level
        ('{"a"}', 1, 4),  # "Expecting ':' delimiter" with one object open
        ("{1:2}", 1, 4),  # a key that is not a string
        ("[1 2]", 1, 4),  # a missing comma
        ('["a', 1, 4),  # a string cut short inside an array
        ("[[],[[]]]", 3, 3),  # after an empty array the comma is read, then the next value
        ("[{},[[]]]", 3, 3),
        ("[[] ,[[]]]", 3, 3),
        ("[[],x]", 2, 2),
        ("[[]1]", 2, 4),  # a missing comma after an empty array: raised with one open (1 + 3)
    ],
)
def test_levels_entered_and_needed_of_small_lines(line: str, entered: int, needed: int) -> None:
    assert levels_entered(line) == entered
    assert levels_needed(line) == needed


@pytest.mark.parametrize(
    ("line", "stop_at", "expected"),
    [("[" * 5, 2, 2), ("[" * 5 + "]" * 5, 3, 3), ('{"a":' * 4 + "1" + "}" * 4, 1, 1), ("[[]]", 2, 2)],
)
def test_the_count_stops_at_stop_at(line: str, stop_at: int, expected: int) -> None:
    """Reaching ``stop_at`` ends the walk: the levels so far, and no raise counted."""
    assert levels_entered(line, stop_at) == expected
    assert levels_needed(line, stop_at) == expected


def test_a_line_with_few_brackets_is_read_without_a_walk() -> None:
    assert hermes_verdict("[]") == (ALWAYS, 0)
    assert hermes_verdict('{"event": "token", "payload": [[1], {"a": [2]}]}') == (ALWAYS, 0)


def test_a_line_needing_exactly_900_levels_is_read_by_every_reader() -> None:
    """901 opening brackets (so it is walked), 900 of them nested: every hermes reader reads it."""
    line = "[" * 900 + "]" * 899 + ",[]]"
    assert hermes_verdict(line) == (ALWAYS, 900)
    deeper = "[" * 901 + "]" * 901
    assert hermes_verdict(deeper) == (UNSURE, 901)
