"""The complete catalogue worked out in a child process, so the window's Python never waits for it.

A thread of the window that parses 10,000 sidecars holds the GIL most of the time, and every
call Qt makes into Python (painting the list asks the model hundreds of times) then waits for
it: the window stalls. :func:`load_catalogue_offloaded` runs :func:`inspector.load.load_catalogue`
as a job of :mod:`inspector.jobs.pool` (the window's one pool of spawned children) and hands
back the catalogue still to be unpickled, in steps the window's own thread runs between paints.

No Qt here: the child imports only the core.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable
from functools import partial
from typing import NamedTuple, TypeVar

from inspector import portable
from inspector.gcpause import gc_paused
from inspector.jobs import pool
from inspector.jobs.pool import Resume
from inspector.present.rows import ROW_FIELDS, FlatFinding, FlatRow, flat_finding, flat_row

T = TypeVar("T")
PROFILE, ATTENTION, ACTIVITY = (ROW_FIELDS.index(n) for n in ("profile", "needs_attention", "last_activity"))


class CatalogueResult(NamedTuple):
    """The catalogue as the window lists it: flat records only (tuples of builtins, see
    :mod:`inspector.present.rows`), decoded in the window with plain ``pickle.loads`` calls (the rows
    in chunks of ``pool.FLAT_CHUNK``, a chunk per step: ``pool.flat_pickled``)."""

    rows: list[FlatRow]  # every row, in the order asked for (newest first by default)
    first: str | None  # the session to show first (session_data.first_needing_attention)
    attention: int  # how many rows need attention
    profiles: list[str]  # the rows' profiles, in order of first appearance
    home_findings: list[FlatFinding]  # the home's own findings (not any one session's)


def prestart() -> None:
    """Start the child processes now (each imports the core once), so the first scan and the first
    plans do not wait, and nothing is spawned while the window works."""
    try:
        from inspector.jobs.plans import sweep_gone

        sweep_gone()  # plans kept for windows that are gone (killed: no exit handler ran)
    except OSError:
        pass
    if pool.in_process():
        return
    try:
        pool.start_pool()
    except Exception:  # noqa: BLE001 - starting early is an optimisation only
        from inspector.log import get_logger

        get_logger(__name__).warning("could not start the child processes early", exc_info=True)


@pool.flat
def catalogue_job(
    home, now: float, sort: tuple[int, bool] | None = None, check: Callable[[], None] = lambda: None
) -> CatalogueResult:
    """In the child: the catalogue, with what the window would otherwise work out over every
    row on its own thread: its rows in the list's order (``sort``: column and descending, as
    ``present.columns.sorted_rows`` takes them; None: newest first), how many need attention,
    which profiles they have; every row a flat record.

    Everything here after the catalogue is in is on the way to the list's first complete paint,
    so it is one pass over the rows and one sort: the rows are flattened as they are, sorted
    once as flat records (no ListRow made, no second sort newest-first first), and the session
    to show first is picked without sorting them (``first_needing_attention``). The fact cache
    is written by a detached copy of this child (``FactCache.save(background=True)``: 8 MB of
    JSON at 10,000 sessions) once the rows are sent (``pool.after_reply``: the fork and its
    copy-on-write faults cost this child 0.25 s at 50,000 sessions), and the catalogue and the
    scan are let go of then too (freeing them is 0.1-0.2 s more at 50,000); the garbage
    collector stays paused until then (:func:`_after_catalogue`)."""
    from inspector.home import check_readable
    from inspector.load import load_catalogue
    from inspector.present.columns import sorted_records
    from inspector.present.session_data import first_needing_attention

    check_readable(home)
    saves: list[Callable[[], None]] = []
    held: list = []
    collecting = gc.isenabled()
    gc.disable()
    try:
        early = EarlyRecords()
        cat = load_catalogue(
            home, now=now, save_in_background=True, save_later=saves.append, while_copies_finish=early.start
        )
        held.append(cat)
        check()
        records = early.records(cat)
        if sort is None or _any_nan_activity(records):
            # newest first: Catalogue.sorted_rows()'s order (its sort is stable: the same input
            # order, the same key); with a NaN time it is also the order the list's sort starts from
            records.sort(key=_newest_first_key)
        if sort is not None:
            records = sorted_records(records, *sort)
        return CatalogueResult(
            records,
            first_needing_attention(home, cat),
            sum(1 for f in records if f[ATTENTION]),
            list(dict.fromkeys(f[PROFILE] for f in records)),
            [flat_finding(f) for f in cat.home_findings],
        )
    finally:
        pool.after_reply(partial(_after_catalogue, saves, held, collecting))


class EarlyRecords:
    """The catalogue's flat records, made while the job's process would wait for its forked
    copies' last results (``load_catalogue``'s ``while_copies_finish``: hermes' audit and the run
    journals' facts, which come once the catalogue is built), then made again only for the rows
    those results added findings to: after the build the rows only gain findings. At 50,000
    sessions flattening the rows is 75-115 ms of the list's first open after the build, and the
    job's process waited up to 0.16 s for the copies there (none when they were done first)."""

    STEP = 2000  # rows per step (about 4 ms): the copies' results are taken soon after they come

    def __init__(self) -> None:
        self._rows: list | None = None  # the rows as they were when this began
        self._made: list[FlatRow] = []
        self._findings: list[int] = []  # how many findings each row had then

    def start(self, cat) -> Callable[[], bool]:
        self._rows = list(cat.rows.values())
        return self._step

    def _step(self) -> bool:
        rows = self._rows or []
        batch = rows[len(self._made) : len(self._made) + self.STEP]
        made = [flat_row(row) for row in batch]
        self._made += made
        self._findings += [len(row.findings) for row in batch]
        return len(self._made) < len(rows)

    def records(self, cat) -> list[FlatRow]:
        """Every row's flat record, as ``flat_row`` makes it of the row now."""
        rows = list(cat.rows.values())
        early = self._rows
        if early is None or len(early) != len(rows):
            return [flat_row(row) for row in rows]
        out = [
            made if row is then and len(row.findings) == count else flat_row(row)
            # (zip stops where the early records do: the rest are made below)
            for row, then, made, count in zip(rows, early, self._made, self._findings, strict=False)
        ]
        out += map(flat_row, rows[len(out) :])
        return out


def _after_catalogue(saves: list[Callable[[], None]], held: list, collecting: bool) -> None:
    """Once the rows are sent: the fact cache written, the catalogue let go of, and only then the
    collector on again. Turned on while the catalogue was alive, its first collection walked
    every object made while it was paused (the scan's facts, the catalogue's rows: 0.29 s at
    50,000 sessions, before the rows could be flattened)."""
    try:
        for fn in saves:
            fn()
    finally:
        saves.clear()
        held.clear()
        if collecting:
            gc.enable()


def _newest_first_key(record: FlatRow) -> float:
    """``catalogue.newest_first``'s sort key, of a flat record."""
    return -(record[ACTIVITY] or 0.0)


def _any_nan_activity(records: list[FlatRow]) -> bool:
    for record in records:
        value = record[ACTIVITY]
        if value != value:
            return True
    return False


@pool.flat
def quick_rows_job(session_dir, check: Callable[[], None] = lambda: None) -> list[FlatRow]:
    """In the child: :func:`inspector.quickscan.quick_rows` of every sidecar (the window's quick
    look at a home whose health check takes long: 10,000 files' first bytes, read and parsed in
    the window's own process, would hold its GIL, and its garbage collector, for most of a second).

    It runs at idle priority (:func:`at_idle_priority`): it is asked for while the complete
    catalogue is still being worked out, and on two cores the catalogue's three processes use
    them both; taking a share of them (2 s of CPU at 50,000 sessions) would only make the
    complete list later. Where a core is free it runs at once."""
    from inspector.quickscan import quick_batches

    def work() -> list[FlatRow]:
        rows: list[FlatRow] = []
        with gc_paused():
            for batch in quick_batches(session_dir, check=check):
                rows += map(flat_row, batch)
        return rows

    return at_idle_priority(work)


def at_idle_priority(fn: Callable[[], T]) -> T:
    """``fn()`` in a thread of its own that the system runs only on a CPU nothing else wants
    (Linux ``SCHED_IDLE``, a policy any user may lower a thread of their own to; the thread
    ends with ``fn``, the process keeps its priority), in a child of the pool only: a starved
    thread holding the window's GIL would stall the window. Elsewhere (and on the paths macOS and
    Windows take, ``portable.FORCED``) ``fn()`` as it is."""
    if not (
        pool.in_child()
        and portable.system() == portable.LINUX
        and hasattr(os, "sched_setscheduler")
        and hasattr(os, "SCHED_IDLE")
    ):
        return fn()
    outcome: list = []

    def run() -> None:
        try:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # 0: this thread (Linux)
        except OSError:
            pass  # not allowed here: the work still runs, at the process's priority
        try:
            outcome.append((True, fn()))
        except BaseException as exc:  # noqa: BLE001 - raised again in the calling thread
            outcome.append((False, exc))

    thread = threading.Thread(target=run, name="idle-priority", daemon=True)
    thread.start()
    thread.join()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


def quick_rows_offloaded(session_dir, check: Callable[[], None] = lambda: None) -> Resume:
    """Every sidecar's quick row, newest first, read in a child process (still to be unpickled:
    see :class:`~inspector.jobs.pool.Resume`)."""
    return pool.run_job_steps(quick_rows_job, session_dir, check=check)


def load_catalogue_offloaded(
    home, now: float, check: Callable[[], None] = lambda: None, sort: tuple[int, bool] | None = None
) -> Resume:
    """A :class:`CatalogueResult`, computed in a child process, as steps still to run
    (:class:`~inspector.jobs.pool.Resume`; ``pool.finish`` runs them at once).
    ``check`` raises to cancel; an error in the child is raised here with its message."""
    return pool.run_job_steps(catalogue_job, home, now, sort, check=check)


class SearchHits(NamedTuple):
    sessions: dict[str, list[tuple[str, str]]]  # session id -> its first hits: (where, snippet)
    hits: int
    truncated: bool
    skipped: list[str]


@pool.flat
def search_job(
    home, query: str, per_session: int = 3, check: Callable[[], None] = lambda: None
) -> SearchHits:
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
    return pool.run_job_steps(search_job, home, query, 3, check=check)
