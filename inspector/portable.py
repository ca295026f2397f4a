"""What differs between Linux, macOS and Windows, in one place.

Every call that exists on one system only goes through here, with its fallback next to it:

* positional reads (``os.pread``; a seek and a read under a lock where it is missing);
* forking a helper (only on Linux and the BSDs, never on macOS, where Apple's frameworks and
  Python itself discourage ``fork`` once threads exist; never on Windows);
* the window's hand-over folder (``/dev/shm`` when the system has one, else ``tempfile``'s);
* the running hermes-webui's start time, working directory, interpreter and command line
  (``psutil``, which reads ``/proc`` on Linux, ``sysctl`` on macOS and the Win32 API on Windows);
* the user's own folders (``platformdirs``; see :mod:`inspector.statedir`).

``HERMES_INSPECTOR_FORCE_PORTABLE=1`` makes this Linux machine take the other systems' paths:
no fork, no ``pread``, no ``/dev/shm``, no exchange-swap and no ``flock`` in the write path
(see :mod:`inspector.plan`), and Windows' rule for the default Hermes home and the user's
folders (with whatever ``LOCALAPPDATA`` / ``USERPROFILE`` the environment gives). It is read
once, when this module is imported, so a child process inherits it with the environment.
Kept free of heavy imports: the logger and the read-only commands use it (``psutil`` is
imported only when a process is asked about).
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

FORCE_ENV = "HERMES_INSPECTOR_FORCE_PORTABLE"
FORCED = os.environ.get(FORCE_ENV, "").strip() not in ("", "0")

WINDOWS, MACOS, LINUX, OTHER = "windows", "macos", "linux", "posix"


def system() -> str:
    """The system whose rules apply: ``windows`` (also when forced), ``macos``, ``linux`` or ``posix``."""
    if FORCED or os.name == "nt":
        return WINDOWS
    if sys.platform == "darwin":
        return MACOS
    if sys.platform.startswith("linux"):
        return LINUX
    return OTHER


# ---------------------------------------------------------------- reads at an offset

# Flags of os.open that one system or another lacks (0 there). Windows' os.open is in text
# mode unless given O_BINARY; it has no O_NONBLOCK (a FIFO cannot be named like a file there)
# and no O_NOFOLLOW (the inspector's other checks refuse a link: read_regular's lstat/fstat).
O_BINARY = getattr(os, "O_BINARY", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
HAS_PREAD = hasattr(os, "pread") and not FORCED
_SEEK_LOCK = threading.Lock()


def pread_fallback(fd: int, size: int, offset: int) -> bytes:
    """``os.pread`` where the system has none: a seek and a read, one thread at a time (the
    descriptors read this way belong to the reader alone, so only this process's threads share
    their position)."""
    with _SEEK_LOCK:
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, size)


def pread_into_fallback(fd: int, buf, offset: int) -> int:
    """``os.preadv(fd, [buf], offset)`` where the system has none: the bytes read, copied into ``buf``."""
    view = memoryview(buf).cast("B")
    data = pread_fallback(fd, len(view), offset)
    view[: len(data)] = data
    return len(data)


def _preadv_one(fd: int, buf, offset: int) -> int:
    return os.preadv(fd, [buf], offset)


# The Linux fast path is the plain os function: no wrapper on the window's hot reads.
pread = os.pread if HAS_PREAD else pread_fallback
pread_into = _preadv_one if HAS_PREAD and hasattr(os, "preadv") else pread_into_fallback


# ---------------------------------------------------------------- child processes


def can_fork() -> bool:
    """Whether a forked helper may be used: a system with ``fork`` that does not discourage it
    (not macOS, not forced portable) and no Qt in this process (a process that has started Qt
    must never fork; the window's work runs in spawned children, where this holds)."""
    return (
        hasattr(os, "fork")
        and not FORCED
        and sys.platform != "darwin"
        and "PySide6.QtCore" not in sys.modules
    )


SHM = "/dev/shm"  # memory, never a disk, for the window's hand-over files when the system has it


def handover_dir() -> str | None:
    """The folder for the files children hand their results over in: ``/dev/shm`` when the
    system has a writable one, else None (``tempfile``'s own folder)."""
    if not FORCED and os.path.isdir(SHM) and os.access(SHM, os.W_OK):
        return SHM
    return None


# ---------------------------------------------------------------- the user's identity


def fchmod(fd: int, mode: int) -> None:
    """``os.fchmod`` where the system has it (POSIX; Windows from Python 3.13, where only the
    read-only bit means anything). On Windows a file's privacy is its ACL, inherited from the
    folder it is made in: the inspector's folders live in the user's own profile
    (``%LOCALAPPDATA%``), which only the user (and administrators) can read."""
    if hasattr(os, "fchmod") and os.name != "nt":
        os.fchmod(fd, mode)


def euid() -> int | None:
    """The effective user id, or None on a system without POSIX owners (Windows)."""
    return os.geteuid() if hasattr(os, "geteuid") else None


# ---------------------------------------------------------------- another process's facts


@dataclass(frozen=True)
class ProcessFacts:
    """What the inspector needs to know about a running hermes-webui; a field is None when the
    system does not tell it (another user's process, a process that just ended)."""

    pid: int
    started_at: float | None
    cwd: Path | None
    exe: str | None
    cmdline: tuple[str, ...]


def process_facts(pid: int) -> ProcessFacts | None:
    """Start time (seconds since the epoch), working directory, interpreter and command line of
    process ``pid`` through ``psutil``; None when there is no such process."""
    import psutil

    try:
        proc = psutil.Process(pid)
    except (psutil.NoSuchProcess, ValueError, OverflowError):
        return None
    except psutil.Error:
        return None

    def ask(fn):
        try:
            return fn()
        except psutil.NoSuchProcess:
            raise
        except (psutil.Error, OSError):
            return None

    try:
        started = ask(proc.create_time)
        cwd = ask(proc.cwd)
        exe = ask(proc.exe)
        cmdline = ask(proc.cmdline) or []
    except psutil.NoSuchProcess:
        return None
    return ProcessFacts(
        pid=pid,
        started_at=float(started) if started is not None else None,
        cwd=Path(cwd) if cwd else None,
        exe=exe or None,
        cmdline=tuple(cmdline),
    )


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (any owner)."""
    import psutil

    try:
        return psutil.pid_exists(pid)
    except (ValueError, OverflowError):
        return False
