"""A narrow window (1024x640) keeps the list's Messages and Problem columns on screen, and the
repair preview fits the screen (issue 16)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from inspector.gui.main_window import MainWindow
from inspector.gui.session_model import Column
from tests.gui.conftest import open_home, wait_settled


def _on_screen(window, col: int) -> bool:
    table = window.table
    if table.isColumnHidden(col):
        return False
    left = table.columnViewportPosition(col)
    return left >= 0 and left + table.columnWidth(col) <= table.viewport().width()


def _resize(qtbot, window, width: int, height: int) -> None:
    window.resize(width, height)
    QApplication.processEvents()
    qtbot.wait(50)  # the list fits its columns a turn after it is resized


def test_a_narrow_window_keeps_messages_and_problem_on_screen(qtbot, window, demo, demo_home):
    open_home(qtbot, window, demo_home, select=demo.sessions["lost_response"])
    _resize(qtbot, window, 1024, 640)
    assert window.size().width() == 1024
    assert _on_screen(window, Column.MESSAGES) and _on_screen(window, Column.PROBLEM)
    assert _on_screen(window, Column.TITLE) and window.table.columnWidth(Column.TITLE) >= 100
    assert window.table.horizontalScrollBar().maximum() == 0  # nothing behind a scroll bar
    # what gave way: the columns the session's header repeats
    assert window.table.isColumnHidden(Column.LAST_ACTIVITY)
    # wide again: everything comes back as it was
    _resize(qtbot, window, 1500, 900)
    for col in (Column.WHERE, Column.MESSAGES, Column.LAST_ACTIVITY, Column.PROBLEM):
        assert _on_screen(window, col), Column.HEADERS[col]


def test_the_saved_layout_keeps_the_columns_the_user_chose(qtbot, window, demo, demo_home, settings):
    open_home(qtbot, window, demo_home)
    _resize(qtbot, window, 1024, 640)
    assert window.table.isColumnHidden(Column.LAST_ACTIVITY)
    window.save_layout()
    assert window.table.isColumnHidden(Column.LAST_ACTIVITY)  # still fitted while the window is narrow
    again = MainWindow(settings=settings)
    qtbot.addWidget(again)
    again.resize(1500, 900)
    again.show()
    qtbot.wait(50)
    try:
        assert not again.table.isColumnHidden(Column.LAST_ACTIVITY)
        assert not again.table.isColumnHidden(Column.WHERE)
    finally:
        again.runner.cancel_all()
        again.runner.wait(10_000)


def test_the_preview_fits_the_screen_of_a_narrow_window(qtbot, window, demo, demo_home):
    open_home(qtbot, window, demo_home, select=demo.sessions["lost_response"])
    _resize(qtbot, window, 1024, 640)
    qtbot.waitUntil(lambda: window.view.findings.buttons["recover-journal"].isEnabled(), timeout=60_000)
    qtbot.mouseClick(window.view.findings.buttons["recover-journal"], Qt.MouseButton.LeftButton)
    preview = window.preview
    qtbot.waitUntil(preview.isVisible, timeout=60_000)
    free = preview.screen().availableGeometry()
    assert free.contains(preview.frameGeometry()), (free, preview.frameGeometry())
    assert (
        preview.write_button.isVisible() and preview.write_button.visibleRegion().boundingRect().width() > 0
    )
    preview.reject()
    wait_settled(qtbot, window)


def test_a_cut_off_transcript_or_run_choice_shows_in_full_on_hover(qtbot, window, demo, demo_home):
    """In a narrow pane the Transcript and Run journal choices are cut off: their tooltips hold the whole entry."""
    open_home(qtbot, window, demo_home, select=demo.sessions["lost_response"])
    _resize(qtbot, window, 1024, 640)
    wait_settled(qtbot, window)
    for combo in (window.view.transcript.source, window.view.journal.runs):
        qtbot.waitUntil(lambda c=combo: c.currentText() != "", timeout=60_000)
        assert combo.currentText() in combo.toolTip()
        combo.setCurrentIndex(combo.count() - 1)
        assert combo.currentText() in combo.toolTip(), "the tooltip follows the choice"
