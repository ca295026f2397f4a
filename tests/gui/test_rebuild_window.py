"""The demo's "Release notes" chat (torn sidecar, messages still in state.db) is no dead end:
the window offers Rebuild from state.db, previews it as an inspector step, writes and undoes it."""

from __future__ import annotations

from PySide6.QtCore import Qt

from inspector.present.session_data import ACTIONS
from inspector.repair.rebuild_from_state import NAME
from tests.gui.conftest import files_under, open_home, wait_settled


def test_the_torn_chat_is_rebuilt_from_state_db_and_undone(qtbot, window, demo, demo_home):
    sid = demo.sessions["corrupt"]
    open_home(qtbot, window, demo_home, select=sid)
    button = window.view.findings.buttons[NAME]
    qtbot.waitUntil(button.isEnabled, timeout=60_000)
    (words,) = [w for w in window.view.findings.words if "damaged" in w.what]
    assert words.can_act and f"press “{ACTIONS[NAME]}”" in words.sentence()
    before = files_under(demo.home)
    window.repair_actions[NAME].trigger()
    dialog = window.preview
    qtbot.waitUntil(dialog.isVisible, timeout=60_000)
    assert "inspector step, not a hermes-webui repair" in dialog.summary.text()
    qtbot.mouseClick(dialog.write_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.last_write is not None, timeout=60_000)
    wait_settled(qtbot, window)
    qtbot.waitUntil(
        lambda: window.data is not None and window.data.detail.sidecar_error is None, timeout=60_000
    )
    assert [m["role"] for m in window.data.detail.messages] == ["user", "assistant", "user", "assistant"]
    row = window.model.row_for(sid)
    assert row.health != "error", [(f.kind, f.message) for f in row.findings]
    assert window.undo_last() is True  # the shown session's own write: no question
    qtbot.waitUntil(lambda: window.last_write is None, timeout=60_000)
    wait_settled(qtbot, window)
    assert files_under(demo.home) == before


def test_with_a_readable_bak_the_window_offers_restore_from_backup_first(qtbot, window, demo, demo_home):
    """Rule: a torn sidecar with a .bak hermes can load: the line names Restore from backup (hermes'
    own repair) and its key, that button is the enabled one, and the preview restores the backup."""
    import json

    sid = demo.sessions["corrupt"]
    (demo.session_dir / f"{sid}.json.bak").write_text(
        json.dumps(
            {
                "session_id": sid,
                "title": "Release notes for v0.52",
                "messages": [{"role": "user", "content": "hi"}],
            }
        )
    )
    open_home(qtbot, window, demo_home, select=sid)
    restore = window.view.findings.buttons["restore-backup"]
    qtbot.waitUntil(restore.isEnabled, timeout=60_000)
    qtbot.waitUntil(lambda: window.plans is not None and not window.runner.is_busy("plans"), timeout=60_000)
    (words,) = [w for w in window.view.findings.words if "damaged" in w.what]
    assert words.can_act and f"press “{ACTIONS['restore-backup']}”" in words.sentence()
    assert not window.view.findings.buttons[NAME].isEnabled()
    window.repair_actions["restore-backup"].trigger()
    dialog = window.preview
    qtbot.waitUntil(dialog.isVisible, timeout=60_000)
    (view,) = dialog.message_views
    assert "hi" in view.text.toPlainText()
    dialog.reject()
    wait_settled(qtbot, window)
