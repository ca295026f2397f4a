"""The preview checks its plan with the user's hermes-webui (a fake tree here), off the GUI thread.

Same bytes: the line says so with the version. Different: a diff tab per file and "Write
hermes-webui's result", which goes through the window's safe write path (backups, log, undo).
No hermes-webui: the line says so and offers to choose one. A hanging hermes never blocks the
window, and closing the preview stops the check.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import Qt, QTimer

from inspector.gui.crosscheck_panel import CHANNEL, SETTING_CHECKOUT, SETTING_PYTHON
from inspector.plan import WriteLog
from tests.crosscheck_helpers import pid_alive, write_fake_hermes
from tests.gui.conftest import open_home, wait_settled

CHECK_TIMEOUT_MS = 30_000


def _preview_restore(qtbot, window, demo, demo_home, settings, fake):
    if fake is not None:
        settings.setValue(SETTING_CHECKOUT, str(fake))
        settings.setValue(SETTING_PYTHON, sys.executable)
    sid = demo.sessions["shrunken"]
    open_home(qtbot, window, demo_home, select=sid)
    qtbot.mouseClick(window.view.findings.buttons["restore-backup"], Qt.MouseButton.LeftButton)
    dialog = window.preview
    assert dialog is not None and dialog.crosscheck is not None
    return sid, dialog


def test_same_bytes_are_announced_with_the_version(qtbot, window, demo, demo_home, settings, tmp_path):
    fake = write_fake_hermes(tmp_path / "hermes", version_line="version = '0.53.1'")
    _, dialog = _preview_restore(qtbot, window, demo, demo_home, settings, fake)
    panel = dialog.crosscheck
    qtbot.waitUntil(lambda: panel.result is not None, timeout=CHECK_TIMEOUT_MS)
    assert panel.status.text().startswith(
        "Same bytes as your hermes-webui (version 0.53.1 (api/_scm_version.py))"
    )
    assert not panel.write_button.isVisible()
    assert dialog.crosscheck_diffs == []


def test_a_difference_is_shown_and_hermes_result_is_written_safely(
    qtbot, window, demo, demo_home, settings, tmp_path
):
    fake = write_fake_hermes(tmp_path / "hermes", "different")
    sid, dialog = _preview_restore(qtbot, window, demo, demo_home, settings, fake)
    panel = dialog.crosscheck
    qtbot.waitUntil(lambda: panel.result is not None, timeout=CHECK_TIMEOUT_MS)
    assert panel.status.text().startswith("Different from your hermes-webui")
    assert [dialog.tabs.tabText(dialog.tabs.indexOf(v)) for v in dialog.crosscheck_diffs] == [
        f"hermes-webui differs: {sid}.json"
    ]
    assert '+  "title": "(restored) ' in dialog.crosscheck_diffs[0].toPlainText()
    assert panel.write_button.isVisible() and panel.write_button.isEnabled()

    live = demo.session_dir / f"{sid}.json"
    original = live.read_bytes()
    hermes_bytes = panel.result.differing()[0].hermes
    qtbot.mouseClick(panel.write_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.last_write is not None, timeout=60_000)
    wait_settled(qtbot, window)
    assert live.read_bytes() == hermes_bytes
    record = WriteLog.default().find(window.last_write)
    assert record is not None and record.action == "restore-backup"
    qtbot.mouseClick(window.undo_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.last_write is None, timeout=60_000)
    wait_settled(qtbot, window)
    assert live.read_bytes() == original


def test_without_a_hermes_webui_the_line_offers_to_choose_one(qtbot, window, demo, demo_home, settings):
    _, dialog = _preview_restore(qtbot, window, demo, demo_home, settings, None)
    panel = dialog.crosscheck
    qtbot.waitUntil(lambda: panel.result is not None, timeout=CHECK_TIMEOUT_MS)
    assert "no hermes-webui to check with" in panel.status.text()
    assert "--" not in panel.status.text(), "no command-line advice in the window"
    assert panel.choose_button.isVisible()
    assert not panel.write_button.isVisible()
    assert dialog.write_button.isEnabled(), "the inspector's own plan can still be written"


def test_a_hanging_hermes_never_blocks_the_window_and_closing_stops_it(
    qtbot, window, demo, demo_home, settings, tmp_path
):
    fake = write_fake_hermes(tmp_path / "hermes", "hangs")
    _, dialog = _preview_restore(qtbot, window, demo, demo_home, settings, fake)
    panel = dialog.crosscheck
    assert panel.status.text() == "Checking with your hermes-webui…"
    hung = fake / "api" / "hung.pid"
    qtbot.waitUntil(hung.exists, timeout=CHECK_TIMEOUT_MS)  # hermes hangs now
    # ...and meanwhile the window's event loop keeps turning: a 20 ms timer fires again and again
    # (how long the GUI thread may stall is a speed figure: bench/'s gui_stall, not a unit test's)
    ticks: list[int] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(20)
    qtbot.waitUntil(lambda: len(ticks) >= 5, timeout=60_000)
    timer.stop()
    assert window.runner.is_busy(CHANNEL) and panel.result is None and pid_alive(int(hung.read_text()))
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    assert not window.runner.is_busy(CHANNEL)
    qtbot.waitUntil(lambda: not pid_alive(int(hung.read_text())), timeout=60_000)
    wait_settled(qtbot, window)
