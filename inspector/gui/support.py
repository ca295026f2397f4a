"""The window's side of support bundles and repair kits (issue 17).

* File ▸ Save Support Bundle…: the selected sessions' bundle is gathered on a worker thread
  (reads only), what goes in is shown, and only then is a file chosen and written (0600);
* File ▸ Open Bundle…: unpacked read-only (:func:`inspector.bundle.open_bundle`), shown with a
  banner and a title that say it is a bundle, from whom and when; removed when another home is
  opened or the window closes;
* "Save as Repair Kit…" in a bundle's preview (its Write button is off: a bundle is never
  written);
* File ▸ Apply Repair Kit…: the kit is planned on the open home (:func:`inspector.kit.plan_kit`),
  shown in the same preview, and Write goes through the window's usual write path.

Every step that reads or writes files runs through the window's TaskRunner.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
)

from inspector.bundle import BundleContents, OpenedBundle, collect, open_bundle, write_bundle
from inspector.gui.preview_dialog import PreviewDialog
from inspector.home import Home
from inspector.jobs import pool
from inspector.jobs.plans import save_kit_job
from inspector.kit import load_kit, make_kit, plan_kit, save_kit
from inspector.plan import Clock, Plan
from inspector.present.plans import PlanSummary
from inspector.textsafe import one_line, safe_text

BANNER_STYLE = (
    "QLabel#BundleBanner { background: #fff3cd; color: #5c4400; border-bottom: 1px solid #e0c060;"
    " padding: 6px 10px; font-weight: bold; }"
)


class BundleBanner(QLabel):
    """The strip above the window's panes while a support bundle is open."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("BundleBanner")
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(True)
        self.setStyleSheet(BANNER_STYLE)
        self.hide()

    def show_bundle(self, opened: OpenedBundle | None) -> None:
        if opened is None:
            self.hide()
            return
        m = opened.manifest
        origin = opened.home.bundle
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(origin.made_at)) if origin else "?"
        self.setText(
            safe_text(
                f"Support bundle (read-only): {opened.archive.name} — made by {m.get('made_by', '?')} on "
                f"{when} from {m.get('home', {}).get('base', '?')}, "
                f"{len(m.get('sessions', []))} session(s). Nothing here is ever written: previews can be "
                "saved as a repair kit for the user."
            )
        )
        self.show()


class BundleSummaryDialog(QDialog):
    """What a support bundle will hold, shown before anything is written; Save… goes on."""

    def __init__(self, contents: BundleContents, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Save Support Bundle")
        self.setObjectName("BundleSummaryDialog")
        self.contents = contents
        self.resize(820, 520)
        layout = QVBoxLayout(self)
        intro = QLabel(
            "These files go into the bundle. Nothing else of the home does (no .env, config.yaml, "
            "auth.json or other sessions). The file will be readable only by you."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.text = QPlainTextEdit(safe_text(contents.summary()))
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        layout.addWidget(self.text, 1)
        self.buttons = QDialogButtonBox()
        self.save_button = self.buttons.addButton("Save…", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)


def choose_file(
    parent, title: str, file_filter: str, then: Callable[[Path], object], save_as: str | None = None
) -> Path | None:
    """Ask for a file, starting in the user's home folder: to open (``save_as`` None) or to save as
    ``save_as``; ``then(path)`` runs when one was chosen. Returns the path, None when cancelled."""
    if save_as is None:
        path, _ = QFileDialog.getOpenFileName(parent, title, str(Path.home()), file_filter)
    else:
        path, _ = QFileDialog.getSaveFileName(parent, title, str(Path.home() / save_as), file_filter)
    if not path:
        return None
    then(Path(path))
    return Path(path)


def _gather(home: Home, session_ids: list[str]) -> BundleContents:
    with tempfile.TemporaryDirectory(prefix="hermes-inspector-extract-") as work:
        return collect(home, session_ids, workdir=Path(work))


class SupportActions(QObject):
    """Bundle and kit flows of one MainWindow (kept here so the window only wires menus)."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.opened: OpenedBundle | None = None
        self.banner = BundleBanner()
        self.dialog: QDialog | None = None

    def _status(self, text: str, ms: int = 10000) -> None:
        self.window.statusBar().showMessage(one_line(text, 300), ms)

    def _run(
        self,
        channel: str,
        call: Callable[[], Any],
        on_done: Callable[[Any], None],
        label: str,
        failed: str,
        ms: int = 10000,
    ) -> None:
        """``call()`` on the window's TaskRunner; a failure is said in the status bar as
        "<failed>: <the error in words>" for ``ms``."""
        self.window.runner.start(
            channel,
            lambda token, progress: call(),
            on_done,
            label=label,
            on_error=lambda msg: self._status(f"{failed}: {msg}", ms),
        )

    # ------------------------------------------------------------ save a bundle

    def selected_sessions(self) -> list[str]:
        w = self.window
        ids = []
        for index in w.table.selectionModel().selectedRows():
            sid = index.data(w.session_id_role)
            if isinstance(sid, str):
                ids.append(sid)
        current = w.current_session_id()
        if not ids and current:
            ids = [current]
        return list(dict.fromkeys(ids))

    def save_bundle(self) -> None:
        home = self.window.home
        if home is None or home.bundle is not None:
            self._status("Open the Hermes home itself to make a support bundle (this is already one)")
            return
        ids = self.selected_sessions()
        if not ids:
            self._status("Select the sessions to put in a support bundle")
            return
        self._run(
            "bundle",
            lambda: _gather(home, ids),
            self._confirm_bundle,
            "Gathering the support bundle…",
            "No bundle",
        )

    def _confirm_bundle(self, contents: BundleContents) -> None:
        dialog = BundleSummaryDialog(contents, self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda c=contents: self._choose_bundle_file(c))
        self.dialog = dialog
        dialog.open()

    def _choose_bundle_file(self, contents: BundleContents) -> None:
        name = f"hermes-support-{contents.sessions[0] if len(contents.sessions) == 1 else 'sessions'}.tar.gz"
        choose_file(
            self.window,
            "Save Support Bundle",
            "Support bundles (*.tar.gz)",
            lambda path: self.write_bundle(contents, path),
            save_as=name,
        )

    def write_bundle(self, contents: BundleContents, path: Path) -> None:
        self._run(
            "bundle",
            lambda: write_bundle(contents, path, overwrite=True),
            lambda _=None: self._status(
                f"Saved the support bundle {path} ({len(contents.sessions)} session(s), readable only by you)"
            ),
            "Writing the support bundle…",
            "No bundle",
        )

    # ------------------------------------------------------------ open a bundle

    def choose_bundle(self) -> None:
        choose_file(
            self.window, "Open Support Bundle", "Support bundles (*.tar.gz *.tgz)", self.open_bundle_file
        )

    def open_bundle_file(self, path: Path) -> None:
        self._run(
            "bundle",
            lambda: open_bundle(path),
            self.show_bundle,
            "Opening the support bundle…",
            "Bundle not opened",
            20000,
        )

    def show_bundle(self, opened: OpenedBundle, select: str | None = None) -> None:
        """Show an unpacked bundle (the window takes it over and removes it when done)."""
        self.close()
        self.opened = opened  # before open_home, so the banner can name it
        self.window.open_home(opened.home, select=select, remember=False)
        self.opened = opened  # after open_home: opening a home closes the previous bundle

    def home_opened(self, home: Home) -> None:
        """Called by the window whenever it shows a home: banner and title follow it."""
        if self.opened is not None and self.opened.home is not home:
            self.close()  # another home replaces the bundle: its unpacked copy goes
        self.banner.show_bundle(self.opened)
        if home.bundle is not None:
            stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(home.bundle.made_at))
            self.window.setWindowTitle(
                f"Hermes Session Inspector — support bundle from {home.bundle.made_by}, {stamp} (read-only)"
            )

    def close(self) -> None:
        if self.opened is not None:
            self.opened.close()
            self.opened = None

    # ------------------------------------------------------------ kits

    def decorate_preview(self, dialog: PreviewDialog, plan: PlanSummary) -> None:
        """In a bundle: Write is off, and "Save as Repair Kit…" saves the previewed plan (with the clock
        it was made with, ``plan.clock``)."""
        clock = plan.clock
        home = self.window.home
        if home is None or home.bundle is None:
            return
        dialog.write_button.setEnabled(False)
        dialog.write_button.setToolTip(
            "A support bundle is read-only: save a repair kit for the user instead"
        )
        button = dialog.buttons.addButton("Save as Repair Kit…", QDialogButtonBox.ButtonRole.ActionRole)
        button.setObjectName("SaveKitButton")
        button.setEnabled(clock is not None and plan.refusal is None and bool(plan.changes))
        button.clicked.connect(lambda _=False: self.choose_kit_file(plan, home, clock))
        dialog.save_kit_button = button

    def choose_kit_file(self, plan: PlanSummary, home: Home, clock: Clock) -> None:
        name = f"repair-kit-{plan.session_id or plan.action}.json"
        choose_file(
            self.window,
            "Save Repair Kit",
            "Repair kits (*.json)",
            lambda path: self.save_kit(plan, home, clock, path),
            save_as=name,
        )

    def save_kit(self, plan: Plan | PlanSummary, home: Home, clock: Clock, path: Path) -> None:
        def call():
            if isinstance(plan, PlanSummary) and plan.local is None:  # the worker keeps the plan
                return pool.run_job(save_kit_job, home, plan, clock, path)
            real = plan.local if isinstance(plan, PlanSummary) else plan
            return save_kit(make_kit(real, home, clock), path, overwrite=True)

        self._run(
            "kit",
            call,
            lambda _=None: self._status(
                f"Saved the repair kit {path}. The user applies it with File ▸ Apply Repair Kit…"
            ),
            "Saving the repair kit…",
            "No kit saved",
        )

    def choose_kit(self) -> None:
        choose_file(self.window, "Apply Repair Kit", "Repair kits (*.json)", self.apply_kit_file)

    def apply_kit_file(self, path: Path) -> None:
        home = self.window.home
        if home is None or home.bundle is not None:
            self._status("Open the Hermes home the kit is for (not a support bundle), then apply the kit")
            return

        self._run(
            "kit",
            lambda: plan_kit(load_kit(path), home)[0],
            self.preview_kit,
            "Checking the repair kit…",
            "Kit refused",
            20000,
        )

    def preview_kit(self, plan: Plan) -> PreviewDialog:
        """The kit's plan on this home in the usual preview; Write takes the usual write path."""
        dialog = PreviewDialog(plan, self.window)
        dialog.setWindowTitle("Preview: repair kit")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda p=plan: self.window.write_plan(p))
        self.dialog = dialog
        dialog.open()
        return dialog
