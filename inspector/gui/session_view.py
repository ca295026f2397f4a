"""The right-hand side of the window: the selected session's header, its findings with one button
per repair, and its transcript beside its run journal (and a Raw tab).

Widgets only: the window (:mod:`inspector.gui.main_window`) gives them a session's data and its plans.
"""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from inspector.export import format_time
from inspector.finding_words import FindingWords, blocked_reason, words_for
from inspector.findings import Finding
from inspector.gui.compare_view import CompareView
from inspector.gui.find_bar import FindBar
from inspector.gui.flow_layout import FlowLayout, wrap_policy
from inspector.gui.journal_view import JournalView
from inspector.gui.raw_view import RawView
from inspector.gui.resources import health_icon
from inspector.gui.tooltip import plain_tooltip
from inspector.gui.transcript_view import NEXT_TURN_MS, TranscriptView, age_words
from inspector.plan import Plan
from inspector.present.plans import PlanSummary
from inspector.present.session_data import (
    ACTIONS,
    ActionShortcuts,
    JournalGlance,
    SessionData,
    plan_applies,
    plan_tooltip,
)
from inspector.textsafe import one_line, safe_text

MAX_FINDINGS_SHOWN = 5
# Each repair button's own shortcut (Repair menu): Ctrl+1 for the registry's first action, and so on.
REPAIR_SHORTCUTS = ActionShortcuts()


def plain_label(text: str = "", name: str = "", wrap: bool = True) -> QLabel:
    """A label that shows its text as plain text (never as rich text: titles come from files)."""
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(wrap)
    if name:
        label.setObjectName(name)
    return label


# Finding kinds that say the same fact as other kinds (the key yields to any of them): the view
# shows the fact once. hermes' audit says "state.db has this chat, its sidecar is missing" (or, for
# an empty one, "an empty chat with no file") as the inspector's own "only state.db has this chat"
# does; the audit's line stays.
SAME_FACT = {"sidecar_missing": ("state_db_missing_sidecar", "state_db_orphan_webui_row")}


def merge_findings(detail: list[Finding], row: list[Finding]) -> list[Finding]:
    """The session view's findings: the detailed ones, plus the list's (hermes' audit items
    among them) that say something the detailed ones do not; worst first."""
    kinds = {f.kind for f in detail}
    merged = list(detail) + [f for f in row if f.kind not in kinds]
    present = {f.kind for f in merged}
    merged = [f for f in merged if not present.intersection(SAME_FACT.get(f.kind, ()))]  # one line per fact
    rank = {"error": 0, "warning": 1, "info": 2}
    return sorted(merged, key=lambda f: rank.get(f.severity, 3))


class SessionHeader(QWidget):
    """Title, id, profile, file paths, and the running/pending turn with its age."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.title = plain_label(name="HeaderTitle")
        self.ids = plain_label(name="HeaderDetails")
        self.ids.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.paths = plain_label(name="HeaderDetails")
        self.paths.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.pending = plain_label(name="PendingBanner")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.title)
        layout.addWidget(self.ids)
        layout.addWidget(self.paths)
        layout.addWidget(self.pending)
        self.set_data(None, None)

    def set_data(self, data: SessionData | None, where: str | None) -> None:
        if data is None:
            self.title.setText("No session selected")
            self.ids.setText("Pick a session on the left.")
            self.paths.setText("")
            self.pending.hide()
            return
        d = data.detail
        self.title.setText(one_line(d.title, 160) or "(untitled)")
        ids = [f"id {safe_text(d.session_id)}", f"profile {one_line(d.profile or '-', 40)}"]
        if where:
            ids.append(f"lives in {where}")
        agent_only = d.sidecar_raw is None and any(f.kind == "agent_only_chat" for f in d.findings)
        if d.sidecar is not None:
            ids.append(f"{len(d.messages)} messages")
        else:
            ids.append("no WebUI file (a chat of the agent itself)" if agent_only else "no readable sidecar")
        if data.runs:
            ids.append(f"{len(data.runs)} run journal(s)")
        self.ids.setText("  ·  ".join(ids))
        paths = []
        if d.sidecar_path is not None:
            if d.sidecar_raw is not None:
                paths.append(f"sidecar {d.sidecar_path} ({len(d.sidecar_raw.data):,} bytes)")
            elif not agent_only:  # the agent's own chat never has one: nothing is missing
                paths.append(f"sidecar {d.sidecar_path} (missing)")
        if d.bak_path is not None:
            paths.append(f".bak {d.bak_path} ({d.bak_messages} messages)")
        for view in d.state_db:
            paths.append(f"state.db [{view.profile}] {view.path}")
        if d.core is not None:
            paths.append(f"core {d.core_path}")
        self.paths.setText(safe_text("\n".join(paths)))
        sc = d.sidecar or {}
        stream, prompt = sc.get("active_stream_id"), sc.get("pending_user_message")
        if stream or prompt:
            started = sc.get("pending_started_at")
            when = ""
            if isinstance(started, (int, float)) and not isinstance(started, bool) and started > 0:
                when = f", started {format_time(started)} ({age_words(time.time() - started)} ago)"
            self.pending.setText(
                f"Turn still marked running: stream {one_line(stream, 40) or '-'}{when}. "
                f"Pending prompt: {one_line(prompt, 120)!r}"
            )
            self.pending.show()
        else:
            self.pending.hide()


class FindingsBar(QFrame):
    """The session's findings in plain words, and one button per repair (enabled when it applies)."""

    action_clicked = Signal(str)
    plans_changed = Signal()  # the buttons' enabled states changed (the Repair menu follows them)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("FindingsBar")
        self._lines = QVBoxLayout()
        self._lines.setSpacing(1)
        self.buttons: dict[str, QPushButton] = {}
        self._findings: list[Finding] | None = None
        self._plans: dict[str, PlanSummary | str] | None = None
        self.words: list[FindingWords] = []  # what the lines say (for the tests)
        holder = QWidget()
        wrap_policy(holder)
        row = FlowLayout(holder)  # on a narrow window the buttons wrap instead of being cut
        row.setContentsMargins(0, 0, 0, 0)
        for action, label in ACTIONS.items():
            b = QPushButton(label)
            b.setProperty("repair", True)
            b.setObjectName(f"action-{action}")
            b.setEnabled(False)
            b.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # Tab reaches an enabled repair; Space presses it
            b.clicked.connect(lambda _=False, a=action: self.action_clicked.emit(a))
            self.buttons[action] = b
            row.addWidget(b)
        self.planning = plain_label("", wrap=False)
        row.addWidget(self.planning)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.addLayout(self._lines)
        layout.addWidget(holder)

    def set_findings(self, findings: list[Finding] | None) -> None:
        self._findings = findings
        self._render()

    def _render(self) -> None:
        """One line per finding, in plain words (inspector.finding_words): what is wrong, the button
        to press or why it cannot be pressed (inline, not only on hover), what to tell the user.
        The finding's technical message (ids, raw times) is the line's tooltip."""
        while self._lines.count():
            item = self._lines.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        findings, plans = self._findings, self._plans
        self.words = []
        if findings is None:
            return
        if not findings:
            self._lines.addWidget(self._line("ok", "No findings: this session looks healthy."))
            return
        for f in findings[:MAX_FINDINGS_SHOWN]:
            words = self.words_of(f, plans)
            self.words.append(words)
            line = self._line(f.severity, words.sentence())
            line.setToolTip(plain_tooltip(f"Details: {safe_text(f.message)}"))
            self._lines.addWidget(line)
        if len(findings) > MAX_FINDINGS_SHOWN:
            more = self._line("info", f"… and {len(findings) - MAX_FINDINGS_SHOWN} more finding(s)")
            more.setToolTip(
                plain_tooltip(
                    "\n".join(self.words_of(f, plans).sentence() for f in findings[MAX_FINDINGS_SHOWN:])
                )
            )
            self._lines.addWidget(more)

    @staticmethod
    def words_of(f: Finding, plans: dict[str, PlanSummary | str] | None) -> FindingWords:
        if not f.action or f.action not in ACTIONS:
            return words_for(f)
        label, keys = ACTIONS[f.action], REPAIR_SHORTCUTS[f.action]
        if plans is None:
            return words_for(f, label, keys, planning=True)
        plan = plans.get(f.action)
        if plan_applies(plan):
            return words_for(f, label, keys)
        if isinstance(plan, str):
            blocked = blocked_reason(None, None, True, plan_error=one_line(plan, 160))
        elif isinstance(plan, (Plan, PlanSummary)):
            blocked = blocked_reason(plan.refusal, [one_line(s, 160) for s in plan.summary], True)
        else:
            blocked = blocked_reason(None, None, False)
        return words_for(f, label, keys, blocked=blocked)

    @staticmethod
    def _line(severity: str, text: str) -> QWidget:
        w = QWidget()
        h = QHBoxLayout(w)
        h.setContentsMargins(0, 0, 0, 0)
        dot = QLabel()
        dot.setPixmap(health_icon(severity).pixmap(12, 12))
        dot.setToolTip(severity)
        h.addWidget(dot, 0, Qt.AlignmentFlag.AlignTop)
        label = plain_label(safe_text(text), "FindingLine")
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        h.addWidget(label, 1)
        return w

    def set_plans(self, plans: dict[str, PlanSummary | str] | None) -> None:
        self._plans = plans
        self._render()
        self.planning.setText("Planning repairs…" if plans is None else "")
        for action, button in self.buttons.items():
            plan = (plans or {}).get(action)
            button.setEnabled(plans is not None and plan_applies(plan))
            tip = plan_tooltip(action, plan) if plans is not None else "Planning…"
            button.setToolTip(plain_tooltip(f"{tip}\nShortcut: {REPAIR_SHORTCUTS[action]}"))
        self.plans_changed.emit()


class SessionView(QWidget):
    """Header, findings and actions, then transcript beside journal (and a Raw tab)."""

    filled = Signal()  # what a big session shows a turn later is in (see set_data)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.header = SessionHeader()
        self.findings = FindingsBar()
        self.transcript = TranscriptView()
        self.journal = JournalView()
        self.raw = RawView()
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.setObjectName("TranscriptJournalSplit")
        self.split.addWidget(self.transcript)
        self.split.addWidget(self.journal)
        self.split.setStretchFactor(0, 2)
        self.split.setStretchFactor(1, 3)
        self.split.setSizes([360, 540])
        self.split.setChildrenCollapsible(False)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.split, "Transcript && run journal")
        self.tabs.addTab(self.raw, "Raw")
        self.compare = CompareView()  # the sidecar beside its state.db rows or its .bak
        self.tabs.addTab(self.compare, "Compare copies")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 4, 0)
        layout.setSpacing(6)
        layout.addWidget(self.header)
        layout.addWidget(self.findings)
        self.find_bar = FindBar(self)
        layout.addWidget(self.find_bar)
        layout.addWidget(self.tabs, 1)
        self.data: SessionData | None = None
        self._journal_due: SessionData | None = None
        self.transcript.message_selected.connect(self._on_message_selected)
        self.transcript.rendered.connect(self._on_rendered)
        self.transcript.rendered.connect(self.filled)
        self.journal.event_selected.connect(self._on_event_selected)

    def set_data(
        self, data: SessionData | None, where: str | None = None, row_findings: list[Finding] | None = None
    ) -> None:
        """Show a session, over a few turns of the event loop: the header and findings now, the
        transcript's messages from the next turn on, then the run journal and raw tables. Built
        in one go, with the paints that follow, they held the window for 50-100 ms."""
        self.data = data
        self.header.set_data(data, where)
        self.findings.set_findings(merge_findings(data.detail.findings, row_findings or []) if data else None)
        self.findings.set_plans(None if data else {})
        self._journal_due = data
        self.compare.set_data(data)  # works out nothing until its tab is shown
        self.transcript.set_data(data)  # its rendered signal brings the journal (_on_rendered)

    def _on_rendered(self) -> None:
        if self._journal_due is not None:
            QTimer.singleShot(NEXT_TURN_MS, self._fill_journal_later)

    def _fill_journal_later(self) -> None:
        if self._journal_due is not None and self._journal_due is self.data:
            self._fill_journal()
            self.filled.emit()

    def _fill_journal(self) -> None:
        if self._journal_due is not self.data:
            return  # another session came meanwhile (and filled it)
        self._journal_due = None
        self.journal.set_data(self.data)
        self.raw.set_data(self.data)
        selected = self.transcript.selected_message()
        if selected >= 0:
            self.journal.highlight_message(selected)

    def filling(self) -> bool:
        """True while a session's transcript, journal or raw tables are still to be shown (see
        :meth:`set_data`)."""
        return self._journal_due is not None or self.transcript.rendering()

    def show_glance(self, glance: JournalGlance, title: str) -> None:
        """While a session with a big journal is read: its title, and the journal's first lines."""
        self.data = None
        self.header.title.setText(one_line(title, 160) or "(untitled)")
        self.header.ids.setText(f"id {safe_text(glance.session_id)}  ·  reading the session…")
        self.header.paths.setText("")
        self.header.pending.hide()
        self.findings.set_findings(None)
        self.findings.set_plans(None)
        self.transcript.set_data(None)
        self.transcript.browser.setPlainText("Reading the session…")
        self.raw.set_data(None)
        self.compare.set_data(None)
        self.journal.show_glance(glance)

    def _on_message_selected(self, index: int) -> None:
        if self._journal_due is None:  # else _fill_journal highlights it
            self.journal.highlight_message(index)

    def _on_event_selected(self, message: int) -> None:
        self.transcript.highlight_messages({message} if message >= 0 else set(), scroll=message >= 0)
