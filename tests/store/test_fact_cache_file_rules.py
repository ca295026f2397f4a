"""``FactCache.for_session_dir``: one cache file per sessions folder, named by the SHA-256 of the
folder's resolved path (its first 32 hex digits) in the inspector's cache folder; none at all
with ``HERMES_INSPECTOR_NO_CACHE``; a folder name that is not UTF-8 gets its file too."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from inspector.store.scan import FactCache, cache_dir


def _expected(folder: Path) -> Path:
    digest = hashlib.sha256(os.fsencode(os.path.realpath(folder))).hexdigest()
    return cache_dir() / f"scan-{digest[:32]}.json"


def test_each_folder_has_its_own_file_named_by_its_resolved_path(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("HERMES_INSPECTOR_NO_CACHE", raising=False)
    a, b = tmp_path / "a" / "sessions", tmp_path / "b" / "sessions"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    (tmp_path / "link").symlink_to(a)
    assert FactCache.for_session_dir(a).path == _expected(a)
    assert FactCache.for_session_dir(b).path == _expected(b) != _expected(a)
    assert FactCache.for_session_dir(tmp_path / "b" / ".." / "a" / "sessions").path == _expected(a)
    assert FactCache.for_session_dir(tmp_path / "link").path == _expected(a)


def test_no_cache_when_the_environment_says_so(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HERMES_INSPECTOR_NO_CACHE", "1")
    cache = FactCache.for_session_dir(tmp_path)
    assert cache.path is None
    assert cache.entries["sidecar"] == {}


@pytest.mark.skipif(sys.platform != "linux", reason="a folder name that is not UTF-8 needs Linux")
def test_a_folder_name_that_is_not_utf8_gets_its_own_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("HERMES_INSPECTOR_NO_CACHE", raising=False)
    odd = Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9"))
    plain = tmp_path / "caf"
    odd.mkdir()
    plain.mkdir()
    path = FactCache.for_session_dir(odd).path
    assert path is not None and path.parent == cache_dir()
    assert path.name.startswith("scan-") and len(path.name) == len("scan-.json") + 32
    assert path not in (FactCache.for_session_dir(plain).path, FactCache.for_session_dir(tmp_path).path)
