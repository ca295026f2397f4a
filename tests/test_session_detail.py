"""load_detail's lookup of one session's _index.json row."""

from __future__ import annotations

import json

import pytest

from inspector.session_detail import find_index_row
from inspector.store import scan as scan_mod
from inspector.store.jsonfmt import dumps_pretty


def _full_parse_row(data: bytes, sid: str):
    try:
        rows = json.loads(data)
    except ValueError:
        return None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        return None
    return next((r for r in rows if r.get("session_id") == sid), None)


ROWS = [
    {"session_id": "a1", "title": 'has "session_id": "b2" in its title', "meta": {"session_id": "b2"}},
    {"session_id": "b2", "title": "second", "nested": {"x": [1, {"session_id": "c3"}]}, "n": 1.5},
    {"session_id": "b2", "title": "a duplicate: the first one wins"},
    {"session_id": "c3", "title": "ünïcode ☃", "updated_at": 17e8},
]


@pytest.mark.parametrize("layout", ["hermes", "compact", "one-line-indented"])
@pytest.mark.parametrize("sid", ["a1", "b2", "c3", "zz"])
def test_index_row_is_the_first_row_of_the_id(tmp_path, sid, layout, monkeypatch):
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)  # let the scan cache facts of a file written just now
    data = {
        "hermes": dumps_pretty(ROWS),
        "compact": json.dumps(ROWS).encode(),
        "one-line-indented": json.dumps(ROWS, indent=None, separators=(", ", ": ")).encode(),
    }[layout]
    (tmp_path / "_index.json").write_bytes(data)
    assert find_index_row(tmp_path, sid) == _full_parse_row(data, sid)
    assert find_index_row(tmp_path, sid) == _full_parse_row(
        data, sid
    )  # the scan's facts now come from the cache


@pytest.mark.parametrize("data", [b"", b"[", b"{}", b'[{"session_id": "a1"}, 3]', b'"a1"', b"\xff"])
def test_unusable_index_has_no_row(tmp_path, data):
    (tmp_path / "_index.json").write_bytes(data)
    assert find_index_row(tmp_path, "a1") is None


def test_missing_index_has_no_row(tmp_path):
    assert find_index_row(tmp_path, "a1") is None


@pytest.mark.parametrize(
    "first",
    [
        b'  {\n    "session_id": "\\u0063\\u0033",\n    "title": "first"\n  },\n',  # the id in escapes
        b'  {"session_id":"c3","title":"first"},\n',  # the id in another layout
    ],
)
def test_a_row_found_by_its_bytes_is_the_first_only_when_no_row_before_holds_the_id(tmp_path, first):
    """Rule: the row of the id is the first row whose ``session_id`` is the id, however an earlier
    row writes it (hermes' layout is only where the row is looked for first)."""
    data = b"[\n" + first + b'  {\n    "session_id": "c3",\n    "title": "second"\n  }\n]'
    (tmp_path / "_index.json").write_bytes(data)
    assert (
        find_index_row(tmp_path, "c3")
        == {"session_id": "c3", "title": "first"}
        == _full_parse_row(data, "c3")
    )
