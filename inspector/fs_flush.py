"""One flush of a whole file system instead of one ``fsync`` per file, where that is as safe.

A materialize of a thousand rows stages a thousand new sidecars before it swaps any in. Each was
written and fsynced on its own: a thousand cache flushes of the disk, on eight threads that take
the interpreter's lock back after every system call. Linux's ``syncfs(fd)`` writes back and
flushes everything of the file system that holds ``fd`` in one call, and (since Linux 5.8) reports
any write-back error the file system met since ``fd`` was opened: the same promise as the
thousand ``fsync`` calls (every byte on disk, or an error), made once.

It is used only where that promise surely holds (:func:`open_flusher`):

* Linux 5.8 or later (before, ``syncfs`` returned 0 even when write-back failed), and not
  ``HERMES_INSPECTOR_FORCE_PORTABLE``;
* a local file system whose ``syncfs`` is known to write everything back and flush: ext2/3/4,
  XFS, btrfs, F2FS (on NFS, FUSE, SMB... it may do less than ``fsync``; there each file is
  fsynced as before);
* little unwritten data on the machine (``Dirty`` + ``Writeback`` of ``/proc/meminfo`` under
  :data:`MAX_DIRTY_KB`): ``syncfs`` also waits for every other program's unwritten data on that
  file system, which a per-file ``fsync`` does not, so a machine busy writing keeps the per-file way.

macOS and Windows have no ``syncfs``: there every file is fsynced, as before. A write of a few files
fsyncs each everywhere (:class:`inspector.plan.EarlyStaging` flushes only once it is handed
``PARALLEL_FSYNC_MIN`` small files at once): a ``syncfs`` waits for the whole file system, which pays
for itself only over many files.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys

from inspector import portable

# statfs f_type of the file systems whose syncfs writes every dirty page and inode back and
# flushes the disk's cache (linux/magic.h)
LOCAL_FS_TYPES = frozenset(
    {
        0xEF53,  # ext2, ext3, ext4
        0x58465342,  # XFS
        0x9123683E,  # btrfs
        0xF2F52010,  # F2FS
    }
)
MIN_KERNEL = (5, 8)  # syncfs reports write-back errors from here on
MAX_DIRTY_KB = 128 * 1024  # the machine's unwritten data above which each file is fsynced instead

_libc = None


def _c_library():
    global _libc
    if _libc is None:
        try:
            _libc = ctypes.CDLL(None, use_errno=True)
        except (OSError, TypeError):
            _libc = False
    return _libc


def kernel_version(release: str) -> tuple[int, int] | None:
    """(major, minor) of ``os.uname().release`` (``"6.1.0-13-amd64"`` -> (6, 1)); None if unreadable."""
    parts = release.split(".", 2)
    if len(parts) < 2:
        return None
    minor = ""
    for ch in parts[1]:
        if not ch.isdigit():
            break
        minor += ch
    if not parts[0].isdigit() or not minor:
        return None
    return int(parts[0]), int(minor)


def dirty_kb(meminfo: str) -> int | None:
    """``Dirty`` + ``Writeback`` (kB) of a ``/proc/meminfo`` text; None when either is missing."""
    found: dict[str, int] = {}
    for line in meminfo.splitlines():
        key, _, rest = line.partition(":")
        if key in ("Dirty", "Writeback"):
            value = rest.split()
            if not value or not value[0].isdigit():
                return None
            found[key] = int(value[0])
    if len(found) != 2:
        return None
    return found["Dirty"] + found["Writeback"]


def _machine_dirty_kb() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii", errors="replace") as fh:
            return dirty_kb(fh.read())
    except OSError:
        return None


def fs_type(fd: int) -> int | None:
    """The ``f_type`` of ``fstatfs(fd)`` (Linux), or None when it cannot be asked."""
    libc = _c_library()
    fstatfs = getattr(libc, "fstatfs", None) if libc else None
    if fstatfs is None:
        return None
    buf = ctypes.create_string_buffer(256)  # struct statfs is 120 bytes on 64-bit Linux
    if fstatfs(fd, buf) != 0:
        return None
    return ctypes.c_long.from_buffer(buf).value & 0xFFFFFFFF


def system_can_flush() -> bool:
    """Linux 5.8 or later, with a C library that has ``syncfs`` (not forced portable)."""
    if portable.FORCED or not sys.platform.startswith("linux"):
        return False
    version = kernel_version(os.uname().release)
    if version is None or version < MIN_KERNEL:
        return False
    libc = _c_library()
    return bool(libc) and getattr(libc, "syncfs", None) is not None


def open_flusher(folder: os.PathLike | str) -> int | None:
    """A descriptor of ``folder`` for :func:`flush`, opened now (so that every write-back error
    after this moment is reported), or None where each file must be fsynced (see the module)."""
    if not system_can_flush():
        return None
    dirty = _machine_dirty_kb()
    if dirty is None or dirty > MAX_DIRTY_KB:
        return None
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    if fs_type(fd) not in LOCAL_FS_TYPES:
        os.close(fd)
        return None
    return fd


def flush(fd: int) -> None:
    """``syncfs(fd)``: every file of ``fd``'s file system written back and flushed; OSError when
    that, or any write-back since ``fd`` was opened, failed."""
    libc = _c_library()
    if not libc:
        raise OSError("syncfs is not available")
    if libc.syncfs(fd) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def close(fd: int | None) -> None:
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)
