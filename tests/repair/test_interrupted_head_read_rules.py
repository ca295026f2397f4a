"""The continuation check's read of a sidecar's head when the system gives fewer bytes than asked, or
fails (issue 21, the sixth session's survivors of ``interrupted._read_upto`` and ``_head_holds``).

hermes reads the head with Python's buffered ``read(16384)``, which goes on reading after a short read
until it has the bytes asked for or the file ends; the head is then those bytes decoded as UTF-8 with
invalid bytes dropped, cut to 4,096 characters. A regular file on a local disk gives every byte asked
at once, but a network or FUSE file system, or a signal, may give fewer.

Rules pinned (expected values written out by hand from that read):
* a short read is continued until the bytes asked for are there: a needle past the first short
  read, or across two reads, is found;
* never more than asked: a needle past hermes' 16,384 bytes is not in the head, even when every
  byte before it is dropped as invalid, and a head of 4-byte characters is read to its 4,096th;
* a read that fails is "holds nothing" (the check never guesses a continuation).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from inspector.repair.interrupted import _head_holds

NEEDLE = '"parent_session_id": "abc123"'
NEEDLE_BYTES = NEEDLE.encode()
SHORT = 1000  # the most bytes the file system below gives per read in these tests


def _short_reads(monkeypatch) -> list[int]:
    """``os.read`` gives at most SHORT bytes a call; the sizes asked are recorded."""
    asked: list[int] = []
    real = os.read

    def read(fd, n):
        asked.append(n)
        return real(fd, min(n, SHORT))

    monkeypatch.setattr(os, "read", read)
    return asked


def _holds(path: Path) -> bool:
    return _head_holds(str(path), NEEDLE, NEEDLE_BYTES)


def test_a_short_read_is_continued_until_the_needle(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "s.json"
    # ASCII, the needle across the second read's end (bytes 1,990-2,018): found only when the reads
    # are joined as they came
    path.write_bytes(b"{" + b" " * 1989 + NEEDLE_BYTES + b" " * 5000 + b"}")
    _short_reads(monkeypatch)
    assert _holds(path) is True


def test_a_head_of_four_byte_characters_is_read_to_its_4096th_character(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "s.json"
    # 3,000 characters of 4 bytes (12,000 bytes), then the needle: characters 3,000-3,028 of the
    # text, inside hermes' 4,096 characters (and its 16,384 bytes)
    path.write_bytes("😀".encode() * 3000 + NEEDLE_BYTES + b" " * 8000)
    asked = _short_reads(monkeypatch)
    assert _holds(path) is True
    assert sum(min(n, SHORT) for n in asked) >= 12000 + len(NEEDLE_BYTES)


def test_nothing_past_hermes_16384_bytes_is_read_into_the_head(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "s.json"
    # 16,384 invalid bytes (dropped: an empty head), then the needle: hermes never reads it
    path.write_bytes(b"\xff" * 16384 + NEEDLE_BYTES)
    _short_reads(monkeypatch)
    assert _holds(path) is False
    monkeypatch.undo()
    assert _holds(path) is False  # the same with whole reads


def test_the_needle_just_inside_16384_bytes_of_invalid_bytes_is_found_with_short_reads(
    tmp_path: Path, monkeypatch
) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(b"\xff" * (16384 - len(NEEDLE_BYTES)) + NEEDLE_BYTES + b" " * 100)
    _short_reads(monkeypatch)
    assert _holds(path) is True


def test_a_read_that_fails_holds_nothing(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(b"{" + NEEDLE_BYTES + b"}")
    assert _holds(path) is True  # readable: found

    def read(fd, n):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "read", read)
    assert _holds(path) is False
