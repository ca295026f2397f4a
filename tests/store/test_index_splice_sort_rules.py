"""The index splice's sort of a row without ``updated_at``: hermes sorts by
``s.get('updated_at', 0)`` (``api/models.py``, the index fast path), so such a row counts as 0,
below a row of 0.5 or 0.25 and level with a row of 0 (the sort is stable: the file's order
stays). Expected bytes written out by hand (tests/MUTATION.md, tenth session)."""

from __future__ import annotations

import json

from inspector.store import index_splice


def _index(rows: list) -> bytes:
    return json.dumps(rows, ensure_ascii=False, indent=2).encode("utf-8")


def test_a_row_without_updated_at_sorts_as_zero() -> None:
    assert index_splice._sort_keys([index_splice._UNSET, b"0.5"]) == [0, 0.5]
    keys = index_splice._sort_keys([b"0.75", index_splice._UNSET, b"2"])
    assert keys == [0.75, 0, 2] and [type(k) for k in keys] == [float, int, int]


def test_a_row_without_updated_at_goes_below_rows_of_a_fraction_of_a_second() -> None:
    data = _index([{"session_id": "a", "updated_at": 0.5}, {"session_id": "b", "title": "t"}])
    out = index_splice.index_after_save_spliced(
        data, {"session_id": "c", "updated_at": 0.25}, {"a", "b", "c"}
    )
    assert out == (
        b'[\n  {\n    "session_id": "a",\n    "updated_at": 0.5\n  },\n'
        b'  {\n    "session_id": "c",\n    "updated_at": 0.25\n  },\n'
        b'  {\n    "session_id": "b",\n    "title": "t"\n  }\n]'
    )


def test_a_row_without_updated_at_stays_after_a_row_of_zero_before_it() -> None:
    data = _index([{"session_id": "a", "updated_at": 0}, {"session_id": "b", "title": "t"}])
    out = index_splice.index_after_save_spliced(
        data, {"session_id": "c", "updated_at": 0.25}, {"a", "b", "c"}
    )
    assert out == (
        b'[\n  {\n    "session_id": "c",\n    "updated_at": 0.25\n  },\n'
        b'  {\n    "session_id": "a",\n    "updated_at": 0\n  },\n'
        b'  {\n    "session_id": "b",\n    "title": "t"\n  }\n]'
    )
