"""Repair plans made, kept and written on the worker's side of the window (issue 15). No Qt.

:func:`plan_session_job` plans a session's repairs in a child process and sends the window
:class:`~inspector.present.plans.PlanSummary` values: what the buttons and the preview show,
without the plans' bytes. Each plan is kept in a private file of the hand-over folder
(``portable.handover_dir``: memory where the system has ``/dev/shm``; 0600), named by the
summary's ``handle``: any child of the pool can read it, the window never does.

When the user presses Write, :func:`apply_job` (again in a child) takes the kept plan and writes
it through the one write path (``plan.apply_plan``: backups, fingerprints checked again, the
write log, undo). A plan no longer kept (the file is gone) is made again with the clock of the
preview and written only if it reads and writes exactly the bytes the preview showed
(:func:`inspector.present.plans.same_plan`); otherwise the write is refused and nothing is
written. Each planning of the window is a batch (:func:`new_batch`): the window drops the
batches it no longer shows (:func:`drop_later`), every batch of its own at exit
(:func:`drop_all`), and a starting window the ones of windows that are gone (:func:`sweep_gone`).
"""

from __future__ import annotations

import atexit
import itertools
import os
import pickle
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from inspector import portable
from inspector.plan import ApplyError, Plan, WriteLog, WriteRecord, apply_plan
from inspector.present.plans import PlanSummary, same_plan, summarize

PREFIX = "hermes-inspector-plan-"
Check = Callable[[], None]

_batches = itertools.count(1)


def _folder() -> Path:
    """Where kept plans live: ``/dev/shm`` when the system has it, else tempfile's folder."""
    return Path(portable.handover_dir() or tempfile.gettempdir())


def new_batch() -> str:
    """A name for one planning of the window (its process id and a number): every plan kept for
    it is a file named after it, so the window can drop a batch whose summaries it never saw (a
    planning cancelled after the child had kept its plans) and a later window can tell the
    files of a window that is gone."""
    return f"{os.getpid()}-{next(_batches)}"


def keep(plan: Plan, batch: str | None = None) -> str:
    """Keep ``plan`` in a private file named after ``batch`` (else a batch of this process's own);
    its handle (the file's path)."""
    batch = batch or new_batch()
    fd, name = tempfile.mkstemp(prefix=f"{PREFIX}{batch}-", suffix=".pickle", dir=_folder())  # 0600
    try:
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(plan, fh, protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException:
        os.unlink(name)
        raise
    return name


def batch_of(handle: str | None) -> str | None:
    """The batch a handle was kept for."""
    if not handle:
        return None
    parts = Path(handle).name[len(PREFIX) :].split("-")
    return "-".join(parts[:2]) if len(parts) >= 3 else None


def _ours(handle: str) -> bool:
    path = Path(handle)
    return path.name.startswith(PREFIX) and path.parent == _folder()


def load(handle: str | None) -> Plan | None:
    """The kept plan, or None when it is not kept any more (or the handle is not one of ours)."""
    if not handle or not _ours(handle):
        return None
    try:
        with open(handle, "rb") as fh:
            plan = pickle.load(fh)
    except (OSError, EOFError, pickle.UnpicklingError):
        return None
    return plan if isinstance(plan, Plan) else None


def drop(handles) -> None:
    """Forget kept plans."""
    for handle in handles:
        if handle and _ours(handle):
            try:
                os.unlink(handle)
            except OSError:
                pass


def _kept(pattern: str) -> list[str]:
    try:
        return [str(p) for p in _folder().glob(f"{PREFIX}{pattern}-*.pickle")]
    except OSError:
        return []


def drop_batches(batches) -> None:
    """Forget every plan kept for these batches (the window shows other ones now)."""
    drop([h for batch in batches for h in _kept(batch)])


def drop_later(batches) -> None:
    """:func:`drop_batches`, in a thread of its own: unlinking a kept rebuild-index plan (two
    copies of ``_index.json``, ~140 MB in memory at 10,000 sessions) frees its pages, which the
    window's own thread must not wait for."""
    batches = [b for b in batches if b]
    if batches:
        threading.Thread(target=drop_batches, args=(batches,), name="drop-plans", daemon=True).start()


@atexit.register
def drop_all() -> None:
    """Every plan kept for this window (its process id), at exit."""
    drop(_kept(f"{os.getpid()}-*"))


def sweep_gone() -> int:
    """Plans kept for windows that are gone (killed, or ended without running their exit
    handlers): dropped. How many. Each window's process is asked after once (a machine where
    windows and test runs keep plans has hundreds of files of a few processes)."""
    gone = []
    alive: dict[int, bool] = {}
    for handle in _kept("*"):
        pid = (batch_of(handle) or "").split("-")[0]
        if not pid.isdigit() or int(pid) <= 0 or int(pid) == os.getpid():
            continue
        if int(pid) not in alive:
            alive[int(pid)] = portable.pid_alive(int(pid))
        if not alive[int(pid)]:
            gone.append(handle)
    drop(gone)
    return len(gone)


def plan_session_job(
    home, session_id: str, recommended: set[str], batch: str | None = None, check: Check = lambda: None
) -> dict[str, PlanSummary | str]:
    """In the child: :func:`inspector.present.session_data.plan_session_actions`, each plan kept
    here (for the window's ``batch``) and summarized for the window (a failure stays the words
    and traceback it is)."""
    from inspector.present.session_data import plan_session_actions

    out: dict[str, PlanSummary | str] = {}
    planned = plan_session_actions(home, session_id, recommended, check)
    handles: list[str] = []
    try:
        for action, plan in planned.items():
            # cancelled meanwhile: what was kept is let go of here. The window may have let go of
            # this batch already (a newer planning's plans came first, on a busy machine), so
            # nothing else would drop a plan kept after that
            check()
            if isinstance(plan, Plan):
                handles.append(keep(plan, batch))
                out[action] = summarize(plan, handles[-1])
            else:
                out[action] = plan
        check()
    except BaseException:
        drop(handles)
        raise
    return out


def plan_again(home, summary: PlanSummary) -> Plan:
    """The previewed plan made again: same action and target, the clock it was made with."""
    from inspector.actions import make_context, plan_action
    from inspector.present.session_data import planned_for_home

    ctx = make_context(home, summary.clock)
    target = None if planned_for_home(summary.action) else summary.session_id
    plans = plan_action(ctx, summary.action, target, follow_links=True)
    if not plans:
        raise ApplyError("the repair no longer applies; nothing was written")
    return plans[0]


def previewed_plan(home, summary: PlanSummary) -> Plan:
    """The plan the preview showed: kept, or made again and found the same (else ApplyError)."""
    if summary.local is not None:
        return summary.local
    plan = load(summary.handle)
    if plan is not None:
        return plan
    if summary.clock is None:
        raise ApplyError("the previewed plan is gone and cannot be made again; preview it again")
    plan = plan_again(home, summary)
    problems = same_plan(plan, summary)
    if problems:
        raise ApplyError(
            "the files changed since the preview ("
            + "; ".join(problems[:3])
            + "); nothing was written. Preview again."
        )
    return plan


def apply_job(
    home, summary: PlanSummary, log: WriteLog, check: Check = lambda: None
) -> WriteRecord | ApplyError:
    """In the child: write the previewed plan (``previewed_plan``) through ``plan.apply_plan``;
    the links it names were confirmed in the preview, a new one is refused. A refusal or failure
    comes back as the ApplyError (its ``outcome`` says what is on disk)."""
    from inspector.linkcheck import recheck_before_write

    try:
        plan = previewed_plan(home, summary)
        check()
        refused = recheck_before_write(plan, home, follow_links=True) if home is not None else None
        if refused is not None:
            return ApplyError(refused)
        return apply_plan(plan, log)
    except ApplyError as exc:
        return exc


def previewed_crosscheck_job(
    home,
    summary: PlanSummary,
    chosen: str | None,
    remembered: str | None,
    python: str | None,
    check: Check = lambda: None,
):
    """In the child: the crosscheck of the previewed plan (``crosscheck.crosscheck_job``)."""
    from inspector.crosscheck import FAILED, CrossResult, crosscheck_job

    try:
        plan = previewed_plan(home, summary)
    except ApplyError as exc:
        return CrossResult(
            action=summary.action, session_id=summary.session_id, status=FAILED, message=str(exc)
        )
    return crosscheck_job(home, plan, chosen, remembered, python, check=check)


def save_kit_job(home, summary: PlanSummary, clock, path: Path, check: Check = lambda: None) -> None:
    """In the child: the previewed plan saved as a repair kit (``kit.make_kit``, ``kit.save_kit``)."""
    from inspector.kit import make_kit, save_kit

    save_kit(make_kit(previewed_plan(home, summary), home, clock), path, overwrite=True)
