"""``dumps_pretty_fast`` writes plain data itself and hands to the stdlib only what it must
(found by mutation testing, eighteenth session: a fast writer that gave up on everything, or on one
level too few or too many, still wrote the same bytes through its stdlib fallback, so no test saw it).

Plain data here: str keys, str/int/bool/None/float values (the odd floats orjson writes otherwise
included), dicts and lists nested at most ``FAST_DUMP_MAX_DEPTH`` (100) levels. The expected bytes
are the stdlib's ``json.dumps(obj, ensure_ascii=False, indent=2)``, hermes' writer.
"""

from __future__ import annotations

import json

import pytest

from inspector.store import jsonfmt

pytestmark = pytest.mark.skipif(
    jsonfmt.STDLIB_INDENT_IN_C or jsonfmt._orjson is None or not jsonfmt._orjson_escapes_like_stdlib(),
    reason="the fast writer is the stdlib itself here",
)

ODD = [1e-05, 1e16, 1.5e-7, 123456789012345678.0, 0.1 + 0.2, float("nan"), float("inf"), float("-inf")]

PLAIN = [
    {"a": {}, "b": [], "c": [{}], "d": {"e": [1, 2.5, None, True, False, "x"]}},
    ODD,
    {"cost": 1e-05, "nested": [1e-05, {"x": 1e-05, "y": [], "z": {}}], "name": "n"},
    [{"row": i, "cost": 1e-05, "meta": {"k": [i, {"deep": 1e16}], "e": {}}} for i in range(300)],
    {f"k{i}": ({"v": 1e-05} if i % 2 else [i]) for i in range(300)},
    {"é": "ünïcødé ✓ 𝄞", "q": '"\\/\n\r\t', "ctrl": "\x00\x1f\x7f\u2028"},
]


def _nested(levels: int, inner) -> list:
    value = inner
    for _ in range(levels - 1):
        value = [value]
    return value


@pytest.fixture
def stdlib_calls(monkeypatch) -> list:
    calls: list = []
    real = jsonfmt.dumps_pretty

    def spy(obj):
        calls.append(obj)
        return real(obj)

    monkeypatch.setattr(jsonfmt, "dumps_pretty", spy)
    return calls


@pytest.mark.parametrize("obj", PLAIN, ids=range(len(PLAIN)))
def test_plain_data_is_written_without_the_stdlib(obj, stdlib_calls):
    assert jsonfmt.dumps_pretty_fast(obj) == json.dumps(obj, ensure_ascii=False, indent=2).encode("utf-8")
    assert stdlib_calls == []


@pytest.mark.parametrize(
    "inner", [[1], [1e-05]], ids=["int", "odd float"]
)  # the innermost level holds a value
def test_a_hundred_levels_are_written_without_the_stdlib_and_a_hundred_and_one_with_it(inner, stdlib_calls):
    at_limit = _nested(jsonfmt.FAST_DUMP_MAX_DEPTH, inner)
    expected = json.dumps(at_limit, ensure_ascii=False, indent=2).encode("utf-8")
    assert jsonfmt.dumps_pretty_fast(at_limit) == expected
    assert stdlib_calls == []
    beyond = [at_limit]
    assert jsonfmt.dumps_pretty_fast(beyond) == json.dumps(beyond, ensure_ascii=False, indent=2).encode(
        "utf-8"
    )
    assert stdlib_calls == [beyond]
