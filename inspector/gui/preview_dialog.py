"""The preview of a repair: its summary and warnings, a coloured unified diff per file, Write/Cancel.

The dialog shows a :class:`~inspector.present.plans.PlanSummary`: the diff is
:func:`inspector.plan.file_diff` of the very plan that Write applies, rendered where the plan was
made (the worker keeps the plan's bytes), so what the user reads is what gets written
(``apply_plan`` re-checks every file's fingerprint first; a plan made again must be the same).
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QFont, QGuiApplication, QSyntaxHighlighter, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from inspector.crosscheck import FileVerdict
from inspector.gui.crosscheck_panel import CrosscheckPanel
from inspector.gui.resources import colours, palette_switched, remember_palette
from inspector.message_diff import ADDED, CHANGED, REMOVED, MessageDiff
from inspector.plan import Plan
from inspector.present.plans import DIFF_LIMIT, PlanSummary, summarize
from inspector.present.session_data import ACTIONS, plan_applies
from inspector.textsafe import safe_text

PREFERRED_SIZE = QSize(980, 700)
SCREEN_MARGIN = 0.94  # of the screen's free area a preview may take at most (its frame stays on screen)


def fitting_size(widget: QWidget, preferred: QSize) -> QSize:
    """``preferred``, made smaller where the screen the widget (or its parent) is on has less room."""
    anchor = widget.parentWidget() or widget
    screen = anchor.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return preferred
    free = screen.availableGeometry()
    return QSize(
        min(preferred.width(), int(free.width() * SCREEN_MARGIN)),
        min(preferred.height(), int(free.height() * SCREEN_MARGIN)),
    )


class DiffHighlighter(QSyntaxHighlighter):
    """Green for added lines, red for removed, blue for hunk headers."""

    def __init__(self, document):
        super().__init__(document)
        self._formats: dict[str, QTextCharFormat] = {}
        self._pick_colours()

    def _pick_colours(self) -> None:
        c = colours()
        for key, colour in (("+", c.added), ("-", c.removed), ("@", c.hunk), ("h", c.file_header)):
            fmt = QTextCharFormat()
            fmt.setForeground(colour)
            self._formats[key] = fmt

    def recolour(self) -> None:
        """Colour again for the current palette (light/dark switched while the dialog is open)."""
        self._pick_colours()
        self.rehighlight()

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


def keep_on_screen(widget: QWidget) -> None:
    """Move a window whose frame reaches past its screen's free area back inside it."""
    screen = widget.screen()
    if screen is None:
        return
    free, frame = screen.availableGeometry(), widget.frameGeometry()
    x = max(free.left(), min(frame.left(), free.left() + free.width() - frame.width()))
    y = max(free.top(), min(frame.top(), free.top() + free.height() - frame.height()))
    if (x, y) != (frame.left(), frame.top()):
        widget.move(x, y)


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


_MARKS = {ADDED: "+ added", REMOVED: "− removed", CHANGED: "~ changed"}
# A huge change (a chat of thousands of messages rebuilt) lists this many messages, then says how
# many more there are, by kind: a summary by message, never tens of thousands of lines to scroll.
SHOWN_CHANGES = 500


class MessagesView(QWidget):
    """A sidecar's change as the chat will look: each added, changed or removed message, wrapped,
    with previous/next change. A huge change is a list of messages, not of diff lines."""

    def __init__(self, name: str, diff: MessageDiff, parent=None):
        super().__init__(parent)
        self.diff = diff
        self.text = QTextEdit()
        self.text.setObjectName("MessagesView")
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QTextEdit.LineWrapMode.WidgetWidth)
        self.name = name
        self.positions: list[int] = []
        self.current = -1
        self._fill()
        self.previous_button = QPushButton("Previous change")
        self.next_button = QPushButton("Next change")
        for b in (self.previous_button, self.next_button):
            b.setAutoDefault(False)  # Return in the preview only ever cancels
            b.setEnabled(bool(self.positions))
        self.previous_button.clicked.connect(lambda: self.go(-1))
        self.next_button.clicked.connect(lambda: self.go(1))
        row = QHBoxLayout()
        row.addWidget(self.previous_button)
        row.addWidget(self.next_button)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.text, 1)
        self.text.moveCursor(QTextCursor.MoveOperation.Start)

    def _fill(self) -> None:
        """Write the changes into the view, in the current palette's colours."""
        diff, name = self.diff, self.name
        self.text.clear()
        self.positions = []
        c = colours()
        head = QTextCharFormat()
        head.setFontWeight(QFont.Weight.Bold)
        plain = QTextCharFormat()
        cursor = self.text.textCursor()
        lead = diff.summary() + (f" Note: {diff.note}." if diff.note else "")
        cursor.insertText(safe_text(f"{name}: {lead}\n"), head)
        for change in diff.changes[:SHOWN_CHANGES]:
            self.positions.append(cursor.position())
            fmt = QTextCharFormat(head)
            fmt.setForeground({ADDED: c.added, REMOVED: c.removed}.get(change.kind, c.hunk))
            where = (
                f"#{change.after_index}" if change.after_index is not None else f"was #{change.before_index}"
            )
            keys = (
                f" (changed: {', '.join(change.fields[:8])})"
                if change.kind == CHANGED and change.fields
                else ""
            )
            cursor.insertText(
                safe_text(
                    f"\n{_MARKS.get(change.kind, change.kind)} · {change.role or '?'} · {where}{keys}\n"
                ),
                fmt,
            )
            if change.kind == CHANGED and change.before != change.after:
                cursor.insertText(safe_text(f"before: {change.before}\nafter:  {change.after}\n"), plain)
            else:
                cursor.insertText(safe_text((change.after or change.before) or "(no text)") + "\n", plain)
        rest = diff.changes[SHOWN_CHANGES:]
        if rest:
            counts = {k: sum(1 for c in rest if c.kind == k) for k in (ADDED, CHANGED, REMOVED)}
            what = ", ".join(f"{n:,} {k}" for k, n in counts.items() if n)
            cursor.insertText(
                f"\n… and {len(rest):,} more changed messages ({what}), not listed here: "
                "the file's diff tab has every line.\n",
                head,
            )

    def recolour(self) -> None:
        """Write the changes again in the current palette's colours, at the same change."""
        current = self.current
        self._fill()
        self.text.moveCursor(QTextCursor.MoveOperation.Start)
        if current >= 0:
            self.current = current - 1
            self.go(1)

    def go(self, step: int) -> int:
        """Move to the next (1) or previous (-1) change; its index."""
        if not self.positions:
            return -1
        self.current = max(0, min(len(self.positions) - 1, self.current + step))
        cursor = self.text.textCursor()
        cursor.setPosition(self.positions[self.current] + 1)
        self.text.setTextCursor(cursor)
        self.text.ensureCursorVisible()
        return self.current


class PreviewDialog(QDialog):
    """Shows one plan; ``exec()`` returns Accepted when the user pressed Write.

    :meth:`start_crosscheck` adds the check with the user's hermes-webui: its line, a tab per
    file that differs, and ``write_hermes_requested`` (hermes' own result, for the safe write path).
    """

    write_hermes_requested = Signal(object)  # Plan

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        keep_on_screen(self)

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if hasattr(self, "message_views") and palette_switched(self, event):
            self.recolour()
        super().changeEvent(event)

    def recolour(self) -> None:
        """Light/dark switched while the preview is open: its diffs and messages take the new colours."""
        for view in self.diffs + self.crosscheck_diffs:
            highlighter = getattr(view, "highlighter", None)
            if highlighter is not None:
                highlighter.recolour()
        for messages in self.message_views:
            messages.recolour()
        self.warnings.setStyleSheet(f"color: {colours().file_header.name()};")

    def __init__(self, plan: PlanSummary | Plan, parent=None):
        super().__init__(parent)
        remember_palette(self)
        if isinstance(plan, Plan):  # made in this process (a kit, a test): summarized here, kept beside
            plan = summarize(plan, keep_local=True)
        self.plan = plan
        label = ACTIONS.get(plan.action, plan.action)
        self.setWindowTitle(f"Preview: {label}")
        self.setObjectName("PreviewDialog")
        self.resize(fitting_size(self, PREFERRED_SIZE))
        layout = QVBoxLayout(self)
        target = plan.session_id or "all eligible sessions"
        heading = _plain_label(f"{label} — {target}", "HeaderTitle")
        layout.addWidget(heading)
        if plan.refusal:
            layout.addWidget(_plain_label(f"Refused: {plan.refusal}", "Refusal"))
        self.summary = _plain_label(
            "\n".join(f"• {line}" for line in plan.summary) or "No summary.", "Summary"
        )
        layout.addWidget(self.summary)
        self.warnings = _plain_label("\n".join(f"⚠ {line}" for line in plan.warnings), "Warnings")
        self.warnings.setStyleSheet(f"color: {colours().file_header.name()};")
        self.warnings.setVisible(bool(plan.warnings))
        layout.addWidget(self.warnings)

        self.tabs = QTabWidget()
        self.diffs: list[QPlainTextEdit] = []
        self.message_views: list[MessagesView] = []
        for change in plan.changes:  # first: each chat's change message by message
            diff = change.messages
            if diff is not None:
                view = MessagesView(change.path.name, diff)
                self.message_views.append(view)
                self.tabs.addTab(view, f"Messages {change.path.name}")
                self.tabs.setTabToolTip(
                    self.tabs.count() - 1,
                    "The change as the chat will show it: messages added, changed or removed",
                )
        for change in plan.changes:
            view = _diff_view(f"{change.kind}: {change.path}\n" + change.diff)
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
        links = plan.links
        self.confirm_links: QCheckBox | None = None
        if links:
            self.confirm_links = QCheckBox(
                safe_text(
                    f"Follow the link{'s' if len(links) > 1 else ''} that leave{'' if len(links) > 1 else 's'} the "
                    "home: read and write the real targets named above"
                )
            )
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
                lambda on: self.write_button.setEnabled(plan_applies(plan) and on)
            )
        self.write_button.setToolTip(
            "Back up the current files, then write exactly this diff "
            "(refused if a file changed since the preview). Shortcut: Alt+W; "
            "Return cancels"
        )
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
        view = _diff_view(
            f"{verdict.path}: the inspector's result (-) and your hermes-webui's (+)\n" + verdict.diff()
        )
        self.crosscheck_diffs.append(view)
        self.tabs.addTab(view, f"hermes-webui differs: {verdict.path.name}")
        self.tabs.setTabToolTip(self.tabs.count() - 1, str(verdict.path))

    def _write_hermes(self, plan) -> None:
        self.write_hermes_requested.emit(plan)
        self.reject()
