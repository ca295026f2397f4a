"""The complete catalogue worked out in a child process, so the window's Python never waits for it.

A thread of the window that parses 10,000 sidecars holds the GIL most of the time, and every
call Qt makes into Python (painting the list asks the model hundreds of times) then waits for
it: the window stalls. :func:`load_catalogue_offloaded` runs :func:`inspector.load.load_catalogue`
as a job of :mod:`inspector.gui.session_jobs` (the window's one pool of spawned children) and hands
back the catalogue still to be unpickled, in steps the window's own thread runs between paints.

No Qt here: the child imports only the core.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from inspector.gcpause import gc_paused
from inspector.gui import session_jobs
from inspector.gui.session_jobs import Resume


class CatalogueResult(NamedTuple):
    catalogue: Any  # inspector.catalogue.Catalogue
    first: str | None  # the session to show first (session_data.first_needing_attention)
    rows: list  # the catalogue's rows in the order asked for (newest first by default)
    attention: int  # how many of them need attention
    profiles: list[str]  # the rows' profiles, in order of first appearance


def prestart() -> None:
    """Start the child processes now (each imports the core once), so the first scan and the first
    plans do not wait, and nothing is spawned while the window works."""
    if session_jobs.in_process():
        return
    try:
        session_jobs.start_pool()
    except Exception:  # noqa: BLE001 - starting early is an optimisation only
        from inspector.log import get_logger

        get_logger(__name__).warning("could not start the child processes early", exc_info=True)


def catalogue_job(home, now: float, sort: tuple[int, bool] | None = None,
                  check: Callable[[], None] = lambda: None) -> CatalogueResult:
    """In the child: the catalogue, with what the window would otherwise work out over every
    row on its own thread: its rows in the list's order (``sort``: column and descending, as
    ``session_columns.sorted_rows`` takes them; None: newest first), how many need attention,
    which profiles they have."""
    from inspector.gui.session_columns import sorted_rows
    from inspector.gui.session_data import first_needing_attention
    from inspector.home import check_readable
    from inspector.load import load_catalogue

    check_readable(home)
    cat = load_catalogue(home, now=now)
    check()
    rows = cat.sorted_rows() if sort is None else sorted_rows(list(cat.rows.values()), *sort)
    return CatalogueResult(cat, first_needing_attention(home, cat), rows,
                           sum(1 for r in rows if r.needs_attention), list(dict.fromkeys(r.profile for r in rows)))


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


def quick_rows_offloaded(session_dir, check: Callable[[], None] = lambda: None) -> Resume:
    """Every sidecar's quick row, newest first, read in a child process (still to be unpickled:
    see :class:`~inspector.gui.session_jobs.Resume`)."""
    return session_jobs.run_job_steps(quick_rows_job, session_dir, check=check)


def load_catalogue_offloaded(home, now: float, check: Callable[[], None] = lambda: None,
                             sort: tuple[int, bool] | None = None) -> Resume:
    """A :class:`CatalogueResult`, computed in a child process, as steps still to run
    (:class:`~inspector.gui.session_jobs.Resume`; ``session_jobs.finish`` runs them at once).
    ``check`` raises to cancel; an error in the child is raised here with its message."""
    return session_jobs.run_job_steps(catalogue_job, home, now, sort, check=check)


class SearchHits(NamedTuple):
    sessions: dict[str, list[tuple[str, str]]]  # session id -> its first hits: (where, snippet)
    hits: int
    truncated: bool
    skipped: list[str]


def search_job(home, query: str, per_session: int = 3, check: Callable[[], None] = lambda: None) -> SearchHits:
    """In the child: :func:`inspector.search.search_home` (sidecars, .bak files, state.db, run
    journals, run ids), kept small for the window: each session's first few hits."""
    from inspector.search import search_home

    result = search_home(home, query, check=check)
    sessions: dict[str, list[tuple[str, str]]] = {}
    for hit in result.hits:
        found = sessions.setdefault(hit.session_id, [])
        if len(found) < per_session:
            found.append((hit.where, hit.snippet))
    return SearchHits(sessions, len(result.hits), result.truncated, result.skipped)


def search_offloaded(home, query: str, check: Callable[[], None] = lambda: None) -> Resume:
    """:func:`search_job` in a child process: the window's thread never reads a file for it."""
    return session_jobs.run_job_steps(search_job, home, query, 3, check=check)
