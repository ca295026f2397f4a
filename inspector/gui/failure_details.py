"""The status bar's "Details…" button: what the last failed task said, with its traceback.

A failed task's message is shown where its work belongs (the status bar, the home's line); this
button keeps the whole story (the traceback, and a child process's traceback chained to it) one
click away, and names the log file where every failure is kept.
"""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QToolButton, QWidget

from inspector.gui.workers import TaskRunner
from inspector.log import log_path
from inspector.textsafe import one_line, safe_text

DETAILS_STYLE = "QTextEdit { min-width: 720px; min-height: 280px; }"


class FailureDetails(QToolButton):
    """Hidden until a task of ``runner`` fails; then "Details…" opens the message and traceback."""

    def __init__(self, runner: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("FailureDetails")
        self.setText("Details…")
        self.setToolTip("What failed, with its traceback")
        self.last: tuple[str, str, str] | None = None  # label, message, traceback
        self.dialog: QMessageBox | None = None
        self.hide()
        runner.failure.connect(self.record)
        self.clicked.connect(self.show_details)

    def record(self, label: str, message: str, details: str) -> None:
        self.last = (label, message, details)
        self.setToolTip(safe_text(f"{label.rstrip('…')} failed: {one_line(message, 200)}"))
        self.show()

    def show_details(self) -> QMessageBox | None:
        if self.last is None:
            return None
        label, message, details = self.last
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "What failed",
            safe_text(f"{label.rstrip('…')} failed"),
            QMessageBox.StandardButton.Close,
            self.window(),
        )
        box.setInformativeText(safe_text(f"{message}\n\nEvery failure is kept in {log_path()}."))
        box.setDetailedText(safe_text(details))
        box.setStyleSheet(DETAILS_STYLE)  # a traceback needs room: QMessageBox sizes itself to its label
        box.finished.connect(self.hide)  # seen: the button goes until the next failure
        self.dialog = box
        box.open()
        return box
