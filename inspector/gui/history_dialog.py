"""History: the write log (every write the inspector made, in the GUI or on the command line).

A selected write's diff (rebuilt from its backups: files up to :data:`GUI_DIFF_BYTES`, so seconds of
difflib for a big one) is worked out in a child process through the window's
:class:`~inspector.gui.workers.TaskRunner`; the window keeps painting meanwhile and the detail pane
says the diff is on its way.
"""

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
from inspector.gui.workers import TaskRunner
from inspector.history import home_of, undone_by, write_diff
from inspector.jobs import pool
from inspector.plan import WriteRecord
from inspector.repair import registry
from inspector.textsafe import one_line, safe_text

RECORD_ROLE = Qt.ItemDataRole.UserRole + 1


class HistoryModel(OneCallPerCell, QAbstractTableModel):
    """Write-log records, newest first."""

    HEADERS = ("Time", "Write id", "Session", "Action", "Undone", "Home", "Files")

    def __init__(self, parent=None):
        super().__init__(parent)
        self._records: list[WriteRecord] = []
        self._undone: dict[str, str] = {}
        self._titles: dict[str, str] = {}

    def set_records(self, records: list[WriteRecord], titles: dict[str, str] | None = None) -> None:
        """The records (newest first); ``titles``: session id -> title, for the Session column."""
        self.beginResetModel()
        self._records = sorted(records, key=lambda r: r.time, reverse=True)
        self._undone = undone_by(records)
        self._titles = dict(titles or {})
        self.endResetModel()

    def undone_by(self, rec: WriteRecord) -> str | None:
        """The write that undid ``rec``, None when it stands."""
        return self._undone.get(rec.write_id)

    def records(self) -> list[WriteRecord]:
        return list(self._records)

    def session_text(self, rec: WriteRecord) -> str:
        if rec.session_id is None:
            return "(the whole home)"
        title = self._titles.get(rec.session_id)
        return one_line(title, 80) if title else rec.session_id

    def record(self, row: int) -> WriteRecord | None:
        return self._records[row] if 0 <= row < len(self._records) else None

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self._records)

    def columnCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            role == Qt.ItemDataRole.DisplayRole
            and orientation == Qt.Orientation.Horizontal
            and 0 <= section < len(self.HEADERS)
        ):
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
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            undone = self._undone.get(rec.write_id)
            return (
                (
                    format_time(rec.time),
                    rec.write_id,
                    self.session_text(rec),
                    _action_words(rec),
                    "undone" if undone else "",
                    home_of(rec),
                    str(len(rec.files)),
                )[col]
                if 0 <= col < 7
                else None
            )
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == 2 and rec.session_id is not None:
                return plain_tooltip(f"session {rec.session_id}")
            if col == 3:
                return plain_tooltip(f"action {rec.action}")  # the name the command line and the log use
            if col == 4 and self._undone.get(rec.write_id):
                return plain_tooltip(f"undone by write {self._undone[rec.write_id]}")
            return plain_tooltip("\n".join(f"{f.get('kind')} {f.get('path')}" for f in rec.files))
        return None


def action_label(action: str) -> str:
    """The repair's button label ("Recover journal output"); the name itself when it has none
    (a write of an older version, a hermes-own action of the crosscheck)."""
    try:
        return registry.spec(action).label
    except (KeyError, ValueError):
        return action


def _action_words(rec: WriteRecord) -> str:
    if rec.action.startswith("undo:"):
        return f"Undo of {action_label(rec.action[5:])}"
    return action_label(rec.action) + ("" if rec.complete else " (interrupted)")


# A past write's diff is worked out when its row is selected: files larger than this are named, not read
GUI_DIFF_BYTES = 8 << 20
DIFF_CHANNEL = "history-diff"  # the TaskRunner channel of the selected write's diff (newest selection wins)
DIFF_PENDING = "Working out what this write changed…"


def record_text(rec: WriteRecord, backup_dir: str, undone: str | None = None, diff: str = "") -> str:
    lines = [
        f"write {rec.write_id} · {format_time(rec.time)} · {_action_words(rec)} · "
        f"{rec.session_id or '(the whole home)'}",
        f"home: {home_of(rec) or '-'}",
        f"backups: {backup_dir}",
    ]
    if undone:
        lines.append(f"undone by write {undone}")
    lines.append("")
    for f in rec.files:
        lines.append(f"{f.get('kind')}: {f.get('path')}")
        lines.append(f"    sha256 before {f.get('sha256_before') or '-'}")
        lines.append(f"    sha256 after  {f.get('sha256_after') or '-'}")
        if f.get("backup"):
            lines.append(f"    backup {f.get('backup')}")
    if diff:
        lines += ["", "What this write changed:", "", diff]
    return safe_text("\n".join(lines))


class HistoryDialog(QDialog):
    """Lists the write log; "Undo this write" asks the window to undo the selected record."""

    undo_requested = Signal(str)

    def __init__(
        self,
        records: list[WriteRecord],
        log_path: str,
        backup_root: str,
        parent=None,
        titles: dict[str, str] | None = None,
        runner: TaskRunner | None = None,
    ):
        super().__init__(parent)
        self.setWindowTitle("Write history")
        self.resize(1000, 600)
        self._backup_root = backup_root
        # the window's runner (its status bar shows the work, its Cancel stops it), else one of its own
        self.runner = runner if runner is not None else TaskRunner(self)
        self.diff_shown: str | None = (
            None  # the write id whose diff the detail pane shows (None: still coming)
        )
        self.model = HistoryModel(self)
        self.model.set_records(records, titles)
        self.table = QTableView()
        self.table.setTabKeyNavigation(False)  # Tab leaves the table; arrows move in it
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.horizontalHeader().setStretchLastSection(True)
        for col, width in enumerate((150, 190, 220, 150, 70, 200)):
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
        undone = self.model.undone_by(rec) if rec is not None else None
        self.undo_button.setEnabled(rec is not None and not rec.action.startswith("undo:") and undone is None)
        if rec is not None and undone is not None:
            self.undo_button.setToolTip(f"Already undone (by write {undone})")
        elif rec is not None and rec.action.startswith("undo:"):
            self.undo_button.setToolTip("This write is itself an undo")
        else:
            self.undo_button.setToolTip("Put the files of this write back as they were before it")
        self.diff_shown = None
        if rec is None:
            self.runner.cancel(DIFF_CHANNEL)
            self.detail.setPlainText("")
            return
        backup = f"{self._backup_root}/{rec.write_id}"
        self.detail.setPlainText(record_text(rec, backup, undone) + f"\n\n{DIFF_PENDING}")
        records = self.model.records()

        def work(token, progress):
            # in a child process: reading the backups and difflib hold no GIL of the window's
            return pool.run_job_steps(write_diff, rec, records, GUI_DIFF_BYTES, check=token.check)

        self.runner.start(
            DIFF_CHANNEL,
            work,
            lambda diff: self._show_diff(rec, backup, undone, diff),
            label="Working out the write's diff…",
            on_error=lambda msg: self._show_diff(rec, backup, undone, None, msg),
        )

    def _show_diff(
        self, rec: WriteRecord, backup: str, undone: str | None, diff: str | None, error: str = ""
    ) -> None:
        if self.model.record(self.table.currentIndex().row()) is not rec:
            return  # another row is selected (its own diff is on its way)
        text = record_text(rec, backup, undone, diff or "")
        if diff is None:
            text += safe_text(f"\n\nThe diff could not be worked out: {one_line(error, 300)}")
        self.detail.setPlainText(text)
        self.diff_shown = rec.write_id

    def done(self, result: int) -> None:
        """Closed (Close, Escape, Undo this write): a diff still being worked out is dropped."""
        self.runner.cancel(DIFF_CHANNEL)
        super().done(result)

    def _undo(self) -> None:
        rec = self.model.record(self.table.currentIndex().row())
        if rec is not None:
            self.undo_requested.emit(rec.write_id)
            self.accept()
