"""The status bar's permanent widgets that follow the window's TaskRunner: what is running, a busy
bar (with the progress when a task reports it), Cancel, and "Details…" of the last failed task."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QProgressBar, QStatusBar, QToolButton

from inspector.gui.failure_details import FailureDetails
from inspector.gui.session_view import plain_label
from inspector.gui.workers import TaskRunner


class RunnerStatus(QObject):
    """Adds the runner's widgets to ``bar`` and keeps them in step with ``runner``."""

    def __init__(self, bar: QStatusBar, runner: TaskRunner):
        super().__init__(bar)
        self.activity = plain_label(wrap=False)
        self.busy = QProgressBar()
        self.busy.setMaximumWidth(140)
        self.busy.setTextVisible(False)
        self.busy.setRange(0, 0)
        self.busy.hide()
        self.cancel_button = QToolButton()
        self.cancel_button.setText("Cancel")
        self.cancel_button.clicked.connect(runner.cancel_all)
        self.cancel_button.hide()
        bar.addPermanentWidget(self.activity)
        bar.addPermanentWidget(self.busy)
        bar.addPermanentWidget(self.cancel_button)
        self.failure_details = FailureDetails(runner)  # "Details…" of the last failed task
        runner.activity.connect(self._on_activity)
        runner.progress.connect(self._on_progress)

    def _on_activity(self, text: str) -> None:
        self.activity.setText(text)
        busy = bool(text)
        self.busy.setVisible(busy)
        self.cancel_button.setVisible(busy)
        if busy:
            self.busy.setRange(0, 0)

    def _on_progress(self, done: int, total: int) -> None:
        if total > 0:
            self.busy.setRange(0, total)
            self.busy.setValue(done)
