"""Rules of :mod:`inspector.fs_flush`: when one ``syncfs`` of a file system may stand in for a
``fsync`` per file, and what it reports.

* only on Linux 5.8 or later (``syncfs`` reports write-back errors from there on), never when the
  portable paths are forced;
* only for a folder on ext2/3/4, XFS, btrfs or F2FS (read with ``fstatfs``);
* only while the machine holds at most ``MAX_DIRTY_KB`` of unwritten data (``Dirty`` + ``Writeback``);
* ``flush`` raises OSError with the system's error when ``syncfs`` fails.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import pytest

from inspector import fs_flush

MEMINFO = "MemTotal:        8000000 kB\nDirty:             1200 kB\nWriteback:          34 kB\nShmem: 1 kB\n"


@pytest.mark.parametrize(
    ("release", "expected"),
    [
        ("6.18.44-fc-v1147", (6, 18)),
        ("5.8.0", (5, 8)),
        ("5.10.0-28-amd64", (5, 10)),
        ("4.19.0", (4, 19)),
        ("6.1rc2", (6, 1)),
        ("6", None),
        ("x.1", None),
        ("6.rc1", None),
        ("", None),
    ],
)
def test_kernel_version_is_the_release_major_and_minor(release: str, expected) -> None:
    assert fs_flush.kernel_version(release) == expected


def test_dirty_kb_adds_dirty_and_writeback() -> None:
    assert fs_flush.dirty_kb(MEMINFO) == 1234
    assert fs_flush.dirty_kb("Dirty: 5 kB\n") is None  # no Writeback line
    assert fs_flush.dirty_kb("Dirty: lots\nWriteback: 0 kB\n") is None
    assert fs_flush.dirty_kb("Dirty:\nWriteback: 0 kB\n") is None


def _linux(monkeypatch, release: str = "6.1.0", dirty: int | None = 100) -> None:
    monkeypatch.setattr(fs_flush.portable, "FORCED", False)
    monkeypatch.setattr(fs_flush.sys, "platform", "linux")
    monkeypatch.setattr(
        fs_flush.os, "uname", lambda: os.uname_result(("Linux", "h", release, "#1", "x86_64"))
    )
    monkeypatch.setattr(fs_flush, "_machine_dirty_kb", lambda: dirty)


needs_linux = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="syncfs and fstatfs are Linux's"
)


@needs_linux
def test_a_folder_on_a_listed_file_system_gets_a_descriptor(tmp_path: Path, monkeypatch) -> None:
    _linux(monkeypatch)
    monkeypatch.setattr(fs_flush, "fs_type", lambda fd: 0xEF53)
    fd = fs_flush.open_flusher(tmp_path)
    try:
        assert fd is not None and os.path.samestat(os.fstat(fd), os.stat(tmp_path))
        fs_flush.flush(fd)  # nothing failed: no error
    finally:
        fs_flush.close(fd)


@needs_linux
@pytest.mark.parametrize(
    ("why", "release", "dirty", "kind", "forced"),
    [
        ("a kernel before 5.8", "5.7.19", 100, 0xEF53, False),
        ("an unreadable kernel release", "six", 100, 0xEF53, False),
        ("too much unwritten data", "6.1.0", fs_flush.MAX_DIRTY_KB + 1, 0xEF53, False),
        ("no /proc/meminfo", "6.1.0", None, 0xEF53, False),
        ("NFS", "6.1.0", 100, 0x6969, False),
        ("FUSE", "6.1.0", 100, 0x65735546, False),
        ("tmpfs", "6.1.0", 100, 0x01021994, False),
        ("an unknown file system type", "6.1.0", 100, None, False),
        ("the portable paths forced", "6.1.0", 100, 0xEF53, True),
    ],
)
def test_each_file_is_fsynced_where_one_flush_may_do_less(
    tmp_path: Path, monkeypatch, why: str, release: str, dirty, kind, forced: bool
) -> None:
    _linux(monkeypatch, release, dirty)
    monkeypatch.setattr(fs_flush.portable, "FORCED", forced)
    monkeypatch.setattr(fs_flush, "fs_type", lambda fd: kind)
    opened: list[int] = []
    real_open = os.open
    monkeypatch.setattr(fs_flush.os, "open", lambda *a, **k: opened.append(real_open(*a, **k)) or opened[-1])
    assert fs_flush.open_flusher(tmp_path) is None, why
    for fd in opened:  # a descriptor opened to ask the type is closed again
        with pytest.raises(OSError):
            os.fstat(fd)


@needs_linux
def test_the_limits_themselves_still_allow_one_flush(tmp_path: Path, monkeypatch) -> None:
    _linux(monkeypatch, "5.8.0", fs_flush.MAX_DIRTY_KB)
    for kind in (0xEF53, 0x58465342, 0x9123683E, 0xF2F52010):
        monkeypatch.setattr(fs_flush, "fs_type", lambda fd, kind=kind: kind)
        fd = fs_flush.open_flusher(tmp_path)
        assert fd is not None
        fs_flush.close(fd)


@needs_linux
def test_a_missing_folder_gets_no_descriptor(tmp_path: Path, monkeypatch) -> None:
    _linux(monkeypatch)
    monkeypatch.setattr(fs_flush, "fs_type", lambda fd: 0xEF53)
    assert fs_flush.open_flusher(tmp_path / "gone") is None


@needs_linux
def test_fs_type_reads_the_file_systems_magic(tmp_path: Path) -> None:
    fd = os.open("/proc", os.O_RDONLY)
    try:
        assert fs_flush.fs_type(fd) == 0x9FA0  # PROC_SUPER_MAGIC
    finally:
        os.close(fd)
    assert fs_flush.fs_type(10_000) is None  # no such descriptor


@needs_linux
def test_a_failed_syncfs_is_an_os_error_with_its_errno() -> None:
    with pytest.raises(OSError) as caught:
        fs_flush.flush(10_000)  # not an open descriptor
    assert caught.value.errno == errno.EBADF


def test_without_syncfs_the_system_cannot_flush(monkeypatch) -> None:
    monkeypatch.setattr(fs_flush.sys, "platform", "darwin")
    assert not fs_flush.system_can_flush()
    monkeypatch.setattr(fs_flush, "_libc", False)
    with pytest.raises(OSError):
        fs_flush.flush(0)
