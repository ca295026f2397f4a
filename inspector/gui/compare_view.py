"""The Compare tab: the sidecar beside another copy of the same chat (its rows in state.db, or its
``.bak``), aligned message by message (:mod:`inspector.transcript_align`), so a support person
sees at a glance which messages one copy has and the other lacks, and which differ.

Read-only. Message text is untrusted: it is shown as plain text (model cells, plain-text panes).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from inspector.gui.qtypes import ROOT, Index
from inspector.gui.resources import colours, is_dark, palette_switched, remember_palette
from inspector.gui.tooltip import plain_tooltip
from inspector.gui.workers import TaskRunner
from inspector.present.session_data import SessionData
from inspector.textsafe import one_line, safe_text
from inspector.transcript_align import (
    DIFFERS,
    MOVED,
    ONLY_LEFT,
    ONLY_RIGHT,
    SAME,
    Alignment,
    Row,
    bak_reason,
    compare_bak,
    compare_state_db,
    state_db_reason,
)

STATE_DB, BAK = "state_db", "bak"
ALIGN_CHANNEL = "compare"  # the runner's channel for an alignment
KIND_WORDS = {
    SAME: "same",
    DIFFERS: "differs",
    ONLY_LEFT: "only in {left}",
    ONLY_RIGHT: "only in {right}",
    MOVED: "moved",
}


class Column:
    LEFT_N, LEFT, KIND, RIGHT_N, RIGHT = range(5)


def kind_colour(kind: str) -> QColor | None:
    """The row's background for its kind, for the current palette (None: the table's own)."""
    c = colours()
    tint = {ONLY_LEFT: c.removed, ONLY_RIGHT: c.added, DIFFERS: c.file_header, MOVED: c.hunk}.get(kind)
    if tint is None:
        return None
    out = QColor(tint)
    out.setAlpha(70 if is_dark() else 45)  # a wash of the accent: the text stays readable in both themes
    return out


class AlignmentModel(QAbstractTableModel):
    """One row per aligned message (optionally only the rows that are not the same)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._alignment: Alignment | None = None
        self._rows: list[int] = []  # positions in alignment.rows shown
        self._only_changes = False

    def set_alignment(self, alignment: Alignment | None, only_changes: bool | None = None) -> None:
        self.beginResetModel()
        self._alignment = alignment
        if only_changes is not None:
            self._only_changes = only_changes
        rows = alignment.rows if alignment else []
        self._rows = [i for i, r in enumerate(rows) if not self._only_changes or r.kind != SAME]
        self.endResetModel()

    def alignment(self) -> Alignment | None:
        return self._alignment

    def row(self, n: int) -> Row | None:
        if self._alignment is None or not 0 <= n < len(self._rows):
            return None
        return self._alignment.rows[self._rows[n]]

    def position(self, n: int) -> int:
        """The shown row's position among all aligned rows."""
        return self._rows[n]

    def shown_row(self, position: int) -> int | None:
        try:
            return self._rows.index(position)
        except ValueError:
            return None

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else 5

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or self._alignment is None:
            return None
        left, right = self._alignment.left.name, self._alignment.right.name
        if role == Qt.ItemDataRole.DisplayRole:
            return ("#", left.capitalize(), "Compared", "#", right.capitalize())[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return (
                f"The message's number in the {left}",
                f"The message as the {left} has it",
                "How the two compare",
                f"The message's number in the {right}",
                f"The message as the {right} has it",
            )[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        row = self.row(index.row())
        if row is None or self._alignment is None:
            return None
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == Column.LEFT_N:
                return "" if row.left is None else f"#{row.left}"
            if col == Column.RIGHT_N:
                return "" if row.right is None else f"#{row.right}"
            if col == Column.KIND:
                return self.kind_words(row)
            text = row.left_text if col == Column.LEFT else row.right_text
            present = row.left is not None if col == Column.LEFT else row.right is not None
            if not present:
                return "—"
            return f"{one_line(row.role, 12)}: {one_line(text, 160) or '(no text)'}"
        if role == Qt.ItemDataRole.BackgroundRole:
            colour = kind_colour(row.kind)
            return QBrush(colour) if colour is not None else None
        if role == Qt.ItemDataRole.ForegroundRole and col in (Column.LEFT, Column.RIGHT):
            absent = row.left is None if col == Column.LEFT else row.right is None
            return QBrush(colours().dropped_text) if absent else None
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (Column.LEFT_N, Column.RIGHT_N):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tooltip(
                self.kind_words(row) + (f": {', '.join(row.differences)}" if row.differences else "")
            )
        return None

    def kind_words(self, row: Row) -> str:
        assert self._alignment is not None
        words = KIND_WORDS[row.kind].format(left=self._alignment.left.name, right=self._alignment.right.name)
        if row.kind in (DIFFERS, MOVED) and row.differences:
            words += ": " + ", ".join(row.differences)
        return words


class CompareView(QWidget):
    """The sidecar beside its state.db rows or its .bak; computes only while shown."""

    compared = Signal()  # an alignment is shown

    def __init__(self, parent=None, runner: TaskRunner | None = None):
        super().__init__(parent)
        remember_palette(self)
        self.runner = runner
        self._data: SessionData | None = None
        self._shown_for: tuple[str, str, int] | None = None  # (session, copy, state.db) of the table
        self._stale = True

        self.with_state_db = QPushButton("Compare with state.db")
        self.with_state_db.setObjectName("CompareStateDb")
        self.with_bak = QPushButton("Compare with .bak")
        self.with_bak.setObjectName("CompareBak")
        self.group = QButtonGroup(self)
        for n, button in enumerate((self.with_state_db, self.with_bak)):
            button.setCheckable(True)
            self.group.addButton(button, n)
        self.group.idClicked.connect(lambda _n: self.refresh())
        self.state_db_reason = _reason_label("CompareStateDbReason", wrap=False)
        self.bak_reason = _reason_label("CompareBakReason", wrap=False)
        self.profile = QComboBox()
        self.profile.setToolTip("Which state.db (profile) to compare with")
        self.profile.currentIndexChanged.connect(lambda _i: self.refresh())
        self.only_changes = QCheckBox("Only differences")
        self.only_changes.setToolTip("Hide the messages both copies hold alike")
        self.only_changes.toggled.connect(self._on_only_changes)
        self.previous = QPushButton("Previous difference")
        self.next = QPushButton("Next difference")
        self.previous.clicked.connect(lambda: self.go_to_change(-1))
        self.next.clicked.connect(lambda: self.go_to_change(+1))
        self.summary = _reason_label("CompareSummary")
        self.note = _reason_label("CompareNote")

        self.model = AlignmentModel(self)
        self.table = QTableView()
        self.table.setTabKeyNavigation(False)  # Tab leaves the table; arrows move in it
        self.table.setObjectName("CompareTable")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setSectionResizeMode(Column.LEFT, QHeaderView.ResizeMode.Stretch)
        hh.setSectionResizeMode(Column.RIGHT, QHeaderView.ResizeMode.Stretch)
        fm = self.fontMetrics()
        for col in (Column.LEFT_N, Column.RIGHT_N):
            self.table.setColumnWidth(col, fm.horizontalAdvance("#00000") + 12)
        self.table.setColumnWidth(Column.KIND, fm.horizontalAdvance("only in state.db [default]") + 12)
        self.table.selectionModel().currentRowChanged.connect(self._on_row)

        self.left_text = _text_pane("CompareLeftText")
        self.right_text = _text_pane("CompareRightText")
        panes = QSplitter(Qt.Orientation.Horizontal)
        panes.addWidget(self.left_text)
        panes.addWidget(self.right_text)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(panes)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)

        choose = QHBoxLayout()
        choose.addWidget(self.with_state_db)
        choose.addWidget(self.state_db_reason)
        choose.addWidget(self.profile)
        choose.addSpacing(12)
        choose.addWidget(self.with_bak)
        choose.addWidget(self.bak_reason)
        choose.addStretch(1)
        moves = QHBoxLayout()
        moves.addWidget(self.summary, 1)
        moves.addWidget(self.only_changes)
        moves.addWidget(self.previous)
        moves.addWidget(self.next)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(choose)
        layout.addLayout(moves)
        layout.addWidget(self.note)
        layout.addWidget(split, 1)
        self.set_data(None)

    # ------------------------------------------------------------ data

    def set_data(self, data: SessionData | None) -> None:
        """A session to compare (nothing is worked out until the tab is shown)."""
        same = data is not None and self._data is not None and data.session_id == self._data.session_id
        self._data = data
        detail = data.detail if data else None
        sdb = state_db_reason(detail) if detail else "no session is selected"
        bak = bak_reason(detail) if detail else "no session is selected"
        self.with_state_db.setEnabled(sdb is None)
        self.with_bak.setEnabled(bak is None)
        self.state_db_reason.setText("" if sdb is None else f"({sdb})")
        self.state_db_reason.setVisible(sdb is not None and detail is not None)
        self.bak_reason.setText("" if bak is None else f"({bak})")
        self.bak_reason.setVisible(bak is not None and detail is not None)
        self.profile.blockSignals(True)
        previous = self.profile.currentData() if same else None
        self.profile.clear()
        for n, view in enumerate(detail.state_db if detail else []):
            if not view.error and view.messages:
                self.profile.addItem(f"[{view.profile}] {len(view.messages)} rows", n)
        self.profile.setCurrentIndex(max(self.profile.findData(previous), 0) if previous is not None else 0)
        self.profile.setVisible(self.profile.count() > 1)
        self.profile.blockSignals(False)
        if not same or self.group.checkedButton() is None or not self.group.checkedButton().isEnabled():
            pick = self.with_state_db if sdb is None else self.with_bak if bak is None else None
            self.group.setExclusive(False)
            for button in (self.with_state_db, self.with_bak):
                button.setChecked(button is pick)
            self.group.setExclusive(True)
        self._stale = True
        if self.isVisible():
            self.refresh()
        elif not same:
            self._clear("")

    def choice(self) -> str | None:
        button = self.group.checkedButton()
        return None if button is None else STATE_DB if button is self.with_state_db else BAK

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if palette_switched(self, event):
            self.table.viewport().update()  # the rows' washes are picked for the palette at each paint
        super().changeEvent(event)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self._stale:
            self.refresh()

    def refresh(self) -> None:
        """Align the chosen copies (in the worker when there is one) and show them."""
        self._stale = False
        data, choice = self._data, self.choice()
        if data is None or choice is None:
            # (the buttons' reasons are said beside them)
            self._clear("Select a session." if data is None else "Nothing to compare the sidecar with.")
            return
        view = self.profile.currentData() if choice == STATE_DB else -1
        key = (data.session_id, choice, view if view is not None else -1)
        detail = data.detail

        def work(_token, _progress) -> Alignment:
            return compare_state_db(detail, view) if choice == STATE_DB else compare_bak(detail)

        if self.runner is None:
            self._show(data, key, work(None, None))
            return
        self.summary.setText("Comparing…")
        self.runner.start(
            ALIGN_CHANNEL,
            work,
            lambda alignment: self._show(data, key, alignment),
            label="Comparing the copies",
            on_error=self.summary.setText,
        )

    def _clear(self, why: str) -> None:
        self.model.set_alignment(None)
        self._shown_for = None
        self.summary.setText(why)
        self.note.setText("")
        self.note.hide()
        self.left_text.clear()
        self.right_text.clear()
        self._sync_moves()

    def _show(self, data: SessionData, key: tuple[str, str, int], alignment: Alignment) -> None:
        if data is not self._data:
            return  # another session came meanwhile
        keep = self.current_position() if key == self._shown_for else -1
        self._shown_for = key
        self.model.set_alignment(alignment, self.only_changes.isChecked())
        self.summary.setText(safe_text(alignment.summary()))
        notes = [f"{c.name}: {c.note}" for c in (alignment.left, alignment.right) if c.note]
        self.note.setText(safe_text(" · ".join(notes)))
        self.note.setVisible(bool(notes))
        target = self.model.shown_row(keep) if keep >= 0 else None
        if target is None:
            changes = alignment.changes()
            target = self.model.shown_row(changes[0]) if changes else 0
        if self.model.rowCount():
            self._select(target or 0)
        else:
            self.left_text.clear()
            self.right_text.clear()
        self._sync_moves()
        self.compared.emit()

    def alignment(self) -> Alignment | None:
        return self.model.alignment()

    # ------------------------------------------------------------ moving

    def _on_only_changes(self, on: bool) -> None:
        keep = self.current_position()
        self.model.set_alignment(self.model.alignment(), on)
        target = self.model.shown_row(keep) if keep >= 0 else None
        if self.model.rowCount():
            self._select(target if target is not None else 0)
        self._sync_moves()

    def current_position(self) -> int:
        current = self.table.currentIndex()
        return self.model.position(current.row()) if current.isValid() else -1

    def go_to_change(self, step: int) -> bool:
        """Select the next (``step`` +1) or previous (-1) row that is not the same in both copies."""
        alignment = self.model.alignment()
        if alignment is None:
            return False
        changes = alignment.changes()
        here = self.current_position()
        ahead = [p for p in changes if p > here] if step > 0 else [p for p in reversed(changes) if p < here]
        if not ahead:
            return False
        row = self.model.shown_row(ahead[0])
        if row is None:
            return False
        self._select(row)
        return True

    def _sync_moves(self) -> None:
        alignment = self.model.alignment()
        changes = alignment.changes() if alignment else []
        here = self.current_position()
        self.next.setEnabled(any(p > here for p in changes))
        self.previous.setEnabled(any(p < here for p in changes) and here >= 0)
        self.only_changes.setEnabled(alignment is not None)

    def _select(self, row: int) -> None:
        index = self.model.index(row, Column.LEFT)
        self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        self.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )

    def _on_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        row = self.model.row(current.row()) if current.isValid() else None
        alignment = self.model.alignment()
        if row is None or alignment is None:
            self.left_text.clear()
            self.right_text.clear()
        else:
            self.left_text.setPlainText(_pane_text(alignment.left.name, row.left, row.role, row.left_text))
            self.right_text.setPlainText(
                _pane_text(alignment.right.name, row.right, row.role, row.right_text)
            )
        self._sync_moves()


def _pane_text(name: str, index: int | None, role: str, text: str) -> str:
    if index is None:
        return safe_text(f"Not in the {name}.")
    return safe_text(f"{name} #{index} · {role}\n\n{text or '(no text)'}")


def _reason_label(name: str, wrap: bool = True) -> QLabel:
    label = QLabel()
    label.setObjectName(name)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(wrap)
    return label


def _text_pane(name: str) -> QPlainTextEdit:
    pane = QPlainTextEdit()
    pane.setObjectName(name)
    pane.setReadOnly(True)
    pane.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
    return pane
