"""``parse_index`` (tests/MUTATION.md, fifth session): hermes' fast path needs the index to be a
JSON list of objects; anything else (a list holding a non-object, a number, an object, invalid
JSON) gives None: hermes falls back to a full rebuild."""

from __future__ import annotations

import pytest

from inspector.store.index import parse_index


@pytest.mark.parametrize("data", [b"[1]", b'[{"session_id": "a"}, "b"]', b"5", b'{"a": 1}', b"[", None])
def test_anything_but_a_list_of_objects_is_no_index(data) -> None:
    """Rule: not a list, or a list with a non-object in it: None (full rebuild)."""
    assert parse_index(data) is None


def test_a_list_of_objects_is_the_rows() -> None:
    """Rule: a list of objects is taken as it is (the empty list too)."""
    assert parse_index(b'[{"session_id": "a"}, {}]') == [{"session_id": "a"}, {}]
    assert parse_index(b"[]") == []
