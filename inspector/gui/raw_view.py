"""Raw: the sidecar's bytes as JSON text (read-only, highlighted) and the state.db rows.

The text is put into a ``QPlainTextEdit`` (never interpreted); a ``QSyntaxHighlighter`` only
colours it. Very large files are shown without colouring so the view stays quick.
"""

from __future__ import annotations

import dataclasses
import re
from itertools import chain
from typing import Any

from PySide6.QtCore import QAbstractTableModel, Qt
from PySide6.QtGui import QSyntaxHighlighter, QTextCharFormat
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from inspector.export import to_json_text
from inspector.gui.qtypes import ROOT, Index, OneCallPerCell
from inspector.gui.resources import colours, palette_switched, remember_palette
from inspector.gui.tooltip import plain_tooltip
from inspector.present.session_data import SessionData
from inspector.textsafe import one_line, safe_text

HIGHLIGHT_LIMIT = 2_000_000  # characters; above this the JSON is shown uncoloured
CELL_LIMIT = 300


class JsonHighlighter(QSyntaxHighlighter):
    """Colours keys, strings, numbers and literals of (pretty-printed) JSON, line by line."""

    _TOKEN = re.compile(
        r'"(?:[^"\\]|\\.)*"(\s*:)?|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\btrue\b|\bfalse\b|\bnull\b'
    )

    def __init__(self, document):
        super().__init__(document)
        self._key, self._string, self._number, self._literal = (QTextCharFormat() for _ in range(4))
        self._pick_colours()

    def _pick_colours(self) -> None:
        c = colours()
        for fmt, colour in (
            (self._key, c.json_key),
            (self._string, c.json_string),
            (self._number, c.json_number),
            (self._literal, c.json_literal),
        ):
            fmt.setForeground(colour)

    def recolour(self) -> None:
        """Colour again for the current palette (light/dark switched while the window runs)."""
        self._pick_colours()
        self.rehighlight()

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt's name
        for m in self._TOKEN.finditer(text):
            token = m.group()
            if token.startswith('"'):
                fmt = self._key if m.group(1) else self._string
                length = len(token) - (len(m.group(1)) if m.group(1) else 0)
                self.setFormat(m.start(), length, fmt)
            elif token[0] in "-0123456789":
                self.setFormat(m.start(), len(token), self._number)
            else:
                self.setFormat(m.start(), len(token), self._literal)


class RecordsModel(OneCallPerCell, QAbstractTableModel):
    """A list of dicts as a table: one column per key (in first-seen order)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._records: list[dict] = []
        self._columns: list[str] = []

    def set_records(self, records: list[dict], columns: list[str] | None = None) -> None:
        self.beginResetModel()
        self._records = [r for r in records if isinstance(r, dict)]
        if columns is None:
            columns = _first_seen_keys(self._records)
        self._columns = [str(c) for c in columns]
        self.endResetModel()

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self._records)

    def columnCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self._columns)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return self._columns[section] if 0 <= section < len(self._columns) else None
        return str(section + 1) if 0 <= section < len(self._records) else None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren

    def _value(self, index: Index) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._records):
            return None
        if not 0 <= index.column() < len(self._columns):
            return None
        return self._records[index.row()].get(self._columns[index.column()])

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        value = self._value(index)
        if value is None:
            return None
        text = value if isinstance(value, str) else to_json_text(value)
        if role == Qt.ItemDataRole.DisplayRole:
            return one_line(text, CELL_LIMIT)
        return plain_tooltip(safe_text(text[:4000]))


def _first_seen_keys(records: list[dict]) -> list:
    """Every key of the records, in first-seen order (dict.fromkeys over all keys runs in C:
    thousands of state.db rows cost no Python step per key)."""
    return list(dict.fromkeys(chain.from_iterable(records)))


def _key_values(record: Any) -> list[dict]:
    if dataclasses.is_dataclass(record) and not isinstance(record, type):
        record = dataclasses.asdict(record)
    if not isinstance(record, dict):
        return []
    return [{"column": k, "value": v} for k, v in record.items()]


class RawView(QWidget):
    """Tabs: the sidecar JSON, and the session's state.db rows (per profile)."""

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if palette_switched(self, event) and self._highlighter is not None:
            self._highlighter.recolour()  # light/dark switched: the JSON's colours follow
        super().changeEvent(event)

    def __init__(self, parent=None):
        super().__init__(parent)
        remember_palette(self)
        self._data: SessionData | None = None
        self._pending_json: bytes | None = None  # the sidecar's bytes, decoded when the tab is shown
        self._db_pending = False  # the state.db tables wait for the tab to be shown

        self.tabs = QTabWidget()
        self.json = QPlainTextEdit()
        self.json.setObjectName("RawJson")
        self.json.setReadOnly(True)
        self.json.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.json_label = QLabel()
        self.json_label.setTextFormat(Qt.TextFormat.PlainText)
        self._highlighter: JsonHighlighter | None = None
        json_page = QWidget()
        jl = QVBoxLayout(json_page)
        jl.setContentsMargins(0, 0, 0, 0)
        jl.addWidget(self.json_label)
        jl.addWidget(self.json, 1)
        self.tabs.addTab(json_page, "Sidecar JSON")

        self.db_choice = QComboBox()
        self.db_choice.currentIndexChanged.connect(self._show_db)
        self.db_label = QLabel()
        self.db_label.setTextFormat(Qt.TextFormat.PlainText)
        self.db_label.setWordWrap(True)
        self.session_model = RecordsModel(self)
        self.messages_model = RecordsModel(self)
        self.session_table = self._table(self.session_model)
        self.messages_table = self._table(self.messages_model)
        db_page = QWidget()
        dl = QVBoxLayout(db_page)
        dl.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("state.db:"))
        row.addWidget(self.db_choice, 1)
        dl.addLayout(row)
        dl.addWidget(self.db_label)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.session_table)
        split.addWidget(self.messages_table)
        split.setStretchFactor(1, 2)
        dl.addWidget(split, 1)
        self.tabs.addTab(db_page, "state.db rows")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

    @staticmethod
    def _table(model: RecordsModel) -> QTableView:
        t = QTableView()
        t.setTabKeyNavigation(False)  # Tab leaves the table; arrows move in it
        t.setModel(model)
        t.setWordWrap(False)
        t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        t.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        t.verticalHeader().setDefaultSectionSize(t.fontMetrics().height() + 8)
        t.horizontalHeader().setStretchLastSection(True)
        t.horizontalHeader().setDefaultSectionSize(140)
        return t

    def set_data(self, data: SessionData | None) -> None:
        self._data = data
        d = data.detail if data else None
        if d is None or d.sidecar_raw is None:
            label = "No sidecar file." if d is not None else ""
            if d is not None and d.sidecar_error:
                label = f"Cannot read the sidecar: {d.sidecar_error}"
            self.json_label.setText(safe_text(label))
            self._pending_json = b""
        else:
            raw = d.sidecar_raw.data
            label = f"{d.sidecar_path} · {len(raw):,} bytes"
            if d.sidecar_error:
                label += f" · hermes cannot load it: {d.sidecar_error}"
            self.json_label.setText(safe_text(label))
            self._pending_json = raw
        if self.isVisible():
            self._fill_json()
        self.db_choice.blockSignals(True)
        self.db_choice.clear()
        for view in d.state_db if d else []:
            self.db_choice.addItem(f"[{view.profile}] {view.path}")
        self.db_choice.blockSignals(False)
        self._db_pending = True  # the state.db tables too are filled when the tab is shown
        if self.isVisible():
            self._fill_db()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self._fill_json()
        self._fill_db()

    def _fill_db(self) -> None:
        # thousands of state.db message rows: built when someone looks, not on every selection
        if self._db_pending:
            self._db_pending = False
            self._show_db(max(self.db_choice.currentIndex(), 0))

    def _fill_json(self) -> None:
        # Filled only when the tab is shown: a multi-megabyte sidecar costs nothing until asked for.
        if self._pending_json is None:
            return
        text, self._pending_json = self._pending_json.decode("utf-8", errors="backslashreplace"), None
        if self._highlighter is not None:
            self._highlighter.setDocument(None)
            self._highlighter = None
        self.json.setPlainText(safe_text(text))
        if len(text) <= HIGHLIGHT_LIMIT:
            self._highlighter = JsonHighlighter(self.json.document())

    def _show_db(self, i: int) -> None:
        views = self._data.detail.state_db if self._data else []
        if not 0 <= i < len(views):
            self.db_label.setText("No state.db row for this session." if self._data else "")
            self.session_model.set_records([])
            self.messages_model.set_records([])
            return
        view = views[i]
        self.db_label.setText(
            safe_text(f"cannot read: {view.error}")
            if view.error
            else f"sessions row and {len(view.messages)} messages rows"
        )
        self.session_model.set_records(_key_values(view.record), ["column", "value"])
        self.messages_model.set_records(view.messages)
