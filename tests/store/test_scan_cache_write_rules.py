"""How the scan cache file is written (tests/MUTATION.md, fifth session), through ``FactCache.save``:

- the file is ASCII JSON (``json.dumps(ensure_ascii=True)``: a non-ASCII path is written as a
  ``\\uXXXX`` escape) and reads back to the same entries;
- missing folders above it are made (``parents=True``), private to the user (mode 0o700);
- it is staged as a hidden ``.scan-*`` file in the cache's own folder (the replace stays on one
  file system) and a staged file that could not replace the cache is removed;
- a cache saved once and not changed since is not written again.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from inspector.store import scan

# a sidecar entry as the cache keeps it: [stat key, facts]
_ENTRY = [[1, 2, 3, 4, 5, 6, 7], {"title": "caf\u00e9", "n": 1}]
_PATH = "/home/u/.hermes/webui/sessions/caf\u00e9.json"


def _cache(path: Path) -> scan.FactCache:
    cache = scan.FactCache(path)
    cache.adopt(scan.SIDECAR, {_PATH: _ENTRY})
    return cache


def test_cache_is_ascii_json_and_reads_back(tmp_path: Path) -> None:
    """Rule: ensure_ascii: the non-ASCII path and title are written as \\u00e9 escapes."""
    path = tmp_path / "scan.json"
    _cache(path).save()
    data = path.read_bytes()
    assert data.isascii()
    assert b'"/home/u/.hermes/webui/sessions/caf\\u00e9.json"' in data
    assert b'"title":"caf\\u00e9"' in data
    assert scan.FactCache(path).entries[scan.SIDECAR] == {_PATH: _ENTRY}


def test_missing_folders_are_made_private(tmp_path: Path) -> None:
    """Rule: the cache's folder and the ones above it are made; the cache's own folder is 0o700."""
    path = tmp_path / "state" / "cache" / "scan.json"
    old = os.umask(0o022)
    try:
        _cache(path).save()
    finally:
        os.umask(old)
    assert scan.FactCache(path).entries[scan.SIDECAR] == {_PATH: _ENTRY}
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_staged_as_hidden_file_beside_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: the staged file is ``.scan-*`` in the cache's folder, replaced onto the cache."""
    path = tmp_path / "scan.json"
    seen: list[tuple[str, str]] = []
    real = os.replace

    def spy(src: str, dst: str) -> None:
        seen.append((str(src), str(dst)))
        real(src, dst)

    monkeypatch.setattr(scan.os, "replace", spy)
    _cache(path).save()
    assert len(seen) == 1
    src, dst = seen[0]
    assert dst == str(path)
    assert Path(src).parent == tmp_path
    assert Path(src).name.startswith(".scan-")


def test_failed_replace_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: a staged file that could not replace the cache is removed; the scan goes on."""
    path = tmp_path / "scan.json"

    def fail(src: str, dst: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(scan.os, "replace", fail)
    _cache(path).save()  # no error: an unwritable cache only costs time
    assert sorted(os.listdir(tmp_path)) == []


def test_clean_cache_is_not_written_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: after a save, saving again with nothing changed writes nothing."""
    path = tmp_path / "scan.json"
    cache = _cache(path)
    cache.save()
    calls: list[str] = []
    real = os.replace

    def spy(src: str, dst: str) -> None:
        calls.append(str(dst))
        real(src, dst)

    monkeypatch.setattr(scan.os, "replace", spy)
    cache.save()
    assert calls == []
