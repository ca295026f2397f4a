"""Where ``str.splitlines()`` tears a line, found on the bytes (``journal_raw._tearing_offsets``):
the offset of the last byte of each tearing character, written out by hand (tests/MUTATION.md,
tenth session). A lone CR tears, a CRLF does not; U+0085, U+2028 and U+2029 tear wherever they are,
the first byte of the journal included; a byte that ends some other character does not."""

from __future__ import annotations

from inspector.store.journal_raw import _tearing_offsets, torn_line_numbers


def test_lone_carriage_returns_tear_and_crlf_line_ends_do_not():
    # offsets: a=0, CR 1 and 2 (lone, side by side), CR 3 + LF 4, b=5, CR 6, c=7, CR 8 (the last byte)
    assert sorted(_tearing_offsets(b"a\r\r\r\nb\rc\r")) == [1, 2, 6, 8]
    assert _tearing_offsets(b"\ra") == [0]  # the very first byte
    assert _tearing_offsets(b"a\rb") == [1]  # no CRLF anywhere
    assert _tearing_offsets(b"a\r\nb\r\n") == []  # CRLF only


def test_multi_byte_separators_at_the_start_and_side_by_side():
    assert _tearing_offsets("\u2028{}\n".encode()) == [2]  # E2 80 A8 at 0-2: its last byte, 2
    assert _tearing_offsets("x\u0085".encode()) == [2]  # C2 85 at 1-2
    assert _tearing_offsets(b"a\x0b\x0bb") == [1, 2]
    assert sorted(_tearing_offsets("\u2029\u2029".encode())) == [2, 5]


def test_the_same_last_byte_in_another_character_does_not_tear():
    """U+00A8 is C2 A8 and U+00A9 C2 A9: their last bytes are U+2028's and U+2029's, their lead is not."""
    text = "x\u00a8 \u00a9 \u0105"
    assert _tearing_offsets(text.encode()) == []
    assert torn_line_numbers(text) == []
