"""The index's own parse and write (``inspector.store.index_json``) against the stdlib.

Rule: hermes writes ``_index.json`` with ``json.dumps(rows, ensure_ascii=False, indent=2)``
(``api/models.py``, ``_write_session_index``) and reads it with ``json.loads``; the inspector's
faster parse and write must give the same value / the same bytes, or the same exception, on every
input, including the floats orjson writes otherwise (``1e-05``, ``NaN``) and values only the
stdlib's own writer may decide (subclasses, non-``str`` keys, lone surrogates, deep nesting).
"""

from __future__ import annotations

import enum
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector.store import index_json, jsonfmt
from inspector.store.index import parse_index_json
from inspector.store.index_json import dumps_index_rows, parse_index_rows
from inspector.store.jsonfmt import dumps_pretty, loads_bytes
from tests.store.test_jsonfmt_fast import CASES, ODD_FLOATS, PARSE_CASES, SETTINGS, _json, _keys


def _outcome(fn, *args):
    try:
        return fn(*args), None
    except Exception as exc:  # noqa: BLE001 - compared as data
        return None, (type(exc), str(exc))


def _same_bytes_as_the_stdlib(rows) -> None:
    assert _outcome(dumps_index_rows, rows) == _outcome(dumps_pretty, rows)


def _index_row(i: int, cost) -> dict:
    return {
        "session_id": f"s{i:04d}",
        "title": f"chat {i} é ✓",
        "message_count": i,
        "created_at": 1794999983.95 + i,
        "updated_at": 1796016654.2879953 - i / 7,
        "estimated_cost": cost,
        "enabled_toolsets": ["web", "terminal"],
        "gateway_routing": {"provider": "x", "weights": [0.5, 0.25]} if i % 3 == 0 else None,
        "pinned": i % 2 == 0,
    }


@pytest.mark.parametrize("obj", CASES, ids=range(len(CASES)))
def test_index_writer_equals_the_stdlib_on_the_writers_edge_cases(obj) -> None:
    _same_bytes_as_the_stdlib(obj)


@pytest.mark.parametrize("cost", ODD_FLOATS, ids=repr)
def test_a_rows_own_odd_float_is_written_as_the_stdlib_writes_it(cost) -> None:
    rows = [_index_row(i, cost if i % 4 == 1 else 0.25) for i in range(40)]
    _same_bytes_as_the_stdlib(rows)


def test_rows_with_odd_floats_go_through_one_orjson_call_with_fragments(monkeypatch) -> None:
    """The row-level repair is what runs (not the exact writer's split) for a row whose only odd
    values are its own floats; one nested deeper sends the whole list to the exact writer."""
    calls = []
    real = jsonfmt.dumps_pretty_fast
    monkeypatch.setattr(index_json, "dumps_pretty_fast", lambda obj: calls.append(1) or real(obj))
    rows = [_index_row(i, 1e-05 if i == 7 else float("nan") if i == 9 else 0.5) for i in range(12)]
    rows = [{k: v for k, v in r.items() if k != "gateway_routing"} for r in rows]
    assert dumps_index_rows(rows) == dumps_pretty(rows)
    assert calls == []
    rows[3]["nested"] = {"cost": 1e-05}
    assert dumps_index_rows(rows) == dumps_pretty(rows)
    assert calls == [1]


@pytest.mark.parametrize(
    "rows",
    [
        [{"a": 1}, "not a row"],
        [{"a": 1.0}, {1: "int key"}],
        [{"cost": 1e-05, "key": (1, 2)}],
        [{"cost": 1e-05, "s": "\ud800"}],
        [{"cost": 1e-05}, {"s": "x\udfffy"}],
        [{"cost": float("inf"), "neg": float("-inf"), "n": float("nan")}],
        [{"big": 2**64, "cost": 1e-05}],
    ],
    ids=range(7),
)
def test_what_only_the_stdlib_may_write_gets_its_bytes_or_its_error(rows) -> None:
    _same_bytes_as_the_stdlib(rows)


def test_subclasses_deep_nesting_and_cycles_get_the_stdlibs_answer() -> None:
    class Color(enum.IntEnum):
        RED = 1

    class Text(str):
        pass

    _same_bytes_as_the_stdlib([{"c": Color.RED, "cost": 1e-05}])
    _same_bytes_as_the_stdlib([{"t": Text("x"), "cost": 1e-05}])
    deep: list = []
    for _ in range(120):
        deep = [deep]
    _same_bytes_as_the_stdlib([{"deep": deep, "cost": 1e-05}])
    cyclic: dict = {"cost": 1e-05}
    cyclic["self"] = cyclic
    _same_bytes_as_the_stdlib([cyclic])


@SETTINGS
@given(
    rows=st.lists(
        st.dictionaries(_keys, _json, max_size=6)
        | st.builds(_index_row, st.integers(0, 99), st.sampled_from(ODD_FLOATS)),
        min_size=1,
        max_size=30,
    )
)
def test_index_writer_equals_the_stdlib_on_generated_rows(rows) -> None:
    _same_bytes_as_the_stdlib(rows)


# ---------------------------------------------------------------- the parse


@pytest.mark.parametrize("data", PARSE_CASES, ids=range(len(PARSE_CASES)))
def test_index_parse_equals_the_stdlib(data: bytes) -> None:
    assert repr(_outcome(parse_index_rows, data)) == repr(_outcome(loads_bytes, data))
    assert repr(_outcome(parse_index_json, data)) == repr(_outcome(loads_bytes, data))


@pytest.mark.parametrize("depth", [5, 499, 500, 501, 1000, 1024, 1025])
def test_index_parse_of_nested_documents_equals_the_stdlib(depth: int) -> None:
    data = b"[" * depth + b"]" * depth
    assert repr(_outcome(parse_index_rows, data)) == repr(_outcome(loads_bytes, data))
    rows = b"[" + b", ".join(b'{"a": ' + b"[" * depth + b"]" * depth + b"}" for _ in range(3)) + b"]"
    assert repr(_outcome(parse_index_rows, rows)) == repr(_outcome(loads_bytes, rows))


@SETTINGS
@given(rows=st.lists(st.dictionaries(_keys, _json, max_size=6), max_size=30))
def test_index_parse_and_write_round_trip_hermes_bytes(rows) -> None:
    """An index hermes wrote parses to what the stdlib reads, and is written back byte for byte."""
    text = json.dumps(rows, ensure_ascii=False, indent=2)
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        return
    data = text.encode("utf-8")
    parsed = _outcome(parse_index_rows, data)
    assert repr(parsed) == repr(_outcome(loads_bytes, data))
    if parsed[1] is None:
        _same_bytes_as_the_stdlib(parsed[0])


def test_a_plain_index_many_levels_of_brackets_in_all_is_parsed_without_the_stdlib(monkeypatch) -> None:
    """More ``[``/``{`` than the depth limit in all (every row opens one), yet shallow: orjson
    parses it inside the extra arrays; only a document nested past the limit reaches the stdlib."""
    seen = []
    real = jsonfmt.loads_bytes  # the stdlib path of jsonfmt.loads_bytes_fast, which parse_index_rows is
    monkeypatch.setattr(jsonfmt, "loads_bytes", lambda d: seen.append(len(d)) or real(d))
    rows = [_index_row(i, 0.5) for i in range(700)]
    data = dumps_pretty(rows)
    assert parse_index_rows(data) == rows
    assert seen == []
    deep = b"[" + b"[" * 600 + b"]" * 600 + b", " + data + b"]"
    assert repr(_outcome(parse_index_rows, deep)) == repr(_outcome(loads_bytes, deep))
    assert len(seen) == 1
