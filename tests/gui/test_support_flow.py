"""The whole support flow, driven like a user would on a demo home.

Select the lost-response chat, see its journal events, press Recover journal output, read
the diff, press Write: the file on disk becomes exactly the plan's bytes, the transcript
shows the recovered rows (linked to their journal events), and Undo puts the file back.
"""

from __future__ import annotations

from PySide6.QtCore import Qt

from inspector.gui.journal_view import EventColumn
from inspector.plan import WriteLog
from tests.gui.conftest import files_under, kept_plan, open_home, wait_settled


def test_recover_journal_output_end_to_end(qtbot, window, demo, demo_home):
    sid = demo.sessions["lost_response"]
    open_home(qtbot, window, demo_home, select=sid)
    sidecar = demo.session_dir / f"{sid}.json"
    before_all = files_under(demo.home)

    # The journal's events are listed beside the transcript.
    journal = window.view.journal
    assert journal.current_run().run_id == demo.stream_ids["lost_response"]
    events = [journal.model.index(r, EventColumn.EVENT).data() for r in range(journal.model.rowCount())]
    assert events[:3] == ["reasoning", "token", "tool"] and "tool_complete" in events
    assert "Let me look at the open PRs first." in journal.model.index(1, EventColumn.PAYLOAD).data()

    # Only the repair that applies is enabled.
    buttons = window.view.findings.buttons
    assert buttons["recover-journal"].isEnabled()
    assert not buttons["restore-backup"].isEnabled()
    assert not buttons["materialize"].isEnabled()

    # The preview shows the plan's diff.
    qtbot.mouseClick(buttons["recover-journal"], Qt.MouseButton.LeftButton)
    dialog = window.preview
    assert dialog is not None and dialog.isVisible()
    plan = kept_plan(dialog.plan)
    assert [c.path for c in plan.changes] == [sidecar]
    diff = dialog.diff_text()
    assert '+      "content": "Let me look at the open PRs first.",' in diff
    assert '-      "_pending_journal_recovery": true,' in diff
    assert dialog.write_button.isEnabled()

    # Write: the file on disk changes exactly as the plan said, nothing else does.
    qtbot.mouseClick(dialog.write_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.last_write is not None, timeout=60_000)
    wait_settled(qtbot, window)
    assert sidecar.read_bytes() == plan.changes[0].after
    after_all = files_under(demo.home)
    changed = {k for k in before_all.keys() | after_all.keys() if before_all.get(k) != after_all.get(k)}
    assert changed == {str(sidecar.relative_to(demo.home))}
    assert WriteLog.default().find(window.last_write) is not None

    # The view refreshed: the recovered rows are in the transcript, with their badge.
    qtbot.waitUntil(
        lambda: "Let me look at the open PRs first." in window.view.transcript.plain_text(), timeout=60_000
    )
    text = window.view.transcript.plain_text()
    assert "from run journal" in text
    assert "Two open PRs touch `api/models.py`" in text
    assert "The partial output above was recovered from the run journal" in text
    assert not window.view.findings.buttons["recover-journal"].isEnabled()

    # A recovered row highlights the events it came from, and an event shows its row.
    messages = window.data.detail.messages
    first = next(
        i for i, m in enumerate(messages) if m.get("content") == "Let me look at the open PRs first."
    )
    window.view.transcript.select_message(first)
    highlighted = sorted(journal.model.highlighted())
    assert [journal.model.index(r, EventColumn.EVENT).data() for r in highlighted] == [
        "reasoning",
        "token",
        "tool",
        "tool_complete",
    ]
    last_token = max(
        r
        for r in range(journal.model.rowCount())
        if journal.model.index(r, EventColumn.EVENT).data() == "token"
    )
    journal.select_row(last_token)
    assert window.view.transcript.highlighted_messages() == {first + 1}
    assert f"became transcript row #{first + 1}" in journal.detail.toPlainText()

    # Undo restores the file.
    assert window.undo_button.isVisible()
    qtbot.mouseClick(window.undo_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.last_write is None, timeout=60_000)
    wait_settled(qtbot, window)
    assert sidecar.read_bytes() == plan.changes[0].before
    assert files_under(demo.home) == before_all
    qtbot.waitUntil(lambda: window.view.findings.buttons["recover-journal"].isEnabled(), timeout=60_000)


def test_cancel_in_the_preview_writes_nothing(qtbot, window, demo, demo_home):
    sid = demo.sessions["lost_response"]
    open_home(qtbot, window, demo_home, select=sid)
    before = files_under(demo.home)
    qtbot.mouseClick(window.view.findings.buttons["recover-journal"], Qt.MouseButton.LeftButton)
    dialog = window.preview
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    wait_settled(qtbot, window)
    assert window.last_write is None
    assert files_under(demo.home) == before


def test_a_file_changed_after_the_preview_is_not_overwritten(qtbot, window, demo, demo_home):
    sid = demo.sessions["lost_response"]
    open_home(qtbot, window, demo_home, select=sid)
    qtbot.mouseClick(window.view.findings.buttons["recover-journal"], Qt.MouseButton.LeftButton)
    sidecar = demo.session_dir / f"{sid}.json"
    sidecar.write_bytes(sidecar.read_bytes() + b" ")  # someone else wrote meanwhile
    edited = sidecar.read_bytes()
    qtbot.mouseClick(window.preview.write_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Nothing was written" in window.statusBar().currentMessage(), timeout=60_000)
    wait_settled(qtbot, window)
    assert sidecar.read_bytes() == edited
    assert window.last_write is None


def test_history_lists_the_write_and_can_undo_it(qtbot, window, demo, demo_home):
    sid = demo.sessions["shrunken"]
    open_home(qtbot, window, demo_home, select=sid)
    button = window.view.findings.buttons["restore-backup"]
    assert button.isEnabled()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    plan = kept_plan(window.preview.plan)
    qtbot.mouseClick(window.preview.write_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.last_write is not None, timeout=60_000)
    wait_settled(qtbot, window)
    write_id = window.last_write
    dialog = window.show_history()
    assert dialog.model.rowCount() == 1
    assert dialog.model.index(0, 1).data() == write_id
    assert write_id in dialog.detail.toPlainText()
    # issue 16: the session's title and home, the diff the write made, no command-line advice
    assert dialog.model.index(0, 2).data() == window.model.row_for(sid).title
    assert dialog.model.index(0, 5).data() == str(demo.home)
    qtbot.waitUntil(lambda: dialog.diff_shown == write_id, timeout=60_000)  # worked out in a child
    assert "What this write changed:" in dialog.detail.toPlainText()
    assert "hermes-inspector" not in dialog.detail.toPlainText()
    qtbot.mouseClick(dialog.undo_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.last_write is None, timeout=60_000)
    wait_settled(qtbot, window)
    for change in plan.changes:
        assert (change.path.read_bytes() if change.path.exists() else None) == change.before
    # the write is shown undone now, and cannot be undone twice
    dialog = window.show_history()
    row = next(r for r in range(dialog.model.rowCount()) if dialog.model.index(r, 1).data() == write_id)
    assert dialog.model.index(row, 4).data() == "undone"
    dialog.table.selectRow(row)
    assert not dialog.undo_button.isEnabled() and "Already undone" in dialog.undo_button.toolTip()
    assert "undone by write" in dialog.detail.toPlainText()
    dialog.reject()
