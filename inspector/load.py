"""Loading a home: the catalogue with every finding, and the full audit.

:func:`load_catalogue` (the list, the window's catalogue job) and :func:`full_audit` (``audit``)
scan the sessions folder once (:class:`~inspector.store.scan.SessionDirScan`, facts cached), build
the catalogue (:func:`~inspector.catalogue.build_catalogue`, every state.db read in a second
thread) while hermes' own audit runs in a forked copy, and add the findings only a journal shows.
Their output for people and programs is :mod:`inspector.report`'s.
"""

from __future__ import annotations

import os
import pickle
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspector.catalogue import Catalogue, add_hermes_audit, build_catalogue, newest_first
from inspector.findings import Finding
from inspector.forked import Forked, ForkedError
from inspector.gcpause import gc_paused
from inspector.home import Home
from inspector.repair.audit import HermesAuditError, audit_session_recovery
from inspector.store import statedb
from inspector.store.files import TooLargeToLoad, read_regular
from inspector.store.journal import (
    RUN_JOURNAL_DIR,
    JournalDepthUnsure,
    JournalTooDeep,
    JournalTooLarge,
    JournalUnreadable,
    is_valid_journal_id,
    open_run_facts,
    stream_summary,
)
from inspector.store.scan import (
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


def _save(scan: SessionDirScan, background: bool = False) -> None:
    if scan.cache is not None:
        scan.cache.save(background=background)


def hermes_audit(
    home: Home, scan: SessionDirScan | None = None
) -> tuple[dict | None, HermesAuditError | None]:
    """hermes' ``audit_session_recovery`` of the sessions dir and the default profile's state.db.

    Where hermes' own audit would raise (e.g. a turn-journal name it rejects), the error is
    returned instead, carrying the audit of everything else in ``partial_report``.
    """
    try:
        return audit_session_recovery(home.session_dir, home.state_db(), scan=scan), None
    except HermesAuditError as exc:
        return None, exc
    except OSError as exc:  # e.g. a file name hermes' own Path.exists() cannot stat
        return None, HermesAuditError(
            f"hermes' audit fails on {exc.filename or 'a file'}: {exc.strerror or exc}",
            partial_report=None,
            errors=[str(exc)],
        )


class _StateDbPrefetch:
    """Every profile's :func:`statedb.list_sessions`, read in a second thread from the start of a
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
            return _slim_records(statedb.list_sessions(db))
        started = time.time_ns()
        stats = [_stat_or_none(Path(f"{db}{suffix}")) for suffix in ("", "-wal", "-journal")]
        if stats[0] is not None:
            facts = self._cache.get_for(STATE_DB, str(db), stats)
            if facts is not None and isinstance(facts.get("records"), list):
                return facts["records"]
        records = _slim_records(statedb.list_sessions(db))
        if stats[0] is not None and _plain_records(records):
            self._cache.put_for(STATE_DB, str(db), stats, {"records": records}, started)
        return records

    def __call__(self, db: Path) -> list[dict]:
        self._thread.join()
        got = self._results.get(db)
        if got is None:
            return _slim_records(statedb.list_sessions(db))
        records, error = got
        if error is not None:
            raise error
        return records


# What the catalogue and the list read from a state.db record (SessionRow): the rest of
# list_sessions' keys would only be cached, pickled to the window and kept, 11,500 times.
CATALOGUE_RECORD_KEYS = ("id", "source", "title", "messages", "last_activity")


def _slim_records(records: list[dict]) -> list[dict]:
    return [{k: rec.get(k) for k in CATALOGUE_RECORD_KEYS} for rec in records]


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


def _catalogue(
    home: Home,
    scan: SessionDirScan,
    now: float,
    with_hermes_audit: bool,
    while_waiting: Callable[[], Any] | None = None,
):
    """(catalogue, hermes' audit, its error, ``while_waiting()``): the catalogue built here while
    hermes' audit runs in a forked copy, and ``while_waiting`` run here before its result is
    awaited."""
    # hermes' audit reads the facts of a few files only (the sidecars with a .bak, those with a
    # turn journal), so its copy is forked first, before any thread starts: it works while this
    # process reads every sidecar's facts (in two processes when the cache knows few of them;
    # the user texts only of sessions with a turn journal) and builds the catalogue.
    # The same copy then reads every run journal once (the journal findings of the audit command,
    # and for the list which journals hold output no terminal record ended), so that work, a
    # quarter of a first open, runs beside the sidecars too.
    # _index.json is read once, here, before the copy is forked: hermes' audit in the copy and the
    # catalogue here both take its facts (each parsed it until 2026-12-01).
    scan.index_facts()
    texts_for = {f"{sid}.json" for sid in turn_journal_session_ids(home.session_dir, scan)}
    names = scan.live_names() + scan.bak_names()
    pending = _start_audit_aside(home, scan, with_hermes_audit, while_waiting is not None, names, texts_for)
    if pending is not None:
        pending.read_sidecars(scan)
    else:
        scan.prefetch(names, texts_for)
    reader = _StateDbPrefetch(home, scan.cache)
    cat = build_catalogue(home, now=now, state_db_reader=reader, scan=scan)
    audit = error = extra = None
    journal_findings = None
    if pending is not None:
        audit, error, journal_findings = _finish_aside(home, scan, pending, with_hermes_audit)
    add_unshown_output_findings(home, scan, cat, now)
    if while_waiting is not None:
        extra = journal_findings if journal_findings is not None else while_waiting()
    if with_hermes_audit:
        if pending is None or (audit is None and error is None):
            audit, error = hermes_audit(home, scan)
        add_hermes_audit(cat, audit if error is None else error.partial_report)
    return cat, audit, error, extra


def _audit_job(
    home: Home,
    scan: SessionDirScan,
    with_hermes_audit: bool = True,
    with_journal_findings: bool = False,
    share: list[tuple[str, bool]] | None = None,
    stage: tuple[int, int] | None = None,
) -> tuple:
    """In the forked copy: its ``share`` of the sidecars read first (hermes' own files among them)
    and their facts written at once to ``stage`` (a pipe's (read, write) ends: this process's
    other half builds the catalogue from them while this one goes on); hermes' audit, with its
    error taken apart (it does not pickle whole); every run journal read once, for the journal
    findings (``with_journal_findings``) and the open-run facts :func:`add_unshown_output_findings`
    asks for; and the facts of the files it looked at, for the other process's cache."""
    if stage is not None:
        os.close(stage[0])
        try:
            got = scan.read_here(share or [])
            scan.take(got)
            _write_all(stage[1], pickle.dumps(got, protocol=pickle.HIGHEST_PROTOCOL))
        finally:
            os.close(stage[1])
    audit = error = None
    if with_hermes_audit:
        # what hermes' audit reads beyond the share (none, when the split is the usual one), in one
        # quick pass rather than one full parse each
        scan.read_ahead(*_hermes_files(home, scan))
        audit, error = hermes_audit(home, scan)
    findings = _journals_aside(home.session_dir, scan.cache, with_journal_findings)
    facts = {}
    if scan.cache is not None:
        for kind in (TURN, JOURNAL, OPEN_RUN, STATE_DB):
            entries = scan.cache.entries[kind]
            facts[kind] = {p: entries[p] for p in scan.cache.seen(kind) if p in entries}
    if error is None:
        return audit, None, findings, facts
    return None, (str(error), error.partial_report, list(error.errors)), findings, facts


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _hermes_files(home: Home, scan: SessionDirScan) -> tuple[list[str], set[str]]:
    """(the sidecars and ``.bak`` files hermes' audit reads, the names among them whose user texts
    it compares): every ``.bak`` and its live sidecar, the sessions with a turn journal, and the
    live sidecars ``_index.json`` does not list (their message count is in the item)."""
    texts = {f"{sid}.json" for sid in turn_journal_session_ids(home.session_dir, scan)}
    baks = scan.bak_names()
    live = scan.live_names()
    live_set = set(live)
    wanted = [n for b in baks for n in (b[:-4], b) if n in live_set or n == b]
    facts = scan.index_facts() if scan.exists("_index.json") else None
    if facts is not None:
        listed = {f"{sid}.json" for sid, _ in facts["rows"]}
        wanted += [n for n in live if n not in listed]
    else:
        wanted += live if scan.exists("_index.json") else []
    wanted += sorted(texts)
    return list(dict.fromkeys(wanted)), texts


# The split of a first open's work between this process and the forked copy, in bytes of
# sidecars read (their quick pass: about 2.1 ns a byte on the benchmark machine), plus a cost per
# sidecar for what does not grow with its size: opening and reading it, and, in this process,
# its row of the catalogue (and the JSON output), in the copy its part of hermes' audit. A byte
# of run journal costs about half as much again as a byte of sidecar (3.3 ns: read, checked
# line by line for the journal findings and the open-run facts). state.db is read on both sides
# (the catalogue's records here, hermes' query there), about as long: left out.
FILE_COST = 6_000
CATALOGUE_COST_PER_FILE = 12_000
AUDIT_COST_PER_FILE = 6_000
JOURNAL_BYTE_COST = 1.5


def _journal_bytes(session_dir: Path) -> int:
    """The size of every run journal (``_run_journal/*/*.jsonl``), which the copy reads."""
    total = 0
    try:
        with os.scandir(session_dir / RUN_JOURNAL_DIR) as folders:
            for folder in folders:
                try:
                    if not folder.is_dir():
                        continue
                    with os.scandir(folder.path) as files:
                        for f in files:
                            if f.name.endswith(".jsonl"):
                                try:
                                    total += f.stat().st_size
                                except OSError:
                                    pass
                except OSError:
                    continue
    except OSError:
        pass
    return total


def split_sidecars(
    todo: list[tuple[int, str, bool]],
    theirs_first: list[str],
    their_fixed: int,
    my_fixed: int,
) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """(the copy's share, this process's) of the sidecars to read, ``(name, want_texts)`` each, so
    that both finish together: each file costs its size plus :data:`FILE_COST`; the copy has
    ``their_fixed`` other work, this process ``my_fixed``. The files named in ``theirs_first``
    (hermes' audit reads them in the copy) go to the copy whatever the balance; then the largest
    of the others, until its share is full; the rest is this process's."""
    total = sum(size + FILE_COST for size, _, _ in todo)
    target = (total + my_fixed - their_fixed) / 2
    first = set(theirs_first)
    theirs: list[tuple[str, bool]] = []
    mine: list[tuple[str, bool]] = []
    held = 0
    rest = []
    for size, name, want in todo:
        if name in first:
            theirs.append((name, want))
            held += size + FILE_COST
        else:
            rest.append((size, name, want))
    rest.sort(reverse=True)
    for size, name, want in rest:
        if held + size + FILE_COST <= target:
            theirs.append((name, want))
            held += size + FILE_COST
        else:
            mine.append((name, want))
    return theirs, mine


class _Aside:
    """:func:`_audit_job` running in a forked copy, with its share of the sidecars."""

    def __init__(self, forked: Forked, stage_fd: int, theirs: list, mine: list) -> None:
        self.forked = forked
        self._stage_fd: int | None = stage_fd
        self._theirs = theirs
        self._mine = mine

    def read_sidecars(self, scan: SessionDirScan) -> None:
        """This process's share read here, then the copy's taken from it (read here after all when
        the copy failed before it wrote them)."""
        scan.take(scan.read_here(self._mine))
        got = None
        try:
            data = _read_all(self._stage_fd)
            if data:
                got = pickle.loads(data)
        except (OSError, pickle.UnpicklingError, EOFError, ValueError):
            got = None
        finally:
            os.close(self._stage_fd)
            self._stage_fd = None
        scan.take(got if got is not None else scan.read_here(self._theirs))

    def result(self):
        if self._stage_fd is not None:  # never read: closed so the copy cannot block on it
            os.close(self._stage_fd)
            self._stage_fd = None
        return self.forked.result()


def _start_audit_aside(
    home: Home,
    scan: SessionDirScan,
    with_hermes_audit: bool = True,
    with_journal_findings: bool = False,
    names: list[str] | None = None,
    texts_for: set[str] | frozenset[str] = frozenset(),
) -> _Aside | None:
    """:func:`_audit_job` running in a forked copy of this process, or None when this process may
    not fork (see ``scan.can_fork``), the folder is too small to be worth it, or the fact cache
    already knows nearly every sidecar (a second look: the copy would only look facts up, and
    forking a process holding the cache costs more than that). The sidecars among ``names`` the
    cache does not answer for are split between the two processes (:func:`split_sidecars`): the
    copy reads hermes' own files and its share first and hands their facts back at once."""
    if len(scan.names) < AUDIT_ASIDE_MIN_FILES or not can_fork() or _mostly_cached(scan):
        return None
    todo = scan.unanswered(names or [], texts_for)
    theirs_first: list[str] = []
    their_fixed = 0
    if with_hermes_audit:
        theirs_first = _hermes_files(home, scan)[0]
        their_fixed += AUDIT_COST_PER_FILE * len(todo)
    if scan.cache is not None or with_journal_findings:
        their_fixed += int(JOURNAL_BYTE_COST * _journal_bytes(home.session_dir))
    theirs, mine = split_sidecars(todo, theirs_first, their_fixed, CATALOGUE_COST_PER_FILE * len(todo))
    read_fd, write_fd = os.pipe()
    try:
        forked = Forked(
            lambda: _audit_job(
                home, scan, with_hermes_audit, with_journal_findings, theirs, (read_fd, write_fd)
            )
        )
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        return None
    os.close(write_fd)
    return _Aside(forked, read_fd, theirs, mine)


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


def _finish_aside(
    home: Home,
    scan: SessionDirScan,
    pending: _Aside,
    with_hermes_audit: bool,
) -> tuple[dict | None, HermesAuditError | None, list[Finding] | None]:
    """(hermes' audit, its error, the journal findings) the forked copy worked out; (None, None,
    None) when it failed (the caller then does the work here: it raises what it raises). The
    facts it read are taken into this process's cache."""
    try:
        audit, error, findings, facts = pending.result()
    except ForkedError:
        return None, None, None
    if scan.cache is not None:
        for kind, entries in facts.items():
            scan.cache.adopt(kind, entries)
    if error is not None:
        message, partial, errors = error
        return None, HermesAuditError(message, partial_report=partial, errors=errors), findings
    return (audit if with_hermes_audit else None), None, findings


def load_catalogue(
    home: Home, *, now: float, with_hermes_audit: bool = True, save_in_background: bool = False
) -> Catalogue:
    """``save_in_background``: the fact cache is written by a detached process (a command that
    exits right after; see :meth:`FactCache.save`)."""
    with gc_paused():
        scan = _scan(home)
        cat, _, _, _ = _catalogue(home, scan, now, with_hermes_audit)
        _save(scan, save_in_background)
        return cat


def add_unshown_output_findings(home: Home, scan: SessionDirScan, cat: Catalogue, now: float) -> None:
    """The finding "the run journal holds output the transcript does not show" on the list's rows.

    Only sessions with a run journal that holds output and no terminal record (a cached
    fact per journal, mostly two byte tests) are read in full and checked.
    """
    root = home.session_dir / RUN_JOURNAL_DIR
    try:
        folders = sorted(e.name for e in os.scandir(root) if e.is_dir())
    except OSError:
        return
    ctx = None
    for sid in folders:
        row = cat.rows.get(sid)
        if row is None or row.sidecar is None or row.sidecar.error or not is_valid_journal_id(sid):
            continue
        owned = runs_owned_elsewhere(row.sidecar.meta, row.sidecar.pending_marker, now)
        try:
            names = sorted(
                e.name
                for e in os.scandir(root / sid)
                if e.name.endswith(".jsonl") and e.name[:-6] not in owned
            )
        except OSError:
            continue
        open_runs = False
        for name in names:
            path = root / sid / name
            try:
                facts = cached_file_facts(scan.cache, OPEN_RUN, str(path), path, open_run_facts)
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


def _journal_facts(path: Path, cache: FactCache | None, open_runs: bool = False) -> dict | None:
    """{"unreadable": str|None, "malformed": n, "first": line} of one run journal; None when absent.

    The same verdicts as ``read_run_events``; derived facts are cached by file identity.
    ``open_runs``: the journal's :func:`open_run_facts` go into ``cache`` too, from the same read.
    """
    try:
        if open_runs and cache is not None:
            return _journal_and_open_run_facts(path, cache)
        return cached_file_facts(cache, JOURNAL, str(path), path, _dropped_line_facts)
    except TooLargeToLoad:
        return _streamed_facts(path)
    except OSError as exc:
        return {"unreadable": str(exc), "malformed": 0, "first": None}


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


def _journals_aside(session_dir: Path, cache: FactCache | None, with_findings: bool) -> list[Finding] | None:
    """Every run journal read once: its open-run facts into ``cache`` and, ``with_findings``, the
    journal findings (None without)."""
    if cache is None and not with_findings:
        return None
    findings = _journal_findings(session_dir, cache, open_runs=cache is not None)
    return findings if with_findings else None


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
    session_dir: Path, cache: FactCache | None = None, open_runs: bool = False
) -> list[Finding]:
    """Lines hermes would drop, and journals it cannot read at all, across every session
    (``open_runs``: see :func:`_journal_facts`)."""
    out: list[Finding] = []
    root = session_dir / RUN_JOURNAL_DIR
    try:
        folders = sorted(p for p in root.iterdir() if p.is_dir())
    except OSError:
        return out
    for folder in folders:
        sid = folder.name
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
        for path in sorted(folder.glob("*.jsonl")):
            facts = _journal_facts(path, cache, open_runs)
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
        cat, audit, error, journal_findings = _catalogue(
            home, scan, now, True, lambda: _journal_findings(home.session_dir, scan.cache)
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
