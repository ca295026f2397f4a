"""Whether a journal line is an object for hermes (``scan._is_object_line``) and the words for a piece
that is not UTF-8 (``scan._piece_lines``), rule by rule (tests/MUTATION.md, fourth session). hermes
reads each line with ``json.loads``; a line nested deeper than the stdlib goes is its verdict alone
(RecursionError: not an object), even where orjson would read it."""

from __future__ import annotations

import json

import pytest

from inspector.store.journal import JournalUnreadable
from inspector.store.scan import _is_object_line, _piece_lines

DEEP = 1020  # past the stdlib's room from any caller (recursion limit 1,000), within orjson's 1,024


@pytest.mark.parametrize(
    "line",
    [
        '{"a":' * DEEP + "1" + "}" * DEEP,  # objects only
        '{"a": ' + "[" * DEEP + "]" * DEEP + "}",  # an object around deep arrays
    ],
    ids=["nested-objects", "object-around-arrays"],
)
def test_a_line_nested_past_the_stdlibs_room_is_no_object(line):
    """Rule: the stdlib raises RecursionError on such a line, so hermes skips it: not an object."""
    with pytest.raises(RecursionError):
        json.loads(line)
    assert _is_object_line(line) is False


def test_plain_lines_are_objects_or_not_as_json_loads_says():
    """Rule: an object is one; an array, a number, text that is not JSON are not; NaN is the stdlib's."""
    assert _is_object_line('{"event": "token", "seq": 1}') is True
    assert _is_object_line('{"x": NaN}') is True
    assert _is_object_line("[1, 2]") is False
    assert _is_object_line("12") is False
    assert _is_object_line("{oops") is False


def test_invalid_utf8_is_named_by_its_offset_in_the_file():
    """Rule: the offset of the bad byte counts from the file's start (the piece's start plus its place)."""
    with pytest.raises(JournalUnreadable) as caught:
        _piece_lines(b'{"a": 1}\nab\xff\n', 100)
    assert str(caught.value) == "not valid UTF-8 at byte 111: the whole journal is unreadable"
    assert _piece_lines("one\r\ntwo\x85three".encode(), 0) == ["one", "two", "three"]
