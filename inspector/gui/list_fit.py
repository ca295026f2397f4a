"""The session list in a narrow window: the columns that say what is wrong stay on screen.

At 1024x640 the list gets about a third of the window; its columns (health, title, where,
messages, last activity, problem) want twice that, and the Messages and Problem columns ended
off screen behind a horizontal scroll bar. :class:`ColumnFitter` watches the list's width: when the
columns do not fit, it hides the columns the session's header repeats (Last activity, then Where)
and then narrows the Problem column (its whole text is in its tooltip); when the list is wide again,
they come back as they were. The user's own choices (the header's menu, a saved layout) are kept
apart from these: :meth:`ColumnFitter.as_chosen` shows the columns as the user left them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QTableView


class ColumnFitter(QObject):
    def __init__(
        self,
        table: QTableView,
        *,
        stretch: int,
        drop: tuple[int, ...],
        squeeze: int,
        stretch_min: int = 110,
        squeeze_min: int = 90,
    ):
        super().__init__(table)
        self.table = table
        self.stretch, self.drop, self.squeeze = stretch, drop, squeeze
        self.stretch_min, self.squeeze_min = stretch_min, squeeze_min
        self.auto_hidden: set[int] = set()
        self._squeeze_width: int | None = None  # the squeezed column's width before it was narrowed
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.fit)
        table.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if obj is self.table and event.type() in (QEvent.Type.Resize, QEvent.Type.Show):
            self._timer.start()  # after the layout settled (the viewport's width is known then)
        return False

    def _restore(self) -> None:
        for col in sorted(self.auto_hidden):
            self.table.setColumnHidden(col, False)
        self.auto_hidden = set()
        if self._squeeze_width is not None:
            self.table.setColumnWidth(self.squeeze, self._squeeze_width)
            self._squeeze_width = None

    def fit(self) -> None:
        """Hide / narrow columns until they fit the list's width (or show them again)."""
        self._restore()
        avail = self.table.viewport().width()
        count = self.table.model().columnCount() if self.table.model() is not None else 0
        shown = [c for c in range(count) if c != self.stretch and not self.table.isColumnHidden(c)]

        def need() -> int:
            return self.stretch_min + sum(self.table.columnWidth(c) for c in shown)

        for col in self.drop:
            if need() <= avail:
                break
            if col in shown:
                self.table.setColumnHidden(col, True)
                self.auto_hidden.add(col)
                shown.remove(col)
        over = need() - avail
        if over > 0 and self.squeeze in shown:
            width = self.table.columnWidth(self.squeeze)
            narrower = max(self.squeeze_min, width - over)
            if narrower < width:
                self._squeeze_width = width
                self.table.setColumnWidth(self.squeeze, narrower)

    @contextmanager
    def as_chosen(self) -> Iterator[None]:
        """The columns as the user chose them for as long as the block runs (e.g. to save the layout)."""
        hidden, squeezed = set(self.auto_hidden), self._squeeze_width
        narrowed = self.table.columnWidth(self.squeeze)
        self._restore()
        try:
            yield
        finally:
            for col in sorted(hidden):
                self.table.setColumnHidden(col, True)
            self.auto_hidden = hidden
            if squeezed is not None:
                self._squeeze_width = squeezed
                self.table.setColumnWidth(self.squeeze, narrowed)
