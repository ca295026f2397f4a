"""The main window: session list on the left, the selected session on the right.

The window is thin: every scan, parse, plan and write is a core call (the same the command
line makes) run on a worker thread through :class:`inspector.gui.workers.TaskRunner`. It builds
the list, the menus and the status bar, keeps the layout, and shows the selected session in a
:class:`~inspector.gui.session_view.SessionView`; opening a home (and following the disk) is the
:class:`~inspector.gui.load_controller.LoadController`'s, repairs (plan, preview, write, undo) and
exports the :class:`~inspector.gui.repair_controller.RepairController`'s.
"""

from __future__ import annotations

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QSettings,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QMainWindow,
    QMenu,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from inspector.gui.help_dialogs import AboutDialog, GuideDialog, ShortcutsDialog
from inspector.gui.load_controller import LoadController
from inspector.gui.qtypes import single_shot
from inspector.gui.repair_controller import RepairController
from inspector.gui.resources import icon, palette_switched, remember_palette, restyle
from inspector.gui.session_list import OPTIONAL_COLUMNS, SessionListPanel
from inspector.gui.session_model import SESSION_ID_ROLE, SessionTableModel
from inspector.gui.session_view import REPAIR_SHORTCUTS, SessionView, merge_findings, plain_label
from inspector.gui.status_area import RunnerStatus
from inspector.gui.support import SupportActions
from inspector.gui.welcome import WelcomePage
from inspector.gui.window_menus import add_action, build_menus
from inspector.gui.workers import TaskRunner
from inspector.home import Home
from inspector.jobs.offload import SearchHits, prestart, search_offloaded
from inspector.jobs.session import index_glance, load_session_data_offloaded
from inspector.present.session_data import (
    JournalGlance,
    SessionData,
    glance_journal,
)
from inspector.textsafe import one_line

__all__ = ["OPTIONAL_COLUMNS", "REPAIR_SHORTCUTS", "MainWindow", "merge_findings"]


def _delegate(controller: str, name: str) -> property:
    """The window's attribute ``name``: its controller's (a value, or a method bound to the controller)."""
    return property(
        lambda window: getattr(getattr(window, controller), name),
        doc=f"{controller}.{name}, as the window's own.",
    )


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
        self.data: SessionData | None = None  # the session shown
        self.session_id_role = SESSION_ID_ROLE
        self.loader = LoadController(self)  # opening homes, recent homes, the demo, watching the disk
        self.loader.status.connect(self._show_status)
        self.loader.home_opening.connect(self._on_home_opening)
        self.loader.loaded.connect(self._maybe_settled)
        self.loader.disk_changed.connect(lambda: self.refresh())
        self.repairs = RepairController(self)  # plan, preview, write, undo; history; export
        self.repairs.status.connect(self._show_status)
        self.repairs.plans_ready.connect(lambda plans: self.view.findings.set_plans(plans))
        self.repairs.undo_offered.connect(self._on_undo_offered)
        self.repairs.undo_withdrawn.connect(self._on_undo_withdrawn)
        self.repairs.disk_written.connect(lambda: self.refresh())
        self.support = SupportActions(self)  # support bundles and repair kits
        self._restoring = False  # the list is putting the current row back after new rows came
        self._kept_session: str | None = None  # the current row's session while the list resets

        remember_palette(self)  # a switch between light and dark repaints (changeEvent)
        self.model = SessionTableModel(self)  # it sorts and filters itself: no proxy model
        self._build_list()
        self.view = SessionView()
        self.view.journal.runner = self.view.compare.runner = (
            self.runner
        )  # filters, alignments: in the worker
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
        self.state_db_banner = plain_label(name="StateDbBanner")  # an unreadable state.db: what is missing
        self.state_db_banner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.state_db_banner.setContentsMargins(8, 6, 8, 6)
        self.state_db_banner.setStyleSheet(
            "QLabel#StateDbBanner { background: palette(alternate-base); border-bottom: 2px solid #c0392b; }"
        )
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
        self._build_status()
        self._build_menus()

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

        self.runner.idle.connect(self._maybe_settled)
        self.resize(1500, 900)
        self.layout().activate()  # the panes' minimum size holds for the restored geometry too
        self._restore_layout()

    # ------------------------------------------------------------ building

    def _build_list(self) -> None:
        self.list_panel = panel = SessionListPanel(self.model, lambda: self.home)
        # the panel's widgets, as the window's own (the tests, support.py and the controllers use them)
        self.search, self.attention, self.profile = panel.search, panel.attention, panel.profile
        self.home_label, self.table = panel.home_label, panel.table
        self.hidden_notice, self.hidden_label = panel.hidden_notice, panel.hidden_label
        self.show_all_button = panel.show_all_button
        self.columns_menu = panel.columns_menu
        self.search.textChanged.connect(self._on_search)
        self.search.installEventFilter(self)  # Down / Return move into the results
        # after the view's and its selection model's own handlers, which clear the current row
        self.model.modelAboutToBeReset.connect(self._keep_current)
        self.model.modelReset.connect(self._restore_current)
        panel.status.connect(self._show_status)
        panel.export_requested.connect(lambda kind: self.choose_export(kind))
        self.table.selectionModel().currentRowChanged.connect(self._on_current_row)
        self.show_all_button.clicked.connect(self.clear_filters)

    def clear_filters(self) -> None:
        """Every session listed again (the shown one among them, made current)."""
        self.list_panel.clear_filters()
        sid = self.data.session_id if self.data is not None else None
        if sid is not None and self.model.position(sid) is not None and self.current_session_id() != sid:
            self.select_session(sid)

    def _update_hidden_notice(self) -> None:
        self.list_panel.update_hidden_notice(self.data.session_id if self.data is not None else None)

    def _build_status(self) -> None:
        bar = self.statusBar()
        status = RunnerStatus(bar, self.runner)  # what runs, busy bar, Cancel
        self.activity, self.busy, self.cancel_button = status.activity, status.busy, status.cancel_button
        self.undo_button = QPushButton("Undo")
        self.undo_button.setObjectName("UndoButton")
        self.undo_button.hide()
        self.undo_button.clicked.connect(self.undo_last)
        bar.addPermanentWidget(self.undo_button)
        self.failure_details = status.failure_details  # "Details…" of the last failed task
        bar.addPermanentWidget(self.failure_details)

    def _build_menus(self) -> None:
        build_menus(self)

    def show_shortcuts(self) -> ShortcutsDialog:
        dialog = ShortcutsDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def show_guide(self) -> GuideDialog:
        dialog = GuideDialog(self)
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
        if (
            obj is self.search
            and event.type() == QEvent.Type.KeyPress
            and event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Return, Qt.Key.Key_Enter)
        ):
            self.focus_results()
            return True
        return super().eventFilter(obj, event)

    def focus_results(self) -> None:
        """From the search box into the list: the current row stays, else the first result becomes current."""
        self.table.setFocus(Qt.FocusReason.TabFocusReason)
        if not self.table.currentIndex().isValid() and self.model.rowCount():
            self.select_session(self.model.index(0, 0).data(SESSION_ID_ROLE))

    def _action(self, menu: QMenu, text: str, slot, shortcut=None) -> QAction:
        return add_action(self, menu, text, slot, shortcut)

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
        return {
            "main_split": self.split,
            "transcript_split": self.view.split,
            "journal_split": self.view.journal.splitter,
        }

    def save_layout(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        for key, splitter in self._splitters().items():
            self.settings.setValue(f"window/{key}", splitter.saveState())
        with self.list_panel.column_fit.as_chosen():  # not the columns a narrow window hid for now
            self.settings.setValue("window/session_columns", self.table.horizontalHeader().saveState())
        self.settings.sync()

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        # The system switched between light and dark: redraw what carries our own colours.
        if palette_switched(self, event):
            # a turn later: the views themselves get the new palette after the window (muted text)
            QTimer.singleShot(0, lambda: self.view.transcript.render(keep_scroll=True))
            self.view.journal.table.viewport().update()
            self.table.viewport().update()
            restyle()  # the stylesheet's palette(...) colours are resolved when it is applied
        super().changeEvent(event)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        self.save_layout()
        self.runner.cancel_all()
        self.debounce.stop()
        self.search_timer.stop()
        self.runner.wait(10000)
        self.support.close()
        self.loader.close()  # the user's state folder back; the demo's folder goes
        super().closeEvent(event)

    # ------------------------------------------------------------ opening a home (the load controller)

    # The controllers' state and actions, reachable as the window's own (the window's public surface
    # stays what the tests, app.py and support.py use).
    home = _delegate("loader", "home")
    catalogue = _delegate("loader", "catalogue")
    demo_home = _delegate("loader", "demo_home")
    watcher = _delegate("loader", "watcher")
    debounce = _delegate("loader", "debounce")
    recent_homes = _delegate("loader", "recent_homes")
    _remember_home = _delegate("loader", "remember_home")
    choose_home = _delegate("loader", "choose_home")
    open_chosen_folder = _delegate("loader", "open_chosen_folder")
    open_recent = _delegate("loader", "open_recent")
    open_demo = _delegate("loader", "open_demo")
    demo_state_dir = _delegate("loader", "demo_state_dir")
    open_home = _delegate("loader", "open_home")
    scan = _delegate("loader", "scan")

    def _fill_recent(self) -> None:
        self.loader.fill_recent(self.recent_menu)

    def _on_home_opening(self, home: Home) -> None:
        """A home is about to be scanned: nothing of the last one stays on show."""
        self.stack.setCurrentIndex(1)
        self.state_db_banner.hide()  # until this home's catalogue says otherwise
        self.model.clear()
        self._show_session(None)
        self.setWindowTitle(f"Hermes Session Inspector — {home.base}")
        self.support.home_opened(home)  # a bundle: banner and title say so
        self.list_panel.set_profiles([])
        self.model.set_profile(None)

    def refresh(self) -> None:
        """Rescan the list and reload the shown session (files changed, or F5)."""
        self.loader.refresh()

    # ------------------------------------------------------------ the list

    def _keep_current(self) -> None:
        # the current row's session; with none (a filter hid it), the session the view shows
        self._kept_session = self.current_session_id() or (
            self.data.session_id if self.data is not None else None
        )

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
                index,
                QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
            )
            self.table.scrollTo(index)
        finally:
            self._restoring = False

    def select_session(self, session_id: str) -> bool:
        """Select a session in the list (clearing filters that hide it). False when it is unknown."""
        if self.model.row_for(session_id) is None:
            return False
        if self.model.position(session_id) is None:  # filtered out
            self.list_panel.clear_filters()
        pos = self.model.position(session_id)
        if pos is None:
            return False
        index = self.model.index(pos, 0)
        self.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )
        self.table.scrollTo(index)
        return True

    current_session_id = _delegate("list_panel", "current_session_id")

    def _release_fixed(self) -> None:
        """The filters apply again to the session repaired last (the user selected another)."""
        if self.model.kept_fixed() not in (None, self.current_session_id()):
            self.model.keep_fixed(None)

    def _on_current_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        sid = current.data(SESSION_ID_ROLE) if current.isValid() else None
        if sid is None or self._restoring:
            return
        if self.model.kept_fixed() not in (None, sid):  # the user moved on from a repaired session
            QTimer.singleShot(0, self._release_fixed)
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

        self.runner.start(
            "search",
            work,
            lambda found: self._on_search_hits(query, found),
            label="Searching sessions, backups, state.db and run journals…",
        )

    def _on_search_hits(self, query: str, found: SearchHits) -> None:
        """Sessions found where lost chats live are listed too; each title's tooltip says where."""
        notes = {
            sid: "\n".join(f"{where}: {snip}" for where, snip in hits) for sid, hits in found.sessions.items()
        }
        self.model.set_text_matches(query, set(found.sessions), notes)
        if self.model.query != " ".join(query.split()).casefold():
            return
        places = sorted({where for hits in found.sessions.values() for where, _ in hits})
        if found.sessions:
            text = f"Text found in {len(found.sessions)} session(s): {', '.join(places)}" + (
                " (stopped at the limit: type more to narrow it)" if found.truncated else ""
            )
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

    copy_session_id = _delegate("list_panel", "copy_session_id")
    copy_sidecar_path = _delegate("list_panel", "copy_sidecar_path")
    reveal_file = _delegate("list_panel", "reveal_file")

    # ------------------------------------------------------------ the session

    def load_session(self, session_id: str) -> None:
        home = self.home
        if home is None:
            return
        self.runner.cancel("plans")
        self.runner.cancel("journal")
        self.runner.start(
            "detail",
            lambda token, progress: load_session_data_offloaded(home, session_id, token.check, progress),
            self._show_session,
            label="Reading session…",
            on_error=lambda msg: self.statusBar().showMessage(one_line(msg, 200), 10000),
        )
        if self.data is None or self.data.session_id != session_id:
            # A big journal is shown at once from its first lines, then with every line checked
            # (_show_glance); the full read of the session replaces it.
            prefer = self._streams_of(session_id)
            self.runner.start(
                "glance",
                lambda token, progress: glance_journal(home.session_dir, session_id, prefer, token.check),
                self._show_glance,
            )
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
            self.runner.start(
                "journal",
                lambda token, progress: index_glance(glance, token.check),
                self._show_glance,
                label="Checking the run journal…",
            )

    def _show_session(self, data: SessionData | None) -> None:
        same = data is not None and self.data is not None and data.session_id == self.data.session_id
        selected = self.view.transcript.selected_message() if same else -1
        if data is not None:
            self.runner.cancel("journal")  # the session's own read has every line checked
        self.data = data
        self.repairs.forget_plans()
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
        self.loader.watch()
        self.repairs.start_planning()

    # ------------------------------------------------------------ repairs (the repair controller)

    plans = _delegate("repairs", "plans")
    preview = _delegate("repairs", "preview")
    last_write = _delegate("repairs", "last_write")
    last_write_about = _delegate("repairs", "last_write_about")
    preview_action = _delegate("repairs", "preview_action")
    write_plan = _delegate("repairs", "write_plan")
    write_words = _delegate("repairs", "write_words")
    undo_last = _delegate("repairs", "undo_last")
    undo = _delegate("repairs", "undo")
    show_history = _delegate("repairs", "show_history")
    choose_export = _delegate("repairs", "choose_export")
    export_transcript = _delegate("repairs", "export_transcript")

    def _on_undo_offered(self, label: str, tooltip: str) -> None:
        self.undo_button.setText(label)
        self.undo_button.setToolTip(tooltip)
        self.undo_button.show()
        self.undo_action.setEnabled(True)
        self.undo_action.setText(f"&{label}")

    def _on_undo_withdrawn(self) -> None:
        self.undo_button.hide()
        self.undo_action.setEnabled(False)
        self.undo_action.setText("&Undo Last Write")

    def _show_status(self, text: str, ms: int = 0) -> None:
        self.statusBar().showMessage(text, ms)

    # ------------------------------------------------------------ status

    def is_settled(self) -> bool:
        return (
            (self.loader.loaded_once or self.home is None)
            and self.loader.pending_select is None
            and self._due_session is None
            and not self.runner.is_busy()
            and not self.view.filling()
        )

    def _maybe_settled(self) -> None:
        if self.is_settled():
            self.settled.emit()
