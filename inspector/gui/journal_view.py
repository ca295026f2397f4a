"""The run journal beside the transcript: run selector, events table, event detail.

:class:`JournalEventsModel` is a table over a :class:`inspector.store.journal_raw.RawJournal`:
one row per physical line, including the lines hermes drops (shown in place, with the reason).
``rowCount`` comes from the journal's line index and a line is parsed only when ``data()``
asks for it, so a 200,000-event journal costs nothing until rows are scrolled into view.
"""

from __future__ import annotations

import time
from array import array
from bisect import bisect_left
from collections import OrderedDict
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelectionModel,
    QModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from inspector.export import to_json_text
from inspector.gui.qtypes import ROOT, Index, OneCallPerCell, unshaped_text
from inspector.gui.resources import colours, health_icon
from inspector.gui.tooltip import plain_tooltip, show_choice_on_hover
from inspector.gui.workers import TaskRunner
from inspector.present.links import RunLinks
from inspector.present.session_data import JournalGlance, RunData, SessionData
from inspector.store.journal_raw import RawJournal, RawLine
from inspector.textsafe import one_line, safe_text

LINE_ROLE = Qt.ItemDataRole.UserRole + 1
DETAIL_LIMIT = 200_000  # characters of one event shown in the detail pane
FILTER_CHANNEL = "journal_filter"  # the runner's channel for a filter's lines


class EventColumn:
    LINE, SEQ, TIME, EVENT, TERMINAL, PAYLOAD, NOTES = range(7)
    HEADERS = ("Line", "Seq", "Time", "Event", "Terminal", "Payload", "Hermes")
    TOOLTIPS = (
        "Line number in the file",
        "The record's seq",
        "created_at (local time)",
        "The event name",
        "terminal_state of a terminal record",
        "A preview of the payload",
        "Whether hermes reads this line, and anything odd about it",
    )


def _clock(value: Any) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        try:
            return time.strftime("%H:%M:%S", time.localtime(value)) + f".{int((value % 1) * 1000):03d}"
        except (OverflowError, OSError, ValueError):
            return str(value)
    return ""


def payload_preview(value: Any, limit: int = 160) -> str:
    """A one-line summary of an event's payload: its text, tool name and preview, or message."""
    if not isinstance(value, dict):
        return ""
    payload = value.get("payload")
    if not isinstance(payload, dict):
        return one_line(to_json_text(payload), limit)
    event = value.get("event")
    if event in ("tool", "tool_complete"):
        name = payload.get("name") or "tool"
        extra = payload.get("preview") or ""
        tail = f" ({payload.get('duration')} s)" if payload.get("duration") is not None else ""
        return one_line(f"{name}: {extra}{tail}", limit)
    for key in ("text", "reasoning", "thinking", "message", "answer"):
        if isinstance(payload.get(key), str) and payload.get(key):
            return one_line(repr(payload[key])[1:-1] if key == "text" else payload[key], limit)
    return one_line(to_json_text(payload), limit)


def line_notes(line: RawLine) -> str:
    """The Hermes column: why hermes drops the line, else its anomalies."""
    if line.dropped is not None:
        return f"dropped: {line.dropped}"
    return "; ".join(line.anomalies)


def event_detail_text(line: RawLine, became: str | None = None) -> str:
    """The detail pane: where the line is, what hermes makes of it, then the record itself."""
    head = [f"line {line.number} · bytes {line.offset}–{line.offset + line.length} ({line.length} bytes)"]
    if line.dropped is not None:
        head.append(f"hermes DROPS this line: {line.dropped}")
    else:
        head.append("hermes reads this line as an event")
    head.extend(f"note: {a}" for a in line.anomalies)
    if became:
        head.append(became)
    if isinstance(line.value, (dict, list)):
        body = to_json_text(line.value, indent=2)
    else:
        body = line.data.decode("utf-8", errors="backslashreplace")
    if len(body) > DETAIL_LIMIT:
        body = body[:DETAIL_LIMIT] + f"\n… ({len(body) - DETAIL_LIMIT} more characters)"
    return safe_text("\n".join(head) + "\n\n" + body)


_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_DECORATION = int(Qt.ItemDataRole.DecorationRole)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
_BACKGROUND = int(Qt.ItemDataRole.BackgroundRole)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
_ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole)
_LINE = int(LINE_ROLE)
_ALIGN_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_RIGHT_ALIGNED = frozenset({EventColumn.LINE, EventColumn.SEQ})
_NOTE_TIPS = frozenset({EventColumn.NOTES, EventColumn.SEQ, EventColumn.LINE, EventColumn.EVENT})
_HORIZONTAL = Qt.Orientation.Horizontal


class JournalEventsModel(OneCallPerCell, QAbstractTableModel):
    """Rows = physical lines of one run journal; parsed lazily, with a small cache.

    Painting asks ``data()`` for seven roles of every visible cell, so a row's cells are worked
    out once (``_entry``) and ``data()`` only looks them up.

    A filter (:meth:`set_shown`) shows only some lines: row ``r`` is then line ``shown[r]``. The
    model's rows are the view's; everything else (highlights, :meth:`JournalView.select_row`, the
    links to the transcript) speaks of lines, mapped with :meth:`line_of_row` / :meth:`row_of_line`."""

    CACHE = 4096

    def __init__(self, parent=None):
        super().__init__(parent)
        self._raw: RawJournal | None = None
        self._rows = 0
        self._cache: OrderedDict[int, tuple[RawLine, tuple[str, ...], bool]] = OrderedDict()
        self._highlight: frozenset[int] = frozenset()
        self._shown: array | None = None  # the lines a filter lets through (None: every line)

    def set_journal(self, raw: RawJournal | None, limit: int | None = None) -> None:
        """Show a journal; ``limit`` exposes only its first lines (a glance while the rest is read)."""
        rows = 0 if raw is None else len(raw) if limit is None else min(limit, len(raw))
        if raw is not None and raw is self._raw and rows == self._rows:
            self.set_highlight(set())  # the same journal again (its index now shared with the session)
            return
        self.beginResetModel()
        self._raw = raw
        self._rows = rows
        self._cache.clear()
        self._highlight = frozenset()
        self._shown = None
        self.endResetModel()

    def journal(self) -> RawJournal | None:
        return self._raw

    def set_shown(self, lines: array | None) -> None:
        """Show only these lines (sorted, 0-based); None shows every line. One reset, no pass."""
        self.beginResetModel()
        self._shown = lines
        self.endResetModel()

    def shown(self) -> array | None:
        return self._shown

    def line_count(self) -> int:
        """Lines of the journal the model has (a filter shows some of them)."""
        return self._rows

    def line_of_row(self, row: int) -> int:
        return row if self._shown is None else self._shown[row]

    def row_of_line(self, line: int) -> int | None:
        """The row showing ``line``; None when the filter hides it or it is not there."""
        if not 0 <= line < self._rows:
            return None
        if self._shown is None:
            return line
        pos = bisect_left(self._shown, line)
        return pos if pos < len(self._shown) and self._shown[pos] == line else None

    def set_highlight(self, rows: set[int] | frozenset[int]) -> None:
        """Mark rows (e.g. the events a selected message came from) with the highlight colour."""
        old, self._highlight = self._highlight, frozenset(rows)
        last = self.columnCount() - 1
        for line in sorted(old ^ self._highlight):
            row = self.row_of_line(line)
            if row is not None:
                self.dataChanged.emit(
                    self.index(row, 0), self.index(row, last), [Qt.ItemDataRole.BackgroundRole]
                )

    def highlighted(self) -> frozenset[int]:
        return self._highlight

    def rowCount(self, parent: Index = ROOT) -> int:
        if parent.isValid():
            return 0
        return self._rows if self._shown is None else len(self._shown)

    def columnCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(EventColumn.HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != _HORIZONTAL or not 0 <= section < len(EventColumn.HEADERS):
            return None
        if role == _DISPLAY:
            return EventColumn.HEADERS[section]
        if role == _TOOLTIP:
            return EventColumn.TOOLTIPS[section]
        return None

    def line(self, row: int) -> RawLine | None:
        """The line a row shows."""
        entry = self._entry(row)
        return entry[0] if entry else None

    def _entry(self, row: int) -> tuple[RawLine, tuple[str, ...], bool] | None:
        if self._shown is not None:
            if not 0 <= row < len(self._shown):
                return None
            row = self._shown[row]
        hit = self._cache.get(row)
        if hit is not None:
            return hit
        if self._raw is None or not 0 <= row < self._rows:
            return None
        line = self._raw.line(row)
        value = line.value if isinstance(line.value, dict) else None
        if value is not None and line.is_event:
            cells = (
                str(line.number),
                one_line(value.get("seq"), 12),
                _clock(value.get("created_at")),
                one_line(value.get("event"), 40),
                one_line(value.get("terminal_state") or "", 30),
                payload_preview(value),
                one_line(line_notes(line), 200),
            )
        else:
            raw_text = line.data.decode("utf-8", errors="backslashreplace")
            reason = f"DROPPED ({line.dropped}): " if line.dropped else ""
            cells = (
                str(line.number),
                "",
                "",
                "(dropped)" if line.dropped else "",
                "",
                one_line(reason + repr(raw_text)[1:-1], 240),
                one_line(line_notes(line), 200),
            )
        entry = (line, cells, bool(line.anomalies) and line.dropped is None)
        self._cache[row] = entry
        if len(self._cache) > self.CACHE:
            self._cache.popitem(last=False)  # the oldest parsed: a plain FIFO is enough for scrolling
        return entry

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        entry = self._entry(index.row())
        if entry is None:
            return None
        col = index.column()
        if role == _DISPLAY:
            cells = entry[1]
            return cells[col] if 0 <= col < len(cells) else None
        if role == _DECORATION:
            return health_icon("warning") if col == EventColumn.SEQ and entry[2] else None
        if role == _BACKGROUND:
            if entry[0].index in self._highlight:
                return QBrush(colours().highlight)
            return QBrush(colours().dropped_background) if entry[0].dropped is not None else None
        if role == _FOREGROUND:
            return QBrush(colours().dropped_text) if entry[0].dropped is not None else None
        if role == _ALIGNMENT:
            return _ALIGN_RIGHT if col in _RIGHT_ALIGNED else None
        if role == _TOOLTIP:
            return self._tooltip(entry, col)
        if role == _LINE:
            return entry[0]
        return None

    @staticmethod
    def _tooltip(entry: tuple[RawLine, tuple[str, ...], bool], col: int) -> str | None:
        line, cells, _ = entry
        if col in _NOTE_TIPS and cells[-1]:
            return plain_tooltip(safe_text(line_notes(line)))
        if col == EventColumn.PAYLOAD and line.is_event:
            return plain_tooltip(payload_preview(line.value, 800))
        if col == EventColumn.PAYLOAD and line.dropped:
            return plain_tooltip(safe_text(f"hermes drops this line: {line.dropped}"))
        if col == EventColumn.TIME and isinstance(line.value, dict):
            created = line.value.get("created_at")
            return plain_tooltip(safe_text(f"{created}")) if created is not None else None
        return None


def run_label(run: RunData) -> str:
    s = run.info.summary
    short = run.run_id if len(run.run_id) <= 14 else run.run_id[:12] + "…"
    if s is None:
        return f"{short} · unreadable"
    dropped = f" · {len(run.info.malformed)} dropped" if run.info.malformed else ""
    return f"{short} · {s.get('event_count')} events · last seq {s.get('last_seq')} · {s.get('terminal_state')}{dropped}"


class JournalView(QWidget):
    """Run selector, events table and detail pane, linked to the transcript."""

    # (message index or -1) an event became, when the user selects an event
    event_selected = Signal(int)
    filtered = Signal()  # a filter's lines are shown

    def __init__(self, parent=None, runner: TaskRunner | None = None):
        super().__init__(parent)
        self._data: SessionData | None = None
        self._run: RunData | None = None
        self._quiet = False
        # works out a filter's lines off the GUI thread (without one: at once, here)
        self.runner = runner

        title = QLabel("Run journal")
        title.setObjectName("PaneTitle")
        self.runs = QComboBox()
        self.runs.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.runs.setMinimumContentsLength(20)
        self.runs.currentIndexChanged.connect(self._on_run_changed)
        show_choice_on_hover(self.runs, "Which run of this session to show")
        self.status = QLabel()
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)

        self.model = JournalEventsModel(self)
        self.table = QTableView()
        self.table.setTabKeyNavigation(False)  # Tab leaves the table; arrows move in it
        self.table.setObjectName("EventsTable")
        unshaped_text(self.table)
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setWordWrap(False)
        self.table.setAlternatingRowColors(True)
        vh = self.table.verticalHeader()
        vh.setVisible(False)
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # never measure 200,000 rows
        vh.setDefaultSectionSize(self.fontMetrics().height() + 6)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setSectionResizeMode(EventColumn.PAYLOAD, QHeaderView.ResizeMode.Stretch)
        hh.setStretchLastSection(False)
        fm = self.fontMetrics()
        for col, sample in (
            (EventColumn.LINE, "00000"),
            (EventColumn.SEQ, "0000000"),
            (EventColumn.TIME, "00:00:00.000"),
            (EventColumn.EVENT, "tool_complete"),
            (EventColumn.TERMINAL, "Terminal"),
            (EventColumn.NOTES, "dropped: not JSON"),
        ):
            self.table.setColumnWidth(col, fm.horizontalAdvance(sample) + 14)
        # The notes are long; the view shows them as a warning mark on the seq, in the tooltip and
        # in the detail pane (dropped lines also say why in the Payload column).
        self.table.setColumnHidden(EventColumn.NOTES, True)
        self.table.selectionModel().currentRowChanged.connect(self._on_row_changed)

        self.detail = QPlainTextEdit()
        self.detail.setObjectName("EventDetail")
        self.detail.setReadOnly(True)
        self.detail.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.detail.setPlaceholderText("Select an event to see the whole record.")

        self.goto_seq = QLineEdit()
        self.goto_seq.setObjectName("GoToSeq")
        self.goto_seq.setPlaceholderText("seq")
        self.goto_seq.setToolTip("Type an event's seq and press Return to select its line")
        self.goto_seq.setMaximumWidth(fm.horizontalAdvance("0000000") + 24)
        self.goto_seq.returnPressed.connect(lambda: self.go_to_seq(self.goto_seq.text()))
        self.goto_seq.textChanged.connect(lambda _t: self.seq_note.clear())
        self.seq_note = QLabel()
        self.seq_note.setTextFormat(Qt.TextFormat.PlainText)

        self.event_filter = QComboBox()
        self.event_filter.setObjectName("EventFilter")
        self.event_filter.setToolTip("Show only the events of one type")
        self.event_filter.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.event_filter.setMinimumContentsLength(14)
        self.event_filter.currentIndexChanged.connect(lambda _i: self._filter_changed())
        self.flagged_only = QCheckBox("Dropped or odd lines only")
        self.flagged_only.setObjectName("FlaggedOnly")
        self.flagged_only.setToolTip(
            "Show only the lines hermes does not read as events (red) and the lines with notes (⚠)"
        )
        self.flagged_only.toggled.connect(lambda _on: self._filter_changed())
        self.filter_note = QLabel()
        self.filter_note.setObjectName("FilterNote")
        self.filter_note.setTextFormat(Qt.TextFormat.PlainText)

        head = QHBoxLayout()
        head.addWidget(title)
        head.addWidget(self.runs, 1)
        goto_label = QLabel("Go to seq")
        goto_label.setBuddy(self.goto_seq)
        head.addWidget(goto_label)
        head.addWidget(self.goto_seq)
        head.addWidget(self.seq_note)
        filters = QHBoxLayout()
        show_label = QLabel("Show")
        show_label.setBuddy(self.event_filter)
        filters.addWidget(show_label)
        filters.addWidget(self.event_filter)
        filters.addWidget(self.flagged_only)
        filters.addWidget(self.filter_note, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.setObjectName("JournalSplit")
        split.addWidget(self.table)
        split.addWidget(self.detail)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setChildrenCollapsible(False)
        self.splitter = split
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(head)
        layout.addLayout(filters)
        layout.addWidget(self.status)
        layout.addWidget(split, 1)
        self.set_data(None)

    # ------------------------------------------------------------ data

    def show_glance(self, glance: JournalGlance) -> None:
        """Show a big journal while the session is still being read: its first lines, then (a
        second call, ``glance.complete``) all of them. Keeps the selected row and scroll position."""
        run = glance.run
        same = self._data is None and self._run is not None and self._run.run_id == run.run_id
        row = self.current_line() if same else -1
        scroll = self.table.verticalScrollBar().value() if same else 0
        self._data = None
        self._quiet = True
        self.runs.clear()
        short = run.run_id if len(run.run_id) <= 14 else run.run_id[:12] + "…"
        self.runs.addItem(f"{short} · reading…", run.run_id)
        self.runs.setItemData(0, plain_tooltip(f"{run.run_id}\n{run.info.path}"), Qt.ItemDataRole.ToolTipRole)
        self.runs.setEnabled(False)
        self._quiet = False
        self._run = run
        self.model.set_journal(run.raw, limit=None if glance.complete else glance.ready_rows)
        self._fill_filters(None)  # the filters wait for the session (and every line's verdict)
        self.table.setColumnHidden(EventColumn.LINE, not (run.dropped_lines or run.odd_lines))
        if 0 <= row < self.model.rowCount():
            self._quiet = True
            self.select_row(row)
            self._quiet = False
            self.table.verticalScrollBar().setValue(scroll)
        else:
            self.detail.clear()
        head = f"{run.info.path.name} · {run.info.size:,} bytes"
        if glance.complete:
            parts = [head, f"{self.model.rowCount():,} lines"]
            if run.raw is not None and run.raw.unreadable:
                parts.append(f"hermes cannot read it: {run.raw.unreadable}")
            elif run.raw is not None and run.raw.depth_unsure:
                parts.append(f"hermes may not read it: {run.raw.depth_unsure}")
            elif run.dropped_lines:
                parts.append(f"{run.dropped_lines} not read as events by hermes (red)")
            if run.odd_lines:
                parts.append(f"{run.odd_lines} with notes (⚠)")
            parts.append("reading the rest of the session…")
            self.status.setText(safe_text(" · ".join(parts)))
        else:
            self.status.setText(
                safe_text(
                    f"{head} · showing its first {glance.ready_rows:,} lines while every line is checked…"
                )
            )
        self.status.setToolTip(plain_tooltip(str(run.info.path)))

    def set_data(self, data: SessionData | None) -> None:
        """Show a session's runs (keeps the selected run, row and scroll position when it still exists)."""
        previous = self._run.run_id if self._run else None
        row = self.current_line() if previous else -1
        scroll = self.table.verticalScrollBar().value()
        self._data = data
        self._quiet = True
        self.runs.clear()
        runs = data.runs if data else []
        for run in runs:
            self.runs.addItem(run_label(run), run.run_id)
            self.runs.setItemData(
                self.runs.count() - 1,
                plain_tooltip(f"{run.run_id}\n{run.info.path}"),
                Qt.ItemDataRole.ToolTipRole,
            )
        self.runs.setEnabled(bool(runs))
        self._quiet = False
        pick = next((i for i, r in enumerate(runs) if r.run_id == previous), None)
        if pick is None:
            pick = data.preferred_run() if data else 0
        if runs:
            self.runs.setCurrentIndex(pick)
            self._show_run(runs[pick], keep_filter=runs[pick].run_id == previous)
            kept = runs[pick].run_id == previous and self.model.row_of_line(row) is not None
            if self.model.rowCount():
                self._quiet = True  # show a record without moving the transcript
                self.select_row(row if kept else self.model.line_of_row(0))
                self._quiet = False
            if kept:
                self.table.verticalScrollBar().setValue(scroll)
        else:
            self._show_run(None)
            self.status.setText("No run journal for this session." if data else "")

    def select_run(self, run_id: str) -> bool:
        for i in range(self.runs.count()):
            if self.runs.itemData(i) == run_id:
                self.runs.setCurrentIndex(i)
                return True
        return False

    def current_run(self) -> RunData | None:
        return self._run

    def _on_run_changed(self, i: int) -> None:
        if self._quiet or self._data is None or not 0 <= i < len(self._data.runs):
            return
        self._show_run(self._data.runs[i])

    def _show_run(self, run: RunData | None, keep_filter: bool = False) -> None:
        wanted = (
            (self.event_filter.currentData(), self.flagged_only.isChecked()) if keep_filter else (None, False)
        )
        self._run = run
        self.model.set_journal(run.raw if run else None)
        self.detail.clear()
        self._fill_filters(run, *wanted)
        if run is None:
            self.status.setText("")
            return
        # Line numbers and the Hermes column are only worth their width when some line is
        # dropped or odd (otherwise the line number is the seq and there is nothing to say).
        self.table.setColumnHidden(EventColumn.LINE, not (run.dropped_lines or run.odd_lines))
        parts = [f"{run.info.path.name} · {run.info.size:,} bytes · {self.model.rowCount():,} lines"]
        if run.info.error:
            parts.append(f"hermes cannot read it: {run.info.error}")
        elif run.dropped_lines:
            parts.append(f"{run.dropped_lines} not read as events by hermes (red)")
        if run.odd_lines:
            parts.append(f"{run.odd_lines} with notes (⚠)")
        if run.raw_error:
            parts.append(run.raw_error)
        self.status.setText(safe_text(" · ".join(parts)))
        self.status.setToolTip(plain_tooltip(str(run.info.path)))

    # ------------------------------------------------------------ filters

    def _fill_filters(self, run: RunData | None, event: str | None = None, flagged: bool = False) -> None:
        """The event types of the run's journal in the filter list; ``event``/``flagged`` applied
        again when the journal still has them (a reload keeps the filter)."""
        index = run.raw.indexed if run is not None and run.raw is not None else None
        if self.runner is not None:
            self.runner.cancel(FILTER_CHANNEL, quiet=True)
        self._quiet = True
        self.event_filter.blockSignals(True)
        self.flagged_only.blockSignals(True)
        self.event_filter.clear()
        self.event_filter.addItem("All events", None)
        for name, count in index.event_counts() if index is not None else []:
            self.event_filter.addItem(f"{one_line(name, 40)} ({count:,})", name)
        pick = self.event_filter.findData(event) if event is not None else 0
        self.event_filter.setCurrentIndex(max(pick, 0))
        self.flagged_only.setChecked(flagged and index is not None)
        self.event_filter.blockSignals(False)
        self.flagged_only.blockSignals(False)
        self._quiet = False
        usable = index is not None and len(index.kinds) == self.model.line_count()
        self.event_filter.setEnabled(usable)
        self.flagged_only.setEnabled(usable)
        self.filter_note.setText("" if usable or run is None else "filters once every line is checked")
        if usable and (self.event_filter.currentData() is not None or self.flagged_only.isChecked()):
            self._filter_changed()

    def _filter_changed(self) -> None:
        """Work out the lines the filters let through (in the worker when there is one) and show them."""
        run = self._run
        index = run.raw.indexed if run is not None and run.raw is not None else None
        if index is None:
            return
        event, flagged = self.event_filter.currentData(), self.flagged_only.isChecked()
        if event is None and not flagged:
            if self.runner is not None:
                self.runner.cancel(FILTER_CHANNEL, quiet=True)
            self._show_filtered(run, None)
            return
        if self.runner is None:
            self._show_filtered(run, index.filter_lines(event, flagged))
            return
        self.filter_note.setText("filtering…")
        self.runner.start(
            FILTER_CHANNEL,
            lambda _token, _progress: index.filter_lines(event, flagged),
            lambda lines: self._show_filtered(run, lines),
            label="Filtering the run journal",
            on_error=self.filter_note.setText,
        )

    def _show_filtered(self, run: RunData | None, lines: array | None) -> None:
        if run is not self._run:
            return  # another run is shown meanwhile
        keep = self.current_line()
        self.model.set_shown(lines)
        total = self.model.line_count()
        if lines is None:
            self.filter_note.setText("")
        elif not lines:
            self.filter_note.setText(f"no line of {total:,} matches")
        else:
            self.filter_note.setText(f"showing {len(lines):,} of {total:,} lines")
        self.detail.clear()
        if self.model.rowCount():
            # the line selected before when it is still shown, else the first shown after it
            target = self.model.row_of_line(keep) if keep >= 0 else None
            if target is None and lines is not None and keep >= 0:
                target = min(bisect_left(lines, keep), len(lines) - 1)
            self._quiet = True  # a filter does not move the transcript
            self.select_row(self.model.line_of_row(target or 0))
            self._quiet = False
        self.filtered.emit()

    def current_line(self) -> int:
        """The selected line (0-based in the file), -1 when none."""
        current = self.table.currentIndex()
        return self.model.line_of_row(current.row()) if current.isValid() else -1

    def clear_filters(self) -> None:
        self.event_filter.setCurrentIndex(0)
        self.flagged_only.setChecked(False)

    # ------------------------------------------------------------ linking

    def links(self) -> RunLinks:
        return self._run.links if self._run else RunLinks()

    def highlight_message(self, index: int) -> list[int]:
        """Highlight the events a transcript row came from (switching run if needed); returns rows."""
        if self._data is None or index < 0:
            self.model.set_highlight(set())
            return []
        run = self._data.run_for_message(index)
        if run is not None and run is not self._run:
            self.select_run(run.run_id)
        rows = self.links().message_to_events.get(index, [])
        self.model.set_highlight(set(rows))
        shown = [line for line in rows if self.model.row_of_line(line) is not None]
        if rows and not shown:
            self.filter_note.setText("the filter hides the events of the selected message")
        if shown:
            rows = shown
            self._quiet = True
            target = self._row_index(rows[0])
            self.table.scrollTo(target, QAbstractItemView.ScrollHint.PositionAtTop)
            self.table.selectionModel().setCurrentIndex(
                target,
                QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
            )
            self._quiet = False
            self._show_detail(rows[0])
        return rows

    def _row_index(self, line: int) -> QModelIndex:
        # a cell of a shown column: scrollTo() ignores cells of hidden ones (the line column often is)
        row = self.model.row_of_line(line)
        return self.model.index(-1 if row is None else row, EventColumn.SEQ)

    def go_to_seq(self, text: str) -> bool:
        """Select the line of the event with this seq; the status line says when there is none."""
        raw = self.model.journal()
        try:
            seq = int(text.strip())
        except ValueError:
            self.seq_note.setText("not a number")
            return False
        row = raw.find_seq(seq) if raw is not None else None
        if row is None or row >= self.model.line_count():
            self.seq_note.setText(f"no seq {seq}")
            return False
        if self.model.row_of_line(row) is None:
            self.seq_note.setText(f"seq {seq} is hidden by the filter")
            return False
        self.seq_note.clear()
        self.select_row(row)
        return True

    def select_row(self, line: int) -> bool:
        """Select the row showing ``line`` (0-based in the file); False when a filter hides it."""
        index = self._row_index(line)
        if not index.isValid():
            return False
        self.table.scrollTo(index)
        self.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )
        return True

    def _on_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid():
            return
        message = self._show_detail(self.model.line_of_row(current.row()))
        if not self._quiet:
            self.event_selected.emit(-1 if message is None else message)

    def _show_detail(self, row: int) -> int | None:
        shown = self.model.row_of_line(row)
        line = self.model.line(shown) if shown is not None else None
        if line is None:
            self.detail.clear()
            return None
        message = self.links().event_to_message.get(row)
        became = None
        if message is not None:
            became = f"became transcript row #{message}" + self._message_words(message)
        elif line.is_event and self._run is not None:
            became = (
                "not in the transcript"
                if self.links().message_to_events
                else "not in the transcript: nothing of this run is in the transcript yet"
            )
        self.detail.setPlainText(event_detail_text(line, became))
        return message

    def _message_words(self, index: int) -> str:
        msgs = self._data.detail.messages if self._data else []
        if 0 <= index < len(msgs) and isinstance(msgs[index], dict):
            return f" ({one_line(msgs[index].get('role'), 20)}: {one_line(msgs[index].get('content'), 60)!r})"
        return ""
