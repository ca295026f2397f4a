"""Small rules of the repairs, each with literal values: the watch-match wakeup's display metadata
(hermes ``api/process_event_utils.py: wakeup_display_meta``, checked against it in a child process
while writing) and how many rows a materialization defect warning names."""

from __future__ import annotations

from inspector.repair.materialize import _more
from inspector.repair.pending_turn import wakeup_display_meta

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
