"""The list's Problem column and colour legend (issue 16): the worst finding in words, the same
words the session view starts its line with; the id and profile columns make room for titles."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

from inspector.finding_words import problem_words
from inspector.gui.main_window import OPTIONAL_COLUMNS
from inspector.present.columns import Column
from tests.gui.conftest import open_home


def test_the_problem_column_says_the_worst_finding_in_words(qtbot, window, demo, demo_home):
    open_home(qtbot, window, demo_home, select=demo.sessions["corrupt"])
    model = window.model
    texts = {}
    for r in range(model.rowCount()):
        row = model.index(r, 0).data(window.session_id_role)
        texts[row] = model.index(r, Column.PROBLEM).data()
        assert texts[row] == problem_words(model.row_for(row).findings)
        assert bool(texts[row]) == bool(model.row_for(row).findings)
    assert texts[demo.sessions["corrupt"]] == "The chat's file is damaged and hermes cannot open it"
    assert texts[demo.sessions["healthy"]] == ""
    assert window.view.findings.words[0].what == texts[demo.sessions["corrupt"]]  # list and view agree
    assert not window.table.isColumnHidden(Column.PROBLEM)


def test_the_legend_names_every_colour_and_optional_columns_come_back_from_the_header(
    qtbot, window, demo_home
):
    open_home(qtbot, window, demo_home)
    legend = window.list_panel.findChild(QWidget, "HealthLegend")
    words = [w.text() for w in legend.findChildren(QLabel) if w.text()]
    assert words == ["broken", "needs attention", "note", "healthy"]
    assert all(window.table.isColumnHidden(c) for c in OPTIONAL_COLUMNS)
    menu = window.columns_menu()
    (shown,) = [a for a in menu.actions() if a.text() == Column.HEADERS[Column.SESSION_ID]]
    shown.setChecked(True)
    assert not window.table.isColumnHidden(Column.SESSION_ID)
    menu.deleteLater()


def test_last_activity_is_local_time_with_the_raw_value_on_hover(qtbot, window, demo, demo_home):
    """Rule: dates show as local time; the raw value is on hover, never in the cell."""
    import time

    from PySide6.QtCore import Qt

    open_home(qtbot, window, demo_home)
    model = window.model
    for r in range(model.rowCount()):
        row = model.row_for(model.index(r, 0).data(window.session_id_role))
        cell = model.index(r, Column.LAST_ACTIVITY)
        if not row.last_activity:
            continue
        assert str(int(row.last_activity)) not in cell.data()
        local = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row.last_activity))
        tip = cell.data(Qt.ItemDataRole.ToolTipRole)
        assert tip == f"{local} local time (Unix time {row.last_activity})" and "e+" not in tip


def test_the_messages_header_explains_the_two_counts(qtbot, window, demo, demo_home):
    """Rule: "4 / 3" is explained where it is read: the header's hover names both counts and the dash,
    and each cell's hover says the two numbers in words."""
    from PySide6.QtCore import Qt

    open_home(qtbot, window, demo_home)
    model = window.model
    tip = model.headerData(Column.MESSAGES, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert "sidecar" in tip and "state.db" in tip and "–" in tip
    pos = model.position(demo.sessions["lost_response"])
    cell = model.index(pos, Column.MESSAGES)
    assert cell.data() == "4 / 3"
    assert cell.data(Qt.ItemDataRole.ToolTipRole) == "4 message(s) in the sidecar, 3 in state.db"
