"""Find inside the open session (issue 16): Ctrl+Shift+F opens a find bar over the transcript,
the run journal's lines or the raw sidecar JSON; Return / F3 next, Shift+Return / Shift+F3
previous, round the end; Escape closes it. Ctrl+F stays the list's search."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from inspector.gui.find_bar import FindBar
from tests.gui.conftest import open_home


def _activate(qtbot, widget):
    widget.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is widget, timeout=60_000)


def test_ctrl_shift_f_opens_the_bar_and_return_finds_in_the_transcript(qtbot, window, demo, demo_home):
    open_home(qtbot, window, demo_home, select=demo.sessions["healthy"])
    _activate(qtbot, window)
    bar = window.view.find_bar
    assert bar.isHidden()
    qtbot.keyClick(
        window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    assert bar.isVisible() and bar.edit.hasFocus() and bar.target.currentIndex() == FindBar.TRANSCRIPT
    qtbot.keyClicks(bar.edit, "pyyaml")
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return)
    browser = window.view.transcript.browser
    assert browser.textCursor().selectedText().casefold() == "pyyaml"
    first = browser.textCursor().position()
    qtbot.keyClick(window, Qt.Key.Key_F3)  # the next one, or round to the first again
    assert browser.textCursor().selectedText().casefold() == "pyyaml"
    assert browser.textCursor().position() != first or bar.status.text() == "from the top again"
    qtbot.keyClick(bar.edit, Qt.Key.Key_Escape)
    assert bar.isHidden()


def test_a_missing_text_says_not_found(qtbot, window, demo, demo_home):
    open_home(qtbot, window, demo_home, select=demo.sessions["healthy"])
    bar = window.view.find_bar
    bar.open_bar()
    bar.edit.setText("words that are nowhere 123")
    assert not bar.find_next() and bar.status.text() == "not found"


def test_the_journal_target_selects_the_matching_line_and_goes_round(qtbot, window, demo, demo_home):
    sid = demo.sessions["lost_response"]
    open_home(qtbot, window, demo_home, select=sid)
    journal = window.view.journal
    qtbot.waitUntil(lambda: journal.model.rowCount() > 0, timeout=60_000)
    bar = window.view.find_bar
    bar.open_bar()
    bar.target.setCurrentIndex(FindBar.JOURNAL)
    bar.edit.setText('"TOOL_COMPLETE"')  # the event name, as the line writes it (case-insensitive)
    assert bar.find_next()
    row = journal.table.currentIndex().row()
    assert b'"tool_complete"' in journal.model.line(row).data
    assert bar.status.text() == f"line {row + 1}"
    bar.edit.setText("api/models.py")
    hits = []
    for _ in range(6):
        assert bar.find_next()
        hits.append(journal.table.currentIndex().row())
    matching = [r for r in range(journal.model.rowCount()) if b"api/models.py" in journal.model.line(r).data]
    assert 1 < len(matching) < 6
    # each Next goes to the following matching line, from the last one round to the first
    assert all(
        b == matching[(matching.index(a) + 1) % len(matching)] for a, b in zip(hits, hits[1:], strict=False)
    )
    assert set(hits) == set(matching)
    assert bar.find_previous()
    assert b"api/models.py" in journal.model.line(journal.table.currentIndex().row()).data


def test_the_raw_target_shows_the_raw_json_and_finds_in_it(qtbot, window, demo, demo_home):
    sid = demo.sessions["healthy"]
    open_home(qtbot, window, demo_home, select=sid)
    bar = window.view.find_bar
    bar.open_bar()
    bar.target.setCurrentIndex(FindBar.RAW)
    assert window.view.tabs.currentWidget() is window.view.raw
    qtbot.waitUntil(lambda: bool(window.view.raw.json.toPlainText()), timeout=60_000)
    bar.edit.setText('"session_id"')
    assert bar.find_next()
    assert window.view.raw.json.textCursor().selectedText() == '"session_id"'


def test_the_bar_opens_on_the_raw_tab_when_it_is_shown(qtbot, window, demo, demo_home):
    open_home(qtbot, window, demo_home, select=demo.sessions["healthy"])
    window.view.tabs.setCurrentWidget(window.view.raw)
    window.view.find_bar.open_bar()
    assert window.view.find_bar.target.currentIndex() == FindBar.RAW


def test_ctrl_f_still_goes_to_the_list_search(qtbot, window, demo_home):
    open_home(qtbot, window, demo_home)
    _activate(qtbot, window)
    window.view.transcript.browser.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert window.search.hasFocus() and window.view.find_bar.isHidden()


def test_go_to_seq_selects_the_events_line_or_says_there_is_none(qtbot, window, demo, demo_home):
    """Issue 16's journal "go to seq": Return in the field selects that event's line."""
    open_home(qtbot, window, demo_home, select=demo.sessions["lost_response"])
    journal = window.view.journal
    qtbot.waitUntil(lambda: journal.model.rowCount() > 0, timeout=60_000)
    qtbot.keyClicks(journal.goto_seq, "5")
    qtbot.keyClick(journal.goto_seq, Qt.Key.Key_Return)
    row = journal.table.currentIndex().row()
    assert journal.model.line(row).value["seq"] == 5 and journal.seq_note.text() == ""
    assert not journal.go_to_seq("999") and journal.seq_note.text() == "no seq 999"
    assert not journal.go_to_seq("five") and journal.seq_note.text() == "not a number"
    assert journal.table.currentIndex().row() == row  # a miss moves nothing
