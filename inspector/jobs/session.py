"""A session's view data (:mod:`inspector.present.session_data`) worked out in child processes of
:mod:`inspector.jobs.pool`, so the window's Python never waits for it. No Qt.

:func:`load_session_data_offloaded` reads the session in one child while each big run journal is
indexed by a job of its own (:class:`_SharedIndex`, shared with :func:`index_glance`). A big
journal's bytes are not sent back but read here (:class:`FilePrefix`), and the child's index is
attached only to bytes that hash the same.
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
from pathlib import Path

from inspector import portable
from inspector.home import Home
from inspector.jobs import pool
from inspector.jobs.pool import Resume
from inspector.present.session_data import (
    _NONBLOCK,
    Check,
    JournalGlance,
    Progress,
    RunData,
    _read_prefix,
    _take_counts,
    load_session_data,
)
from inspector.session_detail import RunInfo
from inspector.store.files import MAX_FILE_BYTES, TooLargeToLoad
from inspector.store.journal import is_valid_journal_id, list_runs
from inspector.store.journal_raw import JournalIndex, RawJournal, index_journal
from inspector.store.scan import RACY_WINDOW_NS

SHIP_BYTES_MAX = 1 << 20  # a journal up to this size comes back with its bytes; a bigger one is read here
APART_MIN_BYTES = 2_000_000  # a run journal this big is indexed by a job of its own, side by side
_Shipped = tuple[JournalIndex, bytes | None] | None


def _session_job(
    home: Home, session_id: str, apart: frozenset[Path], check: Check
) -> tuple[pool.Pickled, list[tuple[Path, bool]], list[_Shipped]]:
    """In the child: the session's data (pickled in pieces: :func:`pool.pickle_pieces`),
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
    return pool.pickle_pieces(data), runs, shipped


class JournalChanged(Exception):
    """The journal's bytes here are not the ones the child indexed (it was rewritten meanwhile)."""


def load_session_data_offloaded(
    home: Home, session_id: str, check: Check = lambda: None, progress: Progress | None = None
) -> Resume:
    """:func:`load_session_data`, worked out in child processes (see :mod:`inspector.jobs.pool`),
    as steps still to run: the session's objects are unpickled by whoever runs them (the window's
    thread, between paints; ``pool.finish`` runs them at once).

    Each big run journal is indexed by a job of its own, started first and shared with
    :func:`index_glance`, while another child reads the rest of the session. Everything that
    waits or reads a file happens here, in the calling thread."""
    apart = _big_runs(home.session_dir, session_id)
    shared = {path: _SharedIndex.join(path) for path in apart}
    try:
        for _attempt in range(3):
            blob, runs, shipped = pool.run_job(_session_job, home, session_id, frozenset(apart), check=check)
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


def _assembled(blob: pool.Pickled, raws: list[_Attached]) -> pool.Steps:
    """The child's session, unpickled a piece per step, with the raw journals read here."""
    data = yield from pool.load_steps(blob)
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


def _attach(
    runs: list[tuple[Path, bool]], shipped: list[_Shipped], shared: dict[Path, _SharedIndex], check: Check
) -> list[_Attached]:
    """Each run's raw journal: the child's index on the bytes read here, or a shared index.
    ``runs``: each run's path and whether the child could read it."""
    out: list[_Attached] = []
    for (path, readable), item in zip(runs, shipped, strict=True):
        if item is not None:
            index, raw_bytes = item
            if raw_bytes is None:
                raw_bytes = _bytes_indexed(path, index, check)
            out.append(
                (
                    "raw",
                    RawJournal(
                        raw_bytes, session_id=path.parent.name, run_id=path.stem, path=path, index=index
                    ),
                )
            )
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
            n = portable.pread_into(self._fd, view[: min(len(buf), self._size - off)], off)
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
    return index_journal(
        _read_prefix(path, size), session_id=session_id, run_id=run_id, check=check, digest=True
    )


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
        job = pool.start_job(_index_job, path, size, path.parent.name, path.stem)
        try:
            data = FilePrefix(path, size)  # read line by line when shown
        except BaseException:
            job.cancel()
            raise
        index = job.wait(check)
        if index.size == len(data) and (
            _unchanged_since(before, started, path, data) or index.digest == data.digest()
        ):
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
    return (
        _identity(before) == _identity(now) == _identity(held)
        and before.st_ctime_ns < started_ns - RACY_WINDOW_NS
    )


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
            if (
                entry is None
                or entry.cancelled
                or (entry.done.is_set() and (entry.error is not None or entry.stamp != stamp))
            ):
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
                raise pool.JobCancelled()

    def _run(self) -> None:
        _background_thread()
        try:
            self.raw = index_whole_journal(self.path, self._check)
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits
            self.error = exc
            if not isinstance(exc, (pool.JobCancelled, OSError)):  # (an unreadable file is said in words)
                _log().exception("indexing %s failed", self.path)
        finally:
            self.done.set()

    def wait(self, check: Check) -> RawJournal:
        """The indexed journal; ``check`` raises to stop waiting. :class:`IndexFailed` says why
        there is none."""
        while not self.done.wait(pool.POLL_S):
            check()
        error = self.error
        if isinstance(error, OSError):
            raise IndexFailed(f"cannot read {self.path}: {error.strerror or error}") from error
        if error is not None:
            raise IndexFailed(f"cannot index {self.path}: {error}") from error  # its traceback chained
        assert self.raw is not None
        return self.raw


def _log():
    from inspector.log import get_logger  # lazily: logging is imported only when something fails

    return get_logger(__name__)


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
