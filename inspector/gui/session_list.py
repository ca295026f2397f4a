"""The left-hand side of the window: the search box, the filters, the home's line, the session
list itself (a :class:`~inspector.gui.session_model.SessionTableModel`), the notice shown when the
filters hide the session on the right, and what the list's colours mean.

The window (:mod:`inspector.gui.main_window`) wires the search and the selection; the list's own
actions (copy the id or the file's path, reveal the file: its context menu and the Edit menu) are here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QSizePolicy,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from inspector.gui.list_fit import ColumnFitter
from inspector.gui.qtypes import unshaped_text
from inspector.gui.resources import health_icon
from inspector.gui.session_model import ROW_ROLE, SESSION_ID_ROLE, Column, SessionTableModel
from inspector.gui.session_view import plain_label
from inspector.home import Home
from inspector.textsafe import one_line

OPTIONAL_COLUMNS = (Column.SESSION_ID, Column.PROFILE)  # hidden until the header's menu shows them


class SessionListPanel(QWidget):
    """Search, filters, the home's line, the list, the hidden-session notice and the legend."""

    status = Signal(str, int)  # a status-bar message and how long it shows (ms)
    export_requested = Signal(str)  # the context menu's "Export Transcript as Markdown…": "md"

    def __init__(self, model: SessionTableModel, home: Callable[[], Home | None] = lambda: None, parent=None):
        super().__init__(parent)
        self.model = model
        self._home = home  # the open home (where a row's .bak or state.db lives)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search title, id or message text  (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.attention = QCheckBox("Needs attention")
        self.attention.setToolTip("Show only sessions with a warning or an error")
        self.attention.toggled.connect(model.set_attention_only)
        self.profile = QComboBox()
        self.profile.setToolTip("Show the sessions of one profile")
        self.profile.addItem("All profiles", None)
        self.profile.currentIndexChanged.connect(lambda _i: model.set_profile(self.profile.currentData()))
        self.home_label = plain_label(name="HeaderDetails")
        self.home_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = self._build_table()

        filters = QHBoxLayout()
        filters.addWidget(self.profile, 1)
        filters.addWidget(self.attention)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 0, 0)
        layout.addWidget(self.search)
        layout.addLayout(filters)
        layout.addWidget(self.home_label)
        layout.addWidget(self._build_hidden_notice())
        layout.addWidget(self.table, 1)
        layout.addWidget(self._legend())

    def _build_table(self) -> QTableView:
        table = QTableView()
        table.setObjectName("SessionTable")
        table.setModel(self.model)
        table.setSortingEnabled(True)
        table.sortByColumn(Column.LAST_ACTIVITY, Qt.SortOrder.DescendingOrder)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)  # a bundle takes several
        table.setWordWrap(False)
        table.setTabKeyNavigation(False)  # Tab leaves the list (not its cells, nor the selection)
        table.setAlternatingRowColors(True)
        unshaped_text(table)
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        table.customContextMenuRequested.connect(self._list_menu)
        vh = table.verticalHeader()
        vh.setVisible(False)
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setDefaultSectionSize(self.fontMetrics().height() + 8)
        hh = table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setStretchLastSection(False)
        hh.setHighlightSections(False)
        hh.setSectionResizeMode(Column.TITLE, QHeaderView.ResizeMode.Stretch)
        fm = self.fontMetrics()
        for col, sample in (
            (Column.SESSION_ID, "0123456789ab"),
            (Column.WHERE, "state.db"),
            (Column.PROFILE, "default"),
            (Column.MESSAGES, "00 / 00"),
            (Column.LAST_ACTIVITY, "Nov 30 06:13"),
        ):
            wanted = max(fm.horizontalAdvance(sample), fm.horizontalAdvance(Column.HEADERS[col]) + 12)
            table.setColumnWidth(col, wanted + 16)
        table.setColumnWidth(Column.HEALTH, 26)
        table.setColumnWidth(Column.PROBLEM, fm.horizontalAdvance("The chat is missing from") + 16)
        # Titles get the width: the id and the profile are in the session's header (and the
        # profile filter); the header's menu shows them again.
        for col in OPTIONAL_COLUMNS:
            table.setColumnHidden(col, True)
        # a narrow list keeps Messages and Problem on screen (gives up Last activity, then Where)
        self.column_fit = ColumnFitter(
            table, stretch=Column.TITLE, drop=(Column.LAST_ACTIVITY, Column.WHERE), squeeze=Column.PROBLEM
        )
        hh.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        hh.customContextMenuRequested.connect(lambda pos: self.columns_menu().popup(hh.mapToGlobal(pos)))
        return table

    def _build_hidden_notice(self) -> QWidget:
        """Shown when the filters hide the session the view shows (issue 16: no silent mismatch
        between the list and the view)."""
        self.hidden_notice = QWidget()
        self.hidden_notice.setObjectName("HiddenNotice")
        self.hidden_label = plain_label(name="HiddenNoticeText")
        self.show_all_button = QPushButton("Clear filters")
        self.show_all_button.setToolTip("Clear the search, Needs attention and the profile filter")
        row = QHBoxLayout(self.hidden_notice)
        row.setContentsMargins(0, 2, 0, 2)
        row.addWidget(self.hidden_label, 1)
        row.addWidget(self.show_all_button)
        self.hidden_notice.hide()
        return self.hidden_notice

    def clear_filters(self) -> None:
        """The search, Needs attention and the profile filter off: every session listed."""
        self.search.clear()
        self.attention.setChecked(False)
        self.profile.setCurrentIndex(0)

    def update_hidden_notice(self, session_id: str | None) -> None:
        """Say so when ``session_id`` (the session shown on the right) is listed but the filters hide it."""
        row = self.model.row_for(session_id) if session_id is not None else None
        hidden = row is not None and self.model.position(session_id) is None
        if hidden:
            filters = [
                name
                for name, on in (
                    ("the search", bool(self.model.query)),
                    ("Needs attention", self.attention.isChecked()),
                    ("the profile filter", self.profile.currentData() is not None),
                )
                if on
            ]
            title = one_line(row.title, 60) or "(untitled)"
            self.hidden_label.setText(
                f"The chat shown on the right, “{title}”, is not in this list: "
                f"{' and '.join(filters) or 'a filter'} hide{'s' if len(filters) < 2 else ''} it."
            )
        self.hidden_notice.setVisible(hidden)

    def set_profiles(self, names: list[str]) -> None:
        """The profile filter's choices: all, then ``names``; the chosen one stays when it is still there."""
        current = self.profile.currentData()
        self.profile.blockSignals(True)
        self.profile.clear()
        self.profile.addItem("All profiles", None)
        for name in names:
            self.profile.addItem(f"Profile: {name}", name)
        self.profile.setCurrentIndex(max(self.profile.findData(current), 0) if current else 0)
        self.profile.blockSignals(False)

    def columns_menu(self) -> QMenu:
        """The list header's menu: show or hide every column but the title."""
        menu = QMenu(self)
        for col in range(1, len(Column.HEADERS)):
            if col == Column.TITLE:
                continue
            a = menu.addAction(Column.HEADERS[col])
            a.setCheckable(True)
            a.setChecked(not self.table.isColumnHidden(col))
            a.toggled.connect(lambda on, c=col: self.table.setColumnHidden(c, not on))
        return menu

    def _legend(self) -> QWidget:
        """What the list's colours mean."""
        legend = QWidget()
        legend.setObjectName("HealthLegend")
        # never what keeps the window wide: a narrow list clips the legend instead
        legend.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        row = QHBoxLayout(legend)
        row.setContentsMargins(2, 0, 2, 2)
        for severity, words in (
            ("error", "broken"),
            ("warning", "needs attention"),
            ("info", "note"),
            ("ok", "healthy"),
        ):
            dot = QLabel()
            dot.setPixmap(health_icon(severity).pixmap(12, 12))
            row.addWidget(dot)
            row.addWidget(plain_label(words, "HeaderDetails", wrap=False))
            row.addSpacing(8)
        row.addStretch(1)
        return legend

    # ------------------------------------------------------------ the list's actions

    def _list_menu(self, pos) -> None:
        if not self.table.indexAt(pos).isValid():
            return
        menu = QMenu(self)
        menu.addAction("Copy Session Id", self.copy_session_id)
        menu.addAction("Copy Sidecar Path", self.copy_sidecar_path)
        menu.addAction("Reveal File", self.reveal_file)
        menu.addSeparator()
        menu.addAction("Export Transcript as Markdown…", lambda: self.export_requested.emit("md"))
        menu.popup(self.table.viewport().mapToGlobal(pos))

    def _current_path(self) -> Path | None:
        index = self.table.currentIndex()
        row = index.data(ROW_ROLE) if index.isValid() else None
        if row is None:
            return None
        if row.sidecar_path is not None:
            return Path(row.sidecar_path)
        home = self._home()
        if home is not None and row.has_bak:
            return home.session_dir / f"{row.session_id}.json.bak"
        if home is not None and row.state_db_profile:
            return home.state_db(row.state_db_profile)
        return None

    def current_session_id(self) -> str | None:
        index = self.table.currentIndex()
        return index.data(SESSION_ID_ROLE) if index.isValid() else None

    def copy_session_id(self) -> None:
        sid = self.current_session_id()
        if sid:
            QGuiApplication.clipboard().setText(sid)
            self.status.emit(f"Copied {one_line(sid, 60)}", 3000)

    def copy_sidecar_path(self) -> None:
        path = self._current_path()
        if path is not None:
            QGuiApplication.clipboard().setText(str(path))
            self.status.emit(f"Copied {path}", 3000)

    def reveal_file(self) -> None:
        path = self._current_path()
        if path is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(path.parent)))
