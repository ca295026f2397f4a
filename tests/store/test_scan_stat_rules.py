"""``SessionDirScan._stat``: the stat of a name in the sessions folder, through the folder's
descriptor where there is one, through the folder's path where there is none (the descriptor
could not be opened); never a file of the same name in the process's working folder.
Expected values by hand."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from inspector.store.scan import SessionDirScan


@pytest.fixture
def folders(tmp_path: Path, monkeypatch) -> Path:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    (sessions / "a.json").write_bytes(b"0123456789")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "a.json").write_bytes(b"abc")  # the same name in the working folder
    monkeypatch.chdir(elsewhere)
    return sessions


def _no_descriptor(sessions: Path, monkeypatch) -> SessionDirScan:
    def refuse(*args, **kwargs):
        raise PermissionError("the folder may not be opened")

    with monkeypatch.context() as m:
        m.setattr(os, "open", refuse)
        scan = SessionDirScan(sessions)
    assert scan._dir_fd is None
    return scan


def test_a_name_is_looked_up_in_the_sessions_folder(folders: Path) -> None:
    scan = SessionDirScan(folders)
    assert scan._dir_fd is not None
    assert scan._stat("a.json").st_size == 10
    assert scan._stat("missing.json") is None
    assert scan._stat("..").st_ino == folders.parent.stat().st_ino


def test_without_the_folders_descriptor_the_name_is_still_the_folders(folders: Path, monkeypatch) -> None:
    scan = _no_descriptor(folders, monkeypatch)
    assert scan.names == ["a.json"]
    assert scan._stat("a.json").st_size == 10
    assert scan._stat("missing.json") is None


def test_only_a_plain_name_goes_through_the_folders_descriptor(folders: Path, monkeypatch) -> None:
    """Rule (the docstring's): a plain name of the folder is looked up relative to the folder's
    descriptor (no path built and resolved per file); ".", ".." and a name with a slash, which
    are not names of the folder's files, go through the joined path."""
    scan = SessionDirScan(folders)
    if scan._dir_fd is None:
        pytest.skip("this platform's os.stat takes no dir_fd")
    calls: list[tuple[str, int | None]] = []
    real = os.stat

    def spy(path, *args, **kwargs):
        calls.append((path, kwargs.get("dir_fd")))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", spy)
    for name in ("a.json", ".", "..", "sub/b.json"):
        scan._stat(name)
    joined = str(folders)
    assert calls == [
        ("a.json", scan._dir_fd),
        (os.path.join(joined, "."), None),
        (os.path.join(joined, ".."), None),
        (os.path.join(joined, "sub/b.json"), None),
    ]
