"""Repairs from the window: the repair controller.

Plan (in a child process, which keeps the plans: the window holds their summaries,
:mod:`inspector.jobs.plans`) → preview (the diff the user reads) → write (in a child, fingerprint-checked,
backed up, logged: :func:`inspector.plan.apply_plan`) → undo. Also the write history and the transcript
export. The window (:mod:`inspector.gui.main_window`) shows what it says through its signals.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QMessageBox

from inspector.export import transcript_json_bytes, transcript_markdown
from inspector.findings import Finding
from inspector.gui.history_dialog import HistoryDialog
from inspector.gui.preview_dialog import PreviewDialog
from inspector.gui.support import choose_file
from inspector.jobs import plans as kept_plans
from inspector.jobs import pool
from inspector.jobs.plans import apply_job, plan_session_job
from inspector.linkcheck import recheck_before_write
from inspector.plan import ApplyError, Plan, WriteLog, WriteRecord, apply_plan, undo_write
from inspector.present.plans import PlanSummary
from inspector.present.session_data import ACTIONS, PlanFailure, recommended_actions
from inspector.textsafe import one_line

if TYPE_CHECKING:
    from inspector.gui.main_window import MainWindow

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


class RepairController(QObject):
    """Plans the shown session's repairs, previews one, writes it, and undoes writes."""

    status = Signal(str, int)  # a status-bar message and how long it shows (ms; 0: until replaced)
    plans_ready = Signal(object)  # dict action -> PlanSummary or the planner's error text (PlanFailure)
    undo_offered = Signal(str, str)  # the undo's label ("Undo <repair>") and its tooltip
    undo_withdrawn = Signal()  # the last write was undone: nothing left to undo here
    disk_written = Signal()  # a write or undo ran (whatever its outcome): the list and session reload

    def __init__(self, window: MainWindow):
        super().__init__(window)
        self.w = window
        self.runner = window.runner
        self.plans: dict[str, PlanSummary | str] | None = None
        self._batches: list[str] = []  # plannings whose plans the worker may still keep (jobs.plans)
        self.preview: PreviewDialog | None = None
        self.last_write: str | None = None
        self.last_write_about: tuple[str, str | None] = ("", None)  # (action, session id) of last_write

    # ------------------------------------------------------------ planning

    def start_planning(self) -> None:
        w = self.w
        home, data = w.home, w.data
        if home is None or data is None:
            return
        recommended = recommended_actions(
            data.detail,
            (w.catalogue.home_findings if w.catalogue else []) + self._row_findings(data.session_id),
        )
        sid = data.session_id
        batch = kept_plans.new_batch()  # the files the child keeps this planning's plans in
        self._batches.append(batch)

        def work(token, progress):
            # in the child process: a plan reads and rewrites _index.json (tens of MB in a big
            # home), long C calls that would hold the window's GIL. The plans stay there (kept
            # by jobs.plans); the window gets their summaries, each with its clock and handle
            return pool.run_job_steps(plan_session_job, home, sid, recommended, batch, check=token.check)

        self.runner.start(
            "plans",
            work,
            self._on_plans,
            label="Planning repairs…",
            on_error=lambda msg: self.status.emit(one_line(msg, 200), 10000),
        )

    def _row_findings(self, sid: str) -> list[Finding]:
        model = self.w.model
        row = model.row_for(sid)
        return model.catalogue_findings(sid) if row else []

    def forget_plans(self, keep: str | None = None) -> None:
        """The worker lets go of the plans no longer shown: every planning's batch (cancelled ones
        too) but ``keep`` and the open preview's (its Write would otherwise have to plan again)."""
        previewed = kept_plans.batch_of(self.preview.plan.handle) if self.preview is not None else None
        kept = {previewed, keep} - {None}
        kept_plans.drop_later([b for b in self._batches if b not in kept])
        self._batches = [b for b in self._batches if b in kept]
        self.plans = None

    def _on_plans(self, plans: dict[str, PlanSummary | str]) -> None:
        self.forget_plans(keep=self._batches[-1] if self._batches else None)  # (the newest planning's)
        self.plans = plans
        self.plans_ready.emit(plans)
        for action, plan in plans.items():  # a planner that failed: its traceback one click away
            if isinstance(plan, PlanFailure):
                self.w.failure_details.record(
                    f"Planning {ACTIONS.get(action, action)}", str(plan), plan.details
                )

    # ------------------------------------------------------------ preview, write, undo

    def preview_action(self, action: str) -> PreviewDialog | None:
        """Open the preview of an action's plan; Write applies exactly that plan."""
        plan = (self.plans or {}).get(action)
        if not isinstance(plan, PlanSummary):
            return None
        w = self.w
        dialog = PreviewDialog(plan, w)
        w.support.decorate_preview(dialog, plan)  # in a bundle: Save as Repair Kit…
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda p=plan: self.write_plan(p))
        dialog.destroyed.connect(lambda _=None: setattr(self, "preview", None))
        dialog.write_hermes_requested.connect(self.write_plan)
        self.preview = dialog
        dialog.open()
        if w.home is not None:
            dialog.start_crosscheck(self.runner, w.home, w.settings)
        return dialog

    def write_plan(self, plan: Plan | PlanSummary) -> None:
        """Write a previewed plan: one the worker keeps is written there (``jobs.plans.apply_job``),
        one made here (a kit, hermes-webui's result) here; both through ``plan.apply_plan``."""
        home = self.w.home
        log = WriteLog.default(home=home)
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

        self.runner.start(
            "write",
            work,
            lambda record, p=plan: self._on_written(record, p),
            label="Writing…",
            on_error=self._on_write_error,
        )

    def _on_written(self, record, plan: Plan | PlanSummary | None = None) -> None:
        about = (plan.action, plan.session_id) if plan is not None else ("", None)
        if isinstance(record, ApplyError):
            self._on_write_error(str(record), record.outcome)
            if record.outcome != "nothing" and record.write_id:  # some files were written: offer their undo
                self._offer_undo(record.write_id, about)
            return
        if isinstance(record, WriteRecord):
            about = (record.action, record.session_id)
        if about[1] is not None and about[1] == self.w.current_session_id():
            self.w.model.keep_fixed(
                about[1]
            )  # shown (marked fixed) under "Needs attention" until the user moves
        self._offer_undo(record.write_id, about)
        files = ", ".join(Path(f["path"]).name for f in record.files)
        self.status.emit(
            f"Wrote {files}: {self.write_words(record.write_id, about)}. "
            "Undo (Ctrl+Z) restores the previous files.",
            0,
        )
        self.disk_written.emit()

    def _offer_undo(self, write_id: str, about: tuple[str, str | None]) -> None:
        self.last_write, self.last_write_about = write_id, about
        label = ACTIONS.get(about[0], about[0]) or "the last write"
        self.undo_offered.emit(f"Undo {label}", f"Undo {self.write_words(write_id, about)} (Ctrl+Z)")

    def write_words(self, write_id: str, about: tuple[str, str | None]) -> str:
        """A write named for people: its repair, the session's title, the write's id."""
        action, sid = about
        label = ACTIONS.get(action, action) or "write"
        if sid is None:
            return f"{label} (write {write_id})"
        row = self.w.model.row_for(sid)
        title = one_line(row.title, 60) if row is not None and row.title else one_line(sid, 40)
        return f"{label} on “{title}” (write {write_id})"

    def undo_last(self) -> bool:
        """Undo the last write of this window (Ctrl+Z, the Undo button). A write of a session other than
        the one shown is undone only after the user says yes. True when the undo was started."""
        write_id = self.last_write
        if write_id is None:
            self.status.emit("Nothing to undo: no write was made in this window.", 5000)
            return False
        words = self.write_words(write_id, self.last_write_about)
        data = self.w.data
        shown = data.session_id if data is not None else None
        sid = self.last_write_about[1]
        if sid is not None and sid != shown:
            answer = QMessageBox.question(
                self.w,
                "Undo a write of another session?",
                f"The last write was {words}, not the session shown. Undo it?",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                QMessageBox.StandardButton.No,
            )
            if answer != QMessageBox.StandardButton.Yes:
                self.status.emit(f"Not undone: {words}.", 5000)
                return False
        self.status.emit(f"Undoing {words}…", 0)
        self.undo(write_id)
        return True

    def _on_write_error(self, message: str, outcome: str = "nothing") -> None:
        head = WRITE_OUTCOME_HEADS.get(outcome, WRITE_OUTCOME_HEADS["nothing"])
        self.status.emit(f"{head}: {one_line(message, 300)}", 15000)
        self.disk_written.emit()

    def undo(self, write_id: str) -> None:
        log = WriteLog.default()
        self.runner.start(
            "write",
            lambda token, progress: _refusal_as_result(undo_write, write_id, log),
            lambda rec, w=write_id: self._on_undone(w, rec),
            label="Undoing…",
            on_error=self._on_write_error,
        )

    def _on_undone(self, write_id: str, record) -> None:
        if isinstance(record, ApplyError):
            self._on_write_error(str(record), record.outcome)
            return
        words = f"write {write_id}"
        if self.last_write == write_id:
            words = self.write_words(write_id, self.last_write_about)
            self.last_write = None
            self.undo_withdrawn.emit()
        self.status.emit(f"Undid {words}: restored {len(record.files)} file(s).", 10000)
        self.disk_written.emit()

    def show_history(self) -> HistoryDialog:
        log = WriteLog.default()
        records = log.records()
        model = self.w.model
        titles = {
            r.session_id: row.title
            for r in records
            if r.session_id is not None and (row := model.row_for(r.session_id)) is not None and row.title
        }
        dialog = HistoryDialog(
            records, str(log.log_path), str(log.root / "backups"), self.w, titles, self.runner
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.undo_requested.connect(self.undo)
        dialog.open()
        return dialog

    # ------------------------------------------------------------ export

    def choose_export(self, kind: str) -> None:
        data = self.w.data
        if data is None:
            self.status.emit("Select a session to export", 3000)
            return
        suffix = ".md" if kind == "md" else ".json"
        choose_file(
            self.w,
            "Export Transcript",
            "Markdown (*.md)" if kind == "md" else "JSON (*.json)",
            lambda path: self.export_transcript(path, kind),
            save_as=f"session-{data.session_id}{suffix}",
        )

    def export_transcript(self, path: Path, kind: str) -> None:
        data = self.w.data
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

        self.runner.start(
            "export",
            work,
            lambda p: self.status.emit(f"Exported to {p}", 8000),
            label="Exporting…",
            on_error=lambda msg: self.status.emit(f"Export failed: {msg}", 10000),
        )
