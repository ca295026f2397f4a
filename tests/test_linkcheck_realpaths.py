"""Rule: ``linkcheck.RealPaths`` (the real path of each file a plan touches, each folder resolved once)
answers exactly as ``os.path.realpath`` on every kind of path a plan can name: plain files, files to
create, links as the last component (to a file, to a folder, dangling, in a loop), a linked folder,
a link through ``..``; and a plan through a link still names its real target."""

from __future__ import annotations

import os

import pytest

from inspector import linkcheck
from inspector.home import locate_home
from tests.recovery_helpers import home_dirs, sidecar, write_json


def _tree(tmp_path):
    home, sessions, _db = home_dirs(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.json").write_text("{}")
    write_json(sessions / "plain.json", sidecar("plain", 1))
    os.symlink(outside / "private.json", sessions / "to_file.json")
    os.symlink(outside, sessions / "to_folder")
    os.symlink(tmp_path / "nowhere.json", sessions / "dangling.json")
    os.symlink(sessions / "loop_b.json", sessions / "loop_a.json")
    os.symlink(sessions / "loop_a.json", sessions / "loop_b.json")
    os.symlink("../sessions/plain.json", sessions / "relative.json")
    os.symlink(sessions, home / "webui" / "linked_sessions")
    return home, sessions, outside


def _names(home, sessions, outside):
    linked = home / "webui" / "linked_sessions"
    return [
        sessions / "plain.json",
        sessions / "new.json",  # to be created: missing
        sessions / "to_file.json",
        sessions / "to_folder",
        sessions / "to_folder" / "private.json",
        sessions / "dangling.json",
        sessions / "loop_a.json",
        sessions / "relative.json",
        linked / "plain.json",
        linked / "new.json",
        linked / "to_file.json",
        sessions / ".." / "sessions" / "plain.json",
        outside / "private.json",
        sessions,
    ]


def test_real_paths_equal_os_realpath(tmp_path):
    home, sessions, outside = _tree(tmp_path)
    real = linkcheck.RealPaths()
    for path in _names(home, sessions, outside) * 2:  # the second time from the folders it knows
        lexical = os.path.normpath(os.path.abspath(path))
        assert real(lexical) == os.path.realpath(lexical), path


@pytest.mark.parametrize("written", [True, False])
def test_link_exits_name_the_same_targets_as_one_realpath_each(tmp_path, written):
    home, sessions, outside = _tree(tmp_path)
    h = locate_home(home)
    paths = _names(home, sessions, outside)
    got = linkcheck.link_exits(h, paths if written else [], [] if written else paths)
    expected = [(p, t) for p in dict.fromkeys(paths) if (t := linkcheck.leaves_home(h, p)) is not None]
    assert [(e.path, e.target) for e in got] == expected
    assert {e.path.name for e in got} >= {"to_file.json", "private.json"}
