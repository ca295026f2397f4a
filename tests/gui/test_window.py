"""The window around the session: opening homes, the list, search, watching the disk, settings, export."""

from __future__ import annotations

import argparse
import json
import os
import time

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QGuiApplication, QImage

from inspector.demo import build_demo_home
from inspector.gui.app import NO_GUI_THREADPOOL, no_paint_threads, run_app
from inspector.gui.main_window import MainWindow
from inspector.gui.session_model import SESSION_ID_ROLE
from inspector.home import locate_home
from inspector.jobs.pool import finish
from inspector.jobs.session import load_session_data_offloaded
from inspector.present.columns import Column
from tests.gui.conftest import open_home, wait_settled


def test_without_select_the_first_session_needing_attention_is_shown(qtbot, window, demo, demo_home):
    open_home(qtbot, window, demo_home)
    # The lost-response chat: its journal holds output waiting to be recovered.
    assert window.data.session_id == demo.sessions["lost_response"]


def test_keyboard_moves_through_the_list_and_loads_each_session(qtbot, window, demo_home):
    open_home(qtbot, window, demo_home)
    window.table.setFocus()
    first = window.current_session_id()
    row = window.table.currentIndex().row()
    qtbot.keyClick(window.table, Qt.Key.Key_Down)
    expected = window.model.index(row + 1, 0).data(SESSION_ID_ROLE)
    wait_settled(qtbot, window)
    assert window.current_session_id() == expected != first
    assert window.data.session_id == expected


def test_racing_through_the_list_shows_only_the_last_session(qtbot, window, demo_home):
    """Sessions selected one after another, faster than they load (their results come back in
    steps on the GUI thread): the window ends on the last one, with its own transcript and journal."""
    open_home(qtbot, window, demo_home)
    ids = [window.model.index(r, 0).data(SESSION_ID_ROLE) for r in range(window.model.rowCount())]
    for k, sid in enumerate(ids * 2):
        window.select_session(sid)
        qtbot.wait(k % 4)  # sometimes not even one turn of the event loop, sometimes a few
    last = ids[-1]
    wait_settled(qtbot, window)
    assert window.current_session_id() == last and window.data.session_id == last
    assert not window.runner.stepping() and not window.view.filling()
    assert window.view.data is window.data
    assert all(run in window.data.runs for run in [window.view.journal.current_run()] if run is not None)


def test_a_selected_session_is_read_after_the_list_has_painted(qtbot, window, demo_home, monkeypatch):
    """Selecting a row only moves the selection; the session is read two turns later (after the
    list's repaint and whatever came due meanwhile), and a burst of selections reads only the last."""
    open_home(qtbot, window, demo_home)
    ids = [window.model.index(r, 0).data(SESSION_ID_ROLE) for r in range(window.model.rowCount())]
    others = [sid for sid in ids if sid != window.current_session_id()]
    assert len(others) >= 3
    loads = []
    real_load = window.load_session
    monkeypatch.setattr(window, "load_session", lambda sid: (loads.append(sid), real_load(sid)))
    for sid in others[:3]:
        window.select_session(sid)
    assert loads == [] and not window.is_settled()
    assert window.current_session_id() == others[2]
    wait_settled(qtbot, window)
    assert loads == [others[2]] and window.data.session_id == others[2]


def test_search_finds_sessions_by_message_text(qtbot, window, demo, demo_home):
    open_home(qtbot, window, demo_home)
    qtbot.keyClicks(window.search, "stored XSS")  # only in a message of the work chat, not a title
    qtbot.waitUntil(lambda: window.model.rowCount() == 1, timeout=60_000)
    assert window.model.index(0, 0).data(SESSION_ID_ROLE) == demo.sessions["healthy_work"]
    window.search.clear()
    qtbot.waitUntil(lambda: window.model.rowCount() == len(window.model.rows()), timeout=60_000)


def test_search_finds_a_run_id_and_says_where_it_matched(qtbot, window, demo, demo_home):
    """The search box searches where lost chats live (issue 16): a run id (a journal's file name)
    is in no title or message, yet its session is listed, and the title's tooltip says where."""
    open_home(qtbot, window, demo_home)
    run_id = demo.stream_ids["lost_response"]
    window.search.setText(run_id[:12])
    sid = demo.sessions["lost_response"]
    qtbot.waitUntil(lambda: window.model.rowCount() == 1, timeout=60_000)
    index = window.model.index(0, Column.TITLE)
    assert index.data(SESSION_ID_ROLE) == sid
    assert f"Found in run id: {run_id}" in index.data(Qt.ItemDataRole.ToolTipRole)
    assert window.model.match_note(sid) == f"run id: {run_id}"
    assert "Text found in 1 session(s): run id" in window.statusBar().currentMessage()


def test_search_finds_a_corrupt_sidecars_words_in_state_db(qtbot, window, demo, demo_home):
    open_home(qtbot, window, demo_home)
    sid = demo.sessions["corrupt"]
    window.search.setText("faster session list")  # a message of the chat whose sidecar is unreadable
    qtbot.waitUntil(lambda: window.model.match_note(sid) is not None, timeout=60_000)
    assert "state.db message: " in window.model.match_note(sid)
    assert sid in {window.model.index(r, 0).data(SESSION_ID_ROLE) for r in range(window.model.rowCount())}


def test_needs_attention_and_profile_filters(qtbot, window, demo, demo_home):
    open_home(qtbot, window, demo_home)
    window.attention.setChecked(True)
    ids = {window.model.index(r, 0).data(SESSION_ID_ROLE) for r in range(window.model.rowCount())}
    assert demo.sessions["lost_response"] in ids and demo.sessions["healthy"] not in ids
    window.attention.setChecked(False)
    window.profile.setCurrentIndex(window.profile.findData("work"))
    ids = {window.model.index(r, 0).data(SESSION_ID_ROLE) for r in range(window.model.rowCount())}
    assert ids == {demo.sessions["healthy_work"]}


def test_filters_keep_the_current_session_without_loading_it_again(qtbot, window, demo, demo_home):
    sid = demo.sessions["healthy"]
    open_home(qtbot, window, demo_home, select=sid)
    shown = window.data
    window.search.setText(sid[:6])  # still matches: the row stays current
    assert window.current_session_id() == sid
    window.attention.setChecked(True)  # hides it: no current row, the view keeps the session
    assert window.model.position(sid) is None and window.current_session_id() is None
    assert window.data is shown and window.data.session_id == sid
    window.attention.setChecked(False)  # back: current again
    assert window.current_session_id() == sid
    window.search.clear()
    assert window.current_session_id() == sid and window.model.rowCount() == len(window.model.rows())
    wait_settled(qtbot, window)
    assert window.data is shown  # never reloaded


def test_a_filter_that_hides_the_shown_session_says_so(qtbot, window, demo, demo_home):
    """Issue 16: when a filter hides the session the view shows, a notice names it and the
    filter, and "Clear filters" lists it again (current, not reloaded)."""
    sid = demo.sessions["healthy"]
    open_home(qtbot, window, demo_home, select=sid)
    shown = window.data
    assert window.hidden_notice.isHidden()
    window.attention.setChecked(True)
    assert not window.hidden_notice.isHidden()
    title = window.model.row_for(sid).title
    assert window.hidden_label.text() == (
        f"The chat shown on the right, “{title}”, is not in this list: Needs attention hides it."
    )
    window.search.setText("zzz no such words")
    assert "the search and Needs attention hide it." in window.hidden_label.text()
    window.show_all_button.click()
    assert window.hidden_notice.isHidden()
    assert window.current_session_id() == sid and window.model.rowCount() == len(window.model.rows())
    wait_settled(qtbot, window)
    assert window.data is shown


def test_raw_tab_fills_its_state_db_tables_when_shown(qtbot, window, demo, demo_home):
    sid = demo.sessions["healthy"]
    open_home(qtbot, window, demo_home, select=sid)
    raw = window.view.raw
    window.view.tabs.setCurrentWidget(raw)
    qtbot.waitUntil(lambda: raw.messages_model.rowCount() > 0, timeout=60_000)
    (view,) = [v for v in window.data.detail.state_db if not v.error]
    assert raw.messages_model.rowCount() == len(view.messages)
    assert raw.db_label.text() == f"sessions row and {len(view.messages)} messages rows"
    other = demo.sessions["healthy_work"]
    window.select_session(other)  # the tab stays shown: the next session's rows come at once
    wait_settled(qtbot, window)
    (view,) = [v for v in window.data.detail.state_db if not v.error]
    assert window.data.session_id == other and raw.messages_model.rowCount() == len(view.messages)


def test_a_session_is_shown_over_a_few_turns_and_the_window_waits_for_it(qtbot, window, demo, demo_home):
    first, second = demo.sessions["lost_response"], demo.sessions["stale_pending"]
    open_home(qtbot, window, demo_home, select=first)
    assert not window.view.filling()
    run = window.view.journal.current_run()
    assert run is not None and run.raw is not None and window.view.journal.model.rowCount() == len(run.raw)
    assert window.view.journal.current_run() in window.data.runs
    data = finish(load_session_data_offloaded(demo_home, second))
    window.view.set_data(data)
    # the header at once; the transcript's messages and then the journal in later turns
    assert window.view.header.title.text() and window.view.filling()
    assert window.view.journal.current_run() not in data.runs
    qtbot.waitUntil(lambda: not window.view.filling(), timeout=60_000)
    assert "\n" in window.view.transcript.browser.toPlainText()
    assert window.view.journal.current_run() in data.runs
    window.select_session(second)
    wait_settled(qtbot, window)  # settled only once the journal is in
    assert window.data.session_id == second and not window.view.filling()
    assert window.view.journal.current_run() in window.data.runs


def test_copy_session_id_and_path(qtbot, window, demo, demo_home):
    sid = demo.sessions["healthy"]
    open_home(qtbot, window, demo_home, select=sid)
    window.copy_session_id()
    assert QGuiApplication.clipboard().text() == sid
    window.copy_sidecar_path()
    assert QGuiApplication.clipboard().text() == str(demo.session_dir / f"{sid}.json")


def test_the_list_follows_files_changing_on_disk(qtbot, window, demo, demo_home):
    open_home(qtbot, window, demo_home)
    count = window.model.rowCount()
    src = demo.session_dir / f"{demo.sessions['healthy']}.json"
    data = json.loads(src.read_text(encoding="utf-8"))
    data["session_id"] = "appeared0001"
    data["title"] = "A chat that just appeared"
    tmp = demo.session_dir / ".appeared.tmp"
    tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
    tmp.replace(demo.session_dir / "appeared0001.json")  # atomic replace, as hermes writes
    qtbot.waitUntil(lambda: window.model.rowCount() == count + 1, timeout=60_000)
    (demo.session_dir / "appeared0001.json").unlink()
    qtbot.waitUntil(lambda: window.model.rowCount() == count, timeout=60_000)


def test_the_shown_session_reloads_when_its_journal_grows(qtbot, window, demo, demo_home):
    sid = demo.sessions["lost_response"]
    open_home(qtbot, window, demo_home, select=sid)
    journal = window.view.journal
    rows = journal.model.rowCount()
    path = journal.current_run().info.path
    with open(path, "ab") as fh:  # hermes appends in place
        fh.write(b'{"version":1,"seq":99,"event":"metering","type":"metering","payload":{}}\n')
    qtbot.waitUntil(lambda: journal.model.rowCount() == rows + 1, timeout=60_000)


def test_a_chat_the_agent_is_writing_in_state_db_updates_without_f5(
    qtbot, window, demo, demo_home, monkeypatch
):
    """Issue 16: state.db (and its -wal) is watched like the sessions folder; the window's own
    read-only reads of it do not set the watch off."""
    import sqlite3

    sid = demo.sessions["state_only"]
    open_home(qtbot, window, demo_home, select=sid)
    refreshes = []
    real_refresh = window.refresh
    monkeypatch.setattr(window, "refresh", lambda: (refreshes.append(1), real_refresh()))
    window.debounce.timeout.disconnect()
    window.debounce.timeout.connect(window.refresh)
    qtbot.wait(1500)
    assert refreshes == []  # reading the database is not a change
    before = window.model.row_for(sid).state_db_messages
    with sqlite3.connect(demo.home / "state.db") as conn:  # the agent writes one more message in place
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', 'one more', ?)",
            (sid, time.time()),
        )
    qtbot.waitUntil(lambda: window.model.row_for(sid).state_db_messages == before + 1, timeout=60_000)
    assert refreshes


def test_layout_and_recent_homes_are_remembered(qtbot, tmp_path, demo_home):
    path = str(tmp_path / "remember.ini")
    first = MainWindow(settings=QSettings(path, QSettings.Format.IniFormat))
    qtbot.addWidget(first)
    first.resize(760, 560)  # fits the offscreen test screen, so restoring does not clamp it
    first.show()
    first.open_home(demo_home)
    wait_settled(qtbot, first)
    first.split.setSizes([300, 460])
    first.view.split.setSizes([100, 300])
    states = {key: s.saveState() for key, s in first._splitters().items()}
    geometry = first.geometry()
    first.close()
    second = MainWindow(settings=QSettings(path, QSettings.Format.IniFormat))
    qtbot.addWidget(second)
    assert {key: s.saveState() for key, s in second._splitters().items()} == states
    assert second.geometry().size() == geometry.size()
    assert second.recent_homes()[0]["home"] == str(demo_home.base)


def test_a_home_opened_and_closed_in_one_turn_is_still_remembered(qtbot, tmp_path, demo_home):
    """The home is remembered in a turn after the one that opened it (the settings file is written
    there, not in the opening's stall); a window closed before that turn still remembers it."""
    path = str(tmp_path / "remember.ini")
    first = MainWindow(settings=QSettings(path, QSettings.Format.IniFormat))
    qtbot.addWidget(first)
    first.open_home(demo_home)
    first.close()
    second = MainWindow(settings=QSettings(path, QSettings.Format.IniFormat))
    qtbot.addWidget(second)
    assert [h["home"] for h in second.recent_homes()] == [str(demo_home.base)]


def test_the_opened_homes_folders_are_watched_after_the_opening_turn(qtbot, window, demo_home, tmp_path):
    """The sessions folder's watch is added after the opening turn (in the kernel it walks every
    cached entry of the folder); a home opened and left in the same turn is never watched."""
    other = locate_home(build_demo_home(tmp_path / "other", now=time.time()).home, None, None)
    window.open_home(other, remember=False)
    window.open_home(demo_home, remember=False)
    sessions = str(demo_home.session_dir)
    qtbot.waitUntil(lambda: sessions in window.watcher.directories(), timeout=10_000)
    assert str(other.session_dir) not in window.watcher.directories()
    wait_settled(qtbot, window)
    assert str(other.session_dir) not in window.watcher.directories()


def test_export_markdown_and_json(qtbot, window, demo, demo_home, tmp_path):
    sid = demo.sessions["lost_response"]
    open_home(qtbot, window, demo_home, select=sid)
    md, js = tmp_path / "t.md", tmp_path / "t.json"
    window.export_transcript(md, "md")
    qtbot.waitUntil(md.exists, timeout=60_000)
    window.export_transcript(js, "json")
    qtbot.waitUntil(js.exists, timeout=60_000)
    wait_settled(qtbot, window)
    assert f"# Session {sid}" in md.read_text(encoding="utf-8")
    assert json.loads(js.read_text(encoding="utf-8"))["session_id"] == sid


def test_the_window_paints_on_its_own_thread_unless_the_user_says_otherwise(monkeypatch):
    """Qt's pool of paint threads waits for busy cores (see ``app.no_paint_threads``); it is
    switched off before the QApplication exists, and a user's own setting is left alone."""
    monkeypatch.delenv(NO_GUI_THREADPOOL, raising=False)
    no_paint_threads()
    assert NO_GUI_THREADPOOL == "QT_NO_GUI_THREADPOOL"
    assert os.environ[NO_GUI_THREADPOOL] == "1"
    monkeypatch.setenv(NO_GUI_THREADPOOL, "0")
    no_paint_threads()
    assert os.environ[NO_GUI_THREADPOOL] == "0"


def test_screenshot_option_saves_a_picture_of_the_loaded_window(qtbot, tmp_path, demo):
    shot = tmp_path / "shot.png"
    args = argparse.Namespace(
        home=str(demo.home),
        state_dir=None,
        state_db=None,
        demo=False,
        screenshot=str(shot),
        select=demo.sessions["stale_pending"],
    )
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    assert run_app(args, settings=settings) == 0
    image = QImage(str(shot))
    assert (image.width(), image.height()) == (1500, 900)


def test_demo_screenshot_option_builds_a_demo_home(qtbot, tmp_path):
    shot = tmp_path / "demo.png"
    args = argparse.Namespace(
        home=None, state_dir=None, state_db=None, demo=True, screenshot=str(shot), select=None
    )
    assert run_app(args) == 0  # (how fast the window is up is bench/'s first_rows, not a unit test's)
    assert QImage(str(shot)).width() == 1500


def test_open_recent_home_reopens_it(qtbot, window, demo_home):
    window._remember_home(demo_home)
    window._fill_recent()
    actions = [a for a in window.recent_menu.actions() if a.isEnabled()]
    assert actions and actions[0].text() == str(demo_home.base)
    actions[0].trigger()
    wait_settled(qtbot, window)
    assert window.home == locate_home(demo_home.base)
    assert window.model.rowCount() > 0


def test_switching_to_a_dark_palette_redraws_with_dark_colours(qtbot, window, demo, demo_home):
    from PySide6.QtGui import QColor, QPalette
    from PySide6.QtWidgets import QApplication

    from inspector.gui.resources import colours, is_dark

    open_home(qtbot, window, demo_home, select=demo.sessions["lost_response"])
    app = QApplication.instance()
    original = app.palette()
    dark = QPalette(original)
    dark.setColor(QPalette.ColorRole.Window, QColor("#202124"))
    dark.setColor(QPalette.ColorRole.Base, QColor("#17181a"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#e8eaed"))
    try:
        app.setPalette(dark)
        qtbot.waitUntil(is_dark, timeout=60_000)
        assert colours().badge_error.lightness() < 128  # dark badges on a dark page
        assert "Response interrupted" in window.view.transcript.plain_text()
    finally:
        app.setPalette(original)
    assert not is_dark()


def test_first_rows_show_before_the_health_check_ends_and_keep_the_selection(
    qtbot, window, demo_home, monkeypatch
):
    import threading

    from inspector.gui import load_controller
    from inspector.jobs.offload import load_catalogue_offloaded

    gate = threading.Event()

    def slow(home, now, check, order=None):
        assert gate.wait(30)
        return load_catalogue_offloaded(home, now, check, order)

    monkeypatch.setattr(load_controller, "load_catalogue_offloaded", slow)
    window.open_home(demo_home, remember=False)
    qtbot.waitUntil(lambda: window.model.rowCount() > 0, timeout=60_000)
    assert window.catalogue is None and window.model.checking
    assert "checking health" in window.home_label.text()
    quick = window.model.rowCount()
    window.select_session(window.model.index(1, 0).data(SESSION_ID_ROLE))
    picked = window.current_session_id()
    gate.set()
    qtbot.waitUntil(lambda: window.catalogue is not None, timeout=60_000)
    wait_settled(qtbot, window)
    assert not window.model.checking and window.model.rowCount() >= quick
    assert window.current_session_id() == picked  # the health check did not move the selection


def test_a_failing_health_check_is_reported_not_hung(qtbot, window, demo_home, monkeypatch):
    from inspector.gui import load_controller

    def broken(home, now, check, order=None):
        raise RuntimeError("the scan broke")

    monkeypatch.setattr(load_controller, "load_catalogue_offloaded", broken)
    window.open_home(demo_home, remember=False)
    qtbot.waitUntil(lambda: window.is_settled(), timeout=60_000)
    assert "the scan broke" in window.home_label.text()


def test_a_home_hermes_own_audit_fails_on_says_so_above_the_list(qtbot, window, demo):
    """A sidecar nested too deeply for json.loads makes hermes' recovery audit fail (HTTP 500): the
    window says so above the list, as ``audit`` does, and lists the file as damaged on its row."""
    deep = b'{"session_id": "deep", "x": ' + b"[" * 995 + b"]" * 995 + b"}"
    (demo.home / "webui" / "sessions" / "deep.json").write_bytes(deep)
    open_home(qtbot, window, locate_home(demo.home, None, None))
    lines = window.home_label.text().split("\n")
    assert lines[1].startswith(
        "error: hermes' recovery audit would fail (HTTP 500) on a sidecar nested too deeply to parse: deep.json."
    )
    assert window.model.row_for("deep") is not None


def test_an_unreadable_state_db_is_a_banner_that_says_what_is_missing(qtbot, window, demo):
    """Issue 16: a state.db that cannot be read is a banner naming the file, the reason and what
    the window cannot show or do because of it; another home hides it."""
    (demo.home / "state.db").write_bytes(b"this is not a database" * 100)
    for side in ("-wal", "-shm"):
        (demo.home / f"state.db{side}").unlink(missing_ok=True)
    open_home(qtbot, window, locate_home(demo.home, None, None))
    banner = window.state_db_banner
    assert not banner.isHidden()
    text = banner.text()
    assert text.startswith(f"The agent's database {demo.home / 'state.db'} cannot be read: ")
    assert "chats that live only in the agent's database are not listed" in text
    assert text.splitlines()[0].endswith(
        "cannot be read: it is not an SQLite database (it looks encrypted or is not a state.db at all)"
    )
    assert "state.db" not in window.home_label.text().split("\n", 1)[-1]  # said once, in the banner
    window.open_home(
        locate_home(build_demo_home(demo.home.parent / "other", now=time.time()).home, None, None),
        remember=False,
    )
    wait_settled(qtbot, window)
    assert banner.isHidden()
