"""``index_json.dumps_index_rows`` hands the rows to the exact writer (``dumps_pretty_fast``) whenever
orjson may not be trusted; ``jsonfmt.raw_items`` of an empty array. Expected values by hand."""

from __future__ import annotations

import json

import pytest

from inspector.store import index_json, jsonfmt

ROWS = [{"session_id": "a", "title": "é \u2028", "updated_at": 1.5}]


@pytest.fixture
def exact_writer_calls(monkeypatch):
    calls: list = []
    real = index_json.dumps_pretty_fast

    def spy(rows):
        calls.append(rows)
        return real(rows)

    monkeypatch.setattr(index_json, "dumps_pretty_fast", spy)
    monkeypatch.setattr(index_json, "STDLIB_INDENT_IN_C", False)
    return calls


def test_an_orjson_whose_escapes_differ_from_the_stdlibs_never_writes_the_index(
    monkeypatch, exact_writer_calls
):
    if index_json._orjson is None:
        pytest.skip("no orjson here: the exact writer always writes")
    monkeypatch.setattr(index_json, "_orjson_escapes_like_stdlib", lambda: False)
    out = index_json.dumps_index_rows(ROWS)
    assert exact_writer_calls == [ROWS]
    assert out == json.dumps(ROWS, ensure_ascii=False, indent=2).encode("utf-8")


def test_a_trusted_orjson_writes_the_same_bytes_itself(exact_writer_calls):
    if index_json._orjson is None or not jsonfmt._orjson_escapes_like_stdlib():
        pytest.skip("no trusted orjson here")
    out = index_json.dumps_index_rows(ROWS)
    assert exact_writer_calls == []
    assert out == json.dumps(ROWS, ensure_ascii=False, indent=2).encode("utf-8")


def test_raw_items_of_an_empty_array_is_an_empty_list():
    if jsonfmt._RAW_ITEMS is None:
        pytest.skip("no msgspec here")
    assert jsonfmt.raw_items(b"[]") == []
    assert jsonfmt.raw_items(b"[ ]") == []
    assert [bytes(x) for x in jsonfmt.raw_items(b'[1, "a"]')] == [b"1", b'"a"']
