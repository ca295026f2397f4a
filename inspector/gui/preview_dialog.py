"""The preview of a repair: its summary and warnings, a coloured unified diff per file, Write/Cancel.

The diff is :func:`inspector.plan.file_diff` of the very plan that Write applies, so what the
user reads is what gets written (``apply_plan`` re-checks every file's fingerprint first).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QSyntaxHighlighter, QTextCharFormat
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QTabWidget,
    QVBoxLayout,
)

from inspector.crosscheck import FileVerdict
from inspector.gui.crosscheck_panel import CrosscheckPanel
from inspector.gui.resources import colours
from inspector.gui.session_data import ACTIONS, plan_applies
from inspector.linkcheck import LINKS_KEY
from inspector.plan import Plan, file_diff
from inspector.textsafe import safe_text

DIFF_LIMIT = 3_000_000  # characters of diff text shown per file


class DiffHighlighter(QSyntaxHighlighter):
    """Green for added lines, red for removed, blue for hunk headers."""

    def __init__(self, document):
        super().__init__(document)
        c = colours()
        self._formats = {}
        for key, colour in (("+", c.added), ("-", c.removed), ("@", c.hunk), ("h", c.file_header)):
            fmt = QTextCharFormat()
            fmt.setForeground(colour)
            self._formats[key] = fmt

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt's name
        if text.startswith(("+++", "---")):
            key = "h"
        elif text.startswith("@@"):
            key = "@"
        elif text.startswith("+"):
            key = "+"
        elif text.startswith("-"):
            key = "-"
        else:
            return
        self.setFormat(0, len(text), self._formats[key])


def _plain_label(text: str, object_name: str = "") -> QLabel:
    label = QLabel(safe_text(text))
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if object_name:
        label.setObjectName(object_name)
    return label


def _diff_view(text: str) -> QPlainTextEdit:
    view = QPlainTextEdit()
    view.setObjectName("DiffView")
    view.setReadOnly(True)
    view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    if len(text) > DIFF_LIMIT:
        text = text[:DIFF_LIMIT] + "\n… (diff cut for display; the whole change is written)"
    view.setPlainText(safe_text(text))
    view.highlighter = DiffHighlighter(view.document())
    return view


class PreviewDialog(QDialog):
    """Shows one plan; ``exec()`` returns Accepted when the user pressed Write.

    :meth:`start_crosscheck` adds the check with the user's hermes-webui: its line, a tab per
    file that differs, and ``write_hermes_requested`` (hermes' own result, for the safe write path).
    """

    write_hermes_requested = Signal(object)  # Plan

    def __init__(self, plan: Plan, parent=None):
        super().__init__(parent)
        self.plan = plan
        label = ACTIONS.get(plan.action, plan.action)
        self.setWindowTitle(f"Preview: {label}")
        self.setObjectName("PreviewDialog")
        self.resize(980, 700)
        layout = QVBoxLayout(self)
        target = plan.session_id or "all eligible sessions"
        heading = _plain_label(f"{label} — {target}", "HeaderTitle")
        layout.addWidget(heading)
        if plan.refusal:
            layout.addWidget(_plain_label(f"Refused: {plan.refusal}", "Refusal"))
        self.summary = _plain_label("\n".join(f"• {line}" for line in plan.summary) or "No summary.", "Summary")
        layout.addWidget(self.summary)
        self.warnings = _plain_label("\n".join(f"⚠ {line}" for line in plan.warnings), "Warnings")
        self.warnings.setStyleSheet(f"color: {colours().file_header.name()};")
        self.warnings.setVisible(bool(plan.warnings))
        layout.addWidget(self.warnings)

        self.tabs = QTabWidget()
        self.diffs: list[QPlainTextEdit] = []
        for change in plan.changes:
            view = _diff_view(f"{change.kind}: {change.path}\n" + file_diff(change))
            self.diffs.append(view)
            self.tabs.addTab(view, f"{change.kind} {change.path.name}")
            self.tabs.setTabToolTip(self.tabs.count() - 1, str(change.path))
        if not plan.changes:
            self.tabs.addTab(_plain_label("Nothing to write."), "No changes")
        self.crosscheck: CrosscheckPanel | None = None
        self.crosscheck_diffs: list[QPlainTextEdit] = []
        layout.addWidget(self.tabs, 1)

        # Files outside the home (a linked sessions folder or .bak, STATE_DIR= in webui.ctl.env):
        # their real targets are in the warnings above; Write waits for an explicit yes.
        links = plan.result.get(LINKS_KEY) if isinstance(plan.result, dict) else None
        self.confirm_links: QCheckBox | None = None
        if links:
            self.confirm_links = QCheckBox(safe_text(
                f"Follow the link{'s' if len(links) > 1 else ''} that leave{'' if len(links) > 1 else 's'} the "
                "home: read and write the real targets named above"))
            self.confirm_links.setObjectName("ConfirmLinks")
            layout.addWidget(self.confirm_links)

        self.buttons = QDialogButtonBox()
        # Return never writes: Cancel is the default button, and Write is never "auto default" (a
        # focused Write would otherwise take Return). Write needs a click, Space on it, or Alt+W.
        self.write_button = self.buttons.addButton("&Write", QDialogButtonBox.ButtonRole.AcceptRole)
        self.write_button.setAutoDefault(False)
        self.write_button.setDefault(False)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.cancel_button.setAutoDefault(True)
        self.write_button.setEnabled(plan_applies(plan) and self.confirm_links is None)
        if self.confirm_links is not None:
            self.confirm_links.toggled.connect(
                lambda on: self.write_button.setEnabled(plan_applies(plan) and on))
        self.write_button.setToolTip("Back up the current files, then write exactly this diff "
                                     "(refused if a file changed since the preview). Shortcut: Alt+W; "
                                     "Return cancels")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.cancel_button.setDefault(True)
        layout.addWidget(self.buttons)

    def diff_text(self) -> str:
        return "\n".join(view.toPlainText() for view in self.diffs)

    def start_crosscheck(self, runner, home, settings) -> CrosscheckPanel:
        """Check this plan with the user's hermes-webui, off the GUI thread; stopped when the dialog closes."""
        panel = CrosscheckPanel(self.plan, home, runner, settings, self)
        self.layout().insertWidget(self.layout().indexOf(self.tabs), panel)
        panel.result_ready.connect(self._show_crosscheck)
        panel.write_requested.connect(self._write_hermes)
        self.finished.connect(lambda _=None: panel.stop())
        self.crosscheck = panel
        panel.start()
        return panel

    def _show_crosscheck(self, result) -> None:
        for view in self.crosscheck_diffs:
            self.tabs.removeTab(self.tabs.indexOf(view))
        self.crosscheck_diffs = []
        for verdict in result.differing():
            self._add_hermes_tab(verdict)

    def _add_hermes_tab(self, verdict: FileVerdict) -> None:
        view = _diff_view(f"{verdict.path}: the inspector's result (-) and your hermes-webui's (+)\n"
                          + verdict.diff())
        self.crosscheck_diffs.append(view)
        self.tabs.addTab(view, f"hermes-webui differs: {verdict.path.name}")
        self.tabs.setTabToolTip(self.tabs.count() - 1, str(verdict.path))

    def _write_hermes(self, plan) -> None:
        self.write_hermes_requested.emit(plan)
        self.reject()
