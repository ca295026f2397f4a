"""Loading a home: the catalogue with every finding, and the full audit.

:func:`load_catalogue` (the list, the window's catalogue job) and :func:`full_audit` (``audit``)
scan the sessions folder once (:class:`~inspector.store.scan.SessionDirScan`, facts cached), build
the catalogue (:func:`~inspector.catalogue.build_catalogue`, every state.db read in a second
thread) while hermes' own audit runs in a forked copy, and add the findings only a journal shows.
Their output for people and programs is :mod:`inspector.report`'s.
"""

from __future__ import annotations

import errno
import os
import pickle
import selectors
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from operator import attrgetter
from pathlib import Path
from typing import Any

from inspector.catalogue import Catalogue, add_hermes_audit, build_catalogue, newest_first
from inspector.findings import Finding, hermes_audit_fails_finding
from inspector.forked import Forked, ForkedError
from inspector.gcpause import gc_paused
from inspector.home import Home
from inspector.repair.audit import (
    AuditAhead,
    HermesAuditError,
    audit_session_recovery,
    too_deep_sidecars,
    with_nesting_failures,
)
from inspector.store import statedb
from inspector.store.files import TooLargeToLoad, read_regular
from inspector.store.journal import (
    OPEN_RUN_TAIL_BYTES,
    RUN_JOURNAL_DIR,
    JournalDepthUnsure,
    JournalTooDeep,
    JournalTooLarge,
    JournalUnreadable,
    is_valid_journal_id,
    open_run_facts,
    open_run_facts_of_tail,
    stream_summary,
)
from inspector.store.scan import (
    INDEX,
    JOURNAL,
    OPEN_RUN,
    SIDECAR,
    STATE_DB,
    TURN,
    FactCache,
    SessionDirScan,
    cached_file_facts,
    can_fork,
    journal_dropped_lines,
)
from inspector.store.sidecar import runs_owned_elsewhere
from inspector.store.turn_journal import turn_journal_session_ids


def _scan(home: Home) -> SessionDirScan:
    return SessionDirScan(home.session_dir, FactCache.for_session_dir(home.session_dir))


def _save(scan: SessionDirScan, background: bool = False, later: Iterable[tuple[str, bytes]] = ()) -> None:
    """The fact cache written, with the copies' facts :func:`_finish_aside` left for it in ``later``."""
    _adopt_later(scan, later)
    scan.put_deferred()
    if scan.cache is not None:
        scan.cache.save(background=background)


def hermes_audit(
    home: Home,
    scan: SessionDirScan | None = None,
    *,
    nesting_checked_elsewhere: bool = False,
    ahead: AuditAhead | None = None,
) -> tuple[dict | None, HermesAuditError | None]:
    """hermes' ``audit_session_recovery`` of the sessions dir and the default profile's state.db.

    Where hermes' own audit would raise (e.g. a turn-journal name it rejects), the error is
    returned instead, carrying the audit of everything else in ``partial_report``.
    ``nesting_checked_elsewhere``: see :func:`~inspector.repair.audit.audit_session_recovery`.
    ``ahead``: the same audit with its state.db query started earlier (:func:`audit_ahead`).
    """
    try:
        return (
            audit_session_recovery(
                home.session_dir,
                home.state_db(),
                scan=scan,
                nesting_checked_elsewhere=nesting_checked_elsewhere,
            )
            if ahead is None
            else ahead.audit(nesting_checked_elsewhere=nesting_checked_elsewhere),
            None,
        )
    except HermesAuditError as exc:
        return None, exc
    except OSError as exc:  # e.g. a file name hermes' own Path.exists() cannot stat
        return None, HermesAuditError(
            f"hermes' audit fails on {exc.filename or 'a file'}: {exc.strerror or exc}",
            partial_report=None,
            errors=[str(exc)],
        )


class _StateDbPrefetch:
    """Every profile's :func:`statedb.list_catalogue_records`, read in a second thread from the start of a
    scan (SQLite lets go of the GIL while a query runs), handed out as the catalogue asks."""

    def __init__(self, home: Home, cache: FactCache | None = None) -> None:
        self._results: dict[Path, tuple[list[dict] | None, BaseException | None]] = {}
        self._dbs = [home.state_db(p) for p in home.profile_names()]
        self._cache = cache
        self._thread = threading.Thread(target=self._run, name="catalogue-state-db", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for db in self._dbs:
            try:
                if db.exists():
                    self._results[db] = (self._read(db), None)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                self._results[db] = (None, exc)

    def _read(self, db: Path) -> list[dict]:
        """The records, from the fact cache while the database and its WAL and rollback journal
        are the files they were (same device, inode, size, mtime and ctime: every commit changes
        one of them), else read (read-only, as always) and kept for next time."""
        if self._cache is None:
            return statedb.list_catalogue_records(db)
        started = time.time_ns()
        stats = [_stat_or_none(Path(f"{db}{suffix}")) for suffix in ("", "-wal", "-journal")]
        if stats[0] is not None:
            facts = self._cache.get_for(STATE_DB, str(db), stats)
            if facts is not None and isinstance(facts.get("records"), list):
                return facts["records"]
        records = statedb.list_catalogue_records(db)
        if stats[0] is not None and _plain_records(records):
            self._cache.put_for(STATE_DB, str(db), stats, {"records": records}, started)
        return records

    def __call__(self, db: Path) -> list[dict]:
        self._thread.join()
        got = self._results.get(db)
        if got is None:
            return statedb.list_catalogue_records(db)
        records, error = got
        if error is not None:
            raise error
        return records


# a run journal's open-run facts from its last line where that decides (it is hermes' terminal
# record in all but the journals of runs still open): a read of its end, not of the journal
OPEN_RUN_TAIL = (OPEN_RUN_TAIL_BYTES, open_run_facts_of_tail)

AUDIT_ASIDE_MIN_FILES = 512  # smaller sessions folders: hermes' audit runs here, after the catalogue


def _stat_or_none(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def _plain_records(records: list[dict]) -> bool:
    """Whether the records survive a JSON round trip unchanged (no blobs, no odd text)."""
    for rec in records:
        for value in rec.values():
            if value is None or value.__class__ in (int, float):
                continue
            if value.__class__ is not str:
                return False
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return False
    return True


def _adopt_later(scan: SessionDirScan, later: Iterable[tuple[str, bytes]]) -> None:
    """The pickled facts :func:`_finish_aside` left in ``later`` taken into the cache."""
    if scan.cache is not None:
        for kind, data in later:
            scan.cache.adopt(kind, pickle.loads(data))


def _catalogue(
    home: Home,
    scan: SessionDirScan,
    now: float,
    with_hermes_audit: bool,
    while_waiting: Callable[[], Any] | None = None,
    journals: RunJournals | None = None,
    later: list[tuple[str, bytes]] | None = None,
    while_copies_finish: Callable[[Catalogue], Callable[[], bool]] | None = None,
):
    """(catalogue, hermes' audit, its error, ``while_waiting()``): the catalogue built here while
    hermes' audit runs in a forked copy, and ``while_waiting`` run here before its result is
    awaited. ``journals``: the run-journal listing the look shares (``while_waiting`` may use it).
    ``while_copies_finish(catalogue)``, once it is built: a step of work to run while the forked
    copies' results are awaited (see :meth:`_Aside.results`); after that the rows only gain
    findings (those of the copies' results: hermes' audit, the run journals)."""
    if journals is None:
        journals = RunJournals(home.session_dir)
    # hermes' audit reads the facts of a few files only (the sidecars with a .bak, those with a
    # turn journal), so its copy is forked first, before any thread starts: it works while this
    # process reads every sidecar's facts (in two processes when the cache knows few of them;
    # the user texts only of sessions with a turn journal) and builds the catalogue.
    # The same copy then reads every run journal once (the journal findings of the audit command,
    # and for the list which journals hold output no terminal record ended), so that work, a
    # quarter of a first open, runs beside the sidecars too.
    # _index.json is read once: by the copy running hermes' audit, which hands its facts over with
    # its sidecars' (each process parsed it until 2026-12-01, this one before the fork until the
    # fourth session), or here when there is no copy.
    texts_for = {f"{sid}.json" for sid in turn_journal_session_ids(home.session_dir, scan)}
    names = scan.live_names() + scan.bak_names()
    pending = _start_aside(
        home, scan, with_hermes_audit, while_waiting is not None, names, texts_for, journals
    )
    if pending is not None:
        # the copies are forked: state.db is read (in a thread of its own, SQLite letting go of
        # the GIL) while they and this process read the sidecars, not after
        reader = _StateDbPrefetch(home, scan.cache)
        pending.read_sidecars(scan)
    else:
        scan.prefetch(names, texts_for)  # (it may fork a copy: no thread may run before)
        reader = _StateDbPrefetch(home, scan.cache)
    cat = build_catalogue(home, now=now, state_db_reader=reader, scan=scan)
    audit = error = extra = None
    journal_findings = None
    done = False
    if pending is not None:
        # the copy's audit left the sidecars nested too deeply to this process: which they are is
        # worked out before the copies' results are awaited (51,428 sidecars and .bak files looked
        # up at 50,000 sessions, 0.025 s, after the copies the last work before the list is sent)
        nested = with_hermes_audit and bool(too_deep_sidecars(scan))
        meanwhile = while_copies_finish(cat) if while_copies_finish is not None else None
        audit, error, journal_findings, done = _finish_aside(
            home, scan, pending, with_hermes_audit, while_waiting is not None, journals, later, meanwhile
        )
        if done and nested:
            audit, error = with_nesting_failures(audit, error, scan)
    add_unshown_output_findings(home, scan, cat, now, journals)
    if while_waiting is not None:
        extra = journal_findings if journal_findings is not None else while_waiting()
    if with_hermes_audit:
        if not done:
            audit, error = hermes_audit(home, scan)
        add_hermes_audit(cat, audit if error is None else error.partial_report)
    return cat, audit, error, extra


def _aside_job(
    home: Home,
    scan: SessionDirScan,
    share: list[tuple[str, bool]],
    stage: _Stage,
    others: list[int],
    journals: list[str],
    with_hermes_audit: bool = False,
    with_journal_findings: bool = False,
    steal: _Steal | None = None,
) -> tuple:
    """In a forked copy: its ``share`` of the sidecars read first (``with_hermes_audit``: after
    ``_index.json``) and their facts handed over at once through ``stage`` (the first process builds the catalogue from them while this one goes
    on; ``others``: the descriptors of the other copies' stages, closed here at once);
    ``with_hermes_audit``: hermes' audit, with its error taken apart (it does not pickle whole);
    the run ``journals`` read, their facts into the cache; and the facts of the files it looked
    at, for the first process's cache, from which it then works out the journal findings (with
    those of journals too recent to keep, for this run only: see ``FactCache.borrow``).
    Without a cache (nothing to hand the journals' facts over in) the journals are all read here
    and their findings returned. ``steal``: after its ``share``, chunks of the other sidecars
    taken as long as any is left (handed over with their numbers), and after hermes' audit the
    run journals likewise (``journals`` is then empty)."""
    for fd in others:
        os.close(fd)
    stage.in_copy()
    try:
        # hermes' audit's state.db query, begun now: it runs while this copy reads sidecars, where the
        # audit, run after them, waited for it (the last work of a first open; this copy forks nothing)
        ahead = audit_ahead(home, scan) if with_hermes_audit else None
        index = None
        if with_hermes_audit:  # its facts go over with the sidecars' (and the cache entry, to keep)
            facts = scan.index_facts()
            entry = scan.cache.entries[INDEX].get("_index.json") if scan.cache is not None else None
            index = (facts, entry)
        got = scan.read_here(share)
        taken: list[int] = []
        if steal is not None:
            taken, more = steal.sidecars(scan)
            got += more
        stage.hand_over(pickle.dumps((_flat_stats(got), index, taken), protocol=pickle.HIGHEST_PROTOCOL))
    finally:
        stage.close_writing_end()
    if steal is not None:
        journals = steal.journal_paths()
    audit = error = findings = None
    if with_hermes_audit:
        # after the hand-over, which the first process waits for: this copy keeps the facts of
        # the files hermes' audit looks up, no others (the other copies keep none: only the first
        # process looks sidecars up again). At 50,000 sessions that is a third as many as it read,
        # and taking them all, before the hand-over, kept the first process waiting 0.2 s.
        files = _hermes_files(home, scan)
        wanted = set(files[0])
        scan.take([one for one in got if one[0] in wanted])
        # on two cores it runs beside the first process's catalogue (the audit first measured
        # worse: it lengthened the reading that all three share)
        audit, error = _hermes_audit_here(home, scan, ahead, files)
    facts = {}
    if scan.cache is None:
        if with_hermes_audit:
            findings = _journals_aside(home.session_dir, None, with_journal_findings)
    elif with_journal_findings:
        for path in journals:
            _journal_facts(Path(path), scan.cache, open_runs=True)
    else:  # the list's: the open-run facts only (what _open_run_facts_of_every_journal derives)
        for path in journals:
            try:
                cached_file_facts(scan.cache, OPEN_RUN, path, Path(path), open_run_facts, OPEN_RUN_TAIL)
            except OSError:
                continue
    unkept = {}
    if scan.cache is not None:
        for kind in (TURN, JOURNAL, OPEN_RUN, STATE_DB):
            entries = scan.cache.entries[kind]
            facts[kind] = {p: entries[p] for p in scan.cache.seen(kind) if p in entries}
            if kind in SAVED_ONLY:
                facts[kind] = pickle.dumps(facts[kind], protocol=pickle.HIGHEST_PROTOCOL)
        # a journal written in the last seconds (or whose inode changed: a new hard link) is not
        # kept in the cache; its facts go over all the same, for this run only, or the first
        # process would read it again, on its own, after the copies are done
        unkept = {kind: scan.cache.unkept(kind) for kind in (JOURNAL, OPEN_RUN)}
    if error is None:
        return audit, None, findings, facts, unkept
    return None, (str(error), error.partial_report, list(error.errors)), findings, facts, unkept


def audit_ahead(home: Home, scan: SessionDirScan) -> AuditAhead:
    """:func:`hermes_audit`'s audit of ``home`` with ``scan``, its state.db query started now."""
    return AuditAhead(home.session_dir, home.state_db(), scan)


def _hermes_audit_here(
    home: Home, scan: SessionDirScan, ahead: AuditAhead | None, files: tuple[list[str], set[str]]
) -> tuple[dict | None, HermesAuditError | None]:
    """:func:`hermes_audit` in a copy (``ahead``: its state.db query begun), after what it reads
    beyond the copy's share (none, when the split is the usual one) is read in one quick pass
    rather than one full parse each. ``files``: :func:`_hermes_files` of ``home`` and ``scan``."""
    scan.read_ahead(*files)
    # the first process has every sidecar's facts: it looks for those hermes' audit fails on
    return hermes_audit(home, scan, nesting_checked_elsewhere=True, ahead=ahead)


# A stat result's fields past its ten visible ones (st_atime as a float, the nanosecond times,
# st_blocks and the rest, by platform), in the order os.stat_result takes them after those ten.
_STAT_EXTRA_FIELDS = tuple(os.stat_result(range(os.stat_result.n_fields)).__reduce__()[1][1])
_stat_extra = attrgetter(*_STAT_EXTRA_FIELDS)


def _flat_stats(got: list[tuple]) -> list[tuple]:
    """Sidecar facts read in a copy (:meth:`SessionDirScan.read_here`'s tuples), each stat as the
    plain tuple of all its fields, for the hand-over: a stat result pickles its hidden fields as a
    dict, and the 10,000 of a first open took 0.05 s to pickle and as much to unpickle, a plain tuple
    half that with the stat made again (:func:`_stats_back`)."""
    return [
        (name, facts, None if st is None else (*st, *_stat_extra(st)), error, started)
        for name, facts, st, error, started in got
    ]


def _stats_back(flat: list[tuple]) -> list[tuple]:
    """:func:`_flat_stats` undone: each stat the ``os.stat_result`` it was, every field equal."""
    make = os.stat_result
    return [
        (name, facts, None if st is None else make(st), error, started)
        for name, facts, st, error, started in flat
    ]


class _Stage:
    """A forked copy's first result, handed to the first process while the copy goes on: the bytes
    are written to a file both share (memory-backed where the system has ``memfd_create``; a pipe
    alone would hold 64 KB and stop the copy until the first process reads, which it does only
    once its own share is read), then one byte through a pipe says they are complete; the pipe's
    end (the copy's last descriptor of it closed, by its exit at the latest) says the copy is done
    with it, so a copy that died is noticed."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        try:
            self.file_fd = os.memfd_create("hermes-inspector-stage", os.MFD_CLOEXEC)
        except (AttributeError, OSError):
            import tempfile

            fh = tempfile.TemporaryFile()
            self.file_fd = os.dup(fh.fileno())
            fh.close()

    def fds(self) -> list[int]:
        return [self.read_fd, self.write_fd, self.file_fd]

    def in_copy(self) -> None:
        os.close(self.read_fd)

    def hand_over(self, data: bytes) -> None:
        view = memoryview(data)
        at = 0
        while at < len(view):
            at += os.pwrite(self.file_fd, view[at:], at)
        os.close(self.file_fd)
        os.write(self.write_fd, b".")

    def close_writing_end(self) -> None:
        try:
            os.close(self.write_fd)
        except OSError:
            pass

    def in_parent(self) -> None:
        """After the fork: only the copy keeps the writing end."""
        os.close(self.write_fd)

    def receive(self) -> bytes | None:
        """The bytes the copy handed over; None when it ended without (it failed or died)."""
        try:
            said = b""
            while True:
                chunk = os.read(self.read_fd, 16)
                if not chunk:
                    break
                said += chunk
            if said != b".":
                return None
            size = os.fstat(self.file_fd).st_size
            parts = []
            at = 0
            while at < size:
                part = os.pread(self.file_fd, size - at, at)
                if not part:
                    return None
                parts.append(part)
                at += len(part)
            return b"".join(parts)
        finally:
            self.close()

    def close(self) -> None:
        for fd in (self.read_fd, self.file_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        self.read_fd = self.file_fd = -1


def _hermes_files(home: Home, scan: SessionDirScan, with_index: bool = True) -> tuple[list[str], set[str]]:
    """(the sidecars and ``.bak`` files hermes' audit reads, the names among them whose user texts
    it compares): every ``.bak`` and its live sidecar, the sessions with a turn journal, and
    (``with_index``) the live sidecars ``_index.json`` does not list (their message count is in
    the item)."""
    texts = {f"{sid}.json" for sid in turn_journal_session_ids(home.session_dir, scan)}
    baks = scan.bak_names()
    live = scan.live_names()
    live_set = set(live)
    wanted = [n for b in baks for n in (b[:-4], b) if n in live_set or n == b]
    facts = scan.index_facts() if with_index and scan.exists("_index.json") else None
    if facts is not None:
        listed = {f"{sid}.json" for sid, _ in facts["rows"]}
        wanted += [n for n in live if n not in listed]
    elif with_index:
        wanted += live if scan.exists("_index.json") else []
    wanted += sorted(texts)
    return list(dict.fromkeys(wanted)), texts


# The work of a first open is dealt out between this process and two forked copies so that the
# three finish together (on two idle cores that is half the work each core; on a busy machine,
# where every process gets its turn, no one process has much more to do than the others). Costs
# are in bytes of sidecar read (their quick pass: about 2.1 ns a byte on the benchmark machine),
# plus a cost per sidecar for what does not grow with its size: opening and reading it, and, in
# this process, its row of the catalogue (and the JSON output), in the first copy its part of
# hermes' audit. A byte of run journal costs about half as much again (3.3 ns: read, checked line
# by line for the journal findings and the open-run facts).
FILE_COST = 6_000
CATALOGUE_COST_PER_FILE = 12_000
AUDIT_COST_PER_FILE = 6_000
JOURNAL_BYTE_COST = 1.5
# only a run journal's open-run facts (the window's list): its read and a few byte searches,
# 0.37 s for the 558 MB of journals of the 50,000-session home (0.66 ns a byte)
OPEN_RUN_BYTE_COST = 0.3
# state.db's records for the catalogue (here) and hermes' query (in the first copy): a byte of the
# database costs this much (0.15 s and 0.09 s for the bench home's 194 MB)
RECORDS_DB_BYTE_COST = 0.35
HERMES_DB_BYTE_COST = 0.2
INDEX_BYTE_COST = 1.2  # _index.json, parsed in the first copy (0.08 s for 22 MB)


def _size_or_zero(path: Path) -> int:
    st = _stat_or_none(path)
    return st.st_size if st is not None else 0


def _journal_sizes(session_dir: Path, journals: RunJournals | None = None) -> list[tuple[int, str]]:
    """``(size, path)`` of every run journal (``_run_journal/<session>/*.jsonl``) that
    :func:`_journal_findings` reads (not those of a folder whose name hermes rejects), as
    ``journals`` (the look's listing: its readers then ask for no listing or ``stat`` again, after
    the copies, when nothing else runs; a journal written to in between no longer matches the
    facts a copy read of it, and is read again there) lists and stats them."""
    if journals is None:
        journals = RunJournals(session_dir)
    out: list[tuple[int, str]] = []
    for sid in journals.folders(strict=False) or ():
        if is_valid_journal_id(sid):
            for name in journals.names(sid) or ():
                path = journals.path(sid, name)
                st = journals.stat(path)
                if st is not None:
                    out.append((st.st_size, path))
    return out


class Plan:
    """Who reads what on a first open: ``sidecars[i]`` (``(name, want_texts)`` pairs) and
    ``journals[i]`` (paths) of worker ``i`` (0: this process, 1: the copy running hermes' audit,
    2: the other copy), and the cost each was given."""

    def __init__(self, workers: int) -> None:
        self.sidecars: list[list[tuple[str, bool]]] = [[] for _ in range(workers)]
        self.journals: list[list[str]] = [[] for _ in range(workers)]
        self.load: list[float] = [0.0] * workers


def plan_work(
    todo: list[tuple[int, str, bool]],
    hermes_first: list[str],
    journals: list[tuple[int, str]],
    fixed: list[float],
    journal_byte_cost: float = JOURNAL_BYTE_COST,
) -> Plan:
    """The sidecars ``todo`` (``(size, name, want_texts)``) and the run ``journals`` (``(size,
    path)``) dealt out between ``len(fixed)`` workers that already have ``fixed`` work each, so
    that they finish together: the files named in ``hermes_first`` to worker 1 (hermes' audit
    reads them there), the journals to the copies only (workers 1 and up), then every file,
    largest first, to the worker with the least work so far (each sidecar costs its size plus
    :data:`FILE_COST`, each journal byte ``journal_byte_cost``)."""
    plan = Plan(len(fixed))
    plan.load = list(fixed)
    first = set(hermes_first)
    rest = []
    for size, name, want in todo:
        if name in first:
            plan.sidecars[1].append((name, want))
            plan.load[1] += size + FILE_COST
        else:
            rest.append((size + FILE_COST, 0, name, want))
    copies = range(1, len(fixed))
    for size, path in sorted(journals, reverse=True):
        i = min(copies, key=plan.load.__getitem__)
        plan.journals[i].append(path)
        plan.load[i] += journal_byte_cost * size
    rest.sort(reverse=True)
    load = plan.load
    everyone = range(len(fixed))
    for cost, _, name, want in rest:
        i = min(everyone, key=load.__getitem__)
        plan.sidecars[i].append((name, want))
        load[i] += cost
    return plan


def _as_ready(stages: list[_Stage]) -> Iterator[tuple[int, _Stage]]:
    """``(i, stage)`` of each of ``stages`` (numbered from 1), in the order their copies hand
    over (or fail): the first process unpickles one copy's facts while another still pickles its
    own (the copy running hermes' audit hands its ``_index.json`` facts over too, and was often the
    later one, 0.05-0.1 s at 50,000 sessions)."""
    waiting = dict(enumerate(stages, start=1))
    with selectors.DefaultSelector() as selector:
        for i, stage in waiting.items():
            selector.register(stage.read_fd, selectors.EVENT_READ, i)
        while waiting:
            for key, _ in selector.select():
                selector.unregister(key.fd)
                yield key.data, waiting.pop(key.data)


class _Aside:
    """The forked copies of a first open (:func:`_aside_job`), with this process's share."""

    def __init__(
        self,
        copies: list[Forked | None],
        stages: list[_Stage],
        plan: Plan,
        journals_here: bool,
        steal: _Steal | None = None,
    ) -> None:
        self.copies = copies
        self._stages: list[_Stage] | None = stages
        self.plan = plan
        self.journals_here = journals_here  # the journal facts come back through the cache
        self.steal = steal
        self.handed_over = 0  # how many copies handed their sidecars over

    def read_sidecars(self, scan: SessionDirScan) -> None:
        """This process's share read here (``steal``: chunks taken while any is left), then each
        copy's taken from it (read here after all when a copy failed before it handed them over:
        its share, and the chunks no one handed over)."""
        scan.take(scan.read_here(self.plan.sidecars[0]))
        steal = self.steal
        received: set[int] = set()
        if steal is not None:
            taken, got = steal.sidecars(scan)
            scan.take(got)
            received.update(taken)
        stages, self._stages = self._stages or [], None
        for i, stage in _as_ready(stages):
            got = index = None
            taken = []
            try:
                data = stage.receive()
                if data is not None:
                    flat, index, taken = pickle.loads(data)
                    got = _stats_back(flat)
            except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError):
                got = index = None
            if got is not None:
                self.handed_over += 1
                received.update(taken)
            scan.take(got if got is not None else scan.read_here(self.plan.sidecars[i]))
            if index is not None:
                scan.adopt_index_facts(*index)
        if steal is not None:
            missing = [i for i in range(steal.count) if i not in received]
            scan.take(scan.read_here([pair for i in missing for pair in steal.chunk(i)]))
            steal.close()

    def results(self, meanwhile: Callable[[], bool] | None = None) -> list:
        """Each copy's result, or the ForkedError it ended with. ``meanwhile``: called again and
        again, while some copy's result has not begun to come, until it says it has nothing more
        to do (returns False): work that would otherwise wait for the results, done while they
        are awaited (see :func:`_while_copies_work`)."""
        for stage in self._stages or ():  # never read
            stage.close()
        self._stages = None
        if meanwhile is not None:
            _while_copies_work([copy for copy in self.copies if copy is not None], meanwhile)
        out: list = []
        for copy in self.copies:
            try:
                if copy is None:
                    raise ForkedError("this system did not fork a second copy")
                out.append(copy.result(wait_for_exit=False))  # (its exit is no part of the list)
            except ForkedError as exc:
                out.append(exc)
        return out


def _while_copies_work(copies: list[Forked], step: Callable[[], bool]) -> None:
    """``step()`` called until it returns False or every one of ``copies`` has begun to hand its
    result back (or has ended): each call a few milliseconds, so the results are taken soon
    after they come."""
    if not copies:
        return
    with selectors.DefaultSelector() as selector:
        for copy in copies:
            selector.register(copy.fileno(), selectors.EVENT_READ)
        while len(selector.select(0)) < len(copies):
            try:
                if not step():
                    return
            except Exception:  # noqa: BLE001 - the work is done again after the results, its error there
                return


# sidecars per chunk taken (its read_here call costs about 0.03 ms more: a quick pass is set up)
STEAL_CHUNK = 48
MAX_TOKENS = 4096  # chunk numbers a token pipe holds: 16 KB, within any system's pipe buffer
WORK_STEALING = True  # a window's first open: sidecars taken by chunks (see _Steal)
AUDIT_STEALING = True  # the audit command's too (no stat of every sidecar and no deal first)


class _Steal:
    """The sidecars of a first open taken in chunks by whichever process is free, instead of
    dealt out by their sizes beforehand (:func:`plan_work`), and likewise the run journals by the
    copies once their sidecars are handed over. No file is looked at before the copies are
    forked (the plan's stat of every sidecar and the deal: 0.26 s at 50,000 sessions, all of it
    before anything runs beside it), the three processes end their reading together whatever
    the machine gives each, and this process reads more of the sidecars itself (each read by a
    copy is pickled there and unpickled here).

    The chunk numbers wait in a pipe written in full before the fork, its writing end closed,
    each 4 bytes; a read of 4 bytes takes one (a pipe's reads are serialized and every write was
    a multiple of 4 bytes: each number reaches exactly one reader), and the pipe's end says
    there is no more. Raises OSError where the numbers do not fit in the pipe at once."""

    def __init__(self, todo: list[tuple[str, bool]], journals: list[str]) -> None:
        self.todo = todo
        self.size = max(STEAL_CHUNK, -(-len(todo) // MAX_TOKENS))
        self.count = -(-len(todo) // self.size)
        self.journals = journals
        self.journal_size = max(1, -(-len(journals) // MAX_TOKENS))
        self._fds: list[int] = []
        try:
            self.sidecar_fd = self._pipe(self.count)
            self.journal_fd = self._pipe(-(-len(journals) // self.journal_size))
        except BaseException:
            self.close()
            raise

    def _pipe(self, count: int) -> int:
        read_fd, write_fd = os.pipe()
        self._fds.append(read_fd)
        try:
            data = b"".join(i.to_bytes(4, "little") for i in range(count))
            os.set_blocking(write_fd, False)  # never wait: a pipe too small raises instead
            if data and os.write(write_fd, data) != len(data):
                raise OSError("the chunk numbers do not fit in a pipe")
        finally:
            os.close(write_fd)
        return read_fd

    @staticmethod
    def _take(fd: int) -> int | None:
        data = os.read(fd, 4)
        return int.from_bytes(data, "little") if data else None

    def chunk(self, i: int) -> list[tuple[str, bool]]:
        return self.todo[i * self.size : (i + 1) * self.size]

    def sidecars(self, scan: SessionDirScan) -> tuple[list[int], list[tuple]]:
        """(the chunks taken, the facts of their sidecars), read here until none is left."""
        taken: list[int] = []
        got: list[tuple] = []
        while (i := self._take(self.sidecar_fd)) is not None:
            taken.append(i)
            got += scan.read_here(self.chunk(i))
        return taken, got

    def journal_paths(self) -> Iterator[str]:
        """The run journals, a chunk at a time, until none is left."""
        while (i := self._take(self.journal_fd)) is not None:
            yield from self.journals[i * self.journal_size : (i + 1) * self.journal_size]

    def close(self) -> None:
        for fd in self._fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds = []


def _stealing(scan: SessionDirScan, with_journal_findings: bool) -> bool:
    """Whether a first open takes its sidecars by chunks (:class:`_Steal`): the window's and the
    audit command's (``with_journal_findings``: :data:`AUDIT_STEALING`), when the fact cache
    knows none of the sidecars (a first open; a partly known folder is dealt out by what the
    cache does not answer)."""
    return (
        WORK_STEALING
        and (AUDIT_STEALING or not with_journal_findings)
        and (scan.cache is None or not scan.cache.entries[SIDECAR])
    )


def _start_aside(
    home: Home,
    scan: SessionDirScan,
    with_hermes_audit: bool = True,
    with_journal_findings: bool = False,
    names: list[str] | None = None,
    texts_for: set[str] | frozenset[str] = frozenset(),
    listing: RunJournals | None = None,
) -> _Aside | None:
    """The :func:`copies_of` forked copies of a first open, working, or None when this
    process may not fork (see ``scan.can_fork``), the folder is too small to be worth it, or the
    fact cache already knows nearly every sidecar (a second look: the copies would only look facts
    up, and forking a process holding the cache costs more than that). The sidecars among
    ``names`` the cache does not answer for and the run journals are dealt out by
    :func:`plan_work`: the first copy runs hermes' audit (and reads the files it reads), and each
    hands its sidecars' facts back at once, then reads its journals. Without a fact cache the
    first copy reads every journal. ``listing``: the look's run-journal listing (see
    :func:`_journal_sizes`)."""
    if len(scan.names) < AUDIT_ASIDE_MIN_FILES or not can_fork() or _mostly_cached(scan):
        return None
    if _stealing(scan, with_journal_findings):
        return _start_stealing(
            home, scan, with_hermes_audit, names or [], texts_for, with_journal_findings, listing
        )
    todo = scan.unanswered(names or [], texts_for)
    hermes_first: list[str] = []
    fixed = [float(CATALOGUE_COST_PER_FILE * len(todo))] + [0.0] * copies_of(with_journal_findings)
    db_size = _size_or_zero(home.state_db())
    fixed[0] += RECORDS_DB_BYTE_COST * db_size
    if with_hermes_audit:  # (the few files _index.json leaves out it reads after the split)
        hermes_first = _hermes_files(home, scan, with_index=False)[0]
        fixed[1] += AUDIT_COST_PER_FILE * len(todo) + HERMES_DB_BYTE_COST * db_size
        fixed[1] += INDEX_BYTE_COST * _size_or_zero(home.session_dir / "_index.json")
    journals: list[tuple[int, str]] = []
    journal_cost = JOURNAL_BYTE_COST
    if scan.cache is not None:
        # the list's catalogue wants only the open-run facts (a few byte tests per journal, most
        # of it the read: OPEN_RUN_BYTE_COST), the audit every line checked; either way in the
        # copies, and _journals_aside here finds them in the cache
        journals = _journal_sizes(home.session_dir, listing)
        journal_cost = JOURNAL_BYTE_COST if with_journal_findings else OPEN_RUN_BYTE_COST
    elif with_hermes_audit and with_journal_findings:  # read by the first copy, all of them
        fixed[1] += JOURNAL_BYTE_COST * sum(size for size, _ in _journal_sizes(home.session_dir, listing))
    plan = plan_work(todo, hermes_first, journals, fixed, journal_cost)
    forked = _fork_copies(home, scan, plan, with_hermes_audit, with_journal_findings)
    if forked is None:  # no copy at all: everything here, the usual way
        return None
    return _Aside(*forked, plan, scan.cache is not None)


def _fork_copies(
    home: Home,
    scan: SessionDirScan,
    plan: Plan,
    with_hermes_audit: bool,
    with_journal_findings: bool,
    steal: _Steal | None = None,
) -> tuple[list[Forked | None], list[_Stage]] | None:
    """The :func:`copies_of` forked copies, copy ``i`` with ``plan.sidecars[i]`` and
    ``plan.journals[i]`` (the first also running hermes' audit when ``with_hermes_audit``), each with the
    stage it hands its facts over in; None (every stage closed) when not even the first could be
    forked. A later copy that could not be forked is None: its share is read here (with ``steal``,
    it takes no chunk and the others take them all)."""
    stages = [_Stage() for _ in range(copies_of(with_journal_findings))]
    copies: list[Forked | None] = []
    for i, stage in enumerate(stages, start=1):
        others = [fd for other in stages if other is not stage for fd in other.fds()]
        job = partial(
            _aside_job,
            home,
            scan,
            plan.sidecars[i],
            stage,
            others,
            plan.journals[i],
            with_hermes_audit and i == 1,
            with_journal_findings,
            steal,
        )
        try:
            copies.append(Forked(job))
        except OSError:
            if i == 1:
                for st in stages:
                    st.in_parent()
                    st.close()
                return None
            copies.append(None)
    for stage in stages:
        stage.in_parent()
    return copies, stages


def _start_stealing(
    home: Home,
    scan: SessionDirScan,
    with_hermes_audit: bool,
    names: list[str],
    texts_for: set[str] | frozenset[str],
    with_journal_findings: bool = False,
    listing: RunJournals | None = None,
) -> _Aside | None:
    """:func:`_start_aside` with the sidecars and the journals taken by chunks (:class:`_Steal`):
    the first copy reads the files hermes' audit reads, then everyone takes chunks of the rest.
    ``with_journal_findings`` (the audit command): the copies check every line of the journals
    they take (without a fact cache the first copy reads them all and returns the findings)."""
    plan = Plan(copies_of(with_journal_findings) + 1)
    first = set(_hermes_files(home, scan, with_index=False)[0]) if with_hermes_audit else set()
    todo = []
    for name in names:
        pair = (name, name in texts_for)
        (plan.sidecars[1] if name in first else todo).append(pair)
    journals: list[str] = []
    if scan.cache is not None:  # (without one there is nothing to hand their facts over in)
        journals = [path for _, path in sorted(_journal_sizes(home.session_dir, listing), reverse=True)]
    try:
        steal = _Steal(todo, journals)
    except OSError:
        return None  # the usual way then: everything here
    # the plan deals no journal here: the copies take them by chunks too
    forked = _fork_copies(home, scan, plan, with_hermes_audit, with_journal_findings, steal)
    if forked is None:
        steal.close()
        return None
    return _Aside(*forked, plan, scan.cache is not None, steal)


# How many forked copies share a first open's work with this process (1 or more). Two: on a busy
# machine three processes get more turns than two and none has much more to do than the others;
# one: about 7% less CPU (each copy's fork and copy-on-write). See bench/profile_notes.md.
FIRST_OPEN_COPIES = 2
# The same for the audit command (its journal findings: every line of every run journal checked). No
# window waits on it for its paints, so it takes one more: beside two CPU-bound processes its wall
# time was 0.90x of two copies' (6 pairs), quiet 0.96-1.00x, the same CPU (bench/profile_notes.md,
# twenty-first session). The window's catalogue keeps two: a third one beside the GUI made its
# longest stall at 50,000 sessions 63 ms once in two runs (two copies: 24-39 ms).
AUDIT_COPIES = 3


def copies_of(with_journal_findings: bool) -> int:
    """How many forked copies share a first open: :data:`AUDIT_COPIES` for the audit command (its
    journal findings), else :data:`FIRST_OPEN_COPIES`."""
    return AUDIT_COPIES if with_journal_findings else FIRST_OPEN_COPIES


WARM_SHARE = 0.9  # of the sidecars and .bak files with a cache entry: a second look, no forked copy


def _mostly_cached(scan: SessionDirScan) -> bool:
    """Whether the fact cache has entries for at least :data:`WARM_SHARE` of the folder's sidecars
    and ``.bak`` files (entries, not yet checked against the files: a guess that only decides
    whether to fork)."""
    if scan.cache is None:
        return False
    known = scan.cache.entries[SIDECAR]
    names = scan.live_names() + scan.bak_names()
    return bool(names) and sum(1 for n in names if n in known) >= WARM_SHARE * len(names)


# The fact kinds a first open's copies hand back that this process looks up no more once their
# results are in (hermes' turn-journal facts and its state.db query's entry: hermes' audit ran in
# a copy), only the fact cache's file keeps them: they come pickled, and where the cache is saved
# later (the window's, after its rows are sent) they are unpickled then. At 50,000 sessions the
# copy running hermes' audit hands back 2.5 MB of pickled facts, 2.4 MB of them these.
SAVED_ONLY = (TURN, STATE_DB)


def _finish_aside(
    home: Home,
    scan: SessionDirScan,
    pending: _Aside,
    with_hermes_audit: bool,
    with_journal_findings: bool,
    journals: RunJournals | None = None,
    later: list[tuple[str, bytes]] | None = None,
    meanwhile: Callable[[], bool] | None = None,
) -> tuple[dict | None, HermesAuditError | None, list[Finding] | None, bool]:
    """(hermes' audit, its error, the journal findings, whether it all came through) of the forked
    copies; the facts they read are taken into this process's cache (those of
    :data:`SAVED_ONLY`, pickled, put in ``later`` when it is given: see :func:`_adopt_later`), and
    the journal findings worked out here from those facts (a journal whose facts did not come
    back is read here). When the first copy failed, (None, None, None, False): the caller then
    does its work here (it raises what it raises). ``meanwhile``: see :meth:`_Aside.results`."""
    results = pending.results(meanwhile)
    first = results[0]
    for got in results:
        if not isinstance(got, ForkedError) and scan.cache is not None:
            for kind, entries in got[3].items():
                if kind in SAVED_ONLY:
                    if later is not None:
                        later.append((kind, entries))
                    else:
                        _adopt_later(scan, [(kind, entries)])
                    continue
                scan.cache.adopt(kind, entries)
            for kind, entries in got[4].items():
                scan.cache.borrow(kind, entries)
    if isinstance(first, ForkedError):
        return None, None, None, False
    audit, error, findings = first[:3]
    everyone = not any(isinstance(got, ForkedError) for got in results)
    if pending.steal is not None and everyone and not with_journal_findings:
        # every journal's open-run facts came back from the copies (they took them all): what
        # add_unshown_output_findings looks up is in the cache, and it derives any other
        findings = None
    elif pending.journals_here:
        findings = _journals_aside(home.session_dir, scan.cache, with_journal_findings, journals)
    if error is not None:
        message, partial_report, errors = error
        return None, HermesAuditError(message, partial_report=partial_report, errors=errors), findings, True
    return (audit if with_hermes_audit else None), None, findings, True


def load_catalogue(
    home: Home,
    *,
    now: float,
    with_hermes_audit: bool = True,
    save_in_background: bool = False,
    save_later: Callable[[Callable[[], None]], Any] | None = None,
    while_copies_finish: Callable[[Catalogue], Callable[[], bool]] | None = None,
) -> Catalogue:
    """``save_in_background``: the fact cache is written by a detached process (a command that
    exits right after; see :meth:`FactCache.save`). ``save_later``: given the function that
    writes the fact cache instead of it being written here (the window's job calls it once its
    rows are handed back: ``jobs.pool.after_reply``), and with it the copies' facts only the
    cache's file keeps are unpickled then (:data:`SAVED_ONLY`). ``while_copies_finish``: given
    the catalogue once it is built, when copies were forked, it gives a step of work to run,
    again and again, while their results are awaited (the step may never run: no wait); the
    rows only gain findings after that."""
    with gc_paused():
        scan = _scan(home)
        scan.defer_sidecar_puts()  # made by _save (the window's: after the list is sent)
        later: list[tuple[str, bytes]] = []  # (taken by _save: with save_later, after the rows are sent)
        cat, _, error, _ = _catalogue(
            home,
            scan,
            now,
            with_hermes_audit,
            later=later if save_later is not None else None,
            while_copies_finish=while_copies_finish,
        )
        if error is not None:  # first among the home's findings: the window shows the first three
            cat.home_findings.insert(0, hermes_audit_fails_finding(str(error)))
        if save_later is not None:
            save_later(partial(_save, scan, save_in_background, later))
        else:
            _save(scan, save_in_background)
        return cat


def add_unshown_output_findings(
    home: Home, scan: SessionDirScan, cat: Catalogue, now: float, journals: RunJournals | None = None
) -> None:
    """The finding "the run journal holds output the transcript does not show" on the list's rows.

    Only sessions with a run journal that holds output and no terminal record (a cached
    fact per journal, mostly two byte tests) are read in full and checked. ``journals``: the
    listing shared with the journal findings of the same look.
    """
    if journals is None:
        journals = RunJournals(home.session_dir)
    folders = journals.folders(strict=True)
    if folders is None:
        return
    ctx = None
    for sid in folders:
        row = cat.rows.get(sid)
        if row is None or row.sidecar is None or row.sidecar.error or not is_valid_journal_id(sid):
            continue
        owned = runs_owned_elsewhere(row.sidecar.meta, row.sidecar.pending_marker, now)
        names = journals.names(sid)
        if names is None:
            continue
        open_runs = False
        for name in names:
            if name[:-6] in owned:
                continue
            try:
                facts = journals.facts(scan.cache, OPEN_RUN, sid, name, open_run_facts, OPEN_RUN_TAIL)
            except OSError:
                continue
            if facts is not None and facts.get("open"):
                open_runs = True
                break
        if not open_runs:
            continue
        if ctx is None:  # the repair modules load only when a session has an open run
            from inspector.plan import Clock
            from inspector.repair import from_journal
            from inspector.repair.context import RepairContext

            ctx = RepairContext(home, Clock(now, now), Path.cwd())
        finding = from_journal.session_finding(ctx, sid)
        if finding is not None:
            row.findings.append(finding)


_UNSEEN = object()
# the errors pathlib's Path.is_dir answers False for (any other one it raises)
_IS_DIR_FALSE = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})


class RunJournals:
    """The run journals of a sessions folder (``_run_journal/<session id>/*.jsonl``), listed once
    and each one's ``stat`` taken once for the two readers of a look: the open-run facts of
    :func:`add_unshown_output_findings` and the dropped-line facts of :func:`_journal_findings`
    (until the ninth session each listed every folder and took every journal's ``stat`` itself,
    the second through pathlib: ``iterdir``, ``is_dir`` and ``glob`` for 1,000 folders).

    Each reader keeps its own answer where the two differed: a folder entry whose ``is_dir``
    raises (a symlink loop, say) makes the strict listing fail as a whole, as ``os.scandir``'s
    ``is_dir`` raised in the first, while the other answers as pathlib's ``Path.is_dir`` (False
    for a missing target, a loop and the like, any other error failing the listing)."""

    def __init__(self, session_dir: Path) -> None:
        self.root = session_dir / RUN_JOURNAL_DIR
        self._root_str = str(self.root)
        self._entries: list[tuple[str, bool | OSError]] | None | object = _UNSEEN
        self._names: dict[str, list[str] | None] = {}
        self._stats: dict[str, os.stat_result | None] = {}

    def _listing(self) -> list[tuple[str, bool | OSError]] | None:
        """(name, whether a folder, or the error asking it raised) of each entry; None when the
        folder cannot be listed."""
        if self._entries is _UNSEEN:
            entries: list[tuple[str, bool | OSError]] | None = []
            try:
                with os.scandir(self._root_str) as it:
                    for entry in it:
                        try:
                            entries.append((entry.name, entry.is_dir()))
                        except OSError as exc:
                            entries.append((entry.name, exc))
            except OSError:
                entries = None
            self._entries = entries
        return self._entries  # type: ignore[return-value]

    def folders(self, *, strict: bool) -> list[str] | None:
        """The names of the entries that are folders (or links to one), sorted; None when the
        folder cannot be listed, or (``strict``) when any entry's kind cannot be asked, or (not
        ``strict``) when asking one raises an error pathlib's ``is_dir`` raises."""
        entries = self._listing()
        if entries is None:
            return None
        out = []
        for name, is_dir in entries:
            if isinstance(is_dir, OSError):
                if strict or is_dir.errno not in _IS_DIR_FALSE:
                    return None
                continue
            if is_dir:
                out.append(name)
        out.sort()
        return out

    def names(self, sid: str) -> list[str] | None:
        """The sorted names ending in ``.jsonl`` in the folder ``sid``; None when it cannot be listed."""
        if sid in self._names:
            return self._names[sid]
        got: list[str] | None
        try:
            with os.scandir(os.path.join(self._root_str, sid)) as it:
                got = sorted(e.name for e in it if e.name.endswith(".jsonl"))
        except OSError:
            got = None
        self._names[sid] = got
        return got

    def path(self, sid: str, name: str) -> str:
        return os.path.join(self._root_str, sid, name)

    def stat(self, path: str) -> os.stat_result | None:
        """``os.stat(path)`` taken once per look (None when it fails)."""
        st = self._stats.get(path, _UNSEEN)
        if st is _UNSEEN:
            try:
                st = os.stat(path)
            except (OSError, ValueError):
                st = None
            self._stats[path] = st
        return st  # type: ignore[return-value]

    def facts(
        self,
        cache: FactCache | None,
        kind: str,
        sid: str,
        name: str,
        derive: Callable[[bytes], dict],
        tail: tuple[int, Callable[[bytes], dict | None]] | None = None,
    ) -> dict | None:
        """:func:`cached_file_facts` of the journal ``name`` of ``sid``, answered from the cache
        with the ``stat`` this listing took; on a miss the file is read as that function reads it."""
        path = self.path(sid, name)
        if cache is not None:
            facts = self.cached(cache, kind, path)
            if facts is not None:
                return facts
        return cached_file_facts(cache, kind, path, Path(path), derive, tail)

    def cached(self, cache: FactCache, kind: str, path: str) -> dict | None:
        """The facts of ``kind`` the cache holds for the regular file ``path`` as this listing's
        ``stat`` finds it; None on a miss."""
        st = self.stat(path)
        if st is None or not stat.S_ISREG(st.st_mode):
            return None
        return cache.get(kind, path, st)


def _journal_facts(
    path: Path, cache: FactCache | None, open_runs: bool = False, journals: RunJournals | None = None
) -> dict | None:
    """{"unreadable": str|None, "malformed": n, "first": line} of one run journal; None when absent.

    The same verdicts as ``read_run_events``; derived facts are cached by file identity.
    ``open_runs``: the journal's :func:`open_run_facts` go into ``cache`` too, from the same read.
    ``journals``: the listing of the look, whose ``stat`` of the file answers a cache hit.
    """
    try:
        if journals is not None and cache is not None:
            hit = _cached_journal_facts(path, cache, open_runs, journals)
            if hit is not None:
                return hit
        if open_runs and cache is not None:
            return _journal_and_open_run_facts(path, cache)
        return cached_file_facts(cache, JOURNAL, str(path), path, _dropped_line_facts)
    except TooLargeToLoad:
        return _streamed_facts(path)
    except OSError as exc:
        return {"unreadable": str(exc), "malformed": 0, "first": None}


def _cached_journal_facts(
    path: Path, cache: FactCache, open_runs: bool, journals: RunJournals
) -> dict | None:
    """The dropped-line facts of a journal the cache answers for (and, ``open_runs``, its open-run
    facts too) with the ``stat`` ``journals`` took; None on a miss (the caller reads the file)."""
    key = str(path)
    dropped = journals.cached(cache, JOURNAL, key)
    if dropped is None or (open_runs and journals.cached(cache, OPEN_RUN, key) is None):
        return None
    return dropped


def _journal_and_open_run_facts(path: Path, cache: FactCache) -> dict | None:
    """:func:`cached_file_facts` of both kinds of facts of a run journal, from one read of it."""
    key = str(path)
    started = time.time_ns()
    dropped = opened = None
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        st = None
    if st is not None and stat.S_ISREG(st.st_mode):
        dropped = cache.get(JOURNAL, key, st)
        opened = cache.get(OPEN_RUN, key, st)
        if dropped is not None and opened is not None:
            return dropped
    try:
        data, st = read_regular(path)
    except FileNotFoundError:
        return None
    if dropped is None:
        dropped = _dropped_line_facts(data)
        cache.put(JOURNAL, key, st, dropped, started)
    if opened is None:
        cache.put(OPEN_RUN, key, st, open_run_facts(data), started)
    return dropped


def _journals_aside(
    session_dir: Path, cache: FactCache | None, with_findings: bool, journals: RunJournals | None = None
) -> list[Finding] | None:
    """Every run journal read once: its open-run facts into ``cache`` and, ``with_findings``, the
    journal findings (None without)."""
    if cache is None and not with_findings:
        return None
    if not with_findings:
        # the window's list and ``list``: only the open-run facts, a few byte searches per
        # journal; the dropped-line facts (every line checked, a third of a first open's CPU)
        # are the audit command's, and a session's detail reads its own journals for them
        _open_run_facts_of_every_journal(session_dir, cache)
        return None
    return _journal_findings(session_dir, cache, open_runs=cache is not None, journals=journals)


def _open_run_facts_of_every_journal(session_dir: Path, cache: FactCache) -> None:
    """:func:`open_run_facts` of every run journal of a valid run-journal folder, into ``cache``
    (what :func:`add_unshown_output_findings` looks up; a journal it cannot read, or too large
    to load, it skips, as that function does)."""
    root = session_dir / RUN_JOURNAL_DIR
    try:
        folders = sorted(e.name for e in os.scandir(root) if e.is_dir())
    except OSError:
        return
    for sid in folders:
        if not is_valid_journal_id(sid):
            continue
        try:
            names = sorted(e.name for e in os.scandir(root / sid) if e.name.endswith(".jsonl"))
        except OSError:
            continue
        for name in names:
            path = root / sid / name
            try:
                cached_file_facts(cache, OPEN_RUN, str(path), path, open_run_facts, OPEN_RUN_TAIL)
            except OSError:
                continue


def _streamed_facts(path: Path) -> dict:
    """:func:`_journal_facts` of a journal too large to load whole, read piece by piece."""
    try:
        streamed = stream_summary(path, path.parent.name, path.stem)
    except JournalTooLarge as exc:
        return {"unreadable": None, "too_large": str(exc), "malformed": 0, "first": None}
    except (JournalTooDeep, JournalDepthUnsure) as exc:
        return {"unreadable": str(exc), "too_deep": True, "malformed": 0, "first": None}
    except JournalUnreadable as exc:
        return {"unreadable": str(exc), "malformed": 0, "first": None}
    except OSError as exc:
        return {"unreadable": str(exc), "malformed": 0, "first": None}
    return {"unreadable": None, "malformed": streamed.malformed, "first": streamed.first_malformed}


def _dropped_line_facts(data: bytes) -> dict:
    try:
        count, first = journal_dropped_lines(data)
    except (JournalTooDeep, JournalDepthUnsure) as exc:
        return {"unreadable": str(exc), "too_deep": True, "malformed": 0, "first": None}
    except JournalUnreadable as exc:
        return {"unreadable": str(exc), "malformed": 0, "first": None}
    return {"unreadable": None, "malformed": count, "first": first}


def _journal_findings(
    session_dir: Path,
    cache: FactCache | None = None,
    open_runs: bool = False,
    journals: RunJournals | None = None,
) -> list[Finding]:
    """Lines hermes would drop, and journals it cannot read at all, across every session
    (``open_runs``: see :func:`_journal_facts`; ``journals``: the listing the look shares)."""
    out: list[Finding] = []
    if journals is None:
        journals = RunJournals(session_dir)
    names = journals.folders(strict=False)
    if names is None:
        return out
    for sid in names:
        folder = journals.root / sid
        if not is_valid_journal_id(sid):
            out.append(
                Finding(
                    "unsafe_journal_id",
                    "error",
                    f"run-journal folder {sid!r} has a name hermes rejects",
                    sid,
                    None,
                    str(folder),
                )
            )
            continue
        for name in journals.names(sid) or ():
            path = folder / name
            facts = _journal_facts(path, cache, open_runs, journals)
            if facts is None:
                continue
            if facts["unreadable"] is not None:
                out.append(
                    Finding(
                        "journal_too_deep" if facts.get("too_deep") else "journal_unreadable",
                        "error",
                        f"run {path.stem}: {facts['unreadable']}",
                        sid,
                        None,
                        str(path),
                    )
                )
                continue
            if facts.get("too_large"):
                out.append(
                    Finding(
                        "journal_too_large",
                        "warning",
                        f"run {path.stem}: {facts['too_large']}",
                        sid,
                        None,
                        str(path),
                    )
                )
                continue
            if facts["malformed"]:
                out.append(
                    Finding(
                        "journal_lines_dropped",
                        "warning",
                        f"run {path.stem}: hermes drops {facts['malformed']} line(s) "
                        f"(first at line {facts['first']})",
                        sid,
                        None,
                        str(path),
                    )
                )
    return out


def full_audit(home: Home, *, now: float, save_in_background: bool = False) -> dict:
    """hermes' audit (``status``/``summary``/``items``, exactly) plus the inspector's own findings.
    ``save_in_background``: as for :func:`load_catalogue`."""
    with gc_paused():
        scan = _scan(home)
        journals = RunJournals(home.session_dir)
        cat, audit, error, journal_findings = _catalogue(
            home,
            scan,
            now,
            True,
            lambda: _journal_findings(home.session_dir, scan.cache, journals=journals),
            journals,
        )
        _save(scan, save_in_background)
    findings = list(cat.home_findings)
    with_findings = [r for r in cat.rows.values() if r.findings]  # the same order as sorted_rows()
    for row in newest_first(with_findings):
        findings.extend(row.findings)
    findings.extend(journal_findings)
    # hermes' items are reported verbatim above; the inspector key lists only its own findings.
    findings = [f for f in findings if f.origin == "inspector"]
    inspector = {
        "home": {
            "base": str(home.base),
            "state_dir": str(home.state_dir),
            "state_dir_from": home.state_dir_from,
            "session_dir": str(home.session_dir),
            "session_dir_real": os.path.realpath(home.session_dir),
            "state_db": str(home.state_db()),
            "profiles": home.profile_names(),
        },
        "sessions": len(cat.rows),
        "needs_attention": sum(1 for r in with_findings if r.needs_attention),
        "findings": [f.to_json() for f in findings],
    }
    if error is not None:
        # hermes' own audit raises here (its route answers 500); say so, and show the rest.
        return {
            "status": "hermes_audit_failed",
            "error": str(error),
            "summary": {"ok": 0, "repairable": 0, "unsafe_to_repair": 0},
            "items": [],
            "partial": error.partial_report,
            "inspector": inspector,
        }
    return {**audit, "inspector": inspector}
