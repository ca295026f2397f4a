"""The fast parser gives exactly the stdlib's verdict and values."""

from __future__ import annotations

import json

import pytest

from inspector.store.jsonfmt import fast_loads

CASES = [
    '{"a": 1, "a": 2, "b": 3}',
    "[1e400]",
    "[NaN, Infinity]",
    "[123456789012345678901234567890]",
    "[-9999999999999999999]",
    "[18446744073709551616]",
    '{"a": "\\ud800"}',
    "[1.0000000000000002]",
    '{"t": 1796016654.2879953, "n": 9007199254740993}',
    "[-0.0, 5e-324]",
]


@pytest.mark.parametrize("text", CASES)
def test_fast_loads_equals_the_stdlib_in_value_and_type(text: str) -> None:
    expected = json.loads(text)
    for data in (text, text.encode("utf-8")):
        got = fast_loads(data)
        assert repr(got) == repr(expected)


@pytest.mark.parametrize("text", ['{"a": "x\ty"}', '{"a": 1,}', "\ufeff{}", '{"a"'])
def test_fast_loads_rejects_what_the_stdlib_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        fast_loads(text.encode("utf-8"))
