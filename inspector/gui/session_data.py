"""What the session view shows, gathered off the GUI thread. Pure Python, no Qt.

:func:`load_session_data` reads one session (via :func:`inspector.session_detail.load_detail`),
indexes each run journal line by line (:func:`inspector.store.journal_raw.index_journal`) and
links journal events to transcript rows. :func:`plan_session_actions` plans the repairs the
session view offers, with the same core calls as ``hermes-inspector repair``.

The window calls the ``*_offloaded`` variants, which do the same work in a child process
(:mod:`inspector.gui.session_jobs`): a big journal's bytes are not sent back but read here, and
the child's index is attached only to bytes that hash the same. A big journal is shown in two
stages: :func:`glance_journal` reads its first lines (a few milliseconds), then
:func:`index_glance` has every line of it checked while the rest of the session is read.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from inspector import portable
from inspector.actions import default_clock, make_context, plan_action
from inspector.catalogue import Catalogue
from inspector.export import tools_by_message
from inspector.gui import session_jobs
from inspector.gui.links import RunLinks, link_run, needs_events
from inspector.gui.session_jobs import Resume
from inspector.home import Home
from inspector.plan import Plan
from inspector.repair import registry
from inspector.session_detail import RunInfo, SessionDetail, load_detail
from inspector.store.files import MAX_FILE_BYTES, TooLargeToLoad, read_regular
from inspector.store.journal import is_valid_journal_id, journal_path, list_runs
from inspector.store.journal_raw import JournalIndex, RawJournal, index_journal
from inspector.store.scan import RACY_WINDOW_NS

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO named like a journal never blocks the open (POSIX)

class ActionLabels(Mapping[str, str]):
    """The session view's buttons, in display order: action name -> label, read from the action
    registry (inspector/repair/registry.py) each time, so a new action module is a new button."""

    def __getitem__(self, name: str) -> str:
        return registry.spec(name).label

    def __iter__(self) -> Iterator[str]:
        return iter(registry.names())

    def __len__(self) -> int:
        return len(registry.names())


class ActionShortcuts(Mapping[str, str]):
    """The Repair menu's keys, by the registry's order: the first action is Ctrl+1, the next Ctrl+2..."""

    def __getitem__(self, name: str) -> str:
        return f"Ctrl+{registry.names().index(name) + 1}"

    def __iter__(self) -> Iterator[str]:
        return iter(registry.names())

    def __len__(self) -> int:
        return len(registry.names())


ACTIONS = ActionLabels()


def planned_for_home(action: str) -> bool:
    """The view plans this action for the whole home, not for the selected row (scope ``home``)."""
    return registry.spec(action).scope == registry.HOME

Check = Callable[[], None]
Progress = Callable[[int, int], None]


@dataclass
class RunData:
    """One run journal: hermes' view (``info``), the raw line index and the event/row links."""

    info: RunInfo
    raw: RawJournal | None = None
    raw_error: str | None = None
    links: RunLinks = field(default_factory=RunLinks)
    dropped_lines: int = 0  # physical lines hermes does not read as one event
    odd_lines: int = 0  # lines with anomalies (seq gaps, mismatched ids, CRLF...)
    last_time: float = 0.0  # newest created_at of its events (else the file's mtime): runs sort by it

    @property
    def run_id(self) -> str:
        return self.info.run_id


@dataclass
class SessionData:
    detail: SessionDetail
    runs: list[RunData]
    # what the views derive from the whole transcript, worked out once (in the child that read the
    # session: see warm()), not on the window's thread each time a session is shown
    derived: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def session_id(self) -> str:
        return self.detail.session_id

    def warm(self) -> None:
        """Work out :meth:`sidecar_cards` and :meth:`preferred_run` now (5,000 messages: ~10 ms)."""
        self.sidecar_cards()
        self._preferred_run_id()

    def sidecar_cards(self) -> dict[int, list[dict]]:
        """The sidecar's tool cards by the message they hang under (``export.tools_by_message``)."""
        cards = self.derived.get("cards")
        if cards is None:
            cards = self.derived["cards"] = tools_by_message((self.detail.sidecar or {}).get("tool_calls"))
        return cards

    def _preferred_run_id(self) -> str | None:
        if "preferred" not in self.derived:
            sidecar = self.detail.sidecar or {}
            wanted = [sidecar.get("active_stream_id")]
            for msg in reversed(self.detail.messages):
                if isinstance(msg, dict):
                    wanted += [msg.get("_journal_retry_stream_id"), msg.get("_recovered_stream_id")]
            ids = {run.run_id for run in self.runs}
            self.derived["preferred"] = next((sid for sid in wanted if sid and sid in ids), None)
        return self.derived["preferred"]

    def preferred_run(self) -> int:
        """The run to show first: the one the sidecar's running turn or newest marker names, else the newest."""
        wanted = self._preferred_run_id()
        for i, run in enumerate(self.runs):
            if wanted is not None and run.run_id == wanted:
                return i
        return max(len(self.runs) - 1, 0)

    def run_for_message(self, index: int) -> RunData | None:
        """The run a transcript row was recovered from, when it says so or a link shows it."""
        msgs = self.detail.messages
        if 0 <= index < len(msgs) and isinstance(msgs[index], dict):
            sid = msgs[index].get("_recovered_stream_id") or msgs[index].get("_journal_retry_stream_id")
            for run in self.runs:
                if run.run_id == sid:
                    return run
        for run in self.runs:
            if index in run.links.message_to_events:
                return run
        return None


def _index_run(run: RunData, messages: list, tool_calls: object, check: Check) -> None:
    """Read and index one run journal (every line's verdict, the counts) and link it to the transcript."""
    info = run.info
    try:
        data, _ = read_regular(info.path)
    except OSError as exc:
        run.raw_error = f"cannot read {info.path}: {exc.strerror or exc}"
        return
    events: list[tuple[int, dict]] | None = [] if needs_events(messages, tool_calls, info.run_id) else None
    index = index_journal(data, session_id=info.path.parent.name, run_id=info.path.stem, check=check, events=events)
    run.raw = RawJournal(data, session_id=info.path.parent.name, run_id=info.path.stem, path=info.path, index=index)
    if events is not None:
        run.links = link_run(messages, tool_calls, info.run_id, events)
    _take_counts(run, index)


def _take_counts(run: RunData, index: JournalIndex) -> None:
    run.dropped_lines = index.stats["dropped"]
    run.odd_lines = index.stats["anomalous"]
    run.last_time = index.last_time


def load_session_data(home: Home, session_id: str, check: Check = lambda: None,
                      progress: Progress | None = None, apart: frozenset[Path] = frozenset()) -> SessionData:
    """Everything the session view shows about one session. ``check`` raises to cancel;
    ``progress(done, total)`` reports the run journals read. Run journals in ``apart`` are left
    unread (``raw`` None without a ``raw_error``) unless their events are needed for the links:
    the caller indexes them by other means.

    The view never lists hermes' parsed events (``RunInfo.events``: its table shows every line
    from the raw index), so they are dropped here: a 200,000-event run would keep 200,000 dicts."""
    detail = load_detail(home, session_id)
    check()
    runs: list[RunData] = []
    tool_calls = (detail.sidecar or {}).get("tool_calls")
    for n, info in enumerate(detail.runs, start=1):
        info.events = []
        run = RunData(info)
        if info.path not in apart or needs_events(detail.messages, tool_calls, info.run_id):
            _index_run(run, detail.messages, tool_calls, check)
        if not run.last_time:
            try:
                run.last_time = info.path.stat().st_mtime
            except OSError:
                pass
        runs.append(run)
        check()
        if progress is not None:
            progress(n, len(detail.runs))
    runs.sort(key=lambda r: (r.last_time, r.run_id))  # oldest first; run ids are random hex
    return SessionData(detail=detail, runs=runs)


# ---------------------------------------------------------------- in child processes

SHIP_BYTES_MAX = 1 << 20  # a journal up to this size comes back with its bytes; a bigger one is read here
APART_MIN_BYTES = 2_000_000  # a run journal this big is indexed by a job of its own, side by side
_Shipped = tuple[JournalIndex, bytes | None] | None


def _session_job(home: Home, session_id: str, apart: frozenset[Path], check: Check
                 ) -> tuple[session_jobs.Pickled, list[tuple[Path, bool]], list[_Shipped]]:
    """In the child: the session's data (pickled in pieces: :func:`session_jobs.pickle_pieces`),
    each run's path and whether it could be read, and its raw journal taken apart into (index,
    bytes or None when the window reads them itself); None for a run left unread (``apart``) or
    unreadable."""
    data = load_session_data(home, session_id, check, apart=apart)
    data.warm()
    shipped: list[_Shipped] = []
    runs = [(run.info.path, run.raw_error is None) for run in data.runs]
    for run in data.runs:
        raw, run.raw = run.raw, None
        if raw is None or raw.indexed is None:
            shipped.append(None)
            continue
        index = raw.indexed
        if len(raw.data) > SHIP_BYTES_MAX:
            index.digest = _digest(raw.data)
            shipped.append((index, None))
        else:
            shipped.append((index, raw.data))
    return session_jobs.pickle_pieces(data), runs, shipped


class JournalChanged(Exception):
    """The journal's bytes here are not the ones the child indexed (it was rewritten meanwhile)."""


def load_session_data_offloaded(home: Home, session_id: str, check: Check = lambda: None,
                                progress: Progress | None = None) -> Resume:
    """:func:`load_session_data`, worked out in child processes (see :mod:`inspector.gui.session_jobs`),
    as steps still to run: the session's objects are unpickled by whoever runs them (the window's
    thread, between paints; ``session_jobs.finish`` runs them at once).

    Each big run journal is indexed by a job of its own, started first and shared with
    :func:`index_glance`, while another child reads the rest of the session. Everything that
    waits or reads a file happens here, in the calling thread."""
    apart = _big_runs(home.session_dir, session_id)
    shared = {path: _SharedIndex.join(path) for path in apart}
    try:
        for _attempt in range(3):
            blob, runs, shipped = session_jobs.run_job(_session_job, home, session_id, frozenset(apart), check=check)
            try:
                raws = _attach(runs, shipped, shared, check)
                break
            except JournalChanged:
                continue  # rewritten between two reads: read the session again
        else:
            raise JournalChanged("a run journal kept changing while it was read; try again")
    finally:
        for entry in shared.values():
            entry.leave()
    return Resume(_assembled(blob, raws))


def _assembled(blob: session_jobs.Pickled, raws: list[_Attached]) -> session_jobs.Steps:
    """The child's session, unpickled a piece per step, with the raw journals read here."""
    data = yield from session_jobs.load_steps(blob)
    for run, attached in zip(data.runs, raws, strict=True):
        if attached is None:
            continue
        kind, value = attached
        if kind == "error":
            run.raw_error = value
            continue
        run.raw = value
        if kind == "shared":
            mtime = run.last_time  # the file's mtime (the child had no events to date it by)
            _take_counts(run, value.indexed)
            run.last_time = run.last_time or mtime
    data.runs.sort(key=lambda r: (r.last_time, r.run_id))
    return data


def _big_runs(session_dir: Path, session_id: str) -> list[Path]:
    if not is_valid_journal_id(session_id):
        return []
    out = []
    for path in list_runs(session_dir, session_id):
        try:
            if path.stat().st_size >= APART_MIN_BYTES:
                out.append(path)
        except OSError:
            pass
    return out


_Attached = tuple[str, "RawJournal | str"] | None  # ("raw" | "shared", journal) or ("error", why)


def _attach(runs: list[tuple[Path, bool]], shipped: list[_Shipped], shared: dict[Path, _SharedIndex],
            check: Check) -> list[_Attached]:
    """Each run's raw journal: the child's index on the bytes read here, or a shared index.
    ``runs``: each run's path and whether the child could read it."""
    out: list[_Attached] = []
    for (path, readable), item in zip(runs, shipped, strict=True):
        if item is not None:
            index, raw_bytes = item
            if raw_bytes is None:
                raw_bytes = _bytes_indexed(path, index, check)
            out.append(("raw", RawJournal(raw_bytes, session_id=path.parent.name, run_id=path.stem,
                                          path=path, index=index)))
        elif readable and path in shared:
            try:
                out.append(("shared", shared[path].wait(check)))
            except IndexFailed as exc:
                out.append(("error", str(exc)))
        else:
            out.append(None)
    return out


def _digest(data: bytes) -> bytes:
    return hashlib.sha1(data, usedforsecurity=False).digest()


def _read_prefix(path: Path, size: int) -> bytes:
    """The first ``size`` bytes of a regular file (fewer if it is shorter now); the reads run
    without the GIL. More than :data:`MAX_FILE_BYTES` is never read (TooLargeToLoad)."""
    if size > MAX_FILE_BYTES:
        raise TooLargeToLoad(path, size, MAX_FILE_BYTES)
    fd = os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_CLOEXEC", 0) | portable.O_BINARY)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        chunks = []
        got = 0
        while got < size:
            chunk = portable.pread(fd, size - got, got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class FilePrefix:
    """The first bytes of a journal file, read when asked for (the lines on screen) instead of
    copied whole into the window's memory: a 61 MB journal read at once cost the window's own
    thread 30-80 ms of stalls (page faults and copying beside its paints). Behaves as the bytes
    for what :class:`RawJournal` and the views use (``len``, slices, ``endswith``, ``==``); any
    other ``bytes`` method reads the whole prefix once. The file stays open: hermes only appends
    to a journal (its first bytes stay the same) and a file replaced under the same name keeps
    its old bytes for an open descriptor. Pickled as plain bytes."""

    CHUNK = 4 << 20

    def __init__(self, path: Path, size: int):
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_CLOEXEC", 0) | portable.O_BINARY)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EINVAL, "not a regular file", str(path))
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        self._size = min(size, st.st_size)
        self._whole: bytes | None = None
        self._closer = weakref.finalize(self, os.close, fd)

    def close(self) -> None:
        self._closer()

    def stat(self) -> os.stat_result:
        """The open file's status."""
        return os.fstat(self._fd)

    def _read(self, start: int, stop: int) -> bytes:
        start, stop = max(start, 0), min(stop, self._size)
        if stop <= start:
            return b""
        if self._whole is not None:
            return self._whole[start:stop]
        chunks = []
        while start < stop:
            try:
                chunk = portable.pread(self._fd, stop - start, start)
            except OSError:
                chunk = b""
            if not chunk:
                break  # cut short in place (hermes never does): the lines show what is left, as not JSON
            chunks.append(chunk)
            start += len(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def digest(self) -> bytes:
        """sha1 of the prefix, read a few megabytes at a time into one reused buffer (no copy of
        the whole file, no fresh memory to map and fault in for every piece)."""
        h = hashlib.sha1(usedforsecurity=False)
        buf = bytearray(min(self.CHUNK, self._size))
        view = memoryview(buf)
        off = 0
        while off < self._size:
            n = portable.pread_into(self._fd, view[:min(len(buf), self._size - off)], off)
            if n <= 0:
                break  # cut short: the hash differs and the caller reads the journal again
            h.update(view[:n])
            off += n
        return h.digest()

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, key):
        if isinstance(key, slice):
            start, stop, step = key.indices(self._size)
            data = self._read(start, stop) if step == 1 else self._read(0, self._size)[key]
            return data
        if key < 0:
            key += self._size
        if not 0 <= key < self._size:
            raise IndexError("index out of range")
        return self._read(key, key + 1)[0]

    def endswith(self, suffix: bytes) -> bool:
        return len(suffix) <= self._size and self._read(self._size - len(suffix), self._size) == suffix

    def __bytes__(self) -> bytes:
        if self._whole is None:
            self._whole = self._read(0, self._size)
        return self._whole

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FilePrefix):
            other = bytes(other)
        return isinstance(other, (bytes, bytearray, memoryview)) and bytes(self) == other

    __hash__ = None  # type: ignore[assignment]

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(bytes(self), name)  # decode, find, count...: the whole prefix, read once

    def __reduce__(self):
        return bytes, (bytes(self),)

    def __repr__(self) -> str:
        return f"<FilePrefix {self._size} bytes>"


def _bytes_indexed(path: Path, index: JournalIndex, check: Check) -> bytes:
    """The bytes a child indexed (``index.size`` bytes hashing to ``index.digest``), read here."""
    check()
    try:
        data = _read_prefix(path, index.size)  # a journal only grows: its first bytes are the indexed ones
    except OSError as exc:
        raise JournalChanged(str(exc)) from exc
    if len(data) != index.size or _digest(data) != index.digest:
        raise JournalChanged(f"{path} changed while it was read")
    return data


def _index_job(path: Path, size: int, session_id: str, run_id: str, check: Check) -> JournalIndex:
    """In the child: every line of the first ``size`` bytes of a journal checked."""
    return index_journal(_read_prefix(path, size), session_id=session_id, run_id=run_id, check=check,
                         digest=True)


def index_whole_journal(path: Path, check: Check = lambda: None) -> RawJournal:
    """A journal file indexed in a child and read here meanwhile, up to the size it had when the
    child was asked (a journal only grows). The child's index is kept only for bytes that hash the
    same as the ones read here."""
    for _attempt in range(3):
        started = time.time_ns()
        before = os.stat(path)
        size = before.st_size
        if size > MAX_FILE_BYTES:
            raise TooLargeToLoad(path, size, MAX_FILE_BYTES)
        job = session_jobs.start_job(_index_job, path, size, path.parent.name, path.stem)
        try:
            data = FilePrefix(path, size)  # read line by line when shown
        except BaseException:
            job.cancel()
            raise
        index = job.wait(check)
        if index.size == len(data) and (_unchanged_since(before, started, path, data)
                                        or index.digest == data.digest()):
            return RawJournal(data, session_id=path.parent.name, run_id=path.stem, path=path, index=index)
        data.close()
    raise JournalChanged(f"{path} kept changing while it was read; try again")


def _identity(st: os.stat_result) -> tuple:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _unchanged_since(before: os.stat_result, started_ns: int, path: Path, data: FilePrefix) -> bool:
    """Whether the file the child indexed and the one open here are the same, unchanged bytes, by
    their identity (device, inode, size, mtime, ctime) before the child started, now, and of the
    open descriptor, as the fact cache decides (``store.scan.RACY_WINDOW_NS``: a file changed in
    the last two seconds could hide a rewrite behind the same times). Then the 61 MB are not hashed
    here, where the hashing slowed the window's own paints; otherwise the caller compares hashes."""
    try:
        now, held = os.stat(path), data.stat()
    except OSError:
        return False
    return (_identity(before) == _identity(now) == _identity(held)
            and before.st_ctime_ns < started_ns - RACY_WINDOW_NS)


class IndexFailed(Exception):
    """A shared index could not be made; the message says why, in words."""


class _SharedIndex:
    """One journal file being indexed (:func:`index_whole_journal`, in a thread of its own) for
    everyone who asks meanwhile: the glance and the session's read share it. When everyone who
    joined has left it is forgotten (and cancelled if it is not finished), so it never keeps a
    journal's bytes alive for nobody."""

    _entries: dict[Path, _SharedIndex] = {}
    _lock = threading.Lock()

    def __init__(self, path: Path, stamp: tuple | None):
        self.path = path
        self.stamp = stamp
        self.users = 0
        self.cancelled = False
        self.done = threading.Event()
        self.raw: RawJournal | None = None
        self.error: BaseException | None = None

    @classmethod
    def join(cls, path: Path) -> _SharedIndex:
        stamp = _stamp(path)
        with cls._lock:
            entry = cls._entries.get(path)
            if entry is None or entry.cancelled or (entry.done.is_set()
                                                    and (entry.error is not None or entry.stamp != stamp)):
                entry = cls(path, stamp)
                cls._entries[path] = entry
                threading.Thread(target=entry._run, name="journal-index", daemon=True).start()
            entry.users += 1
            return entry

    def leave(self) -> None:
        with self._lock:
            self.users -= 1
            if self.users <= 0 and self._entries.get(self.path) is self:
                del self._entries[self.path]

    def _check(self) -> None:
        with self._lock:
            if self.users <= 0:
                self.cancelled = True
                raise session_jobs.JobCancelled()

    def _run(self) -> None:
        _background_thread()
        try:
            self.raw = index_whole_journal(self.path, self._check)
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits
            self.error = exc
        finally:
            self.done.set()

    def wait(self, check: Check) -> RawJournal:
        """The indexed journal; ``check`` raises to stop waiting. :class:`IndexFailed` says why
        there is none."""
        while not self.done.wait(session_jobs.POLL_S):
            check()
        error = self.error
        if isinstance(error, OSError):
            raise IndexFailed(f"cannot read {self.path}: {error.strerror or error}")
        if error is not None:
            raise IndexFailed(f"cannot index {self.path}: {error}")
        assert self.raw is not None
        return self.raw


def _background_thread() -> None:
    """Lower this thread's CPU priority: reading and hashing a big journal must not slow down the
    window's own thread, which paints meanwhile. Only on Linux, where a thread id names the thread
    (elsewhere the same call would name a process)."""
    if sys.platform.startswith("linux"):
        try:
            tid = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, tid, min(os.getpriority(os.PRIO_PROCESS, tid) + 10, 19))
        except (AttributeError, OSError):
            pass


def _stamp(path: Path) -> tuple | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def first_needing_attention(home: Home, catalogue: Catalogue) -> str | None:
    """The session to show first: newest one whose run journal holds output waiting to be
    recovered (a pending marker whose journal exists and is not empty), else the newest one
    that needs attention. Reads only directory entries."""
    rows = catalogue.sorted_rows()
    for row in rows:
        marker = row.sidecar.pending_marker if row.sidecar is not None else None
        stream = marker.get("_journal_retry_stream_id") if isinstance(marker, dict) else None
        if isinstance(stream, str) and is_valid_journal_id(stream) and is_valid_journal_id(row.session_id):
            try:
                if journal_path(home.session_dir, row.session_id, stream).stat().st_size > 0:
                    return row.session_id
            except (OSError, ValueError):
                pass
    for row in rows:
        if row.needs_attention:
            return row.session_id
    return rows[0].session_id if rows else None


GLANCE_MIN_BYTES = 4_000_000  # below this the full load is quick; no glance needed
GLANCE_ROWS = 1_000
GLANCE_READ = 256 * 1024  # the first read of a glance; more only when these lines are longer


@dataclass
class JournalGlance:
    """A big journal shown while the whole session is still being read.

    First (``complete`` False) only its first ``ready_rows`` lines, read from the start of the
    file: each line's checks need only the lines above it, so they are exact, except that an
    invalid byte further on would make hermes drop every line. Then (``complete``, from
    :func:`index_glance`) every line, with the whole file checked.
    """

    session_id: str
    run: RunData
    ready_rows: int
    complete: bool = False


def glance_journal(session_dir: Path, session_id: str, prefer: list[str], check: Check = lambda: None,
                   rows: int = GLANCE_ROWS, min_bytes: int = GLANCE_MIN_BYTES) -> JournalGlance | None:
    """The run the view will show first (``prefer``-red ids, else the newest file) with its first
    ``rows`` lines read; None when the session's journals are small or absent. Only a few
    hundred kilobytes are read and nothing is parsed yet: the view parses the lines it shows."""
    if not is_valid_journal_id(session_id):
        return None
    stats = []
    for path in list_runs(session_dir, session_id):
        try:
            st = path.stat()
        except OSError:
            continue
        stats.append((path, st.st_size, st.st_mtime))
    if not stats or sum(size for _, size, _ in stats) < min_bytes:
        return None
    by_id = {path.stem: (path, size) for path, size, _ in stats}
    pick = next((by_id[r] for r in prefer if r in by_id), None)
    if pick is None:
        path, size, _ = max(stats, key=lambda s: (s[2], s[0].name))
        pick = (path, size)
    path, size = pick
    check()
    try:
        head = _read_head(path, rows)
    except OSError:
        return None
    raw = RawJournal(head, session_id=path.parent.name, run_id=path.stem, path=path)
    return JournalGlance(session_id, RunData(RunInfo(path.stem, path, size, None), raw=raw), min(rows, len(raw)))


def _read_head(path: Path, rows: int) -> bytes:
    """The file's first ``rows`` complete lines (all of it when it is shorter)."""
    want = GLANCE_READ
    while True:
        data = _read_prefix(path, want)
        if len(data) < want:
            return data  # the whole file
        cut, pos = 0, 0
        for _ in range(rows):
            nl = data.find(b"\n", pos)
            if nl < 0:
                break
            cut = pos = nl + 1
        else:
            return data[:cut]
        if want >= 64 * GLANCE_READ and cut:
            return data[:cut]  # very long lines: show the complete ones read so far
        if want * 4 > MAX_FILE_BYTES:
            return data[:cut]  # a line longer than anything loaded: no complete line to show
        want *= 4


def index_glance(glance: JournalGlance, check: Check = lambda: None) -> JournalGlance:
    """The glanced run with every line checked (the whole file, indexed in a child process; the
    same job the session's own read waits for)."""
    info = glance.run.info
    entry = _SharedIndex.join(info.path)
    try:
        raw = entry.wait(check)
    finally:
        entry.leave()
    run = RunData(RunInfo(info.run_id, info.path, len(raw.data), None), raw=raw)
    _take_counts(run, raw.indexed)
    return JournalGlance(glance.session_id, run, len(raw), complete=True)


def recommended_actions(detail: SessionDetail, extra_findings: list | None = None) -> set[str]:
    """Actions some finding of the session (or of the home, for home-wide ones) recommends."""
    actions = {f.action for f in detail.findings if f.action}
    actions |= {f.action for f in (extra_findings or []) if f.action}
    return actions


def plan_session_actions(home: Home, session_id: str, recommended: set[str],
                         check: Check = lambda: None) -> dict[str, Plan | str]:
    """A plan (or an error message) per action of the view, for this session.

    Per-session actions are always planned, so their buttons say whether they apply.
    ``rebuild-index`` reads every sidecar of the home, so it is planned only when a finding
    recommends it. Each plan carries the clock it was made with (``Plan.clock``: a repair kit
    saved from a preview records it).
    """
    ctx = make_context(home, default_clock(home, None, None))
    out: dict[str, Plan | str] = {}
    for action in ACTIONS:
        whole_home = planned_for_home(action)
        if whole_home and action not in recommended:
            continue
        check()
        target = None if whole_home else session_id
        try:
            # links leaving the home are followed here, named in the plan, and confirmed in the
            # preview before Write is possible (PreviewDialog.confirm_links)
            plans = plan_action(ctx, action, target, follow_links=True)
        except Exception as exc:  # noqa: BLE001 - a planner failure disables its button, with the reason
            from inspector.error_words import error_words
            from inspector.log import get_logger

            get_logger(__name__).exception("planning %s for %s failed", action, session_id)
            out[action] = error_words(exc)  # the reason in words, shown beside the disabled button
            continue
        if plans:
            out[action] = plans[0]
    return out


def plan_applies(plan: Plan | str | None) -> bool:
    """The button rule: the plan has changes and no refusal."""
    return isinstance(plan, Plan) and plan.refusal is None and bool(plan.changes)


def plan_tooltip(action: str, plan: Plan | str | None) -> str:
    """Why a repair button is enabled or not, in plain words."""
    label = ACTIONS.get(action, action)
    if plan is None:
        return f"{label}: no finding of this session calls for it"
    if isinstance(plan, str):
        return f"{label}: could not be planned: {plan}"
    if plan.refusal:
        return f"{label}: refused: {plan.refusal}"
    if not plan.changes:
        reason = "; ".join(plan.summary) if plan.summary else "nothing to change"
        return f"{label}: nothing to write ({reason})"
    files = ", ".join(f"{c.kind} {Path(c.path).name}" for c in plan.changes)
    return f"{label}: {'; '.join(plan.summary[:3])}\nFiles: {files}"
