"""A journal too large to load whole is read in pieces (``journal._file_pieces``): where they are cut.

Rules found by mutation testing (tests/MUTATION.md, third session). With 8-byte reads, every piece
and every offset below is worked out by hand: a piece ends just after the last newline of what was
read, the bytes after it start the next piece, the end of the file ends the last one; a line
(its bytes up to and including its newline) of more than ``max_line`` bytes is refused, with the
byte where it starts.
"""

from __future__ import annotations

import pytest

import inspector.store.journal as journal
from inspector.store.journal import JournalTooLarge, _file_pieces


@pytest.fixture
def small_reads(monkeypatch):
    monkeypatch.setattr(journal, "BLOCK_BYTES", 8)


def _pieces(tmp_path, data: bytes, max_line: int = 1000) -> list[tuple[int, bytes]]:
    path = tmp_path / "r.jsonl"
    path.write_bytes(data)
    return list(_file_pieces(path, max_line))


def _refusal(tmp_path, data: bytes, max_line: int) -> str:
    path = tmp_path / "r.jsonl"
    path.write_bytes(data)
    with pytest.raises(JournalTooLarge) as caught:
        list(_file_pieces(path, max_line))
    return str(caught.value)


DATA = b"ab\ncd\nefghijklmn\nop"  # reads: "ab\ncd\nef" "ghijklmn" "\nop"


def test_pieces_end_after_the_last_newline_read(tmp_path, small_reads):
    """Rule: each piece ends after the last newline read; a line spanning reads is one piece; a newline
    at the start of a read ends the line before it; the bytes after the last newline are the last piece."""
    assert _pieces(tmp_path, DATA) == [(0, b"ab\ncd\n"), (6, b"efghijklmn\n"), (17, b"op")]


def test_a_last_line_without_newline_over_several_reads_is_one_piece(tmp_path, small_reads):
    """Rule: the unterminated tail, read in several pieces, is given whole (joined with nothing)."""
    assert _pieces(tmp_path, b"ab\nqrstuvwxyz12") == [(0, b"ab\n"), (3, b"qrstuvwxyz12")]


def test_reads_ending_with_a_newline_leave_nothing_behind(tmp_path, small_reads):
    """Rule: a read ending with a newline starts the next line empty: no empty piece at the end."""
    assert _pieces(tmp_path, b"abcdefg\nhijklmn\n", max_line=8) == [(0, b"abcdefg\n"), (8, b"hijklmn\n")]


def test_a_line_of_exactly_max_line_bytes_is_read(tmp_path, small_reads):
    """Rule: a line of ``max_line`` bytes (its newline included) is read, spanning reads or not."""
    assert _pieces(tmp_path, DATA, max_line=11)[1] == (6, b"efghijklmn\n")
    assert _pieces(tmp_path, b"abcdefg\nxy\n", max_line=8) == [(0, b"abcdefg\n"), (8, b"xy\n")]


def test_a_line_longer_than_max_line_is_refused_where_it_starts(tmp_path, small_reads):
    """Rule: one byte more than ``max_line`` is refused, naming the byte where the line starts."""
    too_long = "the line at byte 6 is longer than 10 bytes: too large to load safely"
    assert _refusal(tmp_path, DATA, 10) == too_long
    # the first line is short: the long one is found later, not in the first read's other lines
    assert (
        _refusal(tmp_path, DATA, 5) == "the line at byte 6 is longer than 5 bytes: too large to load safely"
    )


def test_an_unterminated_tail_longer_than_max_line_is_refused(tmp_path, small_reads):
    """Rule: a tail with no newline counts every byte read: over ``max_line`` it is refused too."""
    data = b"ab\n" + b"x" * 13  # reads: "ab\nxxxxx" "xxxxxxxx": the second one is past the limit
    assert (
        _refusal(tmp_path, data, 10) == "the line at byte 3 is longer than 10 bytes: too large to load safely"
    )


def test_the_limit_is_said_in_mb_from_one_mb(tmp_path, monkeypatch):
    """Rule: a limit of 1 MB (2**20 bytes) or more is said in whole MB, a smaller one in bytes."""
    monkeypatch.setattr(journal, "BLOCK_BYTES", 1 << 16)
    data = b"a" * (1 << 20) + b"\n"
    assert (
        _refusal(tmp_path, data, 1 << 20)
        == "the line at byte 0 is longer than 1 MB: too large to load safely"
    )
    assert _refusal(tmp_path, data, (1 << 20) - 1) == (
        "the line at byte 0 is longer than 1048575 bytes: too large to load safely"
    )
    assert _refusal(tmp_path, b"a" * (3 << 20) + b"\n", 2 << 20) == (
        "the line at byte 0 is longer than 2 MB: too large to load safely"
    )
