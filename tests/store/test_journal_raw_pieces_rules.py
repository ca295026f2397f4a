"""A journal in memory is split into its lines a few megabytes at a time (``journal_raw._pieces``):
wherever a piece is cut, the lines and their offsets are the file's own.

Rule found by mutation testing (tests/MUTATION.md, ninth session): with pieces of a few bytes, each
expected ``(offset, line)`` below is written out by hand (a line is its bytes without the ``"\\n"``;
the last line is there only when something follows the last newline).
"""

from __future__ import annotations

import pytest

import inspector.store.journal_raw as journal_raw


@pytest.mark.parametrize("piece", [1, 2, 3, 4, 7, 1 << 22])
@pytest.mark.parametrize(
    ("data", "lines"),
    [
        (b"", []),
        (b"\n", [(0, b"")]),
        (b"\n\n", [(0, b""), (1, b"")]),
        (b"ab\ncd\n", [(0, b"ab"), (3, b"cd")]),
        (b"ab\ncd", [(0, b"ab"), (3, b"cd")]),
        (b"ab\n\nefghij\nk", [(0, b"ab"), (3, b""), (4, b"efghij"), (11, b"k")]),
        (b"abcdefghij\nxy\n", [(0, b"abcdefghij"), (11, b"xy")]),
    ],
)
def test_every_line_with_its_offset_wherever_the_pieces_are_cut(monkeypatch, piece, data, lines) -> None:
    monkeypatch.setattr(journal_raw, "_PIECE_BYTES", piece)
    assert list(journal_raw._pieces(data)) == lines
