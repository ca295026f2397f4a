"""The window with no home open (issue 16): a welcome page with Open Home…, the demo and the
recent homes; a picked sessions or webui folder opens the home above it; the demo keeps its
write log and backups with the demo, not in the user's state folder."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from inspector.gui.app import run_app
from inspector.gui.main_window import MainWindow
from inspector.home import locate_home
from inspector.plan import WriteLog
from tests.gui.conftest import open_home, wait_settled


def test_a_window_without_a_home_shows_the_welcome_page_with_recent_homes(qtbot, settings, demo_home):
    window = MainWindow(settings=settings)
    qtbot.addWidget(window)
    window.show()
    assert window.stack.currentWidget() is window.welcome and window.is_settled()
    assert window.welcome.recent_label.text() == "No recent homes yet."
    window._remember_home(demo_home)
    item = window.welcome.recent.item(0)
    assert item.text() == str(demo_home.base)
    window.welcome.recent.itemActivated.emit(item)
    wait_settled(qtbot, window)
    assert window.stack.currentIndex() == 1 and window.home == locate_home(demo_home.base)
    assert window.model.rowCount() > 0
    window.runner.cancel_all()
    window.runner.wait(10_000)


def test_picking_the_sessions_or_webui_folder_opens_the_home(qtbot, window, demo):
    for picked in (demo.session_dir, demo.session_dir.parent):
        home = window.open_chosen_folder(picked)
        wait_settled(qtbot, window)
        assert home.base == Path(demo.home).absolute() and window.home == home
        assert "opened the Hermes home above it" in window.statusBar().currentMessage()
        assert window.model.rowCount() > 0


def test_the_demo_writes_its_log_and_backups_beside_its_home(qtbot, window, demo_home):
    """Rule: a write in the demo lands in a state folder in the demo's temporary folder, outside
    the demo's home; the user's state folder gets nothing; opening a real home goes back to it."""
    users = os.environ["HERMES_INSPECTOR_STATE_DIR"]
    demo = window.open_demo()
    wait_settled(qtbot, window)
    state = window.demo_state_dir()
    assert os.environ["HERMES_INSPECTOR_STATE_DIR"] == str(state)
    assert not str(state).startswith(str(demo.base)) and state.parent == demo.base.parent
    sid = next(r.session_id for r in window.model.rows() if r.title and r.title.startswith("Which open PRs"))
    window.select_session(sid)
    wait_settled(qtbot, window)
    qtbot.waitUntil(lambda: window.view.findings.buttons["recover-journal"].isEnabled(), timeout=60_000)
    dialog = window.preview_action("recover-journal")
    qtbot.mouseClick(dialog.write_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.last_write is not None, timeout=60_000)
    wait_settled(qtbot, window)
    assert [r.action for r in WriteLog.default().records()] == ["recover-journal"]
    assert (WriteLog.default().root / "backups").is_dir()
    assert str(WriteLog.default().root).startswith(str(state))
    open_home(qtbot, window, demo_home)  # a real home: the user's state folder again
    assert os.environ["HERMES_INSPECTOR_STATE_DIR"] == users and WriteLog.default().records() == []
    root = state.parent
    window.close()
    assert not root.exists()  # the demo (home, log, backups) goes with the window


@pytest.fixture
def app_state(qapp):
    """run_app styles the whole QApplication; later tests of this process get it back as it was."""
    app = QApplication.instance()
    saved = (app.styleSheet(), app.organizationName(), app.applicationName())
    yield
    app.setStyleSheet(saved[0])
    app.setOrganizationName(saved[1])
    app.setApplicationName(saved[2])


def test_no_home_named_and_none_at_the_default_place_starts_on_the_welcome_page(
    qtbot, tmp_path, monkeypatch, app_state
):
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.hermes
    shot = tmp_path / "welcome.png"
    args = argparse.Namespace(
        home=None, state_dir=None, state_db=None, demo=False, screenshot=str(shot), select=None
    )
    assert run_app(args) == 0
    assert QImage(str(shot)).width() == 1500
    assert not (tmp_path / ".hermes").exists()
