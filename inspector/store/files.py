"""Reading the files the inspector did not write: the one place that opens them.

* :func:`open_regular` - a descriptor of a regular file (non-blocking open, fstat: a FIFO, a
  device or a folder is refused), for the readers that read a part or stream;
* :func:`read_regular` - a regular file's bytes and stat, with its size bounded (a file over
  the limit is not read);
* :func:`derive_from_tail` - what a regular file's last bytes tell where they decide, else what
  the whole tells (read as :func:`read_regular` reads it);
* :func:`read_raw` - the same as a :class:`RawFile` (bytes + :class:`Fingerprint`), None when
  the file is missing;
* :class:`FileSnapshot` - a read-once view of the files a plan is built from. Every file a
  repair looks at is read through one snapshot, which keeps the exact bytes and their
  fingerprint: the plan's ``before`` bytes are therefore the bytes the decision was made on,
  and apply can refuse if the disk moved on since. :meth:`FileSnapshot.read_transient` is the
  variant for the files a plan only reads (every other sidecar of an index rebuild): not kept.

A file over the reader's size limit is not loaded (``TooLargeToLoad``, an OSError the planners
report like any unreadable file); the snapshot remembers it in :attr:`FileSnapshot.too_large`,
so a plan built without it can be refused: what hermes would make of that file is unknown.

The byte format of what is read (hermes' JSON) is :mod:`inspector.store.jsonfmt`'s.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from inspector import portable


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Fingerprint:
    """Identity of a file's content at read time: what apply re-checks before writing."""

    size: int
    mtime_ns: int
    sha256: str

    @classmethod
    def of_bytes(cls, data: bytes, st: os.stat_result | None = None) -> Fingerprint:
        return cls(
            size=len(data),
            mtime_ns=st.st_mtime_ns if st is not None else 0,
            sha256=hashlib.sha256(data).hexdigest(),
        )

    def to_json(self) -> dict:
        return {"size": self.size, "mtime_ns": self.mtime_ns, "sha256": self.sha256}


@dataclass(frozen=True)
class RawFile:
    """A file as read from disk: its path, its exact bytes and its fingerprint."""

    path: Path
    data: bytes
    fingerprint: Fingerprint


class NotARegularFile(OSError):
    """A FIFO, device or folder where a data file was expected: never read from it."""


# The largest file read whole. hermes' sidecars, backups, indexes and tombstones are a few MB
# even for long chats; a bigger one (a 2 GB sparse file, a link to a huge log) would cost
# several times its size in memory to read and parse, so it is refused, and named, instead.
MAX_FILE_BYTES = 128 << 20
SMALL_FILE_BYTES = 64 << 10  # webui.ctl.env, webui.pid and the like: a few lines


def _size_text(n: int) -> str:
    return (
        f"{n / (1 << 30):.1f} GB"
        if n >= 1 << 30
        else f"{n / (1 << 20):.1f} MB"
        if n >= 1 << 20
        else f"{n} bytes"
    )


class TooLargeToLoad(OSError):
    """A file larger than the reader's limit: not loaded (``strerror`` says so in words)."""

    def __init__(self, path: Path | str, size: int, limit: int) -> None:
        super().__init__(
            errno.EFBIG,
            f"too large to load safely ({_size_text(size)}; the limit is {_size_text(limit)})",
            str(path),
        )
        self.size = size
        self.limit = limit


_OPEN_FLAGS = os.O_RDONLY | portable.O_NONBLOCK | portable.O_BINARY | getattr(os, "O_CLOEXEC", 0)
_CHUNK = 65536
T = TypeVar("T")


def open_regular(path: Path | str, *, follow_links: bool = True) -> tuple[int, os.stat_result]:
    """An open descriptor of the regular file at ``path``, and its fstat; the caller closes it.

    Opened non-blocking, so a FIFO named like a data file cannot block the open, and checked
    with fstat on the open descriptor: a FIFO, a device or a folder (or a link to one) raises
    NotARegularFile (the descriptor is closed then). FileNotFoundError when absent.
    ``follow_links=False`` refuses a symbolic link as the last component (OSError ELOOP where
    the system has O_NOFOLLOW). Every read of a file the inspector did not write starts here.
    """
    fd = os.open(path, _OPEN_FLAGS if follow_links else _OPEN_FLAGS | portable.O_NOFOLLOW)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotARegularFile(errno.EINVAL, "not a regular file", str(path))
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_regular(
    path: Path, max_bytes: int | None = MAX_FILE_BYTES, *, follow_links: bool = True
) -> tuple[bytes, os.stat_result]:
    """Bytes and stat of a regular file of at most ``max_bytes``. FileNotFoundError when absent.

    The one way the inspector reads a file it did not write. Opened non-blocking and checked
    with fstat before reading, so a FIFO named like a sidecar cannot block the scan, a link to
    ``/dev/zero`` is refused (NotARegularFile) and a file over the limit is not read
    (TooLargeToLoad, decided on the same fstat: no extra system call). The read asks for the
    size fstat gave plus one byte, then reads on to the end, so a file that grows is read whole
    but never past ``max_bytes + 1`` bytes (TooLargeToLoad then); a read that comes back short of
    its ask at exactly that size is the end (one before it, as a network file system may give,
    or past it, a file that grew, is read on); ``max_bytes=None`` lifts the
    limit (files the inspector wrote itself). Plain ``os.read`` calls, no buffered file object:
    at 10,000 sidecars per index rebuild its set-up cost shows. ``follow_links=False`` refuses a
    symbolic link as the last component (OSError ELOOP where the system has O_NOFOLLOW).
    """
    fd, st = open_regular(path, follow_links=follow_links)
    try:
        if max_bytes is not None and st.st_size > max_bytes:
            raise TooLargeToLoad(path, st.st_size, max_bytes)
        return _read_to_end(fd, st, path, max_bytes), st
    finally:
        os.close(fd)


def _read_to_end(fd: int, st: os.stat_result, path: Path | str, max_bytes: int | None) -> bytes:
    """:func:`read_regular`'s read of the open ``fd`` from where it stands (its size checked)."""
    chunks: list[bytes] = []
    got = 0
    want = st.st_size + 1
    while True:
        ask = max(want, _CHUNK)
        if max_bytes is not None:
            ask = min(ask, max_bytes + 1 - got)
        chunk = os.read(fd, ask)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
        want -= len(chunk)
        if max_bytes is not None and got > max_bytes:  # it grew past the limit while being read
            raise TooLargeToLoad(path, got, max_bytes)
        if len(chunk) < ask and got == st.st_size:
            # short of the ask at the very size fstat gave: the end, as the next read would say
            # (with nothing). One system call less per file: 51,000 sidecars at a first open.
            # A file that grew reads on (past that size, or short reads that pass it by).
            break
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def derive_from_tail(
    path: Path | str,
    tail_bytes: int,
    from_tail: Callable[[bytes], T | None],
    derive: Callable[[bytes], T],
    max_bytes: int | None = MAX_FILE_BYTES,
) -> tuple[T, os.stat_result]:
    """(``from_tail(the file's last tail_bytes bytes)``, its stat) where that answers (not None),
    else ``derive(the whole file's bytes)`` as :func:`read_regular` reads them, from the same
    open descriptor. ``from_tail`` must give what ``derive`` would, or None: it decides from the
    end of a file what the whole would tell (a run journal's terminal record is its last line).
    A file of at most ``tail_bytes`` bytes is read whole; one over ``max_bytes`` is refused
    before anything is read (TooLargeToLoad), as by :func:`read_regular`."""
    fd, st = open_regular(path)
    try:
        size = st.st_size
        if max_bytes is not None and size > max_bytes:
            raise TooLargeToLoad(path, size, max_bytes)
        if size > tail_bytes:
            tail = portable.pread(fd, tail_bytes, size - tail_bytes)
            if len(tail) == tail_bytes:  # (shorter: it shrank since the fstat; read it whole)
                got = from_tail(tail)
                if got is not None:
                    return got, st
            os.lseek(fd, 0, os.SEEK_SET)  # (where pread is a seek and a read)
        return derive(_read_to_end(fd, st, path, max_bytes)), st
    finally:
        os.close(fd)


def read_raw(path: Path, max_bytes: int | None = MAX_FILE_BYTES) -> RawFile | None:
    """Read a regular file's bytes, or None when it does not exist.

    Other OS errors (permission denied, a directory in the way, a FIFO, a name too long)
    propagate so the caller can report them as findings.
    """
    try:
        data, st = read_regular(path, max_bytes)
    except FileNotFoundError:
        return None
    return RawFile(path=path, data=data, fingerprint=Fingerprint.of_bytes(data, st))


class FileSnapshot:
    """Caches ``RawFile`` reads by path (None = the file does not exist)."""

    def __init__(self) -> None:
        self._cache: dict[Path, RawFile | None] = {}
        self.too_large: list[TooLargeToLoad] = []  # every read refused for its size, in order
        self.asked: list[Path] = []  # every path read() was asked for, in order (cache hits too)

    def read(self, path: Path) -> RawFile | None:
        self.asked.append(path)
        if path not in self._cache:
            try:
                self._cache[path] = read_raw(path)
            except TooLargeToLoad as exc:
                self.too_large.append(exc)
                raise
        return self._cache[path]

    def read_transient(self, path: Path) -> bytes | None:
        """A file's bytes (None when missing; other OSErrors propagate), not kept here.

        For the files a plan only reads and never writes (an index rebuild reads every other
        sidecar, 270 MB at 10,000 sessions): neither their bytes nor their hashes need keeping,
        and they are not listed in :attr:`asked`. A file this snapshot already read is answered
        from it, so one plan never sees two versions of a file; a file over the size limit is
        recorded in :attr:`too_large` like any other read.
        """
        known, data = self.peek(path)
        if known:
            return data
        try:
            return read_regular(path)[0]
        except FileNotFoundError:
            return None
        except TooLargeToLoad as exc:
            self.too_large.append(exc)
            raise

    def data(self, path: Path) -> bytes | None:
        raw = self.read(path)
        return raw.data if raw is not None else None

    def peek(self, path: Path) -> tuple[bool, bytes | None]:
        """``(True, bytes or None when missing)`` when this snapshot already read ``path``, else
        ``(False, None)`` without reading it."""
        if path not in self._cache:
            return False, None
        raw = self._cache[path]
        return True, raw.data if raw is not None else None

    def exists(self, path: Path) -> bool:
        return self.read(path) is not None
