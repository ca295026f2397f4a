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
    qtbot.waitUntil(lambda: window.view.findings.buttons["recover-journal"].isEnabled(), timeout=60_000)
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


def test_a_huge_change_is_summarised_by_message_not_listed_as_every_line(qtbot, tmp_path):
    """Rule: a chat of 20,000 messages rebuilt reads as counts and the first messages, then one line
    saying how many more by kind; next/previous walk the listed ones; Return still never writes.
    (How fast such a dialog opens is a speed figure for bench/, not a unit test's: here the rule is
    the structure, only the first SHOWN_CHANGES messages are laid out.)"""
    from pathlib import Path

    from inspector.gui.preview_dialog import SHOWN_CHANGES, PreviewDialog
    from inspector.plan import FileChange, Plan

    n = 20_000
    after = json.dumps(
        {
            "messages": [
                {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}\n" + "word " * 40}
                for i in range(n)
            ]
        },
        indent=2,
    )
    plan = Plan(
        action="rebuild-from-state-db",
        session_id="abc123def456",
        changes=[FileChange(Path("/nowhere/abc123def456.json"), b'{"messages": []}', after.encode())],
    )
    dialog = PreviewDialog(plan)
    qtbot.addWidget(dialog)
    (view,) = dialog.message_views
    assert dialog.tabs.currentWidget() is view
    text = view.text.toPlainText()
    assert text.startswith(f"abc123def456.json: Messages: {n} added.")
    assert f"… and {n - SHOWN_CHANGES:,} more changed messages ({n - SHOWN_CHANGES:,} added)" in text
    assert (
        "message 0\n" in text
        and f"message {SHOWN_CHANGES - 1}\n" in text
        and f"message {SHOWN_CHANGES}\n" not in text
    )
    assert view.text.document().blockCount() < 10 * SHOWN_CHANGES  # not one block per diff line of the file
    assert len(view.positions) == SHOWN_CHANGES and view.go(-1) == 0
    qtbot.keyClick(dialog, Qt.Key.Key_Return)
    assert dialog.result() == dialog.DialogCode.Rejected
