"""Opening a home: the window's load controller.

It owns the open home and its catalogue, the quick look at the newest sessions while the complete
catalogue is worked out in a child process, the recent homes, the demo's own state folder, and the
watch on the disk (the sessions folder, the shown session's files, every profile's state.db) that
reloads the list when hermes writes. The window (:mod:`inspector.gui.main_window`) builds the widgets
this fills and connects its signals.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QFileSystemWatcher, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QFileDialog

from inspector import statedir
from inspector.finding_words import state_db_banner
from inspector.gcpause import freeze_startup
from inspector.gui.qtypes import single_shot
from inspector.gui.session_model import SESSION_ID_ROLE, SessionTableModel
from inspector.gui.session_view import merge_findings
from inspector.home import Home, check_readable, locate_home
from inspector.home_choice import home_for_chosen_folder
from inspector.jobs import pool
from inspector.jobs.offload import load_catalogue_offloaded, quick_rows_offloaded
from inspector.present.rows import HomeListing, finding_of
from inspector.quickscan import quick_rows
from inspector.store.journal import RUN_JOURNAL_DIR
from inspector.textsafe import one_line, safe_text

if TYPE_CHECKING:
    from inspector.gui.main_window import MainWindow

DEBOUNCE_MS = 500
MAX_RECENT = 8
FIRST_ROWS = 200  # the quick look shows the newest sessions first, then all of them
QUICK_AFTER_MS = 1  # the quick look starts in a later turn than the one that opens the home
QUICK_ALL_AFTER_MS = 1500  # ... all of them only when the complete catalogue is not in by then
# After the turn that opens a home (and its first paint: a zero timer fires before the paint), each in
# a turn of its own: the home remembered, its folders watched.
REMEMBER_AFTER_MS = 100
WATCH_AFTER_MS = 200


class LoadController(QObject):
    """Opens homes into the window and keeps the list in step with the disk."""

    status = Signal(str, int)  # a status-bar message and how long it shows (ms; 0: until replaced)
    home_opening = Signal(object)  # a Home is about to be scanned: the window clears what showed the last one
    loaded = Signal()  # the catalogue is in (or failed): the window may have settled
    disk_changed = Signal()  # a watched file or folder changed and the debounce ran out: reload

    def __init__(self, window: MainWindow):
        super().__init__(window)
        self.w = window
        self.runner = window.runner
        self.settings = window.settings
        self.home: Home | None = None
        self.catalogue: HomeListing | None = None  # the complete catalogue's count and home findings
        self.loaded_once = False  # this home's catalogue is in, or failed (MainWindow.is_settled)
        self.pending_select: str | None = None
        self._auto_select = True
        self._first_attention: str | None = None
        self._to_remember: Home | None = None  # opened, remembered in a turn after the one that opened it
        # The demo: a home in a temporary folder, its write log and backups beside it (not in the
        # user's state folder) while it is open.
        self._demo_dir: tempfile.TemporaryDirectory | None = None
        self.demo_home: Home | None = None
        self._state_env: str | None = None  # HERMES_INSPECTOR_STATE_DIR before the demo set it
        self._demo_env_set = False
        self.watcher = QFileSystemWatcher(self)
        self.watcher.directoryChanged.connect(self._on_disk_change)
        self.watcher.fileChanged.connect(self._on_disk_change)
        self.debounce = single_shot(self, DEBOUNCE_MS, self.disk_changed.emit)

    # ------------------------------------------------------------ recent homes

    def recent_homes(self) -> list[dict]:
        raw = self.settings.value("recent_homes", "[]")
        try:
            items = json.loads(raw if isinstance(raw, str) else "[]")
        except ValueError:
            return []
        return [i for i in items if isinstance(i, dict) and isinstance(i.get("home"), str)]

    def remember_home(self, home: Home) -> None:
        # A state dir the user named is remembered; one found in the home's own webui.ctl.env is
        # found there again (remembered, it would count as named: see inspector.linkcheck).
        named = home.state_dir_from in ("option", "env")
        entry = {
            "home": str(home.base),
            "state_dir": str(home.state_dir) if named else None,
            "state_db": str(home.state_db_override) if home.state_db_override else None,
        }
        items = [entry] + [i for i in self.recent_homes() if i != entry]
        self.settings.setValue("recent_homes", json.dumps(items[:MAX_RECENT]))
        self.settings.sync()
        self.w.welcome.set_recent(self.recent_homes())

    def fill_recent(self, menu) -> None:
        """The File ▸ Open Recent menu, filled as it opens."""
        menu.clear()
        items = self.recent_homes()
        if not items:
            a = menu.addAction("(none)")
            a.setEnabled(False)
        for item in items:
            label = (
                item["home"]
                if item.get("state_dir") in (None, str(Path(item["home"]) / "webui"))
                else f"{item['home']}  (state dir {item.get('state_dir')})"
            )
            a = menu.addAction(label)
            a.triggered.connect(lambda _=False, i=item: self.open_recent(i))

    # ------------------------------------------------------------ opening a home

    def choose_home(self) -> None:
        start = str(self.home.base) if self.home else str(Path.home())
        folder = QFileDialog.getExistingDirectory(self.w, "Open Hermes Home", start)
        if folder:
            self.open_chosen_folder(folder)

    def open_chosen_folder(self, folder: str | Path) -> Home:
        """Open a picked folder as a home; the sessions or webui folder means the home above it."""
        choice = home_for_chosen_folder(folder)
        home = locate_home(choice.home)
        self.w.open_home(home)
        if choice.note:
            self.status.emit(choice.note, 15000)
        return home

    def open_recent(self, item: dict) -> None:
        self.w.open_home(locate_home(item["home"], item.get("state_dir"), item.get("state_db")))

    def open_demo(self, select: str | None = None) -> Home:
        """Build the demo home in a temporary folder (once per window) and open it. While it is open,
        the write log and backups go to a state folder beside the demo's home (HERMES_INSPECTOR_STATE_DIR),
        not to the user's; the folder goes when the window closes."""
        from inspector.demo import build_demo_home

        if self._demo_dir is None or self.demo_home is None:
            self._demo_dir = tempfile.TemporaryDirectory(prefix="hermes-inspector-demo-")
            root = Path(self._demo_dir.name)
            self.demo_home = locate_home(build_demo_home(root / "home", now=time.time()).home, None, None)
        self.w.open_home(self.demo_home, select=select, remember=False)
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

    def close(self) -> None:
        """The window closes: no reload comes, the user's state folder is back, the demo's folder goes
        (a home opened in the closing turn is still remembered)."""
        self.debounce.stop()
        self._remember_opened()
        self._leave_demo_state()
        if self._demo_dir is not None:
            self._demo_dir.cleanup()
            self._demo_dir = None

    def open_home(self, home: Home, select: str | None = None, remember: bool = True) -> None:
        """Show a home: scan it in the background, watch its folders, select ``select`` when given."""
        if self.demo_home is not None and home == self.demo_home:
            self._enter_demo_state()
        else:
            self._leave_demo_state()
        freeze_startup()  # the first open: no collection walks the window's start-up heap again
        self.home = home
        statedir.keep_out_of(home.base, home.state_dir)  # the log file is never made inside a home
        self.catalogue = None
        self.loaded_once = False
        self.pending_select = select
        self._auto_select = True
        self.home_opening.emit(home)
        self.scan()
        # Each after this turn, in a turn of its own: a first watch of the sessions folder makes the
        # kernel walk every entry of it it has cached (inotify_add_watch: 15-36 ms at 50,000 sessions),
        # and remembering the home writes the settings file (9-16 ms): together with the page shown
        # above they were one 40-56 ms stall of the window. A change made meanwhile is in the scan
        # begun above, or is seen by the watch (a change after it).
        self._to_remember = home if remember else None
        QTimer.singleShot(REMEMBER_AFTER_MS, self, self._remember_opened)
        QTimer.singleShot(WATCH_AFTER_MS, self, lambda: self._watch_opened(home))

    def _watch_opened(self, home: Home) -> None:
        if self.home is home:
            self.watch()

    def _remember_opened(self) -> None:
        home, self._to_remember = self._to_remember, None
        if home is not None:
            self.remember_home(home)

    def scan(self) -> None:
        """Read the home's catalogue. An empty list first gets the quick look (the newest
        sessions from their files' first bytes, then all of them), while the complete catalogue
        with every session's health is worked out in a child process and replaces those rows."""
        home = self.home
        if home is None:
            return
        model = self.w.model
        sort = model.sort_state()
        if model.rowCount() == 0:
            # after the paint of the opened page: the quick look lists every sidecar in a worker
            # thread of this process, and each call that paint makes into Python would wait for
            # the GIL meanwhile (issue 18: the turn that opens a home was the longest stall)
            QTimer.singleShot(QUICK_AFTER_MS, self, lambda: self._quick_first(home))

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

        self.runner.start(
            "catalogue", work, self._on_catalogue, label="Checking health…", on_error=self._on_catalogue_error
        )

    def _quick_first(self, home: Home) -> None:
        if self.catalogue is None and self.home is home and self.runner.is_busy("catalogue"):
            if self.w.model.rowCount() == 0:
                self._start_quick(home, FIRST_ROWS)

    def _start_quick(self, home: Home, limit: int | None) -> None:
        sort = self.w.model.sort_state()

        def work(token, progress):
            check_readable(home)
            if limit is None:  # every sidecar: read in a child, unpickled and prepared on this thread
                return quick_rows_offloaded(home.session_dir, token.check).then(
                    lambda rows: SessionTableModel.prepare_steps(rows, sort)
                )
            with pool.no_collections():  # a listing of every sidecar's name and stat: no cycles
                rows = quick_rows(home.session_dir, limit)  # the newest few, before the list has any row
                return SessionTableModel.prepare(rows, sort, token.check)

        self.runner.start(
            "quick",
            work,
            lambda entries: self._on_quick_rows(home, entries, limit, sort),
            label="Reading the session list…",
        )

    def _on_quick_rows(self, home: Home, entries: list, limit: int | None, sorted_by) -> None:
        if self.catalogue is not None or self.home is not home or not self.runner.is_busy("catalogue"):
            return  # the complete catalogue is in (or failed): it wins
        model = self.w.model
        model.set_rows(
            entries, checking=True, sorted_by=sorted_by
        )  # the current row stays (_restore_current)
        n = model.rowCount()
        more = "+" if limit is not None and n >= limit else ""
        self.w.home_label.setText(safe_text(f"{n}{more} sessions · checking health… · {home.session_dir}"))
        if limit is not None and n >= limit:
            # then all of them, unless the health check is done first (it usually is: reading
            # every file's first bytes here would only compete with it, and stall the window)
            QTimer.singleShot(QUICK_ALL_AFTER_MS, lambda: self._quick_all(home))

    def _quick_all(self, home: Home) -> None:
        if self.catalogue is None and self.home is home and self.runner.is_busy("catalogue"):
            self._start_quick(home, None)

    def refresh(self) -> None:
        """Rescan the list and reload the shown session (files changed, or F5)."""
        self.watch()
        self.scan()
        w = self.w
        sid = w.current_session_id() or (w.data.session_id if w.data is not None else None)
        if sid is not None:  # the selected one: the shown one may be older than the selection
            w.load_session(sid)

    def _on_catalogue_error(self, message: str) -> None:
        self.runner.cancel("quick")
        self.loaded_once = True
        self.w.home_label.setText(safe_text(f"Cannot read this home: {message}"))
        self.status.emit(one_line(message, 200), 10000)
        self.loaded.emit()

    def _on_catalogue(self, result: tuple) -> None:
        cat, self._first_attention, entries, sorted_by, attention, profiles = result
        self.runner.cancel("quick")
        self.catalogue = cat
        self.loaded_once = True
        w = self.w
        w.model.set_rows(entries, sorted_by=sorted_by)
        self._fill_profiles(profiles)
        text = f"{cat.count} sessions · {attention} need attention · {self.home.session_dir}"
        listed = [f for f in cat.home_findings if f.kind != "state_db_unreadable"]  # those: the banner
        if listed:
            text += "\n" + "\n".join(f"{f.severity}: {one_line(f.message, 160)}" for f in listed[:3])
            if len(listed) > 3:
                text += f"\n… {len(listed) - 3} more home finding(s)"
        w.home_label.setText(safe_text(text))
        banner = state_db_banner(cat.home_findings)
        w.state_db_banner.setText(safe_text(banner or ""))
        w.state_db_banner.setVisible(banner is not None)
        if self.pending_select is not None:
            sid, self.pending_select = self.pending_select, None
            if not w.select_session(sid):
                self.status.emit(f"No session {one_line(sid, 60)} in this home", 10000)
                self._select_first_needing_attention()
        elif self._auto_select and w.current_session_id() is None:
            self._select_first_needing_attention()
        self._auto_select = False
        data = w.data
        row = w.model.row_for(data.session_id) if data is not None else None
        if row is not None:  # the list's findings (hermes' audit items) may have changed
            w.view.header.set_data(data, row.where)
            merged = merge_findings(data.detail.findings, w.model.catalogue_findings(data.session_id))
            w.view.findings.set_findings(merged)
            w.model.update_findings(data.session_id, merged)

    def _fill_profiles(self, row_profiles: list[str]) -> None:
        names = list(self.home.profile_names()) if self.home else []
        for profile in row_profiles:
            if profile not in names:
                names.append(profile)
        self.w.list_panel.set_profiles(names)

    def _select_first_needing_attention(self) -> None:
        w = self.w
        if self._first_attention and w.select_session(self._first_attention):
            return
        if w.model.rowCount():
            w.select_session(w.model.index(0, 0).data(SESSION_ID_ROLE))

    # ------------------------------------------------------------ watching the disk

    def watch(self) -> None:
        """Watch folders (atomic replace defeats per-file watches) plus the shown session's files."""
        if self.home is None:
            return
        sdir = self.home.session_dir
        wanted = [sdir, sdir / RUN_JOURNAL_DIR]
        files: list[Path] = []
        data = self.w.data
        if data is not None:
            wanted.append(sdir / RUN_JOURNAL_DIR / data.session_id)
            files += [run.info.path for run in data.runs]  # appends happen in place
            if data.detail.sidecar_path is not None:
                files.append(data.detail.sidecar_path)
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
