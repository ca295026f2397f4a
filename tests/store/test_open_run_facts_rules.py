"""The command line's and the window's cheap test of a run journal (``open_run_facts``): it parses
only the lines that carry the terminal flag, newest first, and sends a line that hermes' reader would
cut elsewhere to the full parse. Each case here is written out by hand; ``open`` is the expected answer."""

from __future__ import annotations

from inspector.store.journal import open_run_facts
from tests.repair.test_from_journal import _journal_line

SID, RUN = "s1", "r1"
TOKEN = _journal_line(SID, RUN, 1, "token", {"text": "partial"}, 1.0)
DONE = _journal_line(SID, RUN, 3, "done", {}, 3.0)
METERING = _journal_line(SID, RUN, 4, "metering", {"tokens": 3}, 4.0)


def _nested(seq: int) -> str:
    """A tool event whose payload holds the terminal flag: not a terminal record."""
    line = _journal_line(SID, RUN, seq, "tool", {"name": "x", "args": {"terminal": True}}, float(seq))
    assert line.count('"terminal":true') == 1
    return line


def _done_flag_as_number() -> str:
    """A terminal record whose flag is written ``1``: true for hermes, but not the flag the check looks for."""
    line = DONE.replace('"terminal":true', '"terminal":1')
    assert '"terminal":true' not in line and '"terminal": true' not in line
    return line


def _open(text: str) -> bool:
    return open_run_facts(text.encode("utf-8"))["open"]


def test_the_terminal_record_on_the_third_line_is_found() -> None:
    """The flag's line starts after the newline just before it, not after the first one of the file."""
    assert _open(TOKEN + TOKEN.replace(":1,", ":2,") + DONE) is False


def test_a_line_after_the_terminal_record_does_not_hide_it() -> None:
    """The flag's line ends at the next newline, not at the file's last one nor its end."""
    assert _open(TOKEN + DONE + METERING) is False


def test_a_terminal_record_without_a_final_newline_is_read_whole() -> None:
    """The last line of a file that does not end in a newline runs to the file's end."""
    assert _open(TOKEN + DONE.rstrip("\n")) is False


def test_every_flag_line_is_tried_newest_first_until_a_terminal_one() -> None:
    """Flag lines that are not terminal records (before and after the real one) do not stop the search."""
    assert _open(TOKEN + _nested(2) + DONE + _nested(5)) is False


def test_a_torn_first_line_is_read_as_hermes_reads_it() -> None:
    """The flag at the file's very first byte is still looked at: its line holds a break hermes splits
    at, so the full parse decides, and there the second half is a terminal record."""
    torn = '"terminal":true\x1c' + _done_flag_as_number()
    assert _open(torn + TOKEN + _nested(5)) is False


def test_only_flag_lines_are_parsed() -> None:
    """A terminal record written without the flag is not seen by the cheap test: the run may be open
    (the full read decides later); a flag line without a break is never sent to the full parse."""
    assert _open(TOKEN + _done_flag_as_number() + _nested(5)) is True


def test_a_flag_line_ending_in_a_form_feed_goes_to_the_full_parse() -> None:
    """A form feed at the end of the line is a break for hermes' reader (not stripped as blank space):
    the full parse then finds the terminal record the flag test cannot."""
    assert _open(TOKEN + _done_flag_as_number() + _nested(5).replace("\n", "\x0c\n")) is False


def test_windows_line_ends_are_stripped_from_the_end_of_the_line_only() -> None:
    """CRLF: the carriage return at the line's end is dropped, so the line is parsed, not fully read."""
    text = (TOKEN + _done_flag_as_number() + _nested(5)).replace("\n", "\r\n")
    assert _open(text) is True


def test_garbage_after_a_terminal_record_makes_it_no_record() -> None:
    """A terminal line with bytes after its object does not parse, as in hermes' reader: no end."""
    assert _open(TOKEN + DONE.replace("}\n", "}X\n")) is True
