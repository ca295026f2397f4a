"""After a repair with "Needs attention" on, the repaired session stays in the list, its Problem
cell marked fixed, until the user selects another session; then the filter applies to it again."""

from __future__ import annotations

from PySide6.QtCore import Qt

from inspector.gui.session_model import FIXED_WORDS, SESSION_ID_ROLE, Column
from tests.gui.conftest import open_home, wait_settled


def _problem(window, sid: str) -> str | None:
    pos = window.model.position(sid)
    return None if pos is None else window.model.index(pos, Column.PROBLEM).data()


def test_a_repaired_session_stays_shown_marked_fixed_until_the_user_moves(qtbot, window, demo, demo_home):
    sid = demo.sessions["lost_response"]
    open_home(qtbot, window, demo_home, select=sid)
    window.attention.setChecked(True)
    assert window.model.position(sid) is not None and window.current_session_id() == sid
    qtbot.waitUntil(lambda: window.view.findings.buttons["recover-journal"].isEnabled(), timeout=60_000)
    qtbot.mouseClick(window.view.findings.buttons["recover-journal"], Qt.MouseButton.LeftButton)
    qtbot.mouseClick(window.preview.write_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.last_write is not None, timeout=60_000)
    wait_settled(qtbot, window)
    qtbot.waitUntil(lambda: not window.model.row_for(sid).needs_attention, timeout=60_000)
    # the filter would hide it now; it stays, selected, and says it is fixed
    assert window.attention.isChecked()
    assert window.model.position(sid) is not None and window.current_session_id() == sid
    assert _problem(window, sid).startswith(FIXED_WORDS)
    others = [window.model.index(r, 0).data(SESSION_ID_ROLE) for r in range(window.model.rowCount())]
    assert all(window.model.row_for(o).needs_attention for o in others if o != sid)
    # selecting another session: the filter applies to the repaired one again
    other = next(o for o in others if o != sid)
    assert window.select_session(other)
    qtbot.waitUntil(lambda: window.model.position(sid) is None, timeout=60_000)
    assert window.current_session_id() == other and window.model.kept_fixed() is None


def test_without_the_filter_the_fixed_mark_shows_until_the_user_moves(qtbot, window, demo, demo_home):
    sid = demo.sessions["lost_response"]
    open_home(qtbot, window, demo_home, select=sid)
    qtbot.waitUntil(lambda: window.view.findings.buttons["recover-journal"].isEnabled(), timeout=60_000)
    qtbot.mouseClick(window.view.findings.buttons["recover-journal"], Qt.MouseButton.LeftButton)
    qtbot.mouseClick(window.preview.write_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.last_write is not None, timeout=60_000)
    wait_settled(qtbot, window)
    qtbot.waitUntil(lambda: not window.model.row_for(sid).needs_attention, timeout=60_000)
    assert _problem(window, sid).startswith(FIXED_WORDS)
    assert window.select_session(demo.sessions["healthy"])
    qtbot.waitUntil(lambda: not (_problem(window, sid) or "").startswith(FIXED_WORDS), timeout=60_000)
