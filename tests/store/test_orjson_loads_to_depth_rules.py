"""``jsonfmt._orjson_loads_to_depth(data, limit)``: orjson's value of ``data`` when it nests at most
``limit`` levels, else the "not parsed" marker (the stdlib then judges the text). Two ways to the same
answer: the text parsed inside extra arrays (only where orjson's own limit of 1,024 levels was probed
and found), else parsed as it is and its value walked for its depth. Each is held to values written out
here, and an orjson with another limit is shown to take the walk (tests/MUTATION.md, fourteenth session).
"""

from __future__ import annotations

import pytest

from inspector.store import jsonfmt
from tests.store.test_orjson_depth_probe_rules import FakeOrjson

NOT_PARSED = jsonfmt._NOT_PARSED

CASES = [
    # (text, limit, value or NOT_PARSED)
    (b"[[1]]", 2, [[1]]),
    (b'{"a": {"b": [true]}}', 3, {"a": {"b": [True]}}),
    (b"[[[1]]]", 2, NOT_PARSED),  # three levels, two allowed
    (b'{"a": {"b": [true]}}', 2, NOT_PARSED),
    (b"7", 1, 7),  # a number nests no level
    (b"[1,", 5, NOT_PARSED),  # not JSON
    (b"[1] [2]", 5, NOT_PARSED),  # two values
    ("[[\u00e9]]".encode(), 5, NOT_PARSED),  # a bare word, not JSON
    ('["\u00e9"]', 1, ["\u00e9"]),  # a str is read too
]


def _check(text, limit, expected) -> None:
    got = jsonfmt._orjson_loads_to_depth(text, limit)
    if expected is NOT_PARSED:
        assert got is NOT_PARSED
    else:
        assert got == expected


@pytest.fixture
def known_limit(monkeypatch):
    """The installed orjson, its limit probed and found (the extra-arrays way)."""
    monkeypatch.setattr(jsonfmt, "_ORJSON_DEPTH_CHECKED", None)
    assert jsonfmt._orjson_depth_limit_is_known() is True


@pytest.fixture
def unknown_limit(monkeypatch):
    """The installed orjson, its limit said to be unknown (the walk)."""
    monkeypatch.setattr(jsonfmt, "_ORJSON_DEPTH_CHECKED", False)


@pytest.mark.parametrize("text, limit, expected", CASES)
def test_with_the_limit_known_the_value_or_the_marker(known_limit, text, limit, expected):
    """Rule: the value when the text nests at most ``limit`` levels; the marker when deeper or not JSON."""
    _check(text, limit, expected)


@pytest.mark.parametrize("text, limit, expected", CASES)
def test_with_the_limit_unknown_the_walk_gives_the_same(unknown_limit, text, limit, expected):
    """Rule: the same answers when the value is parsed as it is and walked for its depth."""
    _check(text, limit, expected)


def test_a_limit_of_1024_or_more_takes_the_walk_and_reads_what_orjson_reads(known_limit):
    """Rule: no extra array can be added below orjson's own limit: the text as it is, 1,024 levels read,
    1,025 refused by orjson itself."""
    at_limit = b"[" * 1024 + b"]" * 1024
    past = b"[" * 1025 + b"]" * 1025
    value = jsonfmt._orjson_loads_to_depth(at_limit, 1024)
    assert not jsonfmt.nesting_exceeds(value, 1024) and jsonfmt.nesting_exceeds(value, 1023)
    assert jsonfmt._orjson_loads_to_depth(past, 1024) is NOT_PARSED
    assert jsonfmt._orjson_loads_to_depth(b"[[1]]", 2000) == [[1]]


def test_an_orjson_with_a_lower_limit_is_not_given_extra_arrays(monkeypatch):
    """Rule: where orjson refuses at another depth (here 100 levels) the text is not wrapped in the
    1,000-odd arrays that such an orjson would refuse: a shallow text still gives its value, and one
    deeper than the limit the marker."""
    fake = FakeOrjson(arrays=100, objects=100)
    monkeypatch.setattr(jsonfmt, "_orjson", fake)
    monkeypatch.setattr(jsonfmt, "_ORJSON_DEPTH_CHECKED", None)
    assert jsonfmt._orjson_loads_to_depth(b"[[1]]", 50) == [[1]]
    assert jsonfmt._orjson_loads_to_depth(b"[" * 60 + b"]" * 60, 50) is NOT_PARSED
    assert fake.seen[-2:] == [b"[[1]]", b"[" * 60 + b"]" * 60]  # each read as it is
