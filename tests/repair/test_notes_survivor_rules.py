"""Rules of the plain-words notes a run-journal repair's preview shows (inspector.repair.notes)."""

from __future__ import annotations

from pathlib import Path

from inspector.repair.journal_read import JournalRead
from inspector.repair.journal_recovery import MaterializeReport
from inspector.repair.notes import Notes, describe_output, journal_notes, output_warnings


def _journal(**kw) -> JournalRead:
    base = dict(
        stream_id="s1",
        path=Path("/x/s1.jsonl"),
        exists=True,
        size=10,
        events=[],
        malformed=[],
        error=None,
        torn_lines=[],
    )
    base.update(kw)
    return JournalRead(**base)


def test_one_anchor_row_is_named_singular_for_tool_cards():
    """One empty anchor row is counted in the singular and said to be for tool cards."""
    report = MaterializeReport(anchors_added=[4])
    assert describe_output(report, "after row 3") == "adds 1 empty anchor row for tool cards after row 3"


def test_two_anchor_rows_are_named_plural():
    """Two empty anchor rows are counted in the plural."""
    report = MaterializeReport(anchors_added=[4, 5])
    assert describe_output(report, "at the end") == "adds 2 empty anchor rows for tool cards at the end"


def test_matched_segments_follow_the_added_rows_after_a_semicolon():
    """Rows added and text already present are joined with a semicolon."""
    report = MaterializeReport(rows_added=[5], rows_matched=[2])
    assert describe_output(report, "at the end") == (
        "adds 1 recovered assistant row at the end; 1 journaled text segment already in the transcript"
    )


def test_reasoning_alone_is_its_own_line():
    """With nothing else added, the reasoning attached is the whole summary line."""
    report = MaterializeReport(reasoning_attached=[1, 2])
    assert describe_output(report, "at the end") == "attaches journaled reasoning to 2 existing rows"


def test_reasoning_one_row_is_singular():
    """Reasoning attached to one row says "1 existing row"."""
    report = MaterializeReport(reasoning_attached=[1])
    assert describe_output(report, "at the end") == "attaches journaled reasoning to 1 existing row"


def test_reasoning_follows_added_rows_after_a_semicolon():
    """Reasoning attached comes after what was added, joined with a semicolon."""
    report = MaterializeReport(rows_added=[3], reasoning_attached=[1])
    assert describe_output(report, "at the end") == (
        "adds 1 recovered assistant row at the end; attaches journaled reasoning to 1 existing row"
    )


def test_nothing_done_gives_no_line():
    """An empty report gives no summary line."""
    assert describe_output(MaterializeReport(), "at the end") is None


def test_unreadable_journal_warning_without_too_deep():
    """An unreadable journal warns that hermes sees no output, with no word about the reply's text."""
    notes = Notes()
    journal_notes(_journal(error="invalid UTF-8 at byte 4"), notes)
    assert notes.warnings == ["s1.jsonl: invalid UTF-8 at byte 4; hermes treats the run as having no output"]


def test_too_deep_journal_warning_says_the_text_is_not_brought_back():
    """A journal too deep for hermes' reader also says the reply's text is not brought back."""
    notes = Notes()
    journal_notes(_journal(error="line 2 nested too deeply", too_deep=True), notes)
    assert notes.warnings == [
        "s1.jsonl: line 2 nested too deeply; hermes treats the run as having no output, so the reply's "
        "text in this record is not brought back (the inspector does the same)"
    ]


def test_journal_without_path_is_called_the_run_journal():
    """A journal with no path is named "the run journal" in the warning."""
    notes = Notes()
    journal_notes(_journal(path=None, error="I/O error"), notes)
    assert notes.warnings == ["the run journal: I/O error; hermes treats the run as having no output"]


def test_torn_lines_lists_only_the_first_ten():
    """The torn-line warning lists the first ten line numbers, comma separated."""
    notes = Notes()
    journal_notes(_journal(torn_lines=list(range(1, 13))), notes)
    assert notes.warnings == [
        "s1.jsonl: line(s) 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 contain an invisible line-break character "
        "(U+2028, U+2029, U+0085 or another one hermes reads as a line end); hermes tears those "
        "records apart and loses them"
    ]


def test_malformed_lines_lists_only_the_first_ten():
    """The unreadable-line warning counts all of them but lists only the first ten line numbers."""
    notes = Notes()
    journal_notes(_journal(malformed=[{"line": n} for n in range(21, 33)]), notes)
    assert notes.warnings == [
        "s1.jsonl: hermes skips 12 unreadable lines (not a JSON object; line numbers as hermes counts "
        "them: 21, 22, 23, 24, 25, 26, 27, 28, 29, 30)"
    ]


def test_earlier_turn_text_of_sixty_chars_is_shown_whole():
    """Journaled text of exactly 60 characters is quoted whole."""
    text = "a" * 60
    notes = Notes()
    output_warnings(MaterializeReport(earlier_turn_matches=[(2, text)]), notes)
    assert notes.warnings == [
        f"journaled text '{text}' equals (or is contained in) row 2 from an earlier turn; hermes' "
        "session-wide dedupe treats it as already present and recovers nothing for it"
    ]


def test_earlier_turn_text_of_sixty_one_chars_is_cut_to_57_and_dots():
    """Journaled text longer than 60 characters is cut to its first 57 and three dots."""
    text = "b" * 57 + "cdef"
    notes = Notes()
    output_warnings(MaterializeReport(earlier_turn_matches=[(0, text)]), notes)
    assert notes.warnings == [
        "journaled text '" + "b" * 57 + "...' equals (or is contained in) row 0 from an earlier turn; "
        "hermes' session-wide dedupe treats it as already present and recovers nothing for it"
    ]


def test_duplicate_card_warning_words():
    """A duplicated tool card gets its warning, word for word."""
    notes = Notes()
    output_warnings(MaterializeReport(duplicate_cards=["terminal"]), notes)
    assert notes.warnings == [
        "a 'terminal' tool card recovered from this stream already exists with another preview; "
        "hermes adds another card (repeated dedupe runs duplicate cards)"
    ]
