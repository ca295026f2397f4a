"""The fast JSON writer and parser give exactly the stdlib's bytes, values and exceptions.

``dumps_pretty_fast`` must equal ``json.dumps(obj, ensure_ascii=False, indent=2)`` (UTF-8) for
every value, and raise the very same exception where it raises;
``loads_bytes_fast`` must equal ``loads_bytes``. The writer relies on one layout fact, checked
here on its own: an element of a list (or a value of a dict) at indent level ``L`` is written as
``json.dumps(elem, indent=2)`` with every line after the first shifted right by ``L - 1``
levels, independently of its neighbours.
"""

from __future__ import annotations

import json
from collections import OrderedDict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.store import jsonfmt
from inspector.store.jsonfmt import (
    dumps_pretty,
    dumps_pretty_fast,
    loads_bytes,
    loads_bytes_fast,
    nesting_exceeds,
)

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _outcome(fn, *args):
    """(result, None) or (None, (exception type, message)) of ``fn(*args)``."""
    try:
        return fn(*args), None
    except Exception as exc:  # noqa: BLE001 - compared as data
        return None, (type(exc), str(exc))


def _same_as_stdlib(obj) -> None:
    assert _outcome(dumps_pretty_fast, obj) == _outcome(dumps_pretty, obj)


# Floats orjson writes differently from float.__repr__ (1e-05, 1e+16, NaN...), and ones it agrees on.
ODD_FLOATS = [
    1e-05,
    5e-324,
    1e16,
    1e22,
    1.5e300,
    -1e-07,
    0.0001,
    0.00012,
    1e15,
    9999999999999998.0,
    -0.0,
    0.0,
    7.2e-05,
    1794999983.95,
    0.1 + 0.2,
    float("nan"),
    float("inf"),
    float("-inf"),
]

CASES = [
    [],
    {},
    [[]],
    [{}],
    {"a": {}},
    {"a": []},
    [[], {}, [[]], {"b": {}}],
    "text",
    1,
    1.5,
    None,
    True,
    False,
    float("nan"),
    10**30,
    {"é": "ünïcødé ✓ 𝄞", "ctrl": "\x00\x01\x1f\x7f\u2028\u2029\ufeff", "q": '"\\/\n\r\t\b\f'},
    {"z": 1, "a": 2, "m": 3},  # insertion order, not sorted
    ODD_FLOATS,
    [{"cost": f, "nested": [f, {"x": f}]} for f in ODD_FLOATS],
    {"big": [2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 10**40]},
    {1: "int key", 2.5: "float key", False: "bool key", None: "none key", "s": "str key"},
    {"tuple": (1, 2, [3]), "nested": {"t": ()}},
    OrderedDict([("b", 1), ("a", [1, 2])]),
    [
        {"row": i, "title": f"chat {i}", "updated_at": 1.0 + i / 7, "meta": {"k": [i, {"deep": i}]}}
        for i in range(300)
    ],
    {"surrogate": "\ud800"},
    [{"ok": 1}, {"bad": "x\udfffy"}],
    {"set": {1, 2}},
    [b"bytes"],
    [1, [2, [3, [4, [5, []]]]]],
]


@pytest.mark.parametrize("obj", CASES, ids=range(len(CASES)))
def test_fast_writer_equals_the_stdlib_on_edge_cases(obj) -> None:
    _same_as_stdlib(obj)


def test_subclasses_and_enums_are_written_by_the_stdlib() -> None:
    import enum

    class Color(enum.IntEnum):
        RED = 1

    class MyFloat(float):
        def __repr__(self) -> str:
            return "nope"

    class MyStr(str):
        pass

    class MyDict(dict):
        pass

    for obj in ([Color.RED], {"f": MyFloat(1.5)}, [MyStr("x")], [MyDict(a=1)], {"k": [MyDict()]}):
        _same_as_stdlib(obj)


def test_deep_nesting_and_cycles_raise_what_the_stdlib_raises() -> None:
    deep: list = []
    node = deep
    for _ in range(jsonfmt.FAST_DUMP_MAX_DEPTH + 20):
        child: list = [1.5, {"a": []}]
        node.append(child)
        node = child
    _same_as_stdlib(deep)
    cyclic: list = [1]
    cyclic.append(cyclic)
    assert _outcome(dumps_pretty_fast, cyclic) == _outcome(dumps_pretty, cyclic)
    cyclic_dict: dict = {"a": 1.5}
    cyclic_dict["self"] = cyclic_dict
    assert _outcome(dumps_pretty_fast, cyclic_dict) == _outcome(dumps_pretty, cyclic_dict)


def test_a_lone_surrogate_raises_the_stdlibs_error_on_the_whole_text() -> None:
    rows = [{"title": f"row {i}", "x": 1e-05} for i in range(5)] + [{"title": "bad \udc80 here"}]
    with pytest.raises(UnicodeEncodeError) as fast:
        dumps_pretty_fast(rows)
    with pytest.raises(UnicodeEncodeError) as slow:
        dumps_pretty(rows)
    assert (fast.value.object, fast.value.start, fast.value.end, fast.value.reason) == (
        slow.value.object,
        slow.value.start,
        slow.value.end,
        slow.value.reason,
    )


def test_orjson_escapes_every_code_point_as_the_stdlib() -> None:
    from json.encoder import c_encode_basestring

    import orjson

    text = jsonfmt._every_code_point()
    assert len(text) == 0x110000 - 0x800
    assert all(not 0xD800 <= ord(c) <= 0xDFFF for c in text[0xD7F0:0xD810])
    assert orjson.dumps(text) == c_encode_basestring(text).encode("utf-8")
    assert jsonfmt._orjson_escapes_like_stdlib() is True


# ---------------------------------------------------------------- the element-splice layout fact


def _at_level(elem, level: int) -> str:
    """``elem`` as written at indent level ``level`` inside a bigger document."""
    return json.dumps(elem, ensure_ascii=False, indent=2).replace("\n", "\n" + "  " * (level - 1))


def _no_surrogates(text: str) -> bool:
    return not any(0xD800 <= ord(c) <= 0xDFFF for c in text)


_text = st.text(max_size=8)
_keys = st.text(max_size=5)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.sampled_from(ODD_FLOATS),
    _text,
)
_json = st.recursive(
    _scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(_keys, c, max_size=4), max_leaves=25
)
_containers = st.one_of(st.lists(_json, max_size=6), st.dictionaries(_keys, _json, max_size=6))


@pytest.mark.slow
@SETTINGS
@given(items=st.lists(_json, max_size=6))
def test_list_elements_are_written_independently_of_their_neighbours(items) -> None:
    expected = json.dumps(items, ensure_ascii=False, indent=2)
    if not items:
        assert expected == "[]"
        return
    assert expected == "[\n  " + ",\n  ".join(_at_level(e, 2) for e in items) + "\n]"


@pytest.mark.slow
@SETTINGS
@given(obj=st.dictionaries(_keys, _json, min_size=1, max_size=6), level=st.integers(1, 4))
def test_dict_values_are_written_independently_at_any_level(obj, level) -> None:
    expected = json.dumps(obj, ensure_ascii=False, indent=2)
    inner = ",\n  ".join(json.dumps(k, ensure_ascii=False) + ": " + _at_level(v, 2) for k, v in obj.items())
    assert expected == "{\n  " + inner + "\n}"
    wrapped = obj
    for _ in range(level - 1):
        wrapped = [wrapped]
    prefix = "".join("[\n" + "  " * (i + 1) for i in range(level - 1))
    suffix = "".join("\n" + "  " * i + "]" for i in reversed(range(level - 1)))
    assert json.dumps(wrapped, ensure_ascii=False, indent=2) == prefix + _at_level(obj, level) + suffix


@pytest.mark.slow
@SETTINGS
@given(obj=_containers)
def test_fast_writer_equals_the_stdlib_on_generated_values(obj) -> None:
    _same_as_stdlib(obj)


@pytest.mark.slow
@SETTINGS
@given(rows=st.lists(st.dictionaries(_keys, _json, max_size=8), min_size=1, max_size=300))
def test_fast_writer_equals_the_stdlib_on_long_lists(rows) -> None:
    # more items than jsonfmt._WHOLE_MAX_ITEMS: the list is split without being tried whole
    _same_as_stdlib(rows)


# ---------------------------------------------------------------- the parser


PARSE_CASES = [
    b'{"a": 1, "a": 2, "b": 3}',
    b"[1e400]",
    b"[NaN, Infinity, -Infinity]",
    b"[123456789012345678901234567890]",
    b"[-9999999999999999999]",
    b"[18446744073709551616]",
    b'{"a": "\\ud800"}',
    b"[1.0000000000000002]",
    b'{"t": 1796016654.2879953, "n": 9007199254740993}',
    b"[-0.0, 5e-324, -0]",
    b'{"a": "x\ty"}',
    b'{"a": 1,}',
    "\ufeff{}".encode(),
    b'{"a"',
    b"\xff\xfe",
    b"",
    b"  [1] \n",
    b'"\xc3\xa9"',
    b"[" + b"9" * 5000 + b"]",
    '{"é": "✓"}'.encode(),
    b"[1]x",
    # runs of 19+ digits inside strings (tool-call ids) and as numbers, around escapes
    b'{"id": "call_12345678901234567890123", "n": 1}',
    b'{"id": "x\\"12345678901234567890123"}',
    b'{"a": "\\\\", "n": 12345678901234567890123}',
    b'["\\\\\\"12345678901234567890123"]',
    b'["a\\\\", 12345678901234567890123, "b"]',
    b'["12345678901234567890123", 1.2345678901234567890123]',
    b'{"12345678901234567890123": 12345678901234567890123}',
    b'[-12345678901234567890, "-12345678901234567890"]',
]


@pytest.mark.parametrize("data", PARSE_CASES, ids=range(len(PARSE_CASES)))
def test_fast_parser_equals_the_stdlib(data: bytes) -> None:
    expected = _outcome(loads_bytes, data)
    got = _outcome(loads_bytes_fast, data)
    assert repr(got) == repr(expected)


@pytest.mark.parametrize("orjson_limit_known", [True, False])
@pytest.mark.parametrize("depth", [5, 50, 199, 200, 201, 400, 1000, 1024, 1025, 1100])
def test_nesting_beyond_the_limit_is_left_to_the_stdlib(
    depth: int, orjson_limit_known: bool, monkeypatch
) -> None:
    """Told by orjson's own depth limit (the document inside extra arrays), or, should an orjson
    not refuse exactly past 1,024 levels, by walking the parsed value: the same verdicts."""
    if not orjson_limit_known:
        monkeypatch.setattr(jsonfmt, "_ORJSON_DEPTH_CHECKED", False)
    else:
        assert jsonfmt._orjson_depth_limit_is_known() is True  # this orjson: the premise holds
    data = b"[" * depth + b"]" * depth
    limit = 200
    seen = []
    real = jsonfmt.loads_bytes

    def spy(d):
        seen.append(len(d))
        return real(d)

    monkeypatch.setattr(jsonfmt, "loads_bytes", spy)
    got = _outcome(loads_bytes_fast, data, limit)
    monkeypatch.setattr(jsonfmt, "loads_bytes", real)
    assert bool(seen) == (depth > limit)  # deeper than the limit: the stdlib decides
    assert repr(got) == repr(_outcome(loads_bytes, data))


def test_nesting_exceeds_counts_levels() -> None:
    assert not nesting_exceeds(1, 0)
    assert not nesting_exceeds([], 1) and nesting_exceeds([], 0)
    assert nesting_exceeds({"a": [{}]}, 2) and not nesting_exceeds({"a": [{}]}, 3)
    assert not nesting_exceeds({"a": [1, "x"], "b": {}}, 2)


def test_the_stdlib_parses_as_deep_as_the_parse_depth_limit_from_here() -> None:
    """Up to PARSE_DEPTH_LIMIT levels orjson's value is taken: the stdlib must parse that deep."""
    limit = jsonfmt.PARSE_DEPTH_LIMIT
    data = b"[" * limit + b"]" * limit
    assert loads_bytes(data) is not None
    assert loads_bytes_fast(data) == loads_bytes(data)


def test_a_document_deeper_than_the_stdlib_parses_gets_the_stdlibs_error() -> None:
    data = b'{"messages": [' + b"[" * 1010 + b"]" * 1010 + b"]}"  # orjson parses 1,024 levels
    assert repr(_outcome(loads_bytes_fast, data)) == repr(_outcome(loads_bytes, data))
    assert _outcome(loads_bytes, data)[1][0] is RecursionError


def test_the_fast_writer_is_the_stdlib_itself_where_its_c_encoder_writes_indent(monkeypatch) -> None:
    """CPython 3.14 gave json's C encoder the indent path: there the fast writer steps aside."""
    import sys

    assert jsonfmt.STDLIB_INDENT_IN_C is (sys.version_info >= (3, 14))
    obj = {"a": [1, 2.5, {"b": "ü"}], "c": []}
    walked: list = []
    real = jsonfmt._emit_bytes
    monkeypatch.setattr(jsonfmt, "_emit_bytes", lambda *a: walked.append(1) or real(*a))
    monkeypatch.setattr(jsonfmt, "STDLIB_INDENT_IN_C", True)
    assert dumps_pretty_fast(obj) == dumps_pretty(obj) and not walked
    monkeypatch.setattr(jsonfmt, "STDLIB_INDENT_IN_C", False)
    assert dumps_pretty_fast(obj) == dumps_pretty(obj) and walked


_digity = st.text(st.sampled_from(list('0123456789"\\/:,[]{} ')), max_size=40)
_digity_json = st.recursive(
    st.one_of(
        _scalars,
        _digity,
        st.integers(min_value=-(10**30), max_value=10**30),
        st.decimals(allow_nan=False, allow_infinity=False, places=25).map(float),
    ),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.one_of(_keys, _digity), c, max_size=4),
    max_leaves=20,
)


@pytest.mark.slow
@SETTINGS
@given(obj=_digity_json, compact=st.booleans())
def test_fast_parser_equals_the_stdlib_on_digit_runs_and_escapes(obj, compact) -> None:
    text = json.dumps(obj) if compact else json.dumps(obj, ensure_ascii=False, indent=2)
    if not _no_surrogates(text):
        return
    data = text.encode("utf-8")
    assert repr(_outcome(loads_bytes_fast, data)) == repr(_outcome(loads_bytes, data))


@SETTINGS
@given(obj=_json)
def test_fast_parser_equals_the_stdlib_on_generated_documents(obj) -> None:
    text = json.dumps(obj, ensure_ascii=False, indent=2)
    if not _no_surrogates(text):
        return
    data = text.encode("utf-8")
    got, expected = _outcome(loads_bytes_fast, data), _outcome(loads_bytes, data)
    assert repr(got) == repr(expected)
    assert repr(_outcome(loads_bytes_fast, data, 1)) == repr(expected)  # the limit only picks the parser


@pytest.mark.parametrize(
    ("data", "inside"),
    [
        (b'{"id": "call_12345678901234567890123", "n": 1}', True),
        (b'{"id": "x\\"12345678901234567890123"}', True),
        (b'{"a": "\\\\", "n": 12345678901234567890123}', False),
        (b'["\\\\\\"12345678901234567890123"]', True),
        (b'["a\\\\", 12345678901234567890123, "b"]', False),
        (b'["12345678901234567890123", 1.2345678901234567890123]', False),
        (b'{"12345678901234567890123": "x"}', True),
        (b'["1234567890123456789", "\\\\\\\\", "9999999999999999999999"]', True),
    ],
)
def test_long_digit_runs_are_placed_inside_or_outside_strings(data: bytes, inside: bool) -> None:
    json.loads(data)  # valid JSON, as the function requires
    scan = data.translate(jsonfmt._SCAN_MAP)
    first = scan.find(jsonfmt._LONG_RUN)
    assert first >= 0
    assert jsonfmt.long_digit_runs_only_in_strings(data, scan, first) is inside


def test_text_orjson_reads_exactly_is_not_parsed_by_the_stdlib(monkeypatch):
    """Rule (``fast_loads``): orjson parses what it reads as the stdlib does (checked by the
    caller, or here); only text holding a run of 19+ digits goes to the stdlib."""
    if jsonfmt._orjson is None:
        pytest.skip("orjson is not installed")
    asked = []
    real_bytes, real_text = jsonfmt.loads_bytes, json.loads
    monkeypatch.setattr(jsonfmt, "loads_bytes", lambda data: asked.append(data) or real_bytes(data))
    monkeypatch.setattr(jsonfmt.json, "loads", lambda data: asked.append(data) or real_text(data))
    assert jsonfmt.fast_loads(b'{"a": [1, "x"]}') == {"a": [1, "x"]}
    assert jsonfmt.fast_loads('{"a": 2}') == {"a": 2}
    assert jsonfmt.fast_loads(b'{"a": 3}', checked=True) == {"a": 3}
    assert asked == []
    assert jsonfmt.fast_loads(b'{"a": 12345678901234567890123}') == {"a": 12345678901234567890123}
    assert asked[0] == b'{"a": 12345678901234567890123}'  # (which hands its text to json.loads)
