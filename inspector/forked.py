"""A function run in a forked copy of this process, for work that should use the second core.

The copy inherits everything already in memory (the facts a scan has read: nothing is pickled to
it); only its result comes back, pickled through a pipe. Lighter than ``multiprocessing`` (no
import, no pool threads). Callers fork only where it is safe: a POSIX system and no Qt in the
process, not macOS, not forced portable (see :func:`inspector.portable.can_fork`), and before they
start threads of their own; where there is no fork, :class:`Forked` raises OSError and they do the
work themselves.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pickle
import threading
from collections.abc import Callable
from typing import Any

from inspector import portable

_PIPE_BUFFER = 1 << 16  # the reader's buffer: a pipe's default capacity


class _PipeSink:
    """Where the copy pickles its result: each frame the pickler finishes (64 KB, or one large
    object) goes straight into the pipe, so the result is never held whole as one pickled buffer
    and the parent unpickles while the copy still writes. ``sent``: something went out already."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self.sent = False

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        size = len(view)
        while view:
            view = view[os.write(self._fd, view) :]
            self.sent = True
        return size


BACKGROUND_NICE = 5  # how much nicer than its parent a copy doing background work runs


def run_nicer() -> None:
    """Called first in a forked copy whose work the parent needs only later (never in the parent):
    the copy runs :data:`BACKGROUND_NICE` steps nicer, so where the two compete for a core the
    parent's own work goes first and the copy takes the rest (it still gets any core nothing else
    wants, and its result is the same). A home-wide materialize forks two index helpers whose rows
    it needs only at the end, while its critical path is this process reading state.db, planning
    the new sidecars and staging them (a thousand creates and fsyncs, whose waits the helpers'
    rows fill); on a busy machine, where the whole command shares about one core, the planning
    process got a third of it at equal weight. Best effort: where the niceness cannot be
    changed, nothing happens."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(BACKGROUND_NICE)


class ForkedError(RuntimeError):
    """The forked copy failed (its error's type and message; ``details``: its traceback) or died."""

    def __init__(self, message: str, details: str = "") -> None:
        super().__init__(message)
        self.details = details or message


class Forked:
    """``fn()`` running in a forked copy; :meth:`result` waits for it."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        if portable.FORCED or not hasattr(os, "fork"):
            # Windows (and the forced-portable mode): no fork; every caller then does the work itself
            raise OSError(errno.ENOSYS, "this system does not fork")
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the copy: work, write the result, leave without running anything else
            try:
                os.close(read_fd)
                sink = _PipeSink(write_fd)
                try:
                    pickle.dump((True, fn()), sink, protocol=pickle.HIGHEST_PROTOCOL)
                except BaseException as exc:  # noqa: BLE001 - reported to the parent, traceback and all
                    if sink.sent:  # part of the result is out: the parent reads it as cut short
                        raise
                    import traceback

                    error = (
                        f"{type(exc).__name__}: {exc}",
                        "".join(traceback.format_exception(exc)).rstrip(),
                    )
                    pickle.dump((False, error), sink)
            finally:
                os._exit(0)
        os.close(write_fd)
        self._pid = pid
        self._fd = read_fd

    def fileno(self) -> int:
        """The reading end of the copy's result pipe (readable once its result begins to come, or
        it has ended), until :meth:`result` closes it."""
        return self._fd

    def result(self, wait_for_exit: bool = True) -> Any:
        """The copy's return value; ForkedError when it raised or died.

        Unpickled as it comes through the pipe (a buffered reader: a frame at a time) while the copy
        pickles it, so a 13 MB result is never gathered whole on either side. The copy is reaped
        before this returns; ``wait_for_exit=False``: reaped now if it has left, else by a thread
        that waits for it (its exit comes after the last byte of its result, and a copy of a
        50,000-session first open took 20 ms to leave, its address space torn down)."""
        pipe = None
        outcome = None
        try:
            pipe = open(self._fd, "rb", buffering=_PIPE_BUFFER)
            with contextlib.suppress(EOFError, pickle.UnpicklingError):  # nothing, or not all, came
                outcome = pickle.load(pipe)
        finally:
            if pipe is None:
                os.close(self._fd)
            else:
                pipe.close()
            if wait_for_exit:
                os.waitpid(self._pid, 0)
            else:
                _reap_later(self._pid)
        if outcome is None:
            _log_failure("the forked process ended without a result", "")
            raise ForkedError("the forked process ended without a result")
        ok, value = outcome
        if not ok:
            message, details = value
            _log_failure(message, details)
            raise ForkedError(message, details)
        return value


def _reap_later(pid: int) -> None:
    """The copy ``pid``, whose pipe has ended, reaped now if it has left, else by a thread."""
    if os.waitpid(pid, os.WNOHANG)[0] == 0:
        threading.Thread(target=_wait_for, args=(pid,), name="reap-forked-copy", daemon=True).start()


def _wait_for(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):  # (reaped by someone else meanwhile)
        os.waitpid(pid, 0)


def _log_failure(message: str, details: str) -> None:
    """The copy's failure, with its traceback, in the log (the callers fall back to working in
    this process, so the failure is otherwise silent). ``logging`` is imported only here: the
    read-only commands that fork do not pay for it."""
    from inspector.log import get_logger

    get_logger(__name__).warning("a forked copy failed (the work is redone here): %s\n%s", message, details)
