"""The Compare copies tab: the sidecar beside its state.db rows or its .bak, message by message;
a button without a copy to compare with says why inline; a .bak is also a transcript source."""

from __future__ import annotations

from inspector.gui.compare_view import AlignmentModel, Column, CompareView, kind_colour
from inspector.gui.transcript_view import BAK
from inspector.present.session_data import SessionData
from inspector.session_detail import SessionDetail, StateDbView
from inspector.transcript_align import DIFFERS, ONLY_LEFT, ONLY_RIGHT, SAME
from tests.gui.conftest import open_home


def _open_compare(qtbot, window, demo_home, sid: str) -> CompareView:
    open_home(qtbot, window, demo_home, select=sid)
    qtbot.waitUntil(lambda: window.data is not None and window.data.session_id == sid, timeout=60_000)
    compare = window.view.compare
    window.view.tabs.setCurrentWidget(compare)
    return compare


def test_a_healthy_chat_holds_the_same_messages_in_the_sidecar_and_state_db(qtbot, window, demo, demo_home):
    compare = _open_compare(qtbot, window, demo_home, demo.sessions["healthy"])
    qtbot.waitUntil(lambda: compare.alignment() is not None, timeout=60_000)
    assert compare.choice() == "state_db" and compare.with_state_db.isEnabled()
    alignment = compare.alignment()
    assert alignment.rows and {r.kind for r in alignment.rows} == {SAME}
    assert compare.summary.text().startswith("The sidecar and the state.db [default] hold the same")
    assert not compare.next.isEnabled()  # no difference to go to


def test_without_state_db_messages_or_a_bak_the_buttons_are_disabled_and_say_why(
    qtbot, window, demo, demo_home
):
    compare = _open_compare(qtbot, window, demo_home, demo.sessions["empty_orphan_row"])
    assert not compare.with_state_db.isEnabled() and not compare.with_bak.isEnabled()
    assert compare.state_db_reason.isVisible() and compare.bak_reason.isVisible()
    assert compare.state_db_reason.text() == "(state.db has this session but no message of it)"
    assert compare.bak_reason.text() == "(this session has no .bak file)"
    assert compare.summary.text() == "Nothing to compare the sidecar with."


def test_the_bak_compared_with_the_live_sidecar_and_moving_between_differences(
    qtbot, window, demo, demo_home
):
    compare = _open_compare(qtbot, window, demo_home, demo.sessions["shrunken"])
    assert compare.with_bak.isEnabled() and not compare.bak_reason.isVisible()
    compare.with_bak.click()
    # the .bak is the copy compared with: the live sidecar lost 4 of its 6 messages
    qtbot.waitUntil(
        lambda: compare.alignment() is not None and compare.alignment().right.name == "backup (.bak)",
        timeout=60_000,
    )
    assert compare.choice() == "bak"
    counts = compare.alignment().counts()
    assert counts[ONLY_RIGHT] == 4 and counts[SAME] == 2
    assert compare.summary.text() == "Messages: 4 only in the backup (.bak), 2 the same."
    # next / previous difference walk the rows that are not the same
    first = compare.current_position()
    assert compare.alignment().rows[first].kind == ONLY_RIGHT
    assert compare.go_to_change(+1) and compare.current_position() > first
    assert compare.go_to_change(-1) and compare.current_position() == first
    assert "Not in the sidecar." in compare.left_text.toPlainText()


def test_only_differences_hides_the_messages_both_copies_hold_alike(qtbot, window, demo, demo_home):
    compare = _open_compare(qtbot, window, demo_home, demo.sessions["shrunken"])
    qtbot.waitUntil(lambda: compare.alignment() is not None, timeout=60_000)  # state.db has the 6
    compare.only_changes.setChecked(True)
    assert compare.model.rowCount() == 4
    assert all(compare.model.row(r).kind == ONLY_RIGHT for r in range(4))
    compare.only_changes.setChecked(False)
    assert compare.model.rowCount() == 6


def test_a_corrupt_bak_says_so_in_words_in_the_compare_tab_and_the_transcript(qtbot, window, demo, demo_home):
    sid = demo.sessions["shrunken"]
    bak = demo_home.session_dir / f"{sid}.json.bak"
    bak.write_bytes(b'{"messages": [{"role": "user", "content": "cut he')
    compare = _open_compare(qtbot, window, demo_home, sid)
    compare.with_bak.click()
    qtbot.waitUntil(
        lambda: compare.alignment() is not None and compare.alignment().right.name == "backup (.bak)",
        timeout=60_000,
    )
    assert compare.summary.text().startswith("The backup (.bak) cannot be read as a chat: not valid JSON")
    assert compare.summary.text().endswith("The sidecar has 2 messages.")
    assert {compare.model.row(r).kind for r in range(compare.model.rowCount())} == {ONLY_LEFT}
    transcript = window.view.transcript
    transcript.source.setCurrentIndex(transcript.source.findData(BAK))
    assert "unreadable" in transcript.source.currentText()
    qtbot.waitUntil(lambda: "cannot be read as a chat" in transcript.plain_text(), timeout=60_000)


def test_a_readable_bak_shows_as_a_read_only_transcript(qtbot, window, demo, demo_home):
    open_home(qtbot, window, demo_home, select=demo.sessions["shrunken"])
    transcript = window.view.transcript
    qtbot.waitUntil(lambda: transcript.source.findData(BAK) >= 0, timeout=60_000)
    transcript.source.setCurrentIndex(transcript.source.findData(BAK))
    assert transcript.source.currentText() == "Backup .bak (6 messages, read-only)"
    bak_text = [m["content"] for m in window.data.detail.bak["messages"]]
    qtbot.waitUntil(lambda: bak_text[-1][:30] in transcript.plain_text(), timeout=60_000)


def _detail(sidecar: list, rows: list) -> SessionDetail:
    return SessionDetail(
        "s1",
        sidecar={"messages": sidecar},
        state_db=[StateDbView("default", __import__("pathlib").Path("state.db"), {"id": "s1"}, rows)],
    )


def test_rows_are_coloured_by_kind_and_say_it_in_words(qtbot) -> None:
    view = CompareView()
    qtbot.addWidget(view)
    view.show()
    user = {"role": "user", "content": "hello"}
    with qtbot.waitSignal(view.compared, timeout=60_000):
        view.set_data(
            SessionData(
                _detail(
                    [user, {"role": "assistant", "content": "hi"}],
                    [user, {"role": "assistant", "content": "hi there"}, {"role": "user", "content": "more"}],
                ),
                [],
            )
        )
    model: AlignmentModel = view.model
    kinds = [model.row(r).kind for r in range(model.rowCount())]
    assert kinds == [SAME, DIFFERS, ONLY_RIGHT]
    assert model.index(1, Column.KIND).data() == "differs: text"
    assert model.index(2, Column.KIND).data() == "only in state.db [default]"
    assert model.index(2, Column.LEFT).data() == "—"
    assert (
        model.index(0, Column.LEFT).data(__import__("PySide6.QtCore").QtCore.Qt.ItemDataRole.BackgroundRole)
        is None
    )
    assert kind_colour(ONLY_LEFT) is not None and kind_colour(SAME) is None
    assert view.current_position() == 1  # the first difference is selected
