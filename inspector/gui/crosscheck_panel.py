"""The preview's "check with your hermes-webui" line: same bytes, or the difference.

When the preview opens, :func:`inspector.crosscheck.crosscheck_job` runs in one of the window's
child processes (it copies the files, runs hermes' own function in hermes' interpreter and
compares; the GUI thread never waits). The line then says "Same bytes as your hermes-webui
(version …)" or what differs; the dialog adds a diff per differing file, and "Write
hermes-webui's result" hands hermes' own files to the window's safe write path (fingerprints,
backups, log, undo). The hermes-webui found is the running server's, else the folder remembered
in the settings (``crosscheck/hermes_webui``); "Choose hermes-webui…" picks another one.
"""

from __future__ import annotations

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton, QWidget

from inspector.crosscheck import DIFFERENT, IDENTICAL, NOT_FOUND, CrossResult, crosscheck_job
from inspector.gui.workers import TaskRunner
from inspector.home import Home
from inspector.jobs import pool
from inspector.jobs.plans import previewed_crosscheck_job
from inspector.plan import Plan
from inspector.present.plans import PlanSummary
from inspector.textsafe import safe_text

CHANNEL = "crosscheck"
SETTING_CHECKOUT = "crosscheck/hermes_webui"
SETTING_PYTHON = "crosscheck/hermes_python"


class CrosscheckPanel(QWidget):
    """One line of the preview: the check's state, "Choose hermes-webui…", and "Write hermes-webui's result"."""

    result_ready = Signal(object)  # CrossResult
    write_requested = Signal(object)  # Plan: hermes' own result

    def __init__(self, plan: PlanSummary, home: Home, runner: TaskRunner, settings: QSettings, parent=None):
        super().__init__(parent)
        self.setObjectName("CrosscheckPanel")
        self.plan, self.home, self.runner, self.settings = plan, home, runner, settings
        self.result: CrossResult | None = None
        self.hermes_plan: Plan | None = None  # hermes' own result as a plan (when it differs)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.status = QLabel()
        self.status.setObjectName("CrosscheckStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.status, 1)
        self.choose_button = QPushButton("Choose hermes-webui…")
        self.choose_button.setToolTip("Check with another hermes-webui checkout (remembered for next time)")
        self.choose_button.clicked.connect(self.choose)
        layout.addWidget(self.choose_button)
        self.write_button = QPushButton("Write hermes-webui's result")
        self.write_button.setToolTip(
            "Back up the current files, then write exactly the files your hermes-webui "
            "wrote in its private copy (refused if a file changed since)"
        )
        self.write_button.clicked.connect(self._write)
        for button in (self.choose_button, self.write_button):  # in the preview, Return only ever cancels
            button.setAutoDefault(False)
        self.write_button.hide()
        layout.addWidget(self.write_button)

    def _setting(self, key: str) -> str | None:
        value = self.settings.value(key)
        return str(value) if isinstance(value, str) and value else None

    def start(self, chosen: str | None = None) -> None:
        """Check the plan off the GUI thread; the line says so meanwhile."""
        self.result = None
        self.hermes_plan = None
        self.write_button.hide()
        self.status.setText("Checking with your hermes-webui…")
        home, plan = self.home, self.plan
        remembered, python = self._setting(SETTING_CHECKOUT), self._setting(SETTING_PYTHON)

        def work(token, progress):
            if plan.local is not None:  # a plan made in this process
                return pool.run_job_steps(
                    crosscheck_job, home, plan.local, chosen, remembered, python, check=token.check
                )
            # the worker keeps the plan: the check runs on it there
            return pool.run_job_steps(
                previewed_crosscheck_job, home, plan, chosen, remembered, python, check=token.check
            )

        self.runner.start(
            CHANNEL, work, self._on_result, label="Checking with hermes-webui…", on_error=self._on_error
        )

    def stop(self) -> None:
        self.runner.cancel(CHANNEL)

    def choose(self) -> None:
        start = self._setting(SETTING_CHECKOUT) or ""
        folder = QFileDialog.getExistingDirectory(self, "Choose your hermes-webui checkout", start)
        if folder:
            self.start(chosen=folder)

    def _on_result(self, result: CrossResult) -> None:
        self.result = result
        text = result.headline()
        if result.status == NOT_FOUND:
            text += " — or choose its folder."
        elif result.refusal and result.ran:
            text += f" (the inspector refuses this plan: {result.refusal})"
        self.status.setText(safe_text(text))
        self.status.setProperty("verdict", result.status)
        self.status.setStyleSheet("" if result.status == IDENTICAL else "font-weight: bold;")
        if result.ran and result.install is not None:
            self.settings.setValue(SETTING_CHECKOUT, str(result.install.checkout))
        hermes_plan = self.hermes_plan = result.hermes_plan()  # hashes every file: once, here
        self.write_button.setVisible(result.status == DIFFERENT)
        self.write_button.setEnabled(hermes_plan is not None and hermes_plan.refusal is None)
        self.result_ready.emit(result)

    def _on_error(self, message: str) -> None:
        self.status.setText(safe_text(f"Could not check with your hermes-webui: {message}"))

    def _write(self) -> None:
        plan = self.hermes_plan
        if plan is not None and plan.refusal is None:
            self.write_requested.emit(plan)
