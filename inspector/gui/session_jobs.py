"""The window's heavy work (the catalogue, reading a session, indexing a run journal, planning
repairs) in child processes, so the window's Python never waits for it.

A thread of the window that parses a 200,000-line journal or plans a repair holds the GIL most
of the time, and every call Qt makes into Python while painting then waits for it: the window
stalls (``bench/profile_notes.md``, "The GUI stalls are GIL starvation"). Here a job runs in a
small pool of ``spawn``-ed children (a process that has a QApplication must never be forked; the
children import only the core) and the waiting thread of the window only polls.

Handing the result back must not stall either: unpickling a large result in one ``loads()`` holds
the GIL until it is done (10 MB of session, 70 MB of plan bytes). So a job's result is pickled in
the child, comes back as bytes (through a private temporary file when it is large: reading a file
releases the GIL) and is unpickled here through a reader whose reads are Python calls, where
another thread can take the GIL between two pieces.

Cancelling: ``check()`` in the window's thread raises; the job's slot in a shared flag array is
set, and the job's own ``check()`` (called between its steps in the child) raises there too.

``HERMES_INSPECTOR_NO_SUBPROCESS=1`` runs every job in the calling thread (debugging; the same
switch as :mod:`inspector.gui.offload`). No Qt here.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import multiprocessing
import os
import pickle
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from inspector.report import gc_paused

WORKERS = 2  # a session's data and its big journal's index are read at the same time
SLOTS = 64  # cancel flags, reused round-robin
POLL_S = 0.02
PARENT_POLL_S = 0.2
INLINE_MAX = 16 << 20  # bigger results come back through a temporary file (receiving holds the GIL)
SHM = "/dev/shm"  # memory, never a disk, for such a file when the system has it
CHILD_NICE = 10
STEP = 1 << 20  # bytes copied between two chances for another thread to take the GIL
IN_PROCESS_ENV = "HERMES_INSPECTOR_NO_SUBPROCESS"  # "1": run jobs in the calling thread (debugging)

Check = Callable[[], None]


class JobCancelled(Exception):
    """Raised by a job's ``check()`` in the child when the window no longer wants its result."""


_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None
_flags: Any = None  # multiprocessing Array("b", SLOTS): 1 = cancel the job in that slot
_next_slot = 0
_child_flags: Any = None  # the same array, in a child


# ---------------------------------------------------------------- in the child


def _child_init(parent: int, flags: Any) -> None:
    """In a child: keep the cancel flags, let go of the parent's stdout (a reader waiting for its
    end must not wait for us) and end when the parent is gone (``os._exit`` or a kill cannot tell
    the pool to stop)."""
    global _child_flags
    _child_flags = flags
    try:
        os.nice(CHILD_NICE)  # background work: the window's own thread comes first for the CPU
    except OSError:
        pass
    try:
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.close(null)
    except OSError:
        pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _run_in_child(slot: int, fn: Callable[..., Any], args: tuple) -> tuple[str, Any]:
    def check() -> None:
        if _child_flags is not None and _child_flags[slot]:
            raise JobCancelled()

    blob = pickle.dumps(fn(*args, check=check), protocol=pickle.HIGHEST_PROTOCOL)
    if len(blob) <= INLINE_MAX:
        return "inline", blob
    folder = SHM if os.path.isdir(SHM) and os.access(SHM, os.W_OK) else None
    fd, name = tempfile.mkstemp(prefix="hermes-inspector-job-", suffix=".pickle", dir=folder)  # 0600
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
    except BaseException:
        os.unlink(name)
        raise
    return "file", name


def _warm() -> None:
    """Nothing: it only makes the pool start one more child (which imports the core meanwhile)."""
    import inspector.gui.offload  # noqa: F401
    import inspector.gui.session_data  # noqa: F401


# ---------------------------------------------------------------- in the window


def _executor() -> tuple[ProcessPoolExecutor, Any]:
    global _pool, _flags
    fresh = False
    with _lock:
        if _pool is None:
            ctx = multiprocessing.get_context("spawn")
            _flags = ctx.Array("b", SLOTS, lock=False)
            _pool = ProcessPoolExecutor(max_workers=WORKERS, mp_context=ctx, initializer=_child_init,
                                        initargs=(os.getpid(), _flags))
            fresh = True
        pool, flags = _pool, _flags
    if fresh:
        # A pool starts a child per job while none is idle. Start them all now, each importing the
        # core, so the first time two jobs run side by side the second does not wait for that.
        for _ in range(WORKERS):
            pool.submit(_warm)
    return pool, flags


def start_pool() -> None:
    """Start the children now (the window calls this while it builds itself)."""
    if not in_process():
        _executor()


def _drop_pool(pool: ProcessPoolExecutor) -> None:
    """Forget a broken pool; the next job starts a fresh one."""
    global _pool
    with _lock:
        if _pool is pool:
            _pool = None
    pool.shutdown(wait=False, cancel_futures=True)


@atexit.register
def _shutdown() -> None:
    global _pool
    with _lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


def in_process() -> bool:
    return os.environ.get(IN_PROCESS_ENV) == "1"


def worker_pids() -> list[int]:
    """The children's process ids (for measurements)."""
    with _lock:
        pool = _pool
    procs = getattr(pool, "_processes", None) or {}
    return sorted(procs)


class Job:
    """A job started in a child; :meth:`wait` for its result."""

    def __init__(self, fn: Callable[..., Any], args: tuple):
        self._fn = fn
        self._args = args
        self._future: Future | None = None
        if in_process():
            return  # runs in wait(), in the calling thread
        global _next_slot
        try:
            pool, flags = _executor()
        except (OSError, ImportError, NotImplementedError):  # no processes here (a sandbox): do it in wait()
            return
        with _lock:
            self._slot = _next_slot
            _next_slot = (_next_slot + 1) % SLOTS
        flags[self._slot] = 0
        try:
            self._future = pool.submit(_run_in_child, self._slot, fn, args)
        except RuntimeError:  # shut down or broken since: start a fresh pool
            _drop_pool(pool)
            pool, flags = _executor()
            flags[self._slot] = 0
            self._future = pool.submit(_run_in_child, self._slot, fn, args)
        self._pool, self._flags = pool, flags

    def cancel(self) -> None:
        if self._future is not None:
            self._flags[self._slot] = 1
            self._future.cancel()
            self._future.add_done_callback(_discard)

    def wait(self, check: Check = lambda: None) -> Any:
        """The job's result. ``check`` raises to cancel (the child stops at its next ``check()``);
        an error in the child is raised here with its message."""
        if self._future is None:
            return self._fn(*self._args, check=check)
        while True:
            try:
                check()
            except BaseException:
                self.cancel()
                raise
            try:
                kind, payload = self._future.result(timeout=POLL_S)
                break
            except FutureTimeout:
                continue
            except JobCancelled:
                check()  # cancelled from here: raises the caller's own exception
                raise
            except Exception as exc:
                if type(exc).__name__ == "BrokenProcessPool":
                    _drop_pool(self._pool)
                raise
        blob = _take_file(payload) if kind == "file" else payload
        return gentle_loads(blob)


def start_job(fn: Callable[..., Any], *args: Any) -> Job:
    """Start ``fn(*args, check=...)`` in a child. ``fn`` must be a module-level function, its
    arguments and result picklable; ``check()`` raises :class:`JobCancelled` once cancelled."""
    return Job(fn, args)


def run_job(fn: Callable[..., Any], *args: Any, check: Check = lambda: None) -> Any:
    """``start_job(fn, *args).wait(check)``."""
    return start_job(fn, *args).wait(check)


def _discard(future: Future) -> None:
    """A result nobody waits for any more: remove its temporary file."""
    try:
        kind, payload = future.result()
    except BaseException:  # noqa: BLE001 - cancelled or failed: nothing to clean up
        return
    if kind == "file":
        try:
            os.unlink(payload)
        except OSError:
            pass


def _take_file(name: str) -> bytes:
    try:
        with open(name, "rb") as fh:
            return fh.read()  # the read itself runs without the GIL
    finally:
        try:
            os.unlink(name)
        except OSError:
            pass


class _GentleReader:
    """A pickle's bytes as a file whose reads are Python calls: the C unpickler asks for one frame
    (64 KB) at a time, and big ``bytes`` values are copied a megabyte at a time, so a thread waiting
    for the GIL gets it between two pieces."""

    def __init__(self, blob: bytes):
        self._blob = blob
        self._view = memoryview(blob)
        self._pos = 0

    def read(self, n: int = -1) -> bytes:
        pos = self._pos
        end = len(self._blob) if n is None or n < 0 else min(pos + n, len(self._blob))
        self._pos = end
        return self._view[pos:end].tobytes()

    def readinto(self, target: Any) -> int:
        out = memoryview(target).cast("B")
        n = min(len(out), len(self._blob) - self._pos)
        for off in range(0, n, STEP):
            k = min(STEP, n - off)
            out[off:off + k] = self._view[self._pos + off:self._pos + off + k]
        self._pos += n
        return n

    def readline(self) -> bytes:
        nl = self._blob.find(b"\n", self._pos)
        return self.read(len(self._blob) - self._pos if nl < 0 else nl + 1 - self._pos)


@contextlib.contextmanager
def no_collections() -> Iterator[None]:
    """For a big result becoming objects in the window's process (rows, a session): the garbage
    collector waits meanwhile (the hundreds of thousands of new objects would start it again and
    again), and afterwards everything is frozen (``gc.freeze``). Those objects live as long as the
    window shows them and hold no reference cycles (they are freed by their reference counts all
    the same), so no later collection walks them again, and none starts at once with all of them
    counted as new: a full collection over a window with 10,000 rows holds the GIL 0.1-0.3 s."""
    with gc_paused():
        try:
            yield
        finally:
            gc.freeze()  # while still paused: no collection sees them first


def gentle_loads(blob: bytes) -> Any:
    """``pickle.loads(blob)``, letting other threads run while it works (see :func:`no_collections`)."""
    with no_collections():
        return pickle.Unpickler(_GentleReader(blob)).load()
