"""Small rules of the repairs, each with literal values: the watch-match wakeup's display metadata
(hermes ``api/process_event_utils.py: wakeup_display_meta``, checked against it in a child process
while writing) and how many rows a materialization defect warning names."""

from __future__ import annotations

from pathlib import Path

from inspector.repair.journal_read import JournalRead
from inspector.repair.materialize import _more
from inspector.repair.notes import unsure_refusal
from inspector.repair.pending_turn import context_only_recovered_turn, wakeup_display_meta

WATCH = (
    '[IMPORTANT: Background process p9 matched watch pattern "ERROR .*".\n'
    "Command: tail -f app.log\n"
    "Matched output:\nERROR disk full\n"
)


def test_a_watch_match_wakeup_gives_its_header_fields() -> None:
    assert wakeup_display_meta(WATCH) == {
        "type": "watch_match",
        "task_id": "p9",
        "command": "tail -f app.log",
        "pattern": "ERROR .*",
    }


def test_text_that_is_no_wakeup_gives_no_metadata() -> None:
    assert wakeup_display_meta(None) is None
    assert wakeup_display_meta("") is None
    assert wakeup_display_meta("hello") is None
    assert wakeup_display_meta(WATCH.replace("Matched output:", "Output:")) is None


def test_a_defect_warning_names_twelve_rows_and_counts_the_rest() -> None:
    assert _more([]) == ""
    assert _more(list(range(1))) == ""
    assert _more(list(range(12))) == ""
    assert _more(list(range(13))) == " and 1 more"
    assert _more(list(range(40))) == " and 28 more"


def _unsure(path: Path | None) -> JournalRead:
    return JournalRead("s", path, True, 1, [], [], None, [], unsure="a line 950 levels deep")


def test_the_unsure_refusal_names_the_journal_file_or_the_run_journal() -> None:
    tail = (
        ": a line 950 levels deep; the inspector does not guess, so nothing is written "
        "(hermes' own repair would recover either all of this record or none of it)"
    )
    assert unsure_refusal(_unsure(Path("/h/_run_journal/c1/r1.jsonl"))) == "r1.jsonl" + tail
    assert unsure_refusal(_unsure(None)) == "the run journal" + tail


def test_the_context_only_row_of_a_webui_prompt_has_no_source() -> None:
    session = {"messages": [], "pending_user_message": "hi", "pending_user_source": "webui"}
    row = context_only_recovered_turn(session, timestamp=7)
    assert row == {"role": "user", "content": "hi", "timestamp": 7, "_recovered": True}
