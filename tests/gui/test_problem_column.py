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


def test_the_legend_names_every_colour_and_optional_columns_come_back_from_the_header(qtbot, window, demo_home):
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
