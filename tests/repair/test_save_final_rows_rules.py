"""The rows of a full index rebuild (``save._final_rows``, hermes ``api/models.py``'s rebuild of
``_index.json``): keyed by ``session_id``, rows without one left out (and the rest still read), of
two rows with one id the one with strictly more messages winning (a tie keeps the first), then
sorted by ``updated_at``, newest first."""

from __future__ import annotations

import json

from inspector.repair.save import _final_rows, _index_bytes, _Row


def _row(sid, count: int, updated: float, text: bytes) -> _Row:
    return _Row(session_id=sid, message_count=count, updated_at=updated, text=text, row=None)


def test_rows_without_an_id_are_left_out_and_the_rest_still_read() -> None:
    rows = [_row("", 1, 5.0, b"blank"), _row(None, 1, 6.0, b"none"), _row("a", 1, 1.0, b"a")]
    assert [r.text for r in _final_rows(rows)] == [b"a"]


def test_of_two_rows_with_one_id_a_tie_keeps_the_first() -> None:
    rows = [_row("a", 2, 1.0, b"first"), _row("a", 2, 1.0, b"second")]
    assert [r.text for r in _final_rows(rows)] == [b"first"]


def test_of_two_rows_with_one_id_more_messages_win() -> None:
    rows = [_row("a", 2, 1.0, b"first"), _row("a", 3, 1.0, b"more"), _row("a", 1, 1.0, b"fewer")]
    assert [r.text for r in _final_rows(rows)] == [b"more"]


def test_the_rows_are_sorted_newest_first() -> None:
    rows = [_row("a", 1, 1.0, b"a"), _row("b", 1, 3.0, b"b"), _row("c", 1, 2.0, b"c")]
    assert [r.text for r in _final_rows(rows)] == [b"b", b"c", b"a"]


# ---------------------------------------------------------------- the index bytes of those rows


def _item(sid: str) -> bytes:
    """A row's text as an item of hermes' ``json.dumps(rows, ensure_ascii=False, indent=2)``."""
    return b'{\n    "session_id": "' + sid.encode() + b'"\n  }'


def test_no_rows_are_written_as_an_empty_list() -> None:
    assert _index_bytes([]) == b"[]"


def test_rows_with_their_text_are_joined_as_json_dumps_joins_list_items() -> None:
    rows = [_row("a", 1, 2.0, _item("a")), _row("b", 1, 1.0, _item("b"))]
    expected = b'[\n  {\n    "session_id": "a"\n  },\n  {\n    "session_id": "b"\n  }\n]'
    assert _index_bytes(rows) == expected
    assert (
        expected
        == json.dumps([{"session_id": "a"}, {"session_id": "b"}], ensure_ascii=False, indent=2).encode()
    )


def test_a_row_without_text_sends_the_whole_list_through_the_stdlib_path() -> None:
    plain = _Row(
        session_id="b", message_count=1, updated_at=1.0, text=None, row={"session_id": "b", "t": "é"}
    )
    rows = [_row("a", 1, 2.0, _item("a")), plain]
    assert (
        _index_bytes(rows)
        == '[\n  {\n    "session_id": "a"\n  },\n  {\n    "session_id": "b",\n    "t": "é"\n  }\n]'.encode()
    )


def test_rows_all_without_text_are_written_by_the_stdlib_path() -> None:
    plain = _Row(session_id="b", message_count=1, updated_at=1.0, text=None, row={"session_id": "b"})
    assert _index_bytes([plain]) == b'[\n  {\n    "session_id": "b"\n  }\n]'
