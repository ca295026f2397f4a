"""The journal view on a long run: where a selection or a highlight scrolls to, and how the
two stages of a big journal (its first lines, then every line) hand over to the session."""

from __future__ import annotations

import json
from pathlib import Path

from inspector.gui.journal_view import EventColumn, JournalView
from inspector.present.links import RunLinks
from inspector.present.session_data import JournalGlance, RunData, SessionData
from inspector.session_detail import RunInfo, SessionDetail
from inspector.store.journal_raw import RawJournal, index_journal

SID, RUN = "a1b2c3d4e5f6", "7c8b4108d52b4aba9af362d3a54f47ac"


def _data(events: int, bad_line: int | None = None) -> bytes:
    lines = []
    for seq in range(1, events + 1):
        rec = {
            "version": 1,
            "event_id": f"{RUN}:{seq}",
            "seq": seq,
            "run_id": RUN,
            "session_id": SID,
            "event": "token",
            "type": "token",
            "created_at": 1_700_000_000 + seq,
            "terminal": False,
            "terminal_state": None,
            "payload": {"text": f"w{seq}"},
        }
        lines.append(json.dumps(rec, separators=(",", ":")))
    if bad_line is not None:
        lines[bad_line] = "not json"
    return ("\n".join(lines) + "\n").encode()


def _run(data: bytes, links: RunLinks | None = None) -> RunData:
    path = Path("/nowhere/_run_journal") / SID / f"{RUN}.jsonl"
    raw = RawJournal(
        data, session_id=SID, run_id=RUN, path=path, index=index_journal(data, session_id=SID, run_id=RUN)
    )
    run = RunData(
        RunInfo(
            RUN, path, len(data), {"event_count": len(raw), "last_seq": len(raw), "terminal_state": "running"}
        ),
        raw=raw,
        links=links or RunLinks(),
    )
    run.dropped_lines = raw.stats()["dropped"]
    run.odd_lines = raw.stats()["anomalous"]
    return run


def _view(qtbot) -> JournalView:
    view = JournalView()
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    return view


def _top_row(view: JournalView) -> int:
    return view.table.rowAt(0)


def test_selecting_a_row_scrolls_to_it_when_the_line_column_is_hidden(qtbot) -> None:
    view = _view(qtbot)
    run = _run(_data(20_000))
    view.set_data(SessionData(SessionDetail(SID, sidecar={"messages": []}), [run]))
    assert view.table.isColumnHidden(EventColumn.LINE)  # a clean journal: the line number is the seq
    view.select_row(15_000)
    assert view.table.currentIndex().row() == 15_000
    assert _top_row(view) <= 15_000 <= view.table.rowAt(view.table.viewport().height() - 1)
    assert "w15001" in view.detail.toPlainText()


def test_a_transcript_row_scrolls_the_journal_to_its_events(qtbot) -> None:
    view = _view(qtbot)
    links = RunLinks()
    for row in (17_000, 17_001):
        links.add(row, 0)
    messages = [{"role": "assistant", "content": "w17001w17002", "_recovered_stream_id": RUN}]
    view.set_data(
        SessionData(SessionDetail(SID, sidecar={"messages": messages}), [_run(_data(20_000), links)])
    )
    assert view.highlight_message(0) == [17_000, 17_001]
    assert view.model.highlighted() == {17_000, 17_001}
    assert _top_row(view) == 17_000
    assert "became transcript row #0" in view.detail.toPlainText()


def test_dropped_lines_stay_in_place_with_the_reason(qtbot) -> None:
    view = _view(qtbot)
    run = _run(_data(5_000, bad_line=4_000))
    view.set_data(SessionData(SessionDetail(SID, sidecar={"messages": []}), [run]))
    assert not view.table.isColumnHidden(EventColumn.LINE)
    assert "1 not read as events by hermes" in view.status.text()
    cell = view.model.index(4_000, EventColumn.PAYLOAD).data()
    assert cell.startswith("DROPPED (not JSON") and view.model.index(4_001, EventColumn.SEQ).data() == "4002"


def test_the_session_takes_over_a_fully_shown_glance_without_losing_the_place(qtbot) -> None:
    view = _view(qtbot)
    data = _data(20_000)
    head = RawJournal(
        data[: data.index(b"\n", 50_000) + 1],
        session_id=SID,
        run_id=RUN,
        path=Path("/nowhere/_run_journal") / SID / f"{RUN}.jsonl",
    )
    first = RunData(RunInfo(RUN, head.path, len(data), None), raw=head)
    view.show_glance(JournalGlance(SID, first, 100))
    assert view.model.rowCount() == 100 and "showing its first 100 lines" in view.status.text()
    view.select_row(42)
    whole = _run(data)
    view.show_glance(JournalGlance(SID, whole, len(whole.raw), complete=True))
    assert view.model.rowCount() == 20_000 and view.table.currentIndex().row() == 42
    assert "20,000 lines" in view.status.text()
    view.select_row(12_345)
    resets: list[int] = []
    view.model.modelReset.connect(lambda: resets.append(1))
    view.set_data(SessionData(SessionDetail(SID, sidecar={"messages": []}), [whole]))
    assert not resets  # the same journal: no reset, nothing parsed again
    assert view.table.currentIndex().row() == 12_345 and _top_row(view) > 0


def test_painting_parses_only_the_visible_rows(qtbot) -> None:
    view = _view(qtbot)
    run = _run(_data(20_000))
    view.set_data(SessionData(SessionDetail(SID, sidecar={"messages": []}), [run]))
    qtbot.waitExposed(view)
    view.table.viewport().repaint()
    assert 0 < len(view.model._cache) < 100
