"""Every item model of the window passes Qt's model tester (qtmodeltester)."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt

from inspector.gui.history_dialog import HistoryModel
from inspector.gui.journal_view import JournalEventsModel
from inspector.gui.raw_view import RecordsModel
from inspector.gui.session_model import (
    ROW_ROLE,
    SESSION_ID_ROLE,
    SORT_ROLE,
    Column,
    SessionTableModel,
)
from inspector.jobs import pool
from inspector.load import load_catalogue
from inspector.plan import WriteRecord
from inspector.present.columns import sorted_rows
from inspector.present.rows import ListRow
from inspector.present.session_data import load_session_data
from inspector.store.journal_raw import RawJournal


def test_session_model_passes_the_model_tester(qtmodeltester, demo_home):
    model = SessionTableModel()
    model.set_rows(load_catalogue(demo_home, now=time.time()).sorted_rows())
    assert model.rowCount() >= 10
    qtmodeltester.check(model, force_py=True)


def test_session_model_takes_new_rows_as_they_come_and_go(qtmodeltester, demo_home):
    rows = load_catalogue(demo_home, now=time.time()).sorted_rows()
    model = SessionTableModel()
    model.set_rows(rows[:5])
    qtmodeltester.check(model, force_py=True)
    kept = rows[2].session_id
    model.set_rows(rows[2:])
    assert model.rowCount() == len(rows) - 2
    assert model.index(0, 0).data(ROW_ROLE).session_id == kept  # survivors keep their place
    model.set_rows([])
    assert model.rowCount() == 0


def test_session_model_filters_and_still_passes_the_model_tester(qtmodeltester, demo, demo_home):
    model = SessionTableModel()
    model.set_rows(load_catalogue(demo_home, now=time.time()).sorted_rows())
    model.sort(Column.LAST_ACTIVITY, Qt.SortOrder.DescendingOrder)
    everyone = model.rowCount()

    def shown() -> set[str]:
        return {model.index(r, 0).data(ROW_ROLE).session_id for r in range(model.rowCount())}

    model.set_attention_only(True)
    assert demo.sessions["lost_response"] in shown() and demo.sessions["healthy"] not in shown()
    assert shown() == {r.session_id for r in model.rows() if r.needs_attention}
    model.set_attention_only(False)

    model.set_query("  OPEN   prs ")  # title search, case-insensitive, spaces folded
    assert shown() == {demo.sessions["lost_response"]}
    model.set_text_matches("open prs", {demo.sessions["healthy"]})  # message-text hits join in
    assert model.rowCount() == 2
    model.set_text_matches("an older query", {demo.sessions["healthy_work"]})  # a late answer is ignored
    assert model.rowCount() == 2
    model.set_query("")
    assert model.rowCount() == everyone

    model.set_profile("work")
    assert shown() == {demo.sessions["healthy_work"]}
    assert model.row_for(demo.sessions["healthy"]) is not None  # filtered out, still known
    assert model.position(demo.sessions["healthy"]) is None
    assert len(model.rows()) == everyone and [r.session_id for r in model.shown_rows()] == [
        demo.sessions["healthy_work"]
    ]
    qtmodeltester.check(model, force_py=True)  # (watches the model from here on)
    model.set_profile(None)
    assert model.rowCount() == everyone


def test_filters_hold_across_new_rows_and_sorting(demo, demo_home):
    rows = load_catalogue(demo_home, now=time.time()).sorted_rows()
    model = SessionTableModel()
    model.set_rows(rows)
    model.set_attention_only(True)
    needing = model.rowCount()
    model.set_rows(list(reversed(rows)))
    assert model.rowCount() == needing
    model.sort(Column.TITLE, Qt.SortOrder.AscendingOrder)
    titles = [model.index(r, Column.TITLE).data(SORT_ROLE) for r in range(model.rowCount())]
    assert titles == sorted(titles) and model.rowCount() == needing


def _painted(qtbot, model_class, fill, size=(900, 400)):
    """A ``model_class`` filled by ``fill(model)``, shown in a table that paints every visible cell;
    (the model, each painted cell's ``(row, column, {role: value})`` as ``multiData`` answered it)."""
    from PySide6.QtWidgets import QTableView

    asked: list[tuple[int, int, dict]] = []

    class Recording(model_class):
        def multiData(self, index, span):  # noqa: N802 - Qt override
            super().multiData(index, span)
            asked.append((index.row(), index.column(), {item.role(): item.data() for item in span}))

    model = Recording()
    fill(model)
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.resize(*size)
    view.show()
    qtbot.waitExposed(view)
    view.grab()
    return model, asked


def _assert_as_data_gives(model, asked) -> set[int]:
    """Every role of every painted cell holds what ``data`` gives (icons by their cache key); the
    roles that had a value."""
    given = set()
    for row, col, values in asked:
        for role, value in values.items():
            expected = model.data(model.index(row, col), role)
            assert (value is None) == (expected is None), (row, col, role)
            if expected is None:
                continue
            given.add(role)
            if role == Qt.ItemDataRole.DecorationRole:
                assert value.cacheKey() == expected.cacheKey()
            else:
                assert value == expected, (row, col, role)
    return given


def test_one_call_per_painted_cell_gives_what_data_gives(qtbot, demo_home):
    """``multiData`` (what the view's painting asks) answers every role as ``data`` does."""
    rows = load_catalogue(demo_home, now=time.time()).sorted_rows()
    model, asked = _painted(qtbot, SessionTableModel, lambda m: m.set_rows(rows))
    assert len(asked) >= model.columnCount() * 3
    given = _assert_as_data_gives(model, asked)
    assert Qt.ItemDataRole.DisplayRole in given and Qt.ItemDataRole.DecorationRole in given


def test_journal_model_answers_a_painted_cell_in_one_call_as_data_does(qtbot, demo):
    sid = demo.sessions["stale_pending"]
    path = next((demo.session_dir / "_run_journal" / sid).glob("*.jsonl"))
    model, asked = _painted(
        qtbot, JournalEventsModel, lambda m: m.set_journal(RawJournal.from_path(path)), size=(1200, 600)
    )
    assert len(asked) >= model.columnCount() * model.rowCount()
    given = _assert_as_data_gives(model, asked)
    assert Qt.ItemDataRole.BackgroundRole in given  # the dropped lines' colour came through the span


def test_rows_and_journal_lines_are_selectable_and_have_no_children(demo_home, demo):
    """Both tables leave ``flags`` to Qt's table model: every cell enabled and selectable."""
    sessions = SessionTableModel()
    sessions.set_rows(load_catalogue(demo_home, now=time.time()).sorted_rows())
    sid = demo.sessions["stale_pending"]
    lines = JournalEventsModel()
    lines.set_journal(RawJournal.from_path(next((demo.session_dir / "_run_journal" / sid).glob("*.jsonl"))))
    expected = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren
    for model in (sessions, lines):
        assert model.rowCount() > 0
        for col in range(model.columnCount()):
            assert model.flags(model.index(model.rowCount() - 1, col)) == expected
        assert model.flags(model.index(-1, 0)) == Qt.ItemFlag.NoItemFlags


def test_health_sorts_worst_first(demo_home):
    model = SessionTableModel()
    model.set_rows(load_catalogue(demo_home, now=time.time()).sorted_rows())
    model.sort(Column.HEALTH, Qt.SortOrder.DescendingOrder)
    assert model.index(0, 0).data(ROW_ROLE).health == "error"
    assert isinstance(model.index(0, Column.HEALTH).data(SORT_ROLE), float)


def test_journal_events_model_passes_the_model_tester(qtmodeltester, demo):
    sid = demo.sessions["stale_pending"]
    path = next((demo.session_dir / "_run_journal" / sid).glob("*.jsonl"))
    model = JournalEventsModel()
    model.set_journal(RawJournal.from_path(path))
    assert model.rowCount() > 0
    qtmodeltester.check(model, force_py=True)
    model.set_highlight({0, 1})
    assert model.highlighted() == {0, 1}
    model.set_journal(None)
    assert model.rowCount() == 0


def test_journal_model_shows_dropped_lines_in_place_with_the_reason(demo):
    sid = demo.sessions["stale_pending"]
    path = next((demo.session_dir / "_run_journal" / sid).glob("*.jsonl"))
    model = JournalEventsModel()
    model.set_journal(RawJournal.from_path(path))
    dropped = [r for r in range(model.rowCount()) if model.line(r).dropped]
    assert dropped, "the demo's stale_pending journal has torn lines"
    row = dropped[0]
    assert model.index(row, 3).data() == "(dropped)"
    assert "DROPPED" in model.index(row, 5).data()
    assert model.index(row, 6).data().startswith("dropped: ")
    assert model.index(row, 0).data(Qt.ItemDataRole.BackgroundRole) is not None


def test_records_model_passes_the_model_tester(qtmodeltester, demo_home, demo):
    data = load_session_data(demo_home, demo.sessions["healthy"])
    model = RecordsModel()
    model.set_records(data.detail.state_db[0].messages)
    assert model.rowCount() > 0 and model.columnCount() > 0
    qtmodeltester.check(model, force_py=True)


def test_history_model_passes_the_model_tester(qtmodeltester):
    model = HistoryModel()
    model.set_records(
        [
            WriteRecord(
                "20260101T000000-aaaa", 1.0, "recover-journal", "abc", [{"path": "/x", "kind": "modify"}]
            ),
            WriteRecord("20260101T000001-bbbb", 2.0, "undo:recover-journal", "abc", []),
        ]
    )
    assert model.index(0, 1).data() == "20260101T000001-bbbb"  # newest first
    # the repair's label, as its button says it; the action's name is on hover
    assert model.index(0, 3).data() == "Undo of Recover journal output"
    assert model.index(1, 3).data() == "Recover journal output"
    assert "recover-journal" in model.index(1, 3).data(Qt.ItemDataRole.ToolTipRole)
    qtmodeltester.check(model, force_py=True)


def test_sorting_keeps_persistent_indexes_on_their_rows_and_survives_updates(qtmodeltester, demo_home):
    from PySide6.QtCore import QPersistentModelIndex

    rows = load_catalogue(demo_home, now=time.time()).sorted_rows()
    model = SessionTableModel()
    model.set_rows(rows)
    held = QPersistentModelIndex(model.index(3, 0))
    sid = held.data(ROW_ROLE).session_id
    model.sort(Column.TITLE, Qt.SortOrder.AscendingOrder)
    titles = [model.index(r, Column.TITLE).data(SORT_ROLE) for r in range(model.rowCount())]
    assert titles == sorted(titles)
    assert held.isValid() and held.data(ROW_ROLE).session_id == sid
    model.set_rows(list(reversed(rows[1:])))  # one row gone, order shuffled: the sort still holds
    titles = [model.index(r, Column.TITLE).data(SORT_ROLE) for r in range(model.rowCount())]
    assert titles == sorted(titles) and model.rowCount() == len(rows) - 1
    qtmodeltester.check(model, force_py=True)


def test_prepared_rows_sort_exactly_as_the_model_sorts(demo_home):
    from inspector.load import load_catalogue

    rows = [
        ListRow.of(r) for r in load_catalogue(demo_home, now=time.time()).rows.values()
    ]  # as the child sends them
    for column in range(len(Column.HEADERS)):
        for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
            model = SessionTableModel()
            model.set_rows(rows)
            model.sort(column, order)
            prepared = SessionTableModel.prepare(rows, (column, order))
            assert [e.row.session_id for e in prepared] == [r.session_id for r in model.rows()]
            fresh = SessionTableModel()
            fresh.sort(column, order)
            fresh.set_rows(prepared)
            assert fresh.rows() == model.rows()
            # the child sorts them the same way (session_columns, no Qt), and prepared as such they
            # are not sorted again
            presorted = sorted_rows(list(reversed(rows)), column, order == Qt.SortOrder.DescendingOrder)
            assert [r.session_id for r in presorted] == [r.session_id for r in model.rows()]
            steps = SessionTableModel.prepare_steps(presorted, (column, order), presorted=True)
            entries = pool.finish(pool.Resume(steps))
            assert [e.row for e in entries] == presorted and entries.positions[presorted[0].session_id] == 0


def test_quick_rows_show_as_checking_until_the_catalogue_replaces_them(qtmodeltester, demo_home):
    from inspector.load import load_catalogue
    from inspector.quickscan import quick_rows

    model = SessionTableModel()
    model.sort(Column.LAST_ACTIVITY, Qt.SortOrder.DescendingOrder)
    model.set_rows(quick_rows(demo_home.session_dir), checking=True)
    assert model.checking and model.rowCount() > 0
    assert model.index(0, Column.HEALTH).data(Qt.ItemDataRole.DecorationRole) is None
    assert model.index(0, Column.HEALTH).data(Qt.ItemDataRole.ToolTipRole) == "Checking health…"
    sid = model.index(1, 0).data(SESSION_ID_ROLE)
    resets = []
    model.modelReset.connect(lambda: resets.append(model.position(sid)))
    cat = load_catalogue(demo_home, now=time.time())
    model.set_rows(cat.sorted_rows())
    assert not model.checking and model.rowCount() == len(cat.rows)
    # one reset, after which the session is found again (the window makes its row current again)
    assert len(resets) == 1 and resets[0] is not None
    assert model.index(resets[0], 0).data(SESSION_ID_ROLE) == sid
    assert model.index(0, Column.HEALTH).data(Qt.ItemDataRole.ToolTipRole) != "Checking health…"
    qtmodeltester.check(model, force_py=True)


def test_replaced_rows_are_let_go_of_at_once(qtbot):
    """The list keeps flat records (present.rows.ListRow): 11,500 of them are freed in about a
    millisecond (issue 15), so replaced rows are no longer let go of a batch per turn."""
    import sys

    from inspector.catalogue import SessionRow

    model = SessionTableModel()
    model.set_rows([SessionRow(f"old{i:05d}") for i in range(2_500)])
    old = model.row_for("old00000")
    held = sys.getrefcount(old)
    model.set_rows([SessionRow("new")])
    assert model.rowCount() == 1 and model.row_for("new") is not None
    assert sys.getrefcount(old) == held - 1  # the model's own reference is gone already


def test_flat_records_show_and_sort_as_list_rows_do_and_stay_flat_until_asked_for(qtmodeltester, demo_home):
    """The catalogue's rows come from the child as flat records; the model makes a ListRow of one
    only when that row is asked for (the first complete paint asks for the rows on screen), and
    shows, sorts and filters exactly as with ListRows made at once."""
    from inspector.present.rows import flat_row

    flat = [flat_row(r) for r in load_catalogue(demo_home, now=time.time()).sorted_rows()]
    entries = pool.finish(pool.Resume(SessionTableModel.prepare_steps(flat, None, presorted=True)))
    model = SessionTableModel()
    model.set_rows(entries)
    assert model.rowCount() == len(flat) >= 10
    assert sum(e._row is not None for e in entries) == 0  # none made: nothing asked for yet
    model.index(0, Column.TITLE).data()
    assert [e._row is not None for e in entries] == [True] + [False] * (len(flat) - 1)
    assert model.position(flat[-1][0]) == len(flat) - 1  # found by id without making the row
    assert entries[-1]._row is None
    eager = SessionTableModel()
    eager.set_rows([ListRow(f) for f in flat])
    for column in range(len(Column.HEADERS)):
        for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
            model.sort(column, order)
            eager.sort(column, order)
            assert [r.session_id for r in model.rows()] == [r.session_id for r in eager.rows()]
            for row in range(model.rowCount()):
                for col in range(len(Column.HEADERS)):
                    for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, SORT_ROLE):
                        assert model.index(row, col).data(role) == eager.index(row, col).data(role)
    model.set_attention_only(True)
    eager.set_attention_only(True)
    assert 0 < model.rowCount() == eager.rowCount() < len(flat)
    qtmodeltester.check(model, force_py=True)


def test_prepared_positions_are_each_ids_last_place_however_the_rows_come(demo_home):
    """``prepare_steps`` hands the list the position of every session id (the last place of an id
    that comes twice), worked out from flat records by position, from entries otherwise (rows made
    already, a mix, or rows it sorts itself): the same dict as one made from the entries."""
    from inspector.present.rows import flat_row

    flat = [flat_row(r) for r in load_catalogue(demo_home, now=time.time()).sorted_rows()]
    flat = flat + flat[:3] + [flat[0][:0] + ("extra",) + flat[0][1:]]  # three ids twice, one more
    mixed = [ListRow(f) if i % 3 == 0 else f for i, f in enumerate(flat)]
    for rows in (flat, mixed, [ListRow(f) for f in flat]):
        for sort, presorted in (
            (None, True),
            (None, False),
            ((Column.TITLE, Qt.SortOrder.AscendingOrder), True),
            ((Column.TITLE, Qt.SortOrder.DescendingOrder), False),
            ((Column.LAST_ACTIVITY, Qt.SortOrder.DescendingOrder), False),
        ):
            entries = pool.finish(
                pool.Resume(SessionTableModel.prepare_steps(rows, sort, presorted=presorted))
            )
            expected = {}
            for i, e in enumerate(entries):
                expected[e.session_id] = i
            assert entries.positions == expected
            assert list(entries.positions.items()) == list(expected.items())
            if sort is None or presorted:
                assert [e.session_id for e in entries] == [
                    getattr(r, "session_id", None) or r[0] for r in rows
                ]
