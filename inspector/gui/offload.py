"""The complete catalogue worked out in a child process, so the window's Python never waits for it.

A thread of the window that parses 10,000 sidecars holds the GIL most of the time, and every
call Qt makes into Python (painting the list asks the model hundreds of times) then waits for
it: the window stalls. :func:`load_catalogue_offloaded` runs :func:`inspector.report.load_catalogue`
as a job of :mod:`inspector.gui.session_jobs` (the window's one pool of spawned children) and hands
back the catalogue, its rows unpickled in small pieces with the garbage collector paused.

No Qt here: the child imports only the core.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable

from inspector.gui import session_jobs
from inspector.report import gc_paused

CHUNK_ROWS = 400


def prestart() -> None:
    """Start the child processes now (each imports the core once), so the first scan and the first
    plans do not wait, and nothing is spawned while the window works."""
    if session_jobs.in_process():
        return
    try:
        session_jobs.start_pool()
    except Exception:  # noqa: BLE001 - starting early is an optimisation only
        pass


def catalogue_job(home, now: float, check: Callable[[], None] = lambda: None) -> tuple[bytes, list[bytes], str | None]:
    """In the child: the catalogue as (pickled catalogue without rows, pickled row chunks, the
    session to show first)."""
    from inspector.gui.session_data import first_needing_attention
    from inspector.home import check_readable
    from inspector.report import load_catalogue

    check_readable(home)
    cat = load_catalogue(home, now=now)
    check()
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
        with session_jobs.no_collections():  # 400 rows of small objects at a time
            part = pickle.loads(blob)
        for row in part:
            rows[row.session_id] = row
    cat.rows = rows
    return cat


def quick_rows_job(session_dir, check: Callable[[], None] = lambda: None) -> list:
    """In the child: :func:`inspector.quickscan.quick_rows` of every sidecar (the window's quick
    look at a home whose health check takes long: 10,000 files' first bytes, read and parsed in
    the window's own process, would hold its GIL, and its garbage collector, for most of a second)."""
    from inspector.quickscan import quick_batches

    rows: list = []
    with gc_paused():
        for batch in quick_batches(session_dir, check=check):
            rows += batch
    return rows


def quick_rows_offloaded(session_dir, check: Callable[[], None] = lambda: None) -> list:
    """Every sidecar's quick row, newest first, read in a child process."""
    return session_jobs.run_job(quick_rows_job, session_dir, check=check)


def load_catalogue_offloaded(home, now: float, check: Callable[[], None] = lambda: None):
    """``(catalogue, session to show first)``, computed in a child process. ``check`` raises to
    cancel; an error in the child is raised here with its message."""
    head, chunks, first = session_jobs.run_job(catalogue_job, home, now, check=check)
    return _assemble(head, chunks, check), first
