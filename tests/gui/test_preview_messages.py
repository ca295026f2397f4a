"""The preview's message-level view (issue 16): beside the raw diff, the chat's change as messages
added, changed or removed, wrapped, with previous/next change."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt

from inspector.message_diff import ADDED, CHANGED
from tests.gui.conftest import kept_plan, open_home


def test_the_recovery_preview_lists_the_recovered_answer_as_added_messages(qtbot, window, demo, demo_home):
    sid = demo.sessions["lost_response"]
    open_home(qtbot, window, demo_home, select=sid)
    qtbot.waitUntil(lambda: window.view.findings.buttons["recover-journal"].isEnabled(), timeout=20_000)
    dialog = window.preview_action("recover-journal")
    (view,) = dialog.message_views
    assert dialog.tabs.currentWidget() is view  # the first tab: people read messages, not JSON
    change = kept_plan(dialog.plan).changes[0]
    after = json.loads(change.after)["messages"]
    added = [c for c in view.diff.changes if c.kind == ADDED]
    assert [c.after for c in added] == [m["content"] for m in after if m.get("_recovered_from_run_journal")]
    assert [c.kind for c in view.diff.changes].count(CHANGED) == 1  # the marker, re-worded
    text = view.text.toPlainText()
    assert "Two open PRs touch" in text and "+ added · assistant" in text
    assert view.text.lineWrapMode() == view.text.LineWrapMode.WidgetWidth
    assert view.go(1) == 0 and view.go(1) == 1 and view.go(-1) == 0
    assert not view.next_button.autoDefault()
    qtbot.keyClick(dialog, Qt.Key.Key_Return)  # still never writes
    assert window.last_write is None
