"""The kept orjson verdict's file (``orjson_verdict.verdict_path``, ``read_verdict``, ``write_verdict``):
its name, which files are trusted, how much is read, and how it is written.

Rules pinned here (expected values written out by hand; the module's docstring, *key* and *trust*):

* the file is named ``orjson-check-`` + the first 32 hex digits of the SHA-256 of the key written
  as ``json.dumps(key, sort_keys=True)``: the same name whatever the key's order;
* only a regular file of this user that neither group nor others can write is trusted; execute
  bits do not matter; where there is no POSIX owner (Windows: ``portable.euid()`` is None) a
  regular file is trusted;
* a file of exactly 64 KB (65,536 bytes) is read; at most 65,537 bytes are read whatever the size
  seen before the read (a file that grew since is read short: no verdict);
* the verdict is written through a hidden ``.orjson-check-`` temp file in the verdict's own folder
  (same file system: an atomic replace), and a folder it creates is private (0700).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat

import pytest

from inspector import portable
from inspector.store import orjson_verdict

KEY = {"orjson": "3.10.0", "check": "abc", "format": 1}
KEY_TEXT = b'{"check": "abc", "format": 1, "orjson": "3.10.0"}'  # json.dumps(KEY, sort_keys=True)
POSIX = pytest.mark.skipif(portable.euid() is None, reason="POSIX owners and modes")


def _write(path, text: bytes, mode: int = 0o600) -> None:
    path.write_bytes(text)
    os.chmod(path, mode)


def _verdict_text(ok: bool = True) -> bytes:
    return json.dumps({"key": KEY, "ok": ok}).encode("utf-8")


def test_the_name_is_the_sorted_keys_hash_whatever_the_order(tmp_path) -> None:
    expected = "orjson-check-" + hashlib.sha256(KEY_TEXT).hexdigest()[:32] + ".json"
    assert orjson_verdict.verdict_path(KEY, tmp_path) == tmp_path / expected
    reordered = {"format": 1, "check": "abc", "orjson": "3.10.0"}
    assert orjson_verdict.verdict_path(reordered, tmp_path) == tmp_path / expected


@POSIX
def test_execute_bits_do_not_matter_only_writes_by_others(tmp_path) -> None:
    path = tmp_path / "v.json"
    _write(path, _verdict_text(), 0o701)
    assert orjson_verdict.read_verdict(path, KEY) is True
    os.chmod(path, 0o602)
    assert orjson_verdict.read_verdict(path, KEY) is None


def test_without_posix_owners_a_regular_file_is_trusted(tmp_path, monkeypatch) -> None:
    path = tmp_path / "v.json"
    _write(path, _verdict_text(False))
    monkeypatch.setattr(portable, "euid", lambda: None)
    assert orjson_verdict.read_verdict(path, KEY) is False


def _fstat_saying(monkeypatch, **changes) -> None:
    """``os.fstat`` as ``read_verdict`` sees it: the real result with ``changes`` (mode, size)."""
    real = os.fstat

    def fstat(fd):
        st = real(fd)
        fields = list(st[:10])
        fields[0] = changes.get("mode", st.st_mode)
        fields[6] = changes.get("size", st.st_size)
        return os.stat_result(fields)

    monkeypatch.setattr(orjson_verdict.os, "fstat", fstat)


def test_a_file_that_is_not_regular_is_no_verdict_whatever_its_bytes(tmp_path, monkeypatch) -> None:
    path = tmp_path / "v.json"
    _write(path, _verdict_text())
    _fstat_saying(monkeypatch, mode=stat.S_IFCHR | 0o600)  # a device whose bytes are a verdict
    assert orjson_verdict.read_verdict(path, KEY) is None


def _padded(total: int) -> bytes:
    """A verdict file of exactly ``total`` bytes whose last byte is its closing brace."""
    text = _verdict_text()
    return text[:-1] + b" " * (total - len(text)) + b"}"


def test_a_file_of_exactly_64_kb_is_read(tmp_path) -> None:
    path = tmp_path / "v.json"
    _write(path, _padded(65_536))
    assert orjson_verdict.read_verdict(path, KEY) is True
    _write(path, _padded(65_537))
    assert orjson_verdict.read_verdict(path, KEY) is None


def test_at_most_64_kb_and_one_byte_are_read(tmp_path, monkeypatch) -> None:
    path = tmp_path / "v.json"
    _write(path, _padded(65_538))  # grew after the size was looked at: said 100 bytes
    _fstat_saying(monkeypatch, size=100)
    assert orjson_verdict.read_verdict(path, KEY) is None  # its closing brace is past the bytes read


@POSIX
def test_the_verdict_is_written_through_a_hidden_temp_file_beside_it(tmp_path, monkeypatch) -> None:
    path = tmp_path / "cache" / "v.json"
    replaced = []
    real = os.replace

    def replace(src, dst):
        replaced.append((os.path.dirname(src), os.path.basename(src), dst))
        return real(src, dst)

    monkeypatch.setattr(orjson_verdict.os, "replace", replace)
    old = os.umask(0o022)
    try:
        assert orjson_verdict.write_verdict(path, KEY, True) is True
    finally:
        os.umask(old)
    ((folder, name, dst),) = replaced
    assert folder == str(path.parent) and name.startswith(".orjson-check-") and dst == path
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert json.loads(path.read_bytes()) == {"key": KEY, "ok": True}
