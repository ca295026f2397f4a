"""Lines nested too deeply for hermes' reader (``journal_raw.depth_problem``) and the stdlib grammar
steps the depth walk is made of (``json_depth._string_end``, ``_scalar_end``, ``_member_value_start``),
rule by rule (tests/MUTATION.md, fourth session). hermes reads a line of up to 900 levels from any
caller and none of 994 or more (``HERMES_ALWAYS_READS``/``HERMES_NEVER_READS``); the grammar is
``json.decoder``'s strict scanner, whose "no value here" each helper answers with -1."""

from __future__ import annotations

import pytest

from inspector.store.journal_raw import depth_problem
from inspector.store.json_depth import _member_value_start, _scalar_end, _string_end

UNSURE_950 = b"[" * 950 + b"]" * 950


def test_a_line_no_reader_enters_is_named_by_its_number():
    """Rule: the first line of 994+ levels is named (1-based) over an unsure one before it, with its
    0-based index and "every reader fails"."""
    data = b'{"seq": 1}\n' + UNSURE_950 + b"\n" + b"[" * 2000 + b"]" * 2000 + b"\n"
    assert depth_problem(data) == (
        "line 3 is nested 994 or more levels deep, deeper than hermes' reader can go",
        2,
        True,
    )


def test_an_unsure_line_is_named_when_no_line_is_worse():
    """Rule: a line of 901-993 levels: hermes reads it or not depending on its own stack depth; the
    first such line is named."""
    data = b"{}\n" + UNSURE_950 + b"\n" + UNSURE_950
    assert depth_problem(data) == (
        "line 2 is nested 950 levels deep (hermes reads it or not depending on hermes itself)",
        1,
        False,
    )


def test_brackets_apart_and_object_nesting_count_too():
    """Rule: the line's opening brackets are counted whatever lies between them (spaces too), ``{``
    as ``[``: a line of objects nested 2,000 deep, or arrays written with spaces, is too deep."""
    spaced = b"[ " * 2000 + b"]" * 2000
    assert depth_problem(b"{}\n" + spaced)[1:] == (1, True)
    objects = b'{"a":' * 2000 + b"1" + b"}" * 2000
    assert depth_problem(objects) == (
        "line 1 is nested 994 or more levels deep, deeper than hermes' reader can go",
        0,
        True,
    )


def test_many_brackets_that_do_not_nest_are_no_problem():
    """Rule: a line with more than 900 brackets side by side nests one level: nothing to name."""
    assert depth_problem(b"[]" * 1000 + b"\n" + b"{}" * 1000) is None


@pytest.mark.parametrize(
    ("text", "at", "end"),
    [
        ('"abc"', 0, 5),
        ('x "abc" y', 2, 7),
        ('"a\\nb"', 0, 6),  # a simple escape takes two characters
        ('"a\\n"', 0, 5),  # ... and no more: the quote right after it closes the string
        ('"\\u00e9\\"x"', 0, 11),
        ('"abc', 0, -1),  # unterminated
        ('"a\x01b"', 0, -1),  # a control character (strict)
        ('"\\u12G4"', 0, -1),  # not four hex digits
        ('"\\q"', 0, -1),  # not an escape
        ('"\\', 0, -1),  # a backslash at the end
    ],
)
def test_a_string_ends_after_its_closing_quote_or_nowhere(text, at, end):
    """Rule: the index after the closing quote; -1 where the strict scanner raises."""
    assert _string_end(text, at) == end


@pytest.mark.parametrize(
    ("text", "at", "end"),
    [
        ("[ true]", 2, 6),
        ("[null", 1, 5),
        ("-Infinity", 0, 9),
        ("[ 12.5e3,", 2, 8),
        ("[ x", 2, -1),
        ("[ -", 2, -1),
    ],
)
def test_a_scalar_ends_after_its_literal_or_number_or_nowhere(text, at, end):
    """Rule: a literal or a number starting at ``at`` ends after it; -1 when there is none there."""
    assert _scalar_end(text, at) == end


@pytest.mark.parametrize(
    ("text", "at", "start"),
    [
        ('{"a": 1}', 1, 6),
        ('{"a":1}', 1, 5),
        ("{a: 1}", 1, -1),  # the key is not a string
        ('{"a: 1}', 1, -1),  # the key string is not closed
        ('{"a" 1}', 1, -1),  # no colon
    ],
)
def test_a_members_value_starts_after_key_colon_and_white_space_or_nowhere(text, at, start):
    """Rule: after the key string, white space, ``:`` and white space; -1 where the scanner raises."""
    assert _member_value_start(text, at) == start
