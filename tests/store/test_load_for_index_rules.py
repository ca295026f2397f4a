"""``store.index.load_for_index``: the session an index rebuild loads from a parsed sidecar.

Rules pinned here (its docstring; ``PathResolver``'s "one consistent view of the file system for
the whole rebuild"):

* every path is answered by the resolver given: a path that resolver already resolved keeps that
  answer for the whole rebuild, even after the link it names was moved (one ``realpath`` per
  distinct value), for ``workspace``, ``created_workspace`` and the worktree paths alike;
* no ``dropped_keys``: a key hermes does not save is not listed (the index needs only the fields),
  while ``load_session``'s default lists it.
"""

from __future__ import annotations

import os
from pathlib import Path

from inspector.store.index import PathResolver, load_for_index
from inspector.store.sidecar import load_session

NOW = 1_779_900_000.0


def test_paths_keep_the_answer_the_rebuild_resolver_gave_first(tmp_path: Path) -> None:
    """Rule: the resolver given answers every path (one view for the whole rebuild)."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    link = tmp_path / "link"
    link.symlink_to(first)
    resolver = PathResolver(tmp_path)
    assert resolver(str(link)) == str(first)
    link.unlink()
    link.symlink_to(second)  # moved after the rebuild resolved it
    raw = {
        "session_id": "abc123",
        "workspace": str(link),
        "created_workspace": str(link),
        "worktree_path": str(link),
        "worktree_repo_root": str(link),
        "messages": [],
    }
    data = load_for_index(raw, now=NOW, resolve=resolver).data
    assert data["workspace"] == str(first)
    assert data["created_workspace"] == str(first)
    assert data["worktree_path"] == str(first)
    assert data["worktree_repo_root"] == str(first)
    assert os.path.realpath(link) == str(second)  # a fresh look would have said "second"


def test_a_relative_path_is_resolved_against_the_resolvers_folder(tmp_path: Path) -> None:
    """Rule: the resolver's cwd is the folder a relative workspace is taken from."""
    (tmp_path / "ws").mkdir()
    raw = {"session_id": "abc123", "workspace": "ws", "messages": []}
    data = load_for_index(raw, now=NOW, resolve=PathResolver(tmp_path)).data
    assert data["workspace"] == str(tmp_path.resolve() / "ws")
    assert data["created_workspace"] == str(tmp_path.resolve() / "ws")


def test_keys_hermes_does_not_save_are_not_listed(tmp_path: Path) -> None:
    """Rule: no dropped_keys for the index (load_session's default lists them)."""
    raw = {"session_id": "abc123", "workspace": str(tmp_path), "not_a_saved_key": 1, "messages": []}
    loaded = load_for_index(raw, now=NOW, resolve=PathResolver(tmp_path))
    assert loaded.dropped_keys == []
    assert load_session(raw, now=NOW, cwd=tmp_path).dropped_keys == ["not_a_saved_key"]
