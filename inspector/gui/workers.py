"""Background work: the GUI thread never waits for disk.

A :class:`TaskRunner` runs plain functions on a ``QThreadPool``. Work is grouped in named
channels ("catalogue", "detail", "plans", ...): starting a task cancels the channel's previous
one and bumps its generation, so a result that arrives late for an old request is dropped
instead of overwriting newer data. Results come back by signal, on the GUI thread.

Task functions receive a :class:`CancelToken` (checked between steps; a function that cannot
stop early just has its result dropped) and a ``progress(done, total)`` callback.

A task whose result is a :class:`~inspector.jobs.pool.Resume` (a child process's result
still to be unpickled, and what the window does with it) finishes on the GUI thread: its steps
run there, about :data:`STEP_BUDGET_S` of them per turn of the event loop, between paints. A
worker thread of the window must not run much Python: each call Qt makes into Python while it
paints (hundreds per paint of the session list) would wait for the GIL.

A task that fails is logged with its traceback (``logger.exception``; a child process's own
traceback is chained to the error it raised here), its ``on_error`` gets the one-paragraph
message, and :attr:`TaskRunner.failure` carries the message and the traceback to whatever shows
them (the status bar's "Details…": :mod:`inspector.gui.failure_details`).
"""

from __future__ import annotations

import gc
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

from inspector.error_words import error_words
from inspector.gui.qtypes import single_shot
from inspector.jobs.pool import Resume, no_collections
from inspector.log import get_logger

logger = get_logger(__name__)

STEP_BUDGET_S = 0.005  # a task's steps on the GUI thread run this long per turn of the event loop
NEXT_STEP_MS = 0  # the next turn: after the events (paints, timers) that came meanwhile


def _message(exc: BaseException) -> str:
    """A failure as the window shows it: in words, one paragraph (no exception class name; the
    traceback is in the details)."""
    return error_words(exc)


def _details(exc: BaseException) -> str:
    """A failure's full traceback, with the causes chained to it (a child's traceback among them)."""
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip()


class Cancelled(Exception):
    """Raised inside a task when its token was cancelled; the task ends quietly."""


class CancelToken:
    """A thread-safe cancel flag."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Raise :class:`Cancelled` when cancelled (call between steps of long work)."""
        if self._event.is_set():
            raise Cancelled()


TaskFn = Callable[[CancelToken, Callable[[int, int], None]], Any]


class _TaskSignals(QObject):
    finished = Signal(str, int, object)  # channel, generation, result
    failed = Signal(str, int, str, str)  # channel, generation, message, traceback
    cancelled = Signal(str, int)
    progress = Signal(str, int, int, int)  # channel, generation, done, total


class _Task(QRunnable):
    def __init__(self, channel: str, generation: int, fn: TaskFn, token: CancelToken):
        super().__init__()
        self.setAutoDelete(False)  # the runner owns it; the pool must not delete it under Python
        self.channel = channel
        self.generation = generation
        self.fn = fn
        self.token = token
        self.signals = _TaskSignals()
        self.done = False

    def run(self) -> None:
        sig = self.signals
        try:
            result = self.fn(self.token, lambda d, t: sig.progress.emit(self.channel, self.generation, d, t))
        except Cancelled:
            sig.cancelled.emit(self.channel, self.generation)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a readable message
            logger.exception("task %r (generation %d) failed", self.channel, self.generation)
            sig.failed.emit(self.channel, self.generation, _message(exc), _details(exc))
        else:
            if self.token.cancelled:
                sig.cancelled.emit(self.channel, self.generation)
            else:
                sig.finished.emit(self.channel, self.generation, result)
        finally:
            self.done = True


@dataclass
class _Ready:
    """A task's result, its steps done: handed to ``on_done`` in a turn of its own."""

    value: Any


@dataclass
class _Pending:
    generation: int
    token: CancelToken
    label: str
    on_done: Callable[[Any], None]
    on_error: Callable[[str], None] | None


class TaskRunner(QObject):
    """Runs tasks per channel; newest request wins, stale results are dropped."""

    activity = Signal(str)  # label of the running work ("" when idle)
    failure = Signal(str, str, str)  # a current task failed: its label (or channel), message, traceback
    progress = Signal(int, int)  # done, total of the newest task reporting progress
    idle = Signal()

    def __init__(self, parent: QObject | None = None, pool: QThreadPool | None = None):
        super().__init__(parent)
        self.pool = pool or QThreadPool(self)
        self._generation: dict[str, int] = {}
        self._pending: dict[str, _Pending] = {}
        self._tasks: list[_Task] = []
        self._stepping: dict[
            str, tuple[int, Resume | _Ready]
        ] = {}  # channel -> (generation, its steps) run here
        self._step_timer = single_shot(self, NEXT_STEP_MS, self._run_steps)

    def start(
        self,
        channel: str,
        fn: TaskFn,
        on_done: Callable[[Any], None],
        *,
        label: str = "",
        on_error: Callable[[str], None] | None = None,
    ) -> int:
        """Run ``fn`` for ``channel``, cancelling that channel's previous task. Returns the generation."""
        self.cancel(channel, quiet=True)
        generation = self._generation.get(channel, 0) + 1
        self._generation[channel] = generation
        token = CancelToken()
        self._pending[channel] = _Pending(generation, token, label, on_done, on_error)
        task = _Task(channel, generation, fn, token)
        task.signals.finished.connect(self._on_finished)
        task.signals.failed.connect(self._on_failed)
        task.signals.cancelled.connect(self._on_cancelled)
        task.signals.progress.connect(self._on_progress)
        self._tasks = [t for t in self._tasks if not t.done] + [task]
        self.pool.start(task)
        self._announce()
        return generation

    def cancel(self, channel: str, *, quiet: bool = False) -> None:
        pending = self._pending.pop(channel, None)
        if pending is not None:
            pending.token.cancel()
            if not quiet:
                self._announce()

    def cancel_all(self) -> None:
        for channel in list(self._pending):
            self.cancel(channel, quiet=True)
        self._announce()

    def is_busy(self, channel: str | None = None) -> bool:
        return bool(self._pending) if channel is None else channel in self._pending

    def wait(self, msecs: int = 30000) -> bool:
        """Block until every started task has returned (used when closing the window)."""
        return self.pool.waitForDone(msecs)

    # ------------------------------------------------------------ results (GUI thread)

    def stepping(self) -> bool:
        """True while some task's steps still run on the GUI thread."""
        return bool(self._stepping)

    def _current(self, channel: str, generation: int) -> _Pending | None:
        pending = self._pending.get(channel)
        if pending is None or pending.generation != generation:
            return None  # cancelled or superseded: drop the stale result
        return pending

    @Slot(str, int, object)
    def _on_finished(self, channel: str, generation: int, result: object) -> None:
        pending = self._current(channel, generation)
        if pending is None:
            return
        if isinstance(result, Resume):
            self._stepping[channel] = (generation, result)
            if not self._step_timer.isActive():
                self._step_timer.start()
            return
        del self._pending[channel]
        try:
            pending.on_done(result)
        finally:
            self._announce()

    def _run_steps(self) -> None:
        """One turn of the tasks' steps on the GUI thread. A task whose steps are done gets a
        turn of its own for its ``on_done`` (what the window does with a result, and the paint
        that follows, are not added to a turn of steps); an error in a step goes to its
        ``on_error``. Otherwise the tasks take turns (the one that ran longest ago first), each
        running steps until :data:`STEP_BUDGET_S` is spent, the first one at least one; then
        the event loop paints and runs timers before the next turn."""
        for channel, entry in list(self._stepping.items()):
            generation, resume = entry
            if self._current(channel, generation) is None:  # cancelled or superseded meanwhile
                del self._stepping[channel]
                if isinstance(resume, Resume):
                    resume.steps.close()
        ready = next(((c, e) for c, e in self._stepping.items() if isinstance(e[1], _Ready)), None)
        if ready is not None:
            channel, (generation, result) = ready
            del self._stepping[channel]
            if self._stepping:
                self._step_timer.start()
            self._on_finished(channel, generation, result.value)
            return
        deadline = time.perf_counter() + STEP_BUDGET_S
        for channel, entry in list(self._stepping.items()):
            if time.perf_counter() >= deadline:
                break
            generation, resume = entry
            del self._stepping[channel]
            try:
                with no_collections():
                    try:
                        while True:
                            next(resume.steps)
                            if time.perf_counter() >= deadline:
                                break
                    finally:
                        gc.freeze()  # still paused: no collection walks what this turn made
            except StopIteration as stop:
                self._stepping[channel] = (generation, _Ready(stop.value))
            except Exception as exc:  # noqa: BLE001 - reported as a worker thread's failure is
                logger.exception("steps of task %r (generation %d) failed", channel, generation)
                self._on_failed(channel, generation, _message(exc), _details(exc))
            else:
                self._stepping[channel] = entry  # its next turn comes after the others'
        if self._stepping:
            self._step_timer.start()

    @Slot(str, int, str, str)
    def _on_failed(self, channel: str, generation: int, message: str, details: str = "") -> None:
        pending = self._current(channel, generation)
        if pending is None:
            return
        del self._pending[channel]
        self.failure.emit(pending.label or channel, message, details or message)
        try:
            if pending.on_error is not None:
                pending.on_error(message)
        finally:
            self._announce()

    @Slot(str, int)
    def _on_cancelled(self, channel: str, generation: int) -> None:
        if self._current(channel, generation) is not None:
            del self._pending[channel]
            self._announce()

    @Slot(str, int, int, int)
    def _on_progress(self, channel: str, generation: int, done: int, total: int) -> None:
        if self._current(channel, generation) is not None:
            self.progress.emit(done, total)

    def _announce(self) -> None:
        labels = [p.label for p in self._pending.values() if p.label]
        self.activity.emit(", ".join(labels) if labels else ("Working…" if self._pending else ""))
        if not self._pending:
            self.idle.emit()
