"""Find inside the open session (issue 16): the transcript, the run journal's lines or the raw
sidecar JSON, from a bar above the session's tabs.

Return finds the next match, Shift+Return the previous one, Escape closes the bar. The
transcript and the raw JSON are searched by Qt (``QTextDocument.find``, in C++); the journal
by :meth:`inspector.store.journal_raw.RawJournal.find_line`, a byte search in C that does not
parse the journal (a 200,000-event journal stays instant), which selects the matching line.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QTextCursor, QTextDocument
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

HIDDEN_HITS_MAX = 5_000  # matches in lines a journal filter hides, skipped before the find gives up


class FindBar(QWidget):
    """The find bar of a :class:`~inspector.gui.session_view.SessionView` (hidden until opened)."""

    TRANSCRIPT, JOURNAL, RAW = range(3)
    TARGETS = ("Transcript", "Run journal", "Raw JSON")

    def __init__(self, view, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("FindBar")
        self.view = view
        self.target = QComboBox()
        self.target.addItems(self.TARGETS)
        self.target.setToolTip("Where to look in the open session")
        self.target.currentIndexChanged.connect(self._on_target)
        self.edit = QLineEdit()
        self.edit.setPlaceholderText("Find in this session  (Return: next, Shift+Return: previous)")
        self.edit.setClearButtonEnabled(True)
        self.edit.returnPressed.connect(self.find_next)
        self.edit.textChanged.connect(lambda _t: self.status.clear())
        self.edit.installEventFilter(self)
        self.previous = QToolButton()
        self.previous.setText("Previous")
        self.previous.setToolTip("Previous match (Shift+Return, Shift+F3)")
        self.previous.clicked.connect(self.find_previous)
        self.next = QToolButton()
        self.next.setText("Next")
        self.next.setToolTip("Next match (Return, F3)")
        self.next.clicked.connect(self.find_next)
        self.status = QLabel()
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setObjectName("FindStatus")
        close = QToolButton()
        close.setText("Close")
        close.setToolTip("Close the find bar (Escape)")
        close.clicked.connect(self.close_bar)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Find in"))
        row.addWidget(self.target)
        row.addWidget(self.edit, 1)
        row.addWidget(self.previous)
        row.addWidget(self.next)
        row.addWidget(self.status)
        row.addWidget(close)
        self.hide()

    # ------------------------------------------------------------ opening

    def open_bar(self) -> None:
        """Show the bar on what the session view shows (the Raw tab: its JSON; else the
        transcript, or the journal when the journal has the focus), the text selected."""
        if self.view.tabs.currentWidget() is self.view.raw:
            target = self.RAW
        elif self.view.journal.isAncestorOf(self.focusWidget() or self.view.window().focusWidget() or self):
            target = self.JOURNAL
        else:
            target = self.TRANSCRIPT
        self.target.setCurrentIndex(target)
        self.show()
        self.edit.setFocus()
        self.edit.selectAll()

    def close_bar(self) -> None:
        self.hide()
        self.status.clear()
        widget = self._widget()
        if widget is not None:
            widget.setFocus()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.edit and event.type() == QEvent.Type.KeyPress:
            key, mods = event.key(), event.modifiers()
            if key == Qt.Key.Key_Escape:
                self.close_bar()
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and mods & Qt.KeyboardModifier.ShiftModifier:
                self.find_previous()
                return True
        return super().eventFilter(obj, event)

    def _on_target(self, target: int) -> None:
        self.status.clear()
        if target == self.RAW:
            self.view.tabs.setCurrentWidget(self.view.raw)
            self.view.raw.tabs.setCurrentIndex(0)
        else:
            self.view.tabs.setCurrentIndex(0)

    def _widget(self):
        target = self.target.currentIndex()
        if target == self.TRANSCRIPT:
            return self.view.transcript.browser
        if target == self.RAW:
            return self.view.raw.json
        return self.view.journal.table

    # ------------------------------------------------------------ finding

    def find_next(self) -> bool:
        return self.find(backward=False)

    def find_previous(self) -> bool:
        return self.find(backward=True)

    def find(self, *, backward: bool = False) -> bool:
        """Move to the next (previous) match of the bar's text; the status says when the search
        went round the end or found nothing. True when something matched."""
        text = self.edit.text()
        if not text:
            self.status.clear()
            return False
        if self.target.currentIndex() == self.JOURNAL:
            return self._find_in_journal(text, backward)
        return self._find_in_text(self._widget(), text, backward)

    def _find_in_text(self, widget, text: str, backward: bool) -> bool:
        flags = QTextDocument.FindFlag.FindBackward if backward else QTextDocument.FindFlag(0)
        if widget.find(text, flags):
            self.status.setText("")
            return True
        cursor = widget.textCursor()  # round the end: from the other end once more
        cursor.movePosition(QTextCursor.MoveOperation.End if backward else QTextCursor.MoveOperation.Start)
        widget.setTextCursor(cursor)
        if widget.find(text, flags):
            self.status.setText("from the top again" if not backward else "from the bottom again")
            return True
        self.status.setText("not found")
        return False

    def _find_in_journal(self, text: str, backward: bool) -> bool:
        journal = self.view.journal
        raw = journal.model.journal()
        if raw is None:
            self.status.setText("no run journal shown")
            return False
        after = journal.current_line()
        row = raw.find_line(text, after, backward=backward)
        first, skipped = row, 0
        while row is not None and journal.model.row_of_line(row) is None:  # hidden by a journal filter
            row = raw.find_line(text, row, backward=backward)
            skipped += 1
            if row == first or skipped >= HIDDEN_HITS_MAX:
                row = None
        if row is None:
            if first is None:
                self.status.setText("not found")
            elif skipped < HIDDEN_HITS_MAX:
                self.status.setText("only in lines the journal filter hides")
            else:
                self.status.setText(
                    f"the next {HIDDEN_HITS_MAX:,} matches are in lines the journal filter hides"
                )
            return False
        wrapped = after >= 0 and (row <= after if not backward else row >= after)
        journal.select_row(row)
        self.status.setText(f"line {row + 1}" + (" (round the end)" if wrapped else ""))
        return True
