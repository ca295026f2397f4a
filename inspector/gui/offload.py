"""Heavy, CPU-bound scans in a separate process, so the window's Python never waits for them.

A thread of the window that parses 10,000 sidecars holds the GIL most of the time, and every
call Qt makes into Python (painting the list asks the model hundreds of times) then waits for
it: the window stalls. :func:`load_catalogue_offloaded` runs
:func:`inspector.report.load_catalogue` in a child process (``spawn``: a process that has a
QApplication must never be forked) and hands back the catalogue, unpickled in small pieces
so the waiting thread lets go of the GIL between them.

No Qt here: the child imports only the core.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import pickle
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar

from inspector.report import gc_paused

T = TypeVar("T")
CHUNK_ROWS = 400
POLL_S = 0.05
PARENT_POLL_S = 0.2
WORKERS = 2  # the catalogue and a session's repair plans can be worked out side by side
IN_PROCESS_ENV = "HERMES_INSPECTOR_NO_SUBPROCESS"  # "1": scan in the calling thread (debugging)

_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None


def _child_init(parent: int) -> None:
    """In the child: let go of the parent's stdout (a reader waiting for its end must not wait
    for us) and end when the parent is gone (a parent that ends with ``os._exit`` or is killed
    cannot tell its pool to stop)."""
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


def _executor() -> ProcessPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ProcessPoolExecutor(max_workers=WORKERS, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_child_init, initargs=(os.getpid(),))
        return _pool


def _drop_pool(pool: ProcessPoolExecutor) -> None:
    """Forget a pool (broken, or busy with work nobody wants); its process ends when idle."""
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


def prestart() -> None:
    """Start the child processes now (each imports the core once), so the first scan and the first
    plans do not wait, and nothing is spawned (or imported for spawning) while the window works."""
    if os.environ.get(IN_PROCESS_ENV) == "1":
        return
    try:
        pool = _executor()
        for _ in range(WORKERS):  # two jobs at once: the pool starts a process for each
            pool.submit(_warm_up)
    except Exception:  # noqa: BLE001 - starting early is an optimisation only
        pass


def _warm_up() -> None:
    """In a child: import what its jobs need, while nobody waits for it."""
    import inspector.gui.session_data  # noqa: F401
    import inspector.report  # noqa: F401


def catalogue_job(home, now: float) -> tuple[bytes, list[bytes], str | None]:
    """In the child: the catalogue as (pickled catalogue without rows, pickled row chunks, the
    session to show first)."""
    from inspector.gui.session_data import first_needing_attention
    from inspector.home import check_readable
    from inspector.report import load_catalogue

    check_readable(home)
    cat = load_catalogue(home, now=now)
    first = first_needing_attention(home, cat)
    rows = list(cat.rows.values())
    cat.rows = {}
    with gc_paused():
        chunks = [pickle.dumps(rows[i:i + CHUNK_ROWS], protocol=pickle.HIGHEST_PROTOCOL)
                  for i in range(0, len(rows), CHUNK_ROWS)]
        return pickle.dumps(cat, protocol=pickle.HIGHEST_PROTOCOL), chunks, first


def _assemble(head: bytes, chunks: list[bytes], check: Callable[[], None]):
    cat = pickle.loads(head)
    rows = {}
    for blob in chunks:
        check()
        with gc_paused():  # 400 rows of small objects: the collector would walk them again and again
            part = pickle.loads(blob)
        for row in part:
            rows[row.session_id] = row
    cat.rows = rows
    return cat


def run_offloaded(fn: Callable[..., T], *args, check: Callable[[], None] = lambda: None,
                  drop_on_cancel: bool = True) -> T:
    """``fn(*args)`` computed in a child process (``fn`` and its arguments and result must pickle).

    ``check`` raises to cancel. A cancelled job that already runs is abandoned: with
    ``drop_on_cancel`` its process is let go (a long scan nobody wants must not hold up the
    next one); without, it finishes in the background (short jobs, cancelled often). An error
    in the child is raised here, with its message; a child that dies raises ``BrokenProcessPool``.
    """
    if os.environ.get(IN_PROCESS_ENV) == "1":
        return fn(*args)
    pool = _executor()
    try:
        future = pool.submit(fn, *args)
    except RuntimeError:  # shut down or broken since: start a fresh one
        _drop_pool(pool)
        pool = _executor()
        future = pool.submit(fn, *args)
    while True:
        try:
            check()
        except BaseException:
            if not future.cancel() and drop_on_cancel:
                _drop_pool(pool)  # the child is busy with work nobody wants: do not queue behind it
            raise
        try:
            return future.result(timeout=POLL_S)
        except FutureTimeout:
            continue
        except Exception as exc:
            if type(exc).__name__ == "BrokenProcessPool":
                _drop_pool(pool)
            raise


def load_catalogue_offloaded(home, now: float, check: Callable[[], None] = lambda: None):
    """``(catalogue, session to show first)``, computed in the child process (see :func:`run_offloaded`)."""
    head, chunks, first = run_offloaded(catalogue_job, home, now, check=check)
    return _assemble(head, chunks, check), first
