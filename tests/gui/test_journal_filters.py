"""The journal view's filters: by event type, "dropped or odd lines only", both, with "Go to seq",
the find bar and the transcript links speaking of the lines the filter shows."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from PySide6.QtWidgets import QApplication

from inspector.gui.find_bar import FindBar
from inspector.gui.journal_view import JournalView
from inspector.gui.workers import TaskRunner
from inspector.present.links import RunLinks
from inspector.present.session_data import RunData, SessionData
from inspector.session_detail import RunInfo, SessionDetail
from inspector.store.journal_raw import RawJournal, index_journal
from tests.gui.conftest import open_home

SID, RUN = "a1b2c3d4e5f6", "7c8b4108d52b4aba9af362d3a54f47ac"
TYPES = ("token", "tool", "token", "reasoning", "tool_complete")


def _record(seq: int, event: str) -> str:
    return json.dumps(
        {
            "version": 1,
            "event_id": f"{RUN}:{seq}",
            "seq": seq,
            "run_id": RUN,
            "session_id": SID,
            "event": event,
            "type": event,
            "created_at": 1_700_000_000 + seq,
            "terminal": False,
            "terminal_state": None,
            "payload": {"text": f"w{seq}", "name": "terminal"},
        },
        separators=(",", ":"),
    )


def _data(events: int, bad: tuple[int, ...] = ()) -> bytes:
    """``events`` lines cycling through TYPES (line i has seq i+1); the lines in ``bad`` are not JSON."""
    lines = [_record(i + 1, TYPES[i % len(TYPES)]) for i in range(events)]
    for i in bad:
        lines[i] = "not json"
    return ("\n".join(lines) + "\n").encode()


def _run(data: bytes, links: RunLinks | None = None) -> RunData:
    path = Path("/nowhere/_run_journal") / SID / f"{RUN}.jsonl"
    index = index_journal(data, session_id=SID, run_id=RUN)
    raw = RawJournal(data, session_id=SID, run_id=RUN, path=path, index=index)
    run = RunData(
        RunInfo(
            RUN, path, len(data), {"event_count": len(raw), "last_seq": len(raw), "terminal_state": "running"}
        ),
        raw=raw,
        links=links or RunLinks(),
    )
    run.dropped_lines = index.stats["dropped"]
    run.odd_lines = index.stats["anomalous"]
    return run


def _view(qtbot, runner: TaskRunner | None = None) -> JournalView:
    view = JournalView(runner=runner)
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    return view


def _shown_events(view: JournalView) -> list[str]:
    return [
        view.model.line(r).value.get("event") if view.model.line(r).is_event else "(dropped)"
        for r in range(view.model.rowCount())
    ]


def _pick(view: JournalView, event: str) -> None:
    view.event_filter.setCurrentIndex(view.event_filter.findData(event))


def test_the_event_type_filter_lists_the_types_present_and_shows_only_that_type(qtbot) -> None:
    view = _view(qtbot)
    view.set_data(SessionData(SessionDetail(SID, sidecar={"messages": []}), [_run(_data(50))]))
    listed = [view.event_filter.itemText(i) for i in range(view.event_filter.count())]
    assert listed == ["All events", "token (20)", "reasoning (10)", "tool (10)", "tool_complete (10)"]
    _pick(view, "tool")
    assert _shown_events(view) == ["tool"] * 10
    assert view.filter_note.text() == "showing 10 of 50 lines"
    view.clear_filters()
    assert view.model.rowCount() == 50 and view.filter_note.text() == ""


def test_dropped_or_odd_lines_only_combines_with_the_event_type(qtbot) -> None:
    data = _data(30, bad=(4, 17))
    view = _view(qtbot)
    view.set_data(SessionData(SessionDetail(SID, sidecar={"messages": []}), [_run(data)]))
    view.flagged_only.setChecked(True)
    shown = [view.model.line(r) for r in range(view.model.rowCount())]
    # the two lines hermes drops, and the events whose seq does not follow a dropped line's (odd: a gap)
    assert [line.index for line in shown] == [4, 5, 17, 18]
    assert all(line.dropped or line.anomalies for line in shown)
    _pick(view, "reasoning")  # line 18 is TYPES[18 % 5] == "reasoning", with a gap note
    assert [view.model.line(r).index for r in range(view.model.rowCount())] == [18]
    _pick(view, "token")  # line 5 is "token" and odd; line 17 (a token slot) is dropped: no event
    assert [view.model.line(r).index for r in range(view.model.rowCount())] == [5]


def test_go_to_seq_works_inside_the_filter_and_says_when_the_filter_hides_the_seq(qtbot) -> None:
    view = _view(qtbot)
    view.set_data(SessionData(SessionDetail(SID, sidecar={"messages": []}), [_run(_data(100))]))
    _pick(view, "tool")  # lines 1, 6, 11...: seqs 2, 7, 12...
    assert view.go_to_seq("12")
    assert view.current_line() == 11 and view.model.line(view.table.currentIndex().row()).value["seq"] == 12
    assert not view.go_to_seq("13")
    assert view.seq_note.text() == "seq 13 is hidden by the filter" and view.current_line() == 11
    assert not view.go_to_seq("1000") and view.seq_note.text() == "no seq 1000"


def test_the_selected_line_stays_selected_when_the_filter_still_shows_it(qtbot) -> None:
    view = _view(qtbot)
    view.set_data(SessionData(SessionDetail(SID, sidecar={"messages": []}), [_run(_data(100))]))
    view.select_row(41)  # a "tool" line
    _pick(view, "tool")
    assert view.current_line() == 41
    _pick(view, "reasoning")  # 41 is hidden: the first shown line after it
    assert view.current_line() == 43
    view.clear_filters()
    assert view.current_line() == 43 and view.model.rowCount() == 100


def test_a_message_whose_events_the_filter_hides_says_so(qtbot) -> None:
    links = RunLinks(message_to_events={0: [0]}, event_to_message={0: 0})
    data = _data(20)
    view = _view(qtbot)
    view.set_data(
        SessionData(
            SessionDetail(SID, sidecar={"messages": [{"role": "assistant", "content": "w"}]}),
            [_run(data, links)],
        )
    )
    _pick(view, "tool")  # line 0 is a "token" line
    view.highlight_message(0)
    assert view.filter_note.text() == "the filter hides the events of the selected message"
    assert view.model.highlighted() == {0}


def test_the_find_bar_in_the_journal_skips_the_lines_the_filter_hides(qtbot, window, demo, demo_home) -> None:
    open_home(qtbot, window, demo_home, select=demo.sessions["lost_response"])
    journal = window.view.journal
    qtbot.waitUntil(lambda: journal.model.rowCount() > 0 and journal.event_filter.isEnabled(), timeout=60_000)
    everywhere = {
        journal.model.line(r).value.get("event")
        for r in range(journal.model.rowCount())
        if b"api/models.py" in journal.model.line(r).data
    }
    assert {"tool", "tool_complete"} <= everywhere  # the text is in more than one type of event
    with qtbot.waitSignal(journal.filtered, timeout=60_000):
        _pick(journal, "tool_complete")
    bar = window.view.find_bar
    bar.open_bar()
    bar.target.setCurrentIndex(FindBar.JOURNAL)
    bar.edit.setText("api/models.py")
    for _ in range(4):
        assert bar.find_next()
        assert journal.model.line(journal.table.currentIndex().row()).value["event"] == "tool_complete"
    bar.edit.setText('"event":"token"')  # only in lines the filter hides
    assert not bar.find_next() and bar.status.text() == "only in lines the journal filter hides"


def test_filtering_200000_events_never_holds_the_window(qtbot, monkeypatch) -> None:
    """The filter's pass over the lines runs in the worker; what the window itself does for a
    filter (list the lines, reset the table, select a row, paint) stays under 50 ms of its CPU."""
    runner = TaskRunner()
    view = _view(qtbot, runner)
    run = _run(_data(200_000))
    view.set_data(SessionData(SessionDetail(SID, sidecar={"messages": []}), [run]))
    index = run.raw.indexed
    passes: list[bool] = []  # per pass over the lines: was it on the window's thread?
    real_filter = type(index).filter_lines

    def filter_lines(self, *args):
        passes.append(threading.current_thread() is threading.main_thread())
        return real_filter(self, *args)

    monkeypatch.setattr(type(index), "filter_lines", filter_lines)
    window_cpu: list[float] = []
    real_show = view._show_filtered

    def show_filtered(run_, lines):
        started = time.thread_time()
        real_show(run_, lines)
        QApplication.processEvents()  # the table's paint of the new rows
        window_cpu.append(time.thread_time() - started)

    monkeypatch.setattr(view, "_show_filtered", show_filtered)
    try:
        # flagged first, then the type: each pair of changes ends in a filter worked out in the worker
        for event, flagged in (("tool", False), ("reasoning", True), ("token", False), (None, True)):
            with qtbot.waitSignal(view.filtered, timeout=60_000):
                view.flagged_only.setChecked(flagged)
                if event is None:
                    view.event_filter.setCurrentIndex(0)
                else:
                    _pick(view, event)
            expected = 0 if flagged else 80_000 if event == "token" else 40_000
            assert view.model.rowCount() == expected, (event, flagged)
    finally:
        runner.cancel_all()
        runner.wait(10_000)
    assert passes and not any(passes), "a filter's pass over the lines ran on the window's thread"
    print(f"the window's CPU per filter shown: {max(window_cpu) * 1000:.1f} ms at most")
    assert max(window_cpu) < 0.05


def test_a_reload_of_the_same_session_keeps_the_filter(qtbot) -> None:
    """The window reloads a session when its files change (the watcher, a write): the filter holds."""
    view = _view(qtbot)
    run = _run(_data(40))
    view.set_data(SessionData(SessionDetail(SID, sidecar={"messages": []}), [run]))
    _pick(view, "reasoning")
    view.flagged_only.setChecked(False)
    view.select_row(13)
    grown = _run(_data(45))  # the journal grew meanwhile
    view.set_data(SessionData(SessionDetail(SID, sidecar={"messages": []}), [grown]))
    assert view.event_filter.currentData() == "reasoning"
    assert [view.model.line(r).index for r in range(view.model.rowCount())] == [
        3,
        8,
        13,
        18,
        23,
        28,
        33,
        38,
        43,
    ]
    assert view.current_line() == 13
    assert view.filter_note.text() == "showing 9 of 45 lines"
