"""``save.ListedNames``: one listing of the sessions folder standing in for a stat of each name in it.

Rules pinned: the names of the entries that are not links are kept; a folder that can be listed but not
searched (read without execute permission: every stat of a file in it fails) keeps no name at all, so
that every name is asked with a stat, which answers as hermes' own check of that path does. The permission case cannot be
made for root (it bypasses both), so the stat of a file inside the folder is made to fail as it would.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from inspector.repair.save import ListedNames


def _unsearchable(monkeypatch, folder: Path) -> None:
    real = os.stat

    def stat(path, *args, **kwargs):
        if os.path.dirname(os.fspath(path)) == str(folder):
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)


def test_a_folder_that_can_be_listed_but_not_searched_keeps_no_name(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "a.json").write_text("{}")
    (tmp_path / "b.json").write_text("{}")
    assert ListedNames(tmp_path).plain == {"a.json", "b.json"}
    _unsearchable(monkeypatch, tmp_path)
    listed = ListedNames(tmp_path)
    monkeypatch.undo()
    assert listed.plain == set()


def test_an_empty_folder_keeps_no_name(tmp_path: Path) -> None:
    assert ListedNames(tmp_path).plain == set()
    assert ListedNames(tmp_path / "missing").plain == set()
