"""The main window: session list on the left, the selected session on the right.

The window is thin: every scan, parse, plan and write is a core call (the same the command
line makes) run on a worker thread through :class:`inspector.gui.workers.TaskRunner`.
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import (
    QEvent,
    QFileSystemWatcher,
    QItemSelectionModel,
    QModelIndex,
    QSettings,
    Qt,
    QTimer,
    QUrl,
    Signal,
)
from PySide6.QtGui import QAction, QDesktopServices, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector import statedir
from inspector.export import format_time, transcript_json_bytes, transcript_markdown
from inspector.finding_words import FindingWords, blocked_reason, state_db_banner, words_for
from inspector.findings import Finding
from inspector.gui.failure_details import FailureDetails
from inspector.gui.find_bar import FindBar
from inspector.gui.flow_layout import FlowLayout, wrap_policy
from inspector.gui.help_dialogs import AboutDialog, ShortcutsDialog
from inspector.gui.history_dialog import HistoryDialog
from inspector.gui.journal_view import JournalView
from inspector.gui.preview_dialog import PreviewDialog
from inspector.gui.qtypes import single_shot, unshaped_text
from inspector.gui.raw_view import RawView
from inspector.gui.resources import health_icon, icon
from inspector.gui.session_model import (
    ROW_ROLE,
    SESSION_ID_ROLE,
    Column,
    SessionTableModel,
)
from inspector.gui.support import SupportActions
from inspector.gui.tooltip import plain_tooltip
from inspector.gui.transcript_view import NEXT_TURN_MS, TranscriptView, age_words
from inspector.gui.welcome import WelcomePage
from inspector.gui.workers import TaskRunner
from inspector.home import Home, check_readable, locate_home
from inspector.home_choice import home_for_chosen_folder
from inspector.jobs import plans as kept_plans
from inspector.jobs import pool
from inspector.jobs.offload import (
    SearchHits,
    load_catalogue_offloaded,
    prestart,
    quick_rows_offloaded,
    search_offloaded,
)
from inspector.jobs.plans import apply_job, plan_session_job
from inspector.jobs.session import index_glance, load_session_data_offloaded
from inspector.linkcheck import recheck_before_write
from inspector.plan import ApplyError, Plan, WriteLog, WriteRecord, apply_plan, undo_write
from inspector.present.plans import PlanSummary
from inspector.present.rows import HomeListing, finding_of
from inspector.present.session_data import (
    ACTIONS,
    ActionShortcuts,
    JournalGlance,
    PlanFailure,
    SessionData,
    glance_journal,
    plan_applies,
    plan_tooltip,
    recommended_actions,
)
from inspector.quickscan import quick_rows
from inspector.store.journal import RUN_JOURNAL_DIR
from inspector.textsafe import one_line, safe_text

DEBOUNCE_MS = 500
MAX_RECENT = 8
MAX_FINDINGS_SHOWN = 5
FIRST_ROWS = 200  # the quick look shows the newest sessions first, then all of them
QUICK_ALL_AFTER_MS = 1500  # ... all of them only when the complete catalogue is not in by then
OPTIONAL_COLUMNS = (Column.SESSION_ID, Column.PROFILE)  # hidden until the header's menu shows them
# Each repair button's own shortcut (Repair menu): Ctrl+1 for the registry's first action, and so on.
REPAIR_SHORTCUTS = ActionShortcuts()


def _plain(text: str = "", name: str = "", wrap: bool = True) -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(wrap)
    if name:
        label.setObjectName(name)
    return label


# ---------------------------------------------------------------- session view parts


# What a failed write or undo left on disk (ApplyError.outcome), as the status bar says it.
WRITE_OUTCOME_HEADS = {
    "nothing": "Nothing was written",
    "partial": "Partly written",
    "all": "Written",  # the message goes on: "every file was written, but the write log could not be..."
}


def _refusal_as_result(write, *args):
    """Run a write; a refusal or failure comes back as the ApplyError (its ``outcome`` says what is on disk)."""
    try:
        return write(*args)
    except ApplyError as exc:
        return exc


def merge_findings(detail: list[Finding], row: list[Finding]) -> list[Finding]:
    """The session view's findings: the detailed ones, plus the list's (hermes' audit items
    among them) that say something the detailed ones do not; worst first."""
    kinds = {f.kind for f in detail}
    merged = list(detail) + [f for f in row if f.kind not in kinds]
    rank = {"error": 0, "warning": 1, "info": 2}
    return sorted(merged, key=lambda f: rank.get(f.severity, 3))


class SessionHeader(QWidget):
    """Title, id, profile, file paths, and the running/pending turn with its age."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.title = _plain(name="HeaderTitle")
        self.ids = _plain(name="HeaderDetails")
        self.ids.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.paths = _plain(name="HeaderDetails")
        self.paths.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.pending = _plain(name="PendingBanner")
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
        ids.append(f"{len(d.messages)} messages" if d.sidecar is not None else "no readable sidecar")
        if data.runs:
            ids.append(f"{len(data.runs)} run journal(s)")
        self.ids.setText("  ·  ".join(ids))
        paths = []
        if d.sidecar_path is not None:
            size = f" ({len(d.sidecar_raw.data):,} bytes)" if d.sidecar_raw is not None else " (missing)"
            paths.append(f"sidecar {d.sidecar_path}{size}")
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
            self.pending.setText(f"Turn still marked running: stream {one_line(stream, 40) or '-'}{when}. "
                                 f"Pending prompt: {one_line(prompt, 120)!r}")
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
        self.planning = _plain("", wrap=False)
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
            more.setToolTip(plain_tooltip("\n".join(self.words_of(f, plans).sentence()
                                                    for f in findings[MAX_FINDINGS_SHOWN:])))
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
        label = _plain(safe_text(text), "FindingLine")
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

    def set_data(self, data: SessionData | None, where: str | None = None,
                 row_findings: list[Finding] | None = None) -> None:
        """Show a session, over a few turns of the event loop: the header and findings now, the
        transcript's messages from the next turn on, then the run journal and raw tables. Built
        in one go, with the paints that follow, they held the window for 50-100 ms."""
        self.data = data
        self.header.set_data(data, where)
        self.findings.set_findings(merge_findings(data.detail.findings, row_findings or []) if data else None)
        self.findings.set_plans(None if data else {})
        self._journal_due = data
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
        self.journal.show_glance(glance)

    def _on_message_selected(self, index: int) -> None:
        if self._journal_due is None:  # else _fill_journal highlights it
            self.journal.highlight_message(index)

    def _on_event_selected(self, message: int) -> None:
        self.transcript.highlight_messages({message} if message >= 0 else set(), scroll=message >= 0)


# ---------------------------------------------------------------- the window


class MainWindow(QMainWindow):
    """Hermes Session Inspector."""

    settled = Signal()  # nothing loading and the requested selection shown (used by --screenshot)

    def __init__(self, settings: QSettings | None = None, runner: TaskRunner | None = None):
        super().__init__()
        self.setWindowTitle("Hermes Session Inspector")
        self.setWindowIcon(icon("app"))
        self.settings = settings if settings is not None else QSettings()
        self.runner = runner or TaskRunner(self)
        prestart()  # the child processes (catalogue, sessions, plans) start and import the core meanwhile
        self.home: Home | None = None
        self.catalogue: HomeListing | None = None  # the complete catalogue's count and home findings
        self.data: SessionData | None = None
        self.plans: dict[str, PlanSummary | str] | None = None
        self.session_id_role = SESSION_ID_ROLE
        self.support = SupportActions(self)  # support bundles and repair kits
        self.preview: PreviewDialog | None = None
        self.last_write: str | None = None
        self.last_write_about: tuple[str, str | None] = ("", None)  # (action, session id) of last_write
        self._pending_select: str | None = None
        self._auto_select = True
        self._loaded = False
        self._restoring = False  # the list is putting the current row back after new rows came
        self._kept_session: str | None = None  # the current row's session while the list resets

        self.model = SessionTableModel(self)  # it sorts and filters itself: no proxy model
        self._build_list()
        self.view = SessionView()
        self.view.findings.action_clicked.connect(self.preview_action)
        self.view.findings.plans_changed.connect(self._sync_repair_menu)
        self.view.filled.connect(self._maybe_settled)
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.setObjectName("MainSplit")
        self.split.addWidget(self.list_panel)
        self.split.addWidget(self.view)
        self.split.setStretchFactor(0, 2)  # a smaller window takes from both sides, mostly the view's
        self.split.setStretchFactor(1, 3)
        self.split.setSizes([600, 900])
        central = QWidget()  # the support-bundle banner above the panes (hidden unless a bundle is open)
        central_layout = QVBoxLayout(central)
        central_layout.setContentsMargins(0, 0, 0, 0)
        central_layout.setSpacing(0)
        central_layout.addWidget(self.support.banner)
        self.state_db_banner = _plain(name="StateDbBanner")  # an unreadable state.db: what is missing
        self.state_db_banner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.state_db_banner.setContentsMargins(8, 6, 8, 6)
        self.state_db_banner.setStyleSheet("QLabel#StateDbBanner { background: palette(alternate-base); "
                                           "border-bottom: 2px solid #c0392b; }")
        self.state_db_banner.hide()
        central_layout.addWidget(self.state_db_banner)
        central_layout.addWidget(self.split, 1)
        self.welcome = WelcomePage()  # while no home is open
        self.welcome.open_home_requested.connect(self.choose_home)
        self.welcome.open_demo_requested.connect(self.open_demo)
        self.welcome.recent_requested.connect(self.open_recent)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.welcome)
        self.stack.addWidget(central)
        self.setCentralWidget(self.stack)
        self.welcome.set_recent(self.recent_homes())
        # The demo: a home in a temporary folder, its write log and backups beside it (not in the
        # user's state folder) while it is open.
        self._demo_dir: tempfile.TemporaryDirectory | None = None
        self.demo_home: Home | None = None
        self._state_env: str | None = None  # HERMES_INSPECTOR_STATE_DIR before the demo set it
        self._demo_env_set = False
        self._build_status()
        self._build_menus()

        self.watcher = QFileSystemWatcher(self)
        self.watcher.directoryChanged.connect(self._on_disk_change)
        self.watcher.fileChanged.connect(self._on_disk_change)
        self.debounce = single_shot(self, DEBOUNCE_MS, self.refresh)
        self.search_timer = single_shot(self, 250, self._start_text_search)
        # The selected row's session is read two turns of the event loop after the one that moved
        # the selection: a jump far down the list repaints every row of it, and that paint and the
        # session view's first changes are then two shorter stalls, not one long one. A timer
        # started in the selection's turn could fire right after the paint, before timers and
        # input that came due during it; one armed by a first, zero timer (which fires after the
        # paint) waits for those. Racing through the list reads only the row it stops on.
        self._due_session: str | None = None
        self.due_timer = single_shot(self, 0, self._load_due)
        self.arm_timer = single_shot(self, 0, self.due_timer.start)

        self.runner.activity.connect(self._on_activity)
        self.runner.progress.connect(self._on_progress)
        self.runner.idle.connect(self._maybe_settled)
        self.resize(1500, 900)
        self.layout().activate()  # the panes' minimum size holds for the restored geometry too
        self._restore_layout()

    # ------------------------------------------------------------ building

    def _build_list(self) -> None:
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search title, id or message text  (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._on_search)
        self.search.installEventFilter(self)  # Down / Return move into the results
        self.attention = QCheckBox("Needs attention")
        self.attention.setToolTip("Show only sessions with a warning or an error")
        self.attention.toggled.connect(self.model.set_attention_only)
        self.profile = QComboBox()
        self.profile.setToolTip("Show the sessions of one profile")
        self.profile.addItem("All profiles", None)
        self.profile.currentIndexChanged.connect(
            lambda _i: self.model.set_profile(self.profile.currentData()))
        self.home_label = _plain(name="HeaderDetails")
        self.home_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableView()
        self.table.setObjectName("SessionTable")
        self.table.setModel(self.model)
        # after the view's and its selection model's own handlers, which clear the current row
        self.model.modelAboutToBeReset.connect(self._keep_current)
        self.model.modelReset.connect(self._restore_current)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(Column.LAST_ACTIVITY, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)  # a bundle takes several
        self.table.setWordWrap(False)
        self.table.setTabKeyNavigation(False)  # Tab leaves the list (not its cells, nor the selection)
        self.table.setAlternatingRowColors(True)
        unshaped_text(self.table)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._list_menu)
        vh = self.table.verticalHeader()
        vh.setVisible(False)
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setDefaultSectionSize(self.fontMetrics().height() + 8)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setStretchLastSection(False)
        hh.setHighlightSections(False)
        hh.setSectionResizeMode(Column.TITLE, QHeaderView.ResizeMode.Stretch)
        fm = self.fontMetrics()
        for col, sample in ((Column.SESSION_ID, "0123456789ab"), (Column.WHERE, "state.db"),
                            (Column.PROFILE, "default"), (Column.MESSAGES, "00 / 00"),
                            (Column.LAST_ACTIVITY, "Nov 30 06:13")):
            wanted = max(fm.horizontalAdvance(sample), fm.horizontalAdvance(Column.HEADERS[col]) + 12)
            self.table.setColumnWidth(col, wanted + 16)
        self.table.setColumnWidth(Column.HEALTH, 26)
        self.table.setColumnWidth(Column.PROBLEM, fm.horizontalAdvance("The chat is missing from") + 16)
        # Titles get the width: the id and the profile are in the session's header (and the
        # profile filter); the header's menu shows them again.
        for col in OPTIONAL_COLUMNS:
            self.table.setColumnHidden(col, True)
        hh.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        hh.customContextMenuRequested.connect(self._columns_menu)
        self.table.selectionModel().currentRowChanged.connect(self._on_current_row)

        filters = QHBoxLayout()
        filters.addWidget(self.profile, 1)
        filters.addWidget(self.attention)
        panel = QWidget()
        layout = QVBoxLayout(panel)
        layout.setContentsMargins(4, 4, 0, 0)
        layout.addWidget(self.search)
        layout.addLayout(filters)
        layout.addWidget(self.home_label)
        layout.addWidget(self._build_hidden_notice())
        layout.addWidget(self.table, 1)
        layout.addWidget(self._legend())
        self.list_panel = panel

    def _build_hidden_notice(self) -> QWidget:
        """Shown when the filters hide the session the view shows (issue 16: no silent mismatch
        between the list and the view)."""
        self.hidden_notice = QWidget()
        self.hidden_notice.setObjectName("HiddenNotice")
        self.hidden_label = _plain(name="HiddenNoticeText")
        self.show_all_button = QPushButton("Clear filters")
        self.show_all_button.setToolTip("Clear the search, Needs attention and the profile filter")
        self.show_all_button.clicked.connect(self.clear_filters)
        row = QHBoxLayout(self.hidden_notice)
        row.setContentsMargins(0, 2, 0, 2)
        row.addWidget(self.hidden_label, 1)
        row.addWidget(self.show_all_button)
        self.hidden_notice.hide()
        return self.hidden_notice

    def clear_filters(self) -> None:
        """Every session listed again (the shown one among them, made current)."""
        self.search.clear()
        self.attention.setChecked(False)
        self.profile.setCurrentIndex(0)
        sid = self.data.session_id if self.data is not None else None
        if sid is not None and self.model.position(sid) is not None and self.current_session_id() != sid:
            self.select_session(sid)

    def _update_hidden_notice(self) -> None:
        sid = self.data.session_id if self.data is not None else None
        row = self.model.row_for(sid) if sid is not None else None
        hidden = row is not None and self.model.position(sid) is None
        if hidden:
            filters = [name for name, on in (("the search", bool(self.model.query)),
                                             ("Needs attention", self.attention.isChecked()),
                                             ("the profile filter", self.profile.currentData() is not None)) if on]
            title = one_line(row.title, 60) or "(untitled)"
            self.hidden_label.setText(f"The chat shown on the right, “{title}”, is not in this list: "
                                      f"{' and '.join(filters) or 'a filter'} hide{'s' if len(filters) < 2 else ''} it.")
        self.hidden_notice.setVisible(hidden)

    def _columns_menu(self, pos) -> None:
        self.columns_menu().popup(self.table.horizontalHeader().mapToGlobal(pos))

    def columns_menu(self) -> QMenu:
        """The list header's menu: show or hide every column but the title."""
        menu = QMenu(self)
        for col in range(1, len(Column.HEADERS)):
            if col == Column.TITLE:
                continue
            a = menu.addAction(Column.HEADERS[col])
            a.setCheckable(True)
            a.setChecked(not self.table.isColumnHidden(col))
            a.toggled.connect(lambda on, c=col: self.table.setColumnHidden(c, not on))
        return menu

    def _legend(self) -> QWidget:
        """What the list's colours mean."""
        legend = QWidget()
        legend.setObjectName("HealthLegend")
        # never what keeps the window wide: a narrow list clips the legend instead
        legend.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        row = QHBoxLayout(legend)
        row.setContentsMargins(2, 0, 2, 2)
        for severity, words in (("error", "broken"), ("warning", "needs attention"), ("info", "note"),
                                ("ok", "healthy")):
            dot = QLabel()
            dot.setPixmap(health_icon(severity).pixmap(12, 12))
            row.addWidget(dot)
            row.addWidget(_plain(words, "HeaderDetails", wrap=False))
            row.addSpacing(8)
        row.addStretch(1)
        return legend

    def _build_status(self) -> None:
        bar = self.statusBar()
        self.activity = _plain(wrap=False)
        self.busy = QProgressBar()
        self.busy.setMaximumWidth(140)
        self.busy.setTextVisible(False)
        self.busy.setRange(0, 0)
        self.busy.hide()
        self.cancel_button = QToolButton()
        self.cancel_button.setText("Cancel")
        self.cancel_button.clicked.connect(self.runner.cancel_all)
        self.cancel_button.hide()
        self.undo_button = QPushButton("Undo")
        self.undo_button.setObjectName("UndoButton")
        self.undo_button.hide()
        self.undo_button.clicked.connect(self.undo_last)
        bar.addPermanentWidget(self.activity)
        bar.addPermanentWidget(self.busy)
        bar.addPermanentWidget(self.cancel_button)
        bar.addPermanentWidget(self.undo_button)
        self.failure_details = FailureDetails(self.runner)  # "Details…" of the last failed task
        bar.addPermanentWidget(self.failure_details)

    def _build_menus(self) -> None:
        m = self.menuBar().addMenu("&File")
        self._action(m, "&Open Home…", self.choose_home, QKeySequence.StandardKey.Open)
        self.recent_menu = m.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self._action(m, "Open the &Demo", self.open_demo)
        self._action(m, "Open &Bundle…", self.support.choose_bundle)
        m.addSeparator()
        self._action(m, "Save &Support Bundle…", self.support.save_bundle)
        self._action(m, "&Apply Repair Kit…", self.support.choose_kit)
        m.addSeparator()
        self._action(m, "Export Transcript as &Markdown…", lambda: self.choose_export("md"))
        self._action(m, "Export Transcript as &JSON…", lambda: self.choose_export("json"))
        m.addSeparator()
        self._action(m, "&Reload", self.refresh, QKeySequence.StandardKey.Refresh)
        self._action(m, "&Quit", self.close, QKeySequence.StandardKey.Quit)
        m = self.menuBar().addMenu("&Edit")
        self._action(m, "&Find Session", self._focus_search, QKeySequence.StandardKey.Find)
        self._action(m, "Find in &This Session", self.view.find_bar.open_bar, QKeySequence("Ctrl+Shift+F"))
        self._action(m, "Find &Next in Session", self._find_next, QKeySequence("F3"))
        self._action(m, "Find Pre&vious in Session", lambda: self._find_next(backward=True), QKeySequence("Shift+F3"))
        self._action(m, "Copy Session &Id", self.copy_session_id, QKeySequence("Ctrl+Shift+C"))
        self._action(m, "Copy Sidecar &Path", self.copy_sidecar_path, QKeySequence("Ctrl+Alt+C"))
        self._action(m, "Re&veal File", self.reveal_file)
        m.addSeparator()
        self.undo_action = self._action(m, "&Undo Last Write", self.undo_last, QKeySequence.StandardKey.Undo)
        self.undo_action.setEnabled(False)
        m = self.menuBar().addMenu("&Repair")
        self.repair_actions: dict[str, QAction] = {}
        for action, label in ACTIONS.items():
            a = self._action(m, f"{label}…", functools.partial(self.preview_action, action),
                             QKeySequence(REPAIR_SHORTCUTS[action]))
            a.setEnabled(False)
            self.repair_actions[action] = a
        m = self.menuBar().addMenu("&View")
        a = self._action(m, "Needs &Attention Only", None, QKeySequence("Ctrl+Shift+A"))
        a.setCheckable(True)
        a.toggled.connect(self.attention.setChecked)
        self.attention.toggled.connect(a.setChecked)
        self._action(m, "Write &History…", self.show_history, QKeySequence("Ctrl+H"))
        self._action(m, "&Raw Sidecar", lambda: self.view.tabs.setCurrentIndex(1), QKeySequence("Ctrl+R"))
        self._action(m, "&Transcript and Journal", lambda: self.view.tabs.setCurrentIndex(0), QKeySequence("Ctrl+T"))
        m = self.menuBar().addMenu("&Help")
        self._action(m, "&Keyboard Shortcuts", self.show_shortcuts, QKeySequence.StandardKey.HelpContents)
        self._action(m, "&About Hermes Session Inspector", self.show_about)

    def show_shortcuts(self) -> ShortcutsDialog:
        dialog = ShortcutsDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def show_about(self) -> AboutDialog:
        dialog = AboutDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def _sync_repair_menu(self) -> None:
        for action, a in self.repair_actions.items():
            a.setEnabled(self.view.findings.buttons[action].isEnabled())

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if obj is self.search and event.type() == QEvent.Type.KeyPress and event.key() in (
                Qt.Key.Key_Down, Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.focus_results()
            return True
        return super().eventFilter(obj, event)

    def focus_results(self) -> None:
        """From the search box into the list: the current row stays, else the first result becomes current."""
        self.table.setFocus(Qt.FocusReason.TabFocusReason)
        if not self.table.currentIndex().isValid() and self.model.rowCount():
            self.select_session(self.model.index(0, 0).data(SESSION_ID_ROLE))

    def _action(self, menu: QMenu, text: str, slot, shortcut=None) -> QAction:
        a = QAction(text, self)
        if shortcut is not None:
            a.setShortcut(shortcut)
        if slot is not None:
            a.triggered.connect(lambda _=False: slot())
        menu.addAction(a)
        return a

    # ------------------------------------------------------------ settings

    def _restore_layout(self) -> None:
        geometry = self.settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        for key, splitter in self._splitters().items():
            state = self.settings.value(f"window/{key}")
            if state is not None:
                splitter.restoreState(state)
        header = self.settings.value("window/session_columns")
        if header is not None:
            self.table.horizontalHeader().restoreState(header)

    def _splitters(self) -> dict[str, QSplitter]:
        return {"main_split": self.split, "transcript_split": self.view.split,
                "journal_split": self.view.journal.splitter}

    def save_layout(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        for key, splitter in self._splitters().items():
            self.settings.setValue(f"window/{key}", splitter.saveState())
        self.settings.setValue("window/session_columns", self.table.horizontalHeader().saveState())
        self.settings.sync()

    def recent_homes(self) -> list[dict]:
        raw = self.settings.value("recent_homes", "[]")
        try:
            items = json.loads(raw if isinstance(raw, str) else "[]")
        except ValueError:
            return []
        return [i for i in items if isinstance(i, dict) and isinstance(i.get("home"), str)]

    def _remember_home(self, home: Home) -> None:
        # A state dir the user named is remembered; one found in the home's own webui.ctl.env is
        # found there again (remembered, it would count as named: see inspector.linkcheck).
        named = home.state_dir_from in ("option", "env")
        entry = {"home": str(home.base), "state_dir": str(home.state_dir) if named else None,
                 "state_db": str(home.state_db_override) if home.state_db_override else None}
        items = [entry] + [i for i in self.recent_homes() if i != entry]
        self.settings.setValue("recent_homes", json.dumps(items[:MAX_RECENT]))
        self.settings.sync()
        self.welcome.set_recent(self.recent_homes())

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        items = self.recent_homes()
        if not items:
            a = self.recent_menu.addAction("(none)")
            a.setEnabled(False)
        for item in items:
            label = item["home"] if item.get("state_dir") in (None, str(Path(item["home"]) / "webui")) \
                else f"{item['home']}  (state dir {item.get('state_dir')})"
            a = self.recent_menu.addAction(label)
            a.triggered.connect(lambda _=False, i=item: self.open_recent(i))

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        # The system switched between light and dark: redraw what carries our own colours.
        if event.type() == QEvent.Type.ApplicationPaletteChange:
            self.view.transcript.render(keep_scroll=True)
            self.view.journal.table.viewport().update()
        super().changeEvent(event)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        self.save_layout()
        self.runner.cancel_all()
        self.debounce.stop()
        self.search_timer.stop()
        self.runner.wait(10000)
        self.support.close()
        self._leave_demo_state()
        if self._demo_dir is not None:
            self._demo_dir.cleanup()
            self._demo_dir = None
        super().closeEvent(event)

    # ------------------------------------------------------------ opening a home

    def choose_home(self) -> None:
        start = str(self.home.base) if self.home else str(Path.home())
        folder = QFileDialog.getExistingDirectory(self, "Open Hermes Home", start)
        if folder:
            self.open_chosen_folder(folder)

    def open_chosen_folder(self, folder: str | Path) -> Home:
        """Open a picked folder as a home; the sessions or webui folder means the home above it."""
        choice = home_for_chosen_folder(folder)
        home = locate_home(choice.home)
        self.open_home(home)
        if choice.note:
            self.statusBar().showMessage(choice.note, 15000)
        return home

    def open_recent(self, item: dict) -> None:
        self.open_home(locate_home(item["home"], item.get("state_dir"), item.get("state_db")))

    def open_demo(self, select: str | None = None) -> Home:
        """Build the demo home in a temporary folder (once per window) and open it. While it is open,
        the write log and backups go to a state folder beside the demo's home (HERMES_INSPECTOR_STATE_DIR),
        not to the user's; the folder goes when the window closes."""
        from inspector.demo import build_demo_home

        if self._demo_dir is None or self.demo_home is None:
            self._demo_dir = tempfile.TemporaryDirectory(prefix="hermes-inspector-demo-")
            root = Path(self._demo_dir.name)
            self.demo_home = locate_home(build_demo_home(root / "home", now=time.time()).home, None, None)
        self.open_home(self.demo_home, select=select, remember=False)
        return self.demo_home

    def demo_state_dir(self) -> Path | None:
        return Path(self._demo_dir.name) / "inspector-state" if self._demo_dir is not None else None

    def _enter_demo_state(self) -> None:
        if not self._demo_env_set:
            self._state_env = os.environ.get("HERMES_INSPECTOR_STATE_DIR")
            self._demo_env_set = True
        os.environ["HERMES_INSPECTOR_STATE_DIR"] = str(self.demo_state_dir())

    def _leave_demo_state(self) -> None:
        if not self._demo_env_set:
            return
        if self._state_env is None:
            os.environ.pop("HERMES_INSPECTOR_STATE_DIR", None)
        else:
            os.environ["HERMES_INSPECTOR_STATE_DIR"] = self._state_env
        self._demo_env_set = False

    def open_home(self, home: Home, select: str | None = None, remember: bool = True) -> None:
        """Show a home: scan it in the background, watch its folders, select ``select`` when given."""
        if self.demo_home is not None and home == self.demo_home:
            self._enter_demo_state()
        else:
            self._leave_demo_state()
        self.stack.setCurrentIndex(1)
        self.home = home
        statedir.keep_out_of(home.base, home.state_dir)  # the log file is never made inside a home
        self.catalogue = None
        self.state_db_banner.hide()  # until this home's catalogue says otherwise
        self._loaded = False
        self._pending_select = select
        self._auto_select = True
        self.model.clear()
        self._show_session(None)
        self.setWindowTitle(f"Hermes Session Inspector — {home.base}")
        self.support.home_opened(home)  # a bundle: banner and title say so
        self.profile.blockSignals(True)
        self.profile.clear()
        self.profile.addItem("All profiles", None)
        self.profile.blockSignals(False)
        self.model.set_profile(None)
        if remember:
            self._remember_home(home)
        self._watch()
        self.scan()

    def scan(self) -> None:
        """Read the home's catalogue. An empty list first gets the quick look (the newest
        sessions from their files' first bytes, then all of them), while the complete catalogue
        with every session's health is worked out in a child process and replaces those rows."""
        home = self.home
        if home is None:
            return
        sort = self.model.sort_state()
        if self.model.rowCount() == 0:
            self._start_quick(home, FIRST_ROWS)

        order = None if sort is None else (sort[0], sort[1] == Qt.SortOrder.DescendingOrder)

        def work(token, progress):
            # the child's catalogue, its rows in the list's order, then as the list keeps them:
            # steps on this thread
            return load_catalogue_offloaded(home, time.time(), token.check, order).then(prepared)

        def prepared(result):
            self.runner.cancel("quick")  # (a step: on this thread) its rows would come too late
            entries = yield from SessionTableModel.prepare_steps(result.rows, sort, presorted=True)
            listing = HomeListing(len(result.rows), [finding_of(t) for t in result.home_findings])
            return listing, result.first, entries, sort, result.attention, result.profiles

        self.runner.start("catalogue", work, self._on_catalogue, label="Checking health…",
                          on_error=self._on_catalogue_error)

    def _start_quick(self, home: Home, limit: int | None) -> None:
        sort = self.model.sort_state()

        def work(token, progress):
            check_readable(home)
            if limit is None:  # every sidecar: read in a child, unpickled and prepared on this thread
                return quick_rows_offloaded(home.session_dir, token.check).then(
                    lambda rows: SessionTableModel.prepare_steps(rows, sort))
            rows = quick_rows(home.session_dir, limit)  # the newest few, before the list has any row
            with pool.no_collections():
                return SessionTableModel.prepare(rows, sort, token.check)

        self.runner.start("quick", work, lambda entries: self._on_quick_rows(home, entries, limit, sort),
                          label="Reading the session list…")

    def _on_quick_rows(self, home: Home, entries: list, limit: int | None, sorted_by) -> None:
        if self.catalogue is not None or self.home is not home or not self.runner.is_busy("catalogue"):
            return  # the complete catalogue is in (or failed): it wins
        self.model.set_rows(entries, checking=True, sorted_by=sorted_by)  # the current row stays (_restore_current)
        n = self.model.rowCount()
        more = "+" if limit is not None and n >= limit else ""
        self.home_label.setText(safe_text(f"{n}{more} sessions · checking health… · {home.session_dir}"))
        if limit is not None and n >= limit:
            # then all of them, unless the health check is done first (it usually is: reading
            # every file's first bytes here would only compete with it, and stall the window)
            QTimer.singleShot(QUICK_ALL_AFTER_MS, lambda: self._quick_all(home))

    def _quick_all(self, home: Home) -> None:
        if self.catalogue is None and self.home is home and self.runner.is_busy("catalogue"):
            self._start_quick(home, None)

    def _keep_current(self) -> None:
        # the current row's session; with none (a filter hid it), the session the view shows
        self._kept_session = self.current_session_id() or (self.data.session_id if self.data is not None else None)

    def _restore_current(self) -> None:
        """After the list reset (new rows, another filter): the row of the session that was
        current (or is shown) is current again, if the list shows it, and in view; it is not
        loaded again."""
        sid, self._kept_session = self._kept_session, None
        self._update_hidden_notice()
        pos = self.model.position(sid) if sid is not None else None
        if pos is None:
            return
        index = self.model.index(pos, 0)
        self._restoring = True
        try:
            self.table.selectionModel().setCurrentIndex(
                index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
            self.table.scrollTo(index)
        finally:
            self._restoring = False

    def refresh(self) -> None:
        """Rescan the list and reload the shown session (files changed, or F5)."""
        self._watch()
        self.scan()
        sid = self.current_session_id() or (self.data.session_id if self.data is not None else None)
        if sid is not None:  # the selected one: the shown one may be older than the selection
            self.load_session(sid)

    def _on_catalogue_error(self, message: str) -> None:
        self.runner.cancel("quick")
        self._loaded = True
        self.home_label.setText(safe_text(f"Cannot read this home: {message}"))
        self.statusBar().showMessage(one_line(message, 200), 10000)
        self._maybe_settled()

    def _on_catalogue(self, result: tuple) -> None:
        cat, self._first_attention, entries, sorted_by, attention, profiles = result
        self.runner.cancel("quick")
        self.catalogue = cat
        self._loaded = True
        self.model.set_rows(entries, sorted_by=sorted_by)
        self._fill_profiles(profiles)
        text = f"{cat.count} sessions · {attention} need attention · {self.home.session_dir}"
        listed = [f for f in cat.home_findings if f.kind != "state_db_unreadable"]  # those: the banner
        if listed:
            text += "\n" + "\n".join(f"{f.severity}: {one_line(f.message, 160)}" for f in listed[:3])
            if len(listed) > 3:
                text += f"\n… {len(listed) - 3} more home finding(s)"
        self.home_label.setText(safe_text(text))
        banner = state_db_banner(cat.home_findings)
        self.state_db_banner.setText(safe_text(banner or ""))
        self.state_db_banner.setVisible(banner is not None)
        if self._pending_select is not None:
            sid, self._pending_select = self._pending_select, None
            if not self.select_session(sid):
                self.statusBar().showMessage(f"No session {one_line(sid, 60)} in this home", 10000)
                self._select_first_needing_attention()
        elif self._auto_select and self.current_session_id() is None:
            self._select_first_needing_attention()
        self._auto_select = False
        row = self.model.row_for(self.data.session_id) if self.data is not None else None
        if row is not None:  # the list's findings (hermes' audit items) may have changed
            self.view.header.set_data(self.data, row.where)
            merged = merge_findings(self.data.detail.findings, self.model.catalogue_findings(self.data.session_id))
            self.view.findings.set_findings(merged)
            self.model.update_findings(self.data.session_id, merged)

    def _fill_profiles(self, row_profiles: list[str]) -> None:
        names = list(self.home.profile_names()) if self.home else []
        for profile in row_profiles:
            if profile not in names:
                names.append(profile)
        current = self.profile.currentData()
        self.profile.blockSignals(True)
        self.profile.clear()
        self.profile.addItem("All profiles", None)
        for name in names:
            self.profile.addItem(f"Profile: {name}", name)
        self.profile.setCurrentIndex(max(self.profile.findData(current), 0) if current else 0)
        self.profile.blockSignals(False)

    def _select_first_needing_attention(self) -> None:
        if self._first_attention and self.select_session(self._first_attention):
            return
        if self.model.rowCount():
            self.select_session(self.model.index(0, 0).data(SESSION_ID_ROLE))

    # ------------------------------------------------------------ the list

    def select_session(self, session_id: str) -> bool:
        """Select a session in the list (clearing filters that hide it). False when it is unknown."""
        if self.model.row_for(session_id) is None:
            return False
        if self.model.position(session_id) is None:  # filtered out
            self.search.clear()
            self.attention.setChecked(False)
            self.profile.setCurrentIndex(0)
        pos = self.model.position(session_id)
        if pos is None:
            return False
        index = self.model.index(pos, 0)
        self.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        self.table.scrollTo(index)
        return True

    def current_session_id(self) -> str | None:
        index = self.table.currentIndex()
        return index.data(SESSION_ID_ROLE) if index.isValid() else None

    def _on_current_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        sid = current.data(SESSION_ID_ROLE) if current.isValid() else None
        if sid is None or self._restoring:
            return
        if self.data is not None and self.data.session_id == sid and not self.runner.is_busy("detail"):
            self._due_session = None
            return
        self._due_session = sid
        self.arm_timer.start()

    def _load_due(self) -> None:
        sid, self._due_session = self._due_session, None
        if sid is not None and sid == self.current_session_id():
            self.load_session(sid)
        self._maybe_settled()

    def _on_search(self, text: str) -> None:
        self.model.set_query(text)
        self.search_timer.start()

    def _start_text_search(self) -> None:
        query = self.model.query
        if not query or self.home is None:
            self.runner.cancel("search")
            return
        home = self.home

        def work(token, progress):
            return search_offloaded(home, query, token.check)

        self.runner.start("search", work, lambda found: self._on_search_hits(query, found),
                          label="Searching sessions, backups, state.db and run journals…")

    def _on_search_hits(self, query: str, found: SearchHits) -> None:
        """Sessions found where lost chats live are listed too; each title's tooltip says where."""
        notes = {sid: "\n".join(f"{where}: {snip}" for where, snip in hits) for sid, hits in found.sessions.items()}
        self.model.set_text_matches(query, set(found.sessions), notes)
        if self.model.query != " ".join(query.split()).casefold():
            return
        places = sorted({where for hits in found.sessions.values() for where, _ in hits})
        if found.sessions:
            text = (f"Text found in {len(found.sessions)} session(s): {', '.join(places)}"
                    + (" (stopped at the limit: type more to narrow it)" if found.truncated else ""))
        else:
            text = "The text is in no message, backup, state.db row or run journal."
        if found.skipped:
            text += f"; {len(found.skipped)} file(s) could not be searched"
        self.statusBar().showMessage(text, 15000)

    def _find_next(self, backward: bool = False) -> None:
        bar = self.view.find_bar
        if bar.isHidden() or not bar.edit.text():
            bar.open_bar()
        else:
            bar.find(backward=backward)

    def _focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    def _list_menu(self, pos) -> None:
        if not self.table.indexAt(pos).isValid():
            return
        menu = QMenu(self)
        menu.addAction("Copy Session Id", self.copy_session_id)
        menu.addAction("Copy Sidecar Path", self.copy_sidecar_path)
        menu.addAction("Reveal File", self.reveal_file)
        menu.addSeparator()
        menu.addAction("Export Transcript as Markdown…", lambda: self.choose_export("md"))
        menu.popup(self.table.viewport().mapToGlobal(pos))

    def _current_path(self) -> Path | None:
        index = self.table.currentIndex()
        row = index.data(ROW_ROLE) if index.isValid() else None
        if row is None:
            return None
        if row.sidecar_path is not None:
            return Path(row.sidecar_path)
        if self.home is not None and row.has_bak:
            return self.home.session_dir / f"{row.session_id}.json.bak"
        if self.home is not None and row.state_db_profile:
            return self.home.state_db(row.state_db_profile)
        return None

    def copy_session_id(self) -> None:
        sid = self.current_session_id()
        if sid:
            QGuiApplication.clipboard().setText(sid)
            self.statusBar().showMessage(f"Copied {one_line(sid, 60)}", 3000)

    def copy_sidecar_path(self) -> None:
        path = self._current_path()
        if path is not None:
            QGuiApplication.clipboard().setText(str(path))
            self.statusBar().showMessage(f"Copied {path}", 3000)

    def reveal_file(self) -> None:
        path = self._current_path()
        if path is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(path.parent)))

    # ------------------------------------------------------------ the session

    def load_session(self, session_id: str) -> None:
        home = self.home
        if home is None:
            return
        self.runner.cancel("plans")
        self.runner.cancel("journal")
        self.runner.start("detail", lambda token, progress: load_session_data_offloaded(
            home, session_id, token.check, progress), self._show_session, label="Reading session…",
                          on_error=lambda msg: self.statusBar().showMessage(one_line(msg, 200), 10000))
        if self.data is None or self.data.session_id != session_id:
            # A big journal is shown at once from its first lines, then with every line checked
            # (_show_glance); the full read of the session replaces it.
            prefer = self._streams_of(session_id)
            self.runner.start("glance", lambda token, progress: glance_journal(
                home.session_dir, session_id, prefer, token.check), self._show_glance)
        else:
            self.runner.cancel("glance")

    def _streams_of(self, session_id: str) -> list[str]:
        """Run ids the list already knows this session points at (running turn, pending marker)."""
        row = self.model.row_for(session_id)
        return [s for s in row.stream_hints if s] if row is not None else []

    def _show_glance(self, glance: JournalGlance | None) -> None:
        if glance is None or self.current_session_id() != glance.session_id:
            return
        if self.data is not None and self.data.session_id == glance.session_id:
            return  # the full session is already shown
        row = self.model.row_for(glance.session_id)
        self.view.show_glance(glance, row.title if row else "")
        if not glance.complete:
            self.runner.start("journal", lambda token, progress: index_glance(glance, token.check),
                              self._show_glance, label="Checking the run journal…")

    def _show_session(self, data: SessionData | None) -> None:
        same = data is not None and self.data is not None and data.session_id == self.data.session_id
        selected = self.view.transcript.selected_message() if same else -1
        if data is not None:
            self.runner.cancel("journal")  # the session's own read has every line checked
        self.data = data
        self._forget_plans()
        self.plans = None
        row = self.model.row_for(data.session_id) if data is not None else None
        listed = self.model.catalogue_findings(data.session_id) if row is not None else None
        self.view.set_data(data, row.where if row else None, listed)
        self._update_hidden_notice()
        if data is None:
            return
        if row is not None:  # the list's health is what the view found (it read the whole session)
            self.model.update_findings(data.session_id, merge_findings(data.detail.findings, listed))
        if selected >= 0:
            self.view.transcript.select_message(selected, emit=True)
        self._watch()
        self.start_planning()

    def start_planning(self) -> None:
        home, data = self.home, self.data
        if home is None or data is None:
            return
        recommended = recommended_actions(data.detail, (self.catalogue.home_findings if self.catalogue else [])
                                          + self._row_findings(data.session_id))
        sid = data.session_id

        def work(token, progress):
            # in the child process: a plan reads and rewrites _index.json (tens of MB in a big
            # home), long C calls that would hold the window's GIL. The plans stay there (kept
            # by jobs.plans); the window gets their summaries, each with its clock and handle
            return pool.run_job_steps(plan_session_job, home, sid, recommended, check=token.check)

        self.runner.start("plans", work, self._on_plans, label="Planning repairs…",
                          on_error=lambda msg: self.statusBar().showMessage(one_line(msg, 200), 10000))

    def _row_findings(self, sid: str) -> list[Finding]:
        row = self.model.row_for(sid)
        return self.model.catalogue_findings(sid) if row else []

    def _forget_plans(self) -> None:
        """The worker lets go of the plans no longer shown (but the open preview's: its Write
        would otherwise have to plan again)."""
        previewed = self.preview.plan.handle if self.preview is not None else None
        kept_plans.drop([p.handle for p in (self.plans or {}).values()
                         if isinstance(p, PlanSummary) and p.handle != previewed])

    def _on_plans(self, plans: dict[str, PlanSummary | str]) -> None:
        self._forget_plans()
        kept_plans.remember(plans.values())
        self.plans = plans
        self.view.findings.set_plans(plans)
        for action, plan in plans.items():  # a planner that failed: its traceback one click away
            if isinstance(plan, PlanFailure):
                self.failure_details.record(f"Planning {ACTIONS.get(action, action)}", str(plan), plan.details)

    # ------------------------------------------------------------ repairs

    def preview_action(self, action: str) -> PreviewDialog | None:
        """Open the preview of an action's plan; Write applies exactly that plan."""
        plan = (self.plans or {}).get(action)
        if not isinstance(plan, PlanSummary):
            return None
        dialog = PreviewDialog(plan, self)
        self.support.decorate_preview(dialog, plan)  # in a bundle: Save as Repair Kit…
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda p=plan: self.write_plan(p))
        dialog.destroyed.connect(lambda _=None: setattr(self, "preview", None))
        dialog.write_hermes_requested.connect(self.write_plan)
        self.preview = dialog
        dialog.open()
        if self.home is not None:
            dialog.start_crosscheck(self.runner, self.home, self.settings)
        return dialog

    def write_plan(self, plan: Plan | PlanSummary) -> None:
        """Write a previewed plan: one the worker keeps is written there (``jobs.plans.apply_job``),
        one made here (a kit, hermes-webui's result) here; both through ``plan.apply_plan``."""
        log = WriteLog.default(home=self.home)
        home = self.home
        if isinstance(plan, PlanSummary) and plan.local is not None:
            plan = plan.local

        def work(token, progress):
            if isinstance(plan, PlanSummary):
                return pool.run_job(apply_job, home, plan, log, check=token.check)
            # the links the preview named were confirmed there; a new one is refused
            refused = recheck_before_write(plan, home, follow_links=True) if home is not None else None
            if refused is not None:
                return ApplyError(refused)
            return _refusal_as_result(apply_plan, plan, log)

        self.runner.start("write", work, lambda record, p=plan: self._on_written(record, p), label="Writing…",
                          on_error=self._on_write_error)

    def _on_written(self, record, plan: Plan | PlanSummary | None = None) -> None:
        about = (plan.action, plan.session_id) if plan is not None else ("", None)
        if isinstance(record, ApplyError):
            self._on_write_error(str(record), record.outcome)
            if record.outcome != "nothing" and record.write_id:  # some files were written: offer their undo
                self._offer_undo(record.write_id, about)
            return
        if isinstance(record, WriteRecord):
            about = (record.action, record.session_id)
        self._offer_undo(record.write_id, about)
        files = ", ".join(Path(f["path"]).name for f in record.files)
        self.statusBar().showMessage(f"Wrote {files}: {self.write_words(record.write_id, about)}. "
                                     "Undo (Ctrl+Z) restores the previous files.")
        self.refresh()

    def _offer_undo(self, write_id: str, about: tuple[str, str | None]) -> None:
        self.last_write, self.last_write_about = write_id, about
        label = ACTIONS.get(about[0], about[0]) or "the last write"
        self.undo_button.setText(f"Undo {label}")
        self.undo_button.setToolTip(f"Undo {self.write_words(write_id, about)} (Ctrl+Z)")
        self.undo_button.show()
        self.undo_action.setEnabled(True)
        self.undo_action.setText(f"&Undo {label}")

    def write_words(self, write_id: str, about: tuple[str, str | None]) -> str:
        """A write named for people: its repair, the session's title, the write's id."""
        action, sid = about
        label = ACTIONS.get(action, action) or "write"
        if sid is None:
            return f"{label} (write {write_id})"
        row = self.model.row_for(sid)
        title = one_line(row.title, 60) if row is not None and row.title else one_line(sid, 40)
        return f"{label} on “{title}” (write {write_id})"

    def undo_last(self) -> bool:
        """Undo the last write of this window (Ctrl+Z, the Undo button). A write of a session other than
        the one shown is undone only after the user says yes. True when the undo was started."""
        write_id = self.last_write
        if write_id is None:
            self.statusBar().showMessage("Nothing to undo: no write was made in this window.", 5000)
            return False
        words = self.write_words(write_id, self.last_write_about)
        shown = self.data.session_id if self.data is not None else None
        sid = self.last_write_about[1]
        if sid is not None and sid != shown:
            answer = QMessageBox.question(
                self, "Undo a write of another session?",
                f"The last write was {words}, not the session shown. Undo it?",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
            if answer != QMessageBox.StandardButton.Yes:
                self.statusBar().showMessage(f"Not undone: {words}.", 5000)
                return False
        self.statusBar().showMessage(f"Undoing {words}…")
        self.undo(write_id)
        return True

    def _on_write_error(self, message: str, outcome: str = "nothing") -> None:
        head = WRITE_OUTCOME_HEADS.get(outcome, WRITE_OUTCOME_HEADS["nothing"])
        self.statusBar().showMessage(f"{head}: {one_line(message, 300)}", 15000)
        self.refresh()

    def undo(self, write_id: str) -> None:
        log = WriteLog.default()
        self.runner.start("write", lambda token, progress: _refusal_as_result(undo_write, write_id, log),
                          lambda rec, w=write_id: self._on_undone(w, rec), label="Undoing…",
                          on_error=self._on_write_error)

    def _on_undone(self, write_id: str, record) -> None:
        if isinstance(record, ApplyError):
            self._on_write_error(str(record), record.outcome)
            return
        words = f"write {write_id}"
        if self.last_write == write_id:
            words = self.write_words(write_id, self.last_write_about)
            self.last_write = None
            self.undo_button.hide()
            self.undo_action.setEnabled(False)
            self.undo_action.setText("&Undo Last Write")
        self.statusBar().showMessage(f"Undid {words}: restored {len(record.files)} file(s).", 10000)
        self.refresh()

    def show_history(self) -> HistoryDialog:
        log = WriteLog.default()
        records = log.records()
        titles = {r.session_id: row.title for r in records if r.session_id is not None
                  and (row := self.model.row_for(r.session_id)) is not None and row.title}
        dialog = HistoryDialog(records, str(log.log_path), str(log.root / "backups"), self, titles)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.undo_requested.connect(self.undo)
        dialog.open()
        return dialog

    # ------------------------------------------------------------ export

    def choose_export(self, kind: str) -> None:
        if self.data is None:
            self.statusBar().showMessage("Select a session to export", 3000)
            return
        suffix = ".md" if kind == "md" else ".json"
        name = f"session-{self.data.session_id}{suffix}"
        path, _ = QFileDialog.getSaveFileName(self, "Export Transcript", str(Path.home() / name),
                                              "Markdown (*.md)" if kind == "md" else "JSON (*.json)")
        if path:
            self.export_transcript(Path(path), kind)

    def export_transcript(self, path: Path, kind: str) -> None:
        data = self.data
        if data is None:
            return

        def work(token, progress):
            now = time.time()
            if kind == "md":
                blob = transcript_markdown(data.detail, now=now, include_state_db=True).encode("utf-8")
            else:
                blob = transcript_json_bytes(data.detail, now=now)
            path.write_bytes(blob)
            return path

        self.runner.start("export", work, lambda p: self.statusBar().showMessage(f"Exported to {p}", 8000),
                          label="Exporting…",
                          on_error=lambda msg: self.statusBar().showMessage(f"Export failed: {msg}", 10000))

    # ------------------------------------------------------------ watching the disk

    def _watch(self) -> None:
        """Watch folders (atomic replace defeats per-file watches) plus the shown session's files."""
        if self.home is None:
            return
        sdir = self.home.session_dir
        wanted = [sdir, sdir / RUN_JOURNAL_DIR]
        files: list[Path] = []
        if self.data is not None:
            wanted.append(sdir / RUN_JOURNAL_DIR / self.data.session_id)
            files += [run.info.path for run in self.data.runs]  # appends happen in place
            if self.data.detail.sidecar_path is not None:
                files.append(self.data.detail.sidecar_path)
        files += self._state_db_files(wanted)
        paths = {str(p) for p in wanted + files if p.exists()}
        current = set(self.watcher.directories()) | set(self.watcher.files())
        stale = sorted(current - paths)
        fresh = sorted(paths - current)
        if stale:
            self.watcher.removePaths(stale)
        if fresh:
            self.watcher.addPaths(fresh)

    def _state_db_files(self, folders: list[Path]) -> list[Path]:
        """Every profile's state.db and its -wal (the agent writes both in place): a chat it is still
        writing updates without F5. While a -wal does not exist its folder is watched (to see it
        appear; a folder's watch does not fire when a file in it is only written to)."""
        assert self.home is not None
        files: list[Path] = []
        for profile in self.home.profile_names():
            db = self.home.state_db(profile)
            if not db.exists():
                continue
            wal = db.with_name(db.name + "-wal")
            files += [db, wal]
            if not wal.exists() and db.parent not in folders:
                folders.append(db.parent)
        return files

    def _on_disk_change(self, _path: str) -> None:
        self.debounce.start()

    # ------------------------------------------------------------ status

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

    def is_settled(self) -> bool:
        return ((self._loaded or self.home is None) and self._pending_select is None and self._due_session is None
                and not self.runner.is_busy()
                and not self.view.filling())

    def _maybe_settled(self) -> None:
        if self.is_settled():
            self.settled.emit()
