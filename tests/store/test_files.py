"""store/files.py: the one reader of files the inspector did not write.

Rules pinned: a regular file is read whole and exactly; a file over the limit is refused before
it is read and also when it grows past the limit while being read; a FIFO is refused without
blocking; a missing file is None for read_raw; the snapshot's transient read keeps nothing but
answers from what the snapshot already read, and records a too-large file like any read.
"""

from __future__ import annotations

import os

import pytest

from inspector.store import files
from inspector.store.files import (
    FileSnapshot,
    Fingerprint,
    NotARegularFile,
    TooLargeToLoad,
    read_raw,
    read_regular,
)


def test_read_regular_reads_the_exact_bytes_of_small_and_multi_chunk_files(tmp_path):
    for size in (0, 1, 65535, 65536, 65537, 300_001):
        p = tmp_path / f"f{size}"
        payload = os.urandom(size)
        p.write_bytes(payload)
        data, st = read_regular(p)
        assert data == payload
        assert st.st_size == size


def test_a_file_over_the_limit_is_refused_with_its_size_in_words(tmp_path):
    p = tmp_path / "big.json"
    p.write_bytes(b"x" * 2000)
    with pytest.raises(TooLargeToLoad) as info:
        read_regular(p, max_bytes=1999)
    assert info.value.size == 2000 and info.value.limit == 1999
    assert "too large to load safely (2000 bytes; the limit is 1999 bytes)" in str(info.value)
    assert read_regular(p, max_bytes=2000)[0] == b"x" * 2000
    assert read_regular(p, max_bytes=None)[0] == b"x" * 2000


def grow_after_fstat(monkeypatch, path, more: bytes) -> None:
    """The file at ``path`` grows by ``more`` each time files.py takes an fstat, after the size is taken."""
    real_fstat = os.fstat

    def fstat_then_grow(fd):
        st = real_fstat(fd)
        with open(path, "ab") as fh:
            fh.write(more)
        return st

    monkeypatch.setattr(files.os, "fstat", fstat_then_grow)


def test_a_file_that_grows_past_the_limit_while_read_is_refused(tmp_path, monkeypatch):
    p = tmp_path / "growing.json"
    p.write_bytes(b"a" * 10)
    grow_after_fstat(monkeypatch, p, b"b" * 100)
    with pytest.raises(TooLargeToLoad) as info:
        read_regular(p, max_bytes=50)
    assert info.value.size == 51  # stopped one byte past the limit, not at the end of the file


def test_a_file_that_grows_within_the_limit_is_read_whole(tmp_path, monkeypatch):
    p = tmp_path / "growing.json"
    p.write_bytes(b"a" * 10)
    grow_after_fstat(monkeypatch, p, b"b" * 100_000)
    assert read_regular(p)[0] == b"a" * 10 + b"b" * 100_000


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_a_fifo_and_a_folder_are_not_regular_files(tmp_path):
    fifo = tmp_path / "s.json"
    os.mkfifo(fifo)
    with pytest.raises(NotARegularFile):
        read_regular(fifo)  # returns at once: opened non-blocking, refused on fstat
    with pytest.raises(NotARegularFile):
        read_regular(tmp_path)


def test_read_raw_is_none_for_a_missing_file_and_fingerprints_the_bytes_read(tmp_path):
    assert read_raw(tmp_path / "missing.json") is None
    p = tmp_path / "s.json"
    p.write_bytes(b"{}")
    raw = read_raw(p)
    assert raw.data == b"{}"
    assert raw.fingerprint == Fingerprint.of_bytes(b"{}", os.stat(p))


def test_transient_read_keeps_nothing_but_answers_from_the_snapshot(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_bytes(b"old a")
    b.write_bytes(b"b")
    snap = FileSnapshot()
    assert snap.data(a) == b"old a"
    a.write_bytes(b"new a")
    assert snap.read_transient(a) == b"old a"  # one plan never sees two versions of a file
    assert snap.read_transient(b) == b"b"
    assert snap.peek(b) == (False, None)  # not kept
    assert snap.asked == [a]
    assert snap.read_transient(tmp_path / "missing.json") is None


def test_transient_read_records_a_too_large_file(tmp_path):
    p = tmp_path / "big.json"
    p.touch()
    os.truncate(p, files.MAX_FILE_BYTES + 1)  # sparse: refused on its size, never read
    snap = FileSnapshot()
    with pytest.raises(TooLargeToLoad):
        snap.read_transient(p)
    assert [e.size for e in snap.too_large] == [files.MAX_FILE_BYTES + 1]


@pytest.mark.skipif(
    not (hasattr(os, "mkfifo") and os.path.isdir("/proc/self/fd")), reason="POSIX FIFOs, /proc"
)
def test_open_regular_refuses_without_leaking_a_descriptor(tmp_path):
    fifo = tmp_path / "j.jsonl"
    os.mkfifo(fifo)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(20):
        with pytest.raises(NotARegularFile):
            files.open_regular(fifo)
    assert len(os.listdir("/proc/self/fd")) == before
    link = tmp_path / "link.json"
    (tmp_path / "target.json").write_bytes(b"{}")
    link.symlink_to(tmp_path / "target.json")
    fd, st = files.open_regular(link)
    os.close(fd)
    assert st.st_size == 2
    with pytest.raises(OSError):
        files.open_regular(link, follow_links=False)


def _short_reads(monkeypatch, step: int) -> list[int]:
    """``os.read`` in files.py gives at most ``step`` bytes a call; returns the sizes asked for."""
    asked: list[int] = []
    real_read = os.read

    def read(fd, n):
        asked.append(n)
        return real_read(fd, min(n, step))

    monkeypatch.setattr(files.os, "read", read)
    return asked


def test_short_reads_are_joined_in_order_and_stop_one_byte_past_a_limit_the_file_outgrows(
    tmp_path, monkeypatch
):
    """Rule: a read that gives fewer bytes than asked is read on; the bytes counted are all those read
    so far, so a file growing past the limit is refused one byte past it whatever the reads give."""
    p = tmp_path / "growing.json"
    p.write_bytes(bytes(range(10)))
    _short_reads(monkeypatch, 7)
    assert read_regular(p)[0] == bytes(range(10))  # two chunks, in order, nothing between them
    grow_after_fstat(monkeypatch, p, b"b" * 100)
    with pytest.raises(TooLargeToLoad) as info:
        read_regular(p, max_bytes=50)
    assert (info.value.size, info.value.limit, info.value.filename) == (51, 50, str(p))


def test_the_first_read_asks_for_the_size_and_one_byte_more(tmp_path, monkeypatch):
    """Rule (read_regular's docstring): the read asks for the size fstat gave plus one byte (at
    least 64 KB), then for 64 KB until the end: a file that does not grow is one read (it comes
    back short of the ask with the whole size in), a small one too."""
    p = tmp_path / "big.json"
    p.write_bytes(b"x" * 100_000)
    asked = _short_reads(monkeypatch, 1 << 30)
    assert read_regular(p)[0] == b"x" * 100_000
    assert asked == [100_001]
    small = tmp_path / "small.json"
    small.write_bytes(b"y" * 10)
    asked.clear()
    assert read_regular(small)[0] == b"y" * 10 and asked == [65536]
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    asked.clear()
    assert read_regular(empty)[0] == b"" and asked == [65536]


def test_short_reads_before_the_size_fstat_gave_are_read_on(tmp_path, monkeypatch):
    """A read that comes back short before the whole size is in (a network file system may give
    one) is not the end: the rest is read, and the reading stops at the short read that brings
    in the very size fstat gave, or at the end of a file whose size is not met (it shrank)."""
    p = tmp_path / "multi.json"
    p.write_bytes(bytes(range(256)) * 1000)
    asked = _short_reads(monkeypatch, 100_000)
    assert read_regular(p)[0] == bytes(range(256)) * 1000
    assert asked == [256_001, 156_001, 65536]  # the last short of its ask at the size: no more
    asked.clear()
    real_fstat = os.fstat

    def bigger(fd):  # the file as fstat saw it was bigger: it shrank before the read
        st = real_fstat(fd)
        return os.stat_result((*st[:6], st.st_size + 50, *st[7:]))

    monkeypatch.setattr(files.os, "fstat", bigger)
    assert read_regular(p)[0] == bytes(range(256)) * 1000
    assert asked == [256_051, 156_051, 65536, 65536]  # short with the size not in: read on, to nothing
