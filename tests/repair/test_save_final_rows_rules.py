"""The rows of a full index rebuild (``save._final_rows``, hermes ``api/models.py``'s rebuild of
``_index.json``): keyed by ``session_id``, rows without one left out (and the rest still read), of
two rows with one id the one with strictly more messages winning (a tie keeps the first), then
sorted by ``updated_at``, newest first."""

from __future__ import annotations

from inspector.repair.save import _final_rows, _Row


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
