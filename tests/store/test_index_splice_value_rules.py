"""``index_splice._value``: a raw value of an index row that passed the splice's checks, read as
``json.loads`` reads it, expected values written out by hand (each kind of value, with its type)."""

from __future__ import annotations

import json

import pytest

from inspector.store import index_splice

CASES = [
    (b'"abc"', "abc"),
    ('"é ✓"'.encode(), "é ✓"),
    (b'""', ""),
    (b'"a"', "a"),
    (b"12", 12),
    (b"-3", -3),
    (b"0", 0),
    (b"1.5", 1.5),
    (b"-0.25", -0.25),
    (b"1e5", 100000.0),
    (b"1E5", 100000.0),
    (b"2.5e-3", 0.0025),
    (b"true", True),
    (b"false", False),
    (b"null", None),
    (b"[]", []),
    (b"{}", {}),
]


@pytest.mark.parametrize("raw, expected", CASES)
def test_a_raw_value_reads_as_json_loads_reads_it_with_its_type(raw, expected):
    got = index_splice._value(raw, "missing")
    assert got == expected and type(got) is type(expected)
    assert got == json.loads(raw)  # the reference the splice stands for


def test_a_memoryview_of_the_index_reads_the_same():
    data = b'{"a": "xyz", "b": 7}'
    assert index_splice._value(memoryview(data)[6:11], None) == "xyz"
    assert index_splice._value(memoryview(data)[18:19], None) == 7


def test_an_absent_key_gives_the_callers_default():
    assert index_splice._value(index_splice._UNSET, 0) == 0
    assert index_splice._value(index_splice._UNSET, None) is None
