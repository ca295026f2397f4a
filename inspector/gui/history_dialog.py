"""History: the write log (every write the inspector made, in the GUI or on the command line)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTableView,
    QVBoxLayout,
)

from inspector.export import format_time
from inspector.gui.qtypes import ROOT, Index, OneCallPerCell
from inspector.gui.tooltip import plain_tooltip
from inspector.plan import WriteRecord
from inspector.textsafe import safe_text

RECORD_ROLE = Qt.ItemDataRole.UserRole + 1


class HistoryModel(OneCallPerCell, QAbstractTableModel):
    """Write-log records, newest first."""

    HEADERS = ("Time", "Write id", "Action", "Session", "Files")

    def __init__(self, parent=None):
        super().__init__(parent)
        self._records: list[WriteRecord] = []

    def set_records(self, records: list[WriteRecord]) -> None:
        self.beginResetModel()
        self._records = sorted(records, key=lambda r: r.time, reverse=True)
        self.endResetModel()

    def record(self, row: int) -> WriteRecord | None:
        return self._records[row] if 0 <= row < len(self._records) else None

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self._records)

    def columnCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal \
                and 0 <= section < len(self.HEADERS):
            return self.HEADERS[section]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        rec = self.record(index.row()) if index.isValid() else None
        if rec is None:
            return None
        if role == RECORD_ROLE:
            return rec
        if role == Qt.ItemDataRole.DisplayRole:
            return (format_time(rec.time), rec.write_id, rec.action, rec.session_id or "(home)",
                    str(len(rec.files)))[index.column()] if 0 <= index.column() < 5 else None
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tooltip("\n".join(f"{f.get('kind')} {f.get('path')}" for f in rec.files))
        return None


def record_text(rec: WriteRecord, backup_dir: str) -> str:
    lines = [f"write {rec.write_id} · {format_time(rec.time)} · {rec.action} · {rec.session_id or '(home)'}",
             f"backups: {backup_dir}", ""]
    for f in rec.files:
        lines.append(f"{f.get('kind')}: {f.get('path')}")
        lines.append(f"    sha256 before {f.get('sha256_before') or '-'}")
        lines.append(f"    sha256 after  {f.get('sha256_after') or '-'}")
        if f.get("backup"):
            lines.append(f"    backup {f.get('backup')}")
    lines += ["", f"Undo on the command line: hermes-inspector undo {rec.write_id}"]
    return safe_text("\n".join(lines))


class HistoryDialog(QDialog):
    """Lists the write log; "Undo this write" asks the window to undo the selected record."""

    undo_requested = Signal(str)

    def __init__(self, records: list[WriteRecord], log_path: str, backup_root: str, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Write history")
        self.resize(900, 560)
        self._backup_root = backup_root
        self.model = HistoryModel(self)
        self.model.set_records(records)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.horizontalHeader().setStretchLastSection(True)
        for col, width in enumerate((150, 190, 150, 200)):
            self.table.setColumnWidth(col, width)
        self.detail = QPlainTextEdit()
        self.detail.setReadOnly(True)
        self.detail.setObjectName("EventDetail")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.detail)
        note = QLabel(f"Write log: {log_path}" if records else f"No writes logged yet ({log_path}).")
        note.setTextFormat(Qt.TextFormat.PlainText)
        note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.undo_button = buttons.addButton("Undo this write", QDialogButtonBox.ButtonRole.ActionRole)
        self.undo_button.setEnabled(False)
        self.undo_button.clicked.connect(self._undo)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(note)
        layout.addWidget(split, 1)
        layout.addWidget(buttons)
        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        if records:
            self.table.selectRow(0)

    def _on_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        rec = self.model.record(current.row())
        self.undo_button.setEnabled(rec is not None and not rec.action.startswith("undo:"))
        self.detail.setPlainText(record_text(rec, f"{self._backup_root}/{rec.write_id}") if rec else "")

    def _undo(self) -> None:
        rec = self.model.record(self.table.currentIndex().row())
        if rec is not None:
            self.undo_requested.emit(rec.write_id)
            self.accept()
