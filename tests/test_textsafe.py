"""Untrusted text never drives the terminal."""

from inspector.textsafe import one_line, safe_text


def test_escape_sequences_and_controls_are_made_visible() -> None:
    assert safe_text("red \x1b[31mtext\x07") == "red \\x1b[31mtext\\x07"
    assert safe_text("a\u2028b\x85c") == "a\\u2028b\\x85c"
    assert safe_text("keep\nnewlines\tand tabs") == "keep\nnewlines\tand tabs"


def test_bidi_overrides_cannot_reorder_what_the_terminal_shows() -> None:
    assert safe_text("admin\u202e txt.exe") == "admin\\u202e txt.exe"
    assert safe_text("a\u2066b\u2069") == "a\\u2066b\\u2069"


def test_one_line_collapses_whitespace_and_truncates() -> None:
    assert one_line("a\n\n b", 10) == "a b"
    assert one_line("x" * 20, 10) == "x" * 9 + "…"
    assert one_line(None) == ""


def test_the_fast_search_escapes_exactly_the_unsafe_characters():
    from inspector.textsafe import _escape, _unsafe, safe_text

    every = "".join(chr(c) for c in range(0x3000))
    assert safe_text(every) == "".join(_escape(ch) if _unsafe(ch) else ch for ch in every)
    for c in range(0x3000):
        ch = chr(c)
        assert (safe_text(ch) != ch) == _unsafe(ch), hex(c)
