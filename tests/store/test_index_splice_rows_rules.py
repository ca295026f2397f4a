"""The index splice's rows without a ``session_id``: hermes keeps a row only when its
``session_id`` names a sidecar on disk, so such a row is dropped and every other row stays.
Expected bytes written out by hand."""

from __future__ import annotations

from inspector.store import index_splice
from tests.store.test_index_splice_sort_rules import _index


def test_a_row_without_session_id_is_dropped_and_the_others_stay() -> None:
    """The row with no id goes; the rows on disk keep their place around the saved one."""
    data = _index(
        [
            {"title": "no id", "updated_at": 3},
            {"session_id": "b", "updated_at": 2},
            {"session_id": "a", "updated_at": 1},
        ]
    )
    out = index_splice.index_after_save_spliced(data, {"session_id": "c", "updated_at": 1.5}, {"a", "b", "c"})
    assert out == (
        b'[\n  {\n    "session_id": "b",\n    "updated_at": 2\n  },\n'
        b'  {\n    "session_id": "c",\n    "updated_at": 1.5\n  },\n'
        b'  {\n    "session_id": "a",\n    "updated_at": 1\n  }\n]'
    )


def test_a_row_without_session_id_is_dropped_when_the_saved_row_replaces_another() -> None:
    """The saved session's old row is replaced in place of the sort; the row with no id is gone."""
    data = _index(
        [{"session_id": "a", "updated_at": 5}, {"updated_at": 4}, {"session_id": "b", "updated_at": 3}]
    )
    out = index_splice.index_after_save_spliced(data, {"session_id": "b", "updated_at": 6}, {"a", "b"})
    assert out == (
        b'[\n  {\n    "session_id": "b",\n    "updated_at": 6\n  },\n'
        b'  {\n    "session_id": "a",\n    "updated_at": 5\n  }\n]'
    )
