"""Keys and safety (issue 16): Return never writes, Tab leaves the list, repairs have shortcuts,
the search box leads into its results, Ctrl+Z names the write it undoes, F1 lists the keys."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication, QMessageBox, QTableView

from inspector import version
from inspector.about import HERMES_WEBUI_COMMIT, HERMES_WEBUI_RELEASE
from inspector.gui.main_window import REPAIR_SHORTCUTS
from inspector.gui.session_model import SESSION_ID_ROLE
from inspector.plan import WriteLog
from inspector.present.session_data import ACTIONS
from tests.gui.conftest import files_under, open_home, wait_settled


def _activate(qtbot, widget):
    """Shortcuts belong to the active window: make ``widget`` the active one."""
    widget.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is widget, timeout=60_000)


def _preview(qtbot, window, action="recover-journal"):
    qtbot.waitUntil(lambda: window.view.findings.buttons[action].isEnabled(), timeout=60_000)
    dialog = window.preview_action(action)
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible, timeout=60_000)
    _activate(qtbot, dialog)  # its keys (Alt+W) are the active window's shortcuts
    return dialog


def test_return_in_the_preview_cancels_even_with_write_focused(qtbot, window, demo, demo_home):
    """Rule: Return never writes; Cancel is the default and Write is never auto-default."""
    sid = demo.sessions["lost_response"]
    open_home(qtbot, window, demo_home, select=sid)
    before = files_under(demo.home)
    for focus_write in (False, True):
        dialog = _preview(qtbot, window)
        assert dialog.cancel_button.isDefault() and not dialog.write_button.autoDefault()
        target = dialog.write_button if focus_write else dialog
        if focus_write:
            dialog.write_button.setFocus()
        qtbot.keyClick(target, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda d=dialog: not d.isVisible(), timeout=60_000)
        assert dialog.result() == dialog.DialogCode.Rejected
        wait_settled(qtbot, window)
    assert files_under(demo.home) == before and WriteLog.default().records() == []


def test_alt_w_writes_and_ctrl_z_undoes_it_naming_the_write(qtbot, window, demo, demo_home):
    """Rule: Write has its own shortcut (Alt+W); Ctrl+Z undoes the shown session's last write and
    says which repair, on which session, it undid."""
    sid = demo.sessions["lost_response"]
    open_home(qtbot, window, demo_home, select=sid)
    before = files_under(demo.home)
    dialog = _preview(qtbot, window)
    qtbot.keyClick(dialog, Qt.Key.Key_W, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: window.last_write is not None, timeout=60_000)
    wait_settled(qtbot, window)
    assert files_under(demo.home) != before
    title = window.model.row_for(sid).title
    assert window.undo_button.text() == f"Undo {ACTIONS['recover-journal']}"
    assert window.undo_action.shortcut() == QKeySequence(QKeySequence.StandardKey.Undo)
    _activate(qtbot, window)
    window.table.setFocus()
    qtbot.keyClick(window.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.statusBar().currentMessage().startswith("Undid "), timeout=60_000)
    message = window.statusBar().currentMessage()
    assert ACTIONS["recover-journal"] in message and title in message
    wait_settled(qtbot, window)
    assert files_under(demo.home) == before
    assert not window.undo_action.isEnabled()


def test_ctrl_z_asks_before_undoing_a_write_of_another_session(qtbot, window, demo, demo_home, monkeypatch):
    """Rule: the last write belongs to another session than the one shown: nothing is undone
    unless the user says yes to a question that names the write."""
    sid = demo.sessions["lost_response"]
    open_home(qtbot, window, demo_home, select=sid)
    dialog = _preview(qtbot, window)
    qtbot.mouseClick(dialog.write_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.last_write is not None, timeout=60_000)
    wait_settled(qtbot, window)
    written = files_under(demo.home)
    other = next(
        window.model.index(r, 0).data(SESSION_ID_ROLE)
        for r in range(window.model.rowCount())
        if window.model.index(r, 0).data(SESSION_ID_ROLE) != sid
    )
    window.select_session(other)
    wait_settled(qtbot, window)
    asked = []

    def answer(parent, title, text, *args):
        asked.append(text)
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(QMessageBox, "question", answer)
    assert window.undo_last() is False
    assert (
        len(asked) == 1
        and ACTIONS["recover-journal"] in asked[0]
        and window.model.row_for(sid).title in asked[0]
    )
    assert files_under(demo.home) == written and window.last_write is not None
    monkeypatch.setattr(QMessageBox, "question", lambda *a: QMessageBox.StandardButton.Yes)
    assert window.undo_last() is True
    qtbot.waitUntil(lambda: window.last_write is None, timeout=60_000)
    wait_settled(qtbot, window)


def test_tab_leaves_the_session_list_without_changing_the_selection(qtbot, window, demo_home):
    """Rule: Tab moves focus out of the list (it used to walk the cells and change the session)."""
    open_home(qtbot, window, demo_home)
    window.activateWindow()
    window.table.setFocus()
    qtbot.waitUntil(window.table.hasFocus, timeout=60_000)
    shown = window.current_session_id()
    qtbot.keyClick(window.table, Qt.Key.Key_Tab)
    assert not window.table.hasFocus() and window.current_session_id() == shown
    assert not window.table.tabKeyNavigation()


def test_repair_buttons_have_shortcuts_and_tab_reaches_an_enabled_one(qtbot, window, demo, demo_home):
    """Rule: every repair has its own key (Repair menu, Ctrl+1…), enabled exactly when its button is,
    and an enabled button takes keyboard focus."""
    open_home(qtbot, window, demo_home, select=demo.sessions["lost_response"])
    button = window.view.findings.buttons["recover-journal"]
    qtbot.waitUntil(button.isEnabled, timeout=60_000)
    assert len(set(REPAIR_SHORTCUTS.values())) == len(ACTIONS)
    for action, a in window.repair_actions.items():
        assert a.shortcut() == QKeySequence(REPAIR_SHORTCUTS[action])
        assert a.isEnabled() == window.view.findings.buttons[action].isEnabled()
        assert REPAIR_SHORTCUTS[action] in window.view.findings.buttons[action].toolTip()
    assert button.focusPolicy() & Qt.FocusPolicy.TabFocus
    window.repair_actions["recover-journal"].trigger()
    qtbot.waitUntil(lambda: window.preview is not None and window.preview.isVisible(), timeout=60_000)
    assert window.preview.plan.action == "recover-journal"
    window.preview.reject()


def test_down_and_return_in_the_search_box_move_into_the_results(qtbot, window, demo, demo_home):
    """Rule: Down or Return in the search box puts the keyboard in the list of results."""
    open_home(qtbot, window, demo_home)
    for key in (Qt.Key.Key_Down, Qt.Key.Key_Return):
        window.activateWindow()
        window.search.setFocus()
        qtbot.waitUntil(window.search.hasFocus, timeout=60_000)
        qtbot.keyClicks(window.search, "Release")
        qtbot.waitUntil(lambda: window.model.rowCount() >= 1, timeout=60_000)
        qtbot.keyClick(window.search, key)
        assert window.table.hasFocus()
        assert window.table.currentIndex().isValid()
        window.search.clear()
        wait_settled(qtbot, window)


def test_f1_lists_every_shortcut_of_the_window(qtbot, window):
    """Rule: F1 / Help ▸ Keyboard Shortcuts lists every key the menus have (read from the actions)."""
    _activate(qtbot, window)
    qtbot.keyClick(window, Qt.Key.Key_F1)
    dialog = next(
        w for w in QApplication.topLevelWidgets() if w.objectName() == "ShortcutsDialog" and w.isVisible()
    )
    rows = dialog.rows()
    keys = {k for k, _ in rows}
    for action in window.repair_actions.values():
        assert action.shortcut().toString(QKeySequence.SequenceFormat.NativeText) in keys
    assert any("Undo" in what for _, what in rows) and any("Return never writes" in what for _, what in rows)
    dialog.reject()


def test_about_names_the_version_the_hermes_release_and_the_licence(qtbot, window):
    dialog = window.show_about()
    text = dialog.text.text()
    assert (
        version() in text and HERMES_WEBUI_COMMIT in text and HERMES_WEBUI_RELEASE in text and "MIT" in text
    )
    dialog.reject()


def test_the_readme_lists_every_menu_shortcut(window):
    """Rule: the README's "Using the window" table names every menu key the window has."""
    from pathlib import Path

    from inspector.gui.help_dialogs import shortcut_rows

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Using the window", 1)[1].split("\n### ", 1)[0]
    first, last = REPAIR_SHORTCUTS[next(iter(ACTIONS))], list(REPAIR_SHORTCUTS.values())[-1]
    assert f"{first} … {last}" in section
    repair_keys = set(REPAIR_SHORTCUTS.values())
    for keys, _what in shortcut_rows(window):
        for key in keys.split(" / "):
            if key in repair_keys or "(" in keys:
                continue
            assert key in section, key


def test_help_using_the_window_shows_the_readme_guide_in_words(qtbot, window):
    """Rule: Help ▸ Using the Window shows the README's guide to the window (no screenshots, no
    commands to run: the window never gives command-line advice)."""
    from inspector.gui.help_dialogs import guide_text
    from tests.gui.test_window_words import FORBIDDEN

    (action,) = [a for a in window.menuBar().actions() if a.text() == "&Help"][0].menu().actions()[1:2]
    assert action.text() == "&Using the Window"
    action.trigger()
    dialog = next(
        w for w in QApplication.topLevelWidgets() if w.objectName() == "GuideDialog" and w.isVisible()
    )
    text = dialog.text.toPlainText()
    assert text.startswith("Using the window") and "Rebuild from state.db" in text and "Ctrl+Z" in text
    assert "![" not in dialog.text.toMarkdown() and "docs/" not in text
    for what, pattern in FORBIDDEN.items():
        assert not pattern.search(text), what
    dialog.reject()
    assert guide_text("# A README without the section\n").startswith("The guide is not installed")


def test_forty_tabs_walk_the_window_and_never_change_the_session(qtbot, window, demo, demo_home):
    """Rule: the issue's report, replayed: 40 Tabs from the list used to walk its cells and change the
    selected session. Now they go round the window (search, filters, list, repair buttons, views),
    reach an enabled repair button, and the session shown stays the one the user chose."""
    sid = demo.sessions["lost_response"]
    open_home(qtbot, window, demo_home, select=sid)
    qtbot.waitUntil(window.view.findings.buttons["recover-journal"].isEnabled, timeout=60_000)
    _activate(qtbot, window)
    window.table.setFocus()
    qtbot.waitUntil(window.table.hasFocus, timeout=60_000)
    event_line = window.view.journal.current_line()
    visited = []
    for _ in range(40):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        visited.append(QApplication.focusWidget())
    assert window.current_session_id() == sid and window.data.session_id == sid
    assert window.view.findings.buttons["recover-journal"] in visited
    assert window.search in visited and visited.count(window.table) >= 1  # round the window, not stuck
    assert window.preview is None  # Tab never presses a button
    # no table of the window keeps Tab to walk its cells (the run journal's did: Tab stuck there)
    assert window.view.journal.table in visited and window.view.journal.current_line() == event_line
    assert [t.objectName() for t in window.findChildren(QTableView) if t.tabKeyNavigation()] == []
