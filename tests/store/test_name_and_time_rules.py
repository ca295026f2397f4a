"""Small helpers of the store that only a forked copy or the window reached (mutation testing, tests/MUTATION.md).

A direct test in-process gives each a test that reaches it; every expected value is written by hand.
"""

from __future__ import annotations

import os

import pytest

from inspector.store.files import FileSnapshot
from inspector.store.journal_raw import _is_time
from inspector.store.scan import FactCache, _stem


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        ("a.json", "a"),
        ("a.b", "a"),
        ("ab.c", "ab"),
        ("a.b.c", "a.b"),
        ("s1.json.bak", "s1.json"),
        ("noext", "noext"),
        (".hidden", ".hidden"),  # a leading dot starts no suffix
        ("a.", "a."),  # a trailing dot is no suffix (Python 3.11's PurePath)
        ("..json", "."),
    ],
)
def test_stem_is_purepaths_stem(name, stem):
    """Rule: ``_stem`` is ``PurePath(name).stem``: the name without its last suffix."""
    assert _stem(name) == stem


@pytest.mark.parametrize(
    ("value", "is_time"),
    [
        (1, True),
        (0.5, True),
        (1_700_000_000.25, True),
        (0, False),
        (0.0, False),
        (-1, False),
        (True, False),
        (False, False),
        ("5", False),
        (None, False),
    ],
)
def test_a_time_is_a_positive_number_not_a_bool(value, is_time):
    """Rule: a journal time (``created_at``) is an int or float above 0; a bool or a string is none."""
    assert _is_time(value) is is_time


def test_a_snapshot_says_whether_a_file_exists(tmp_path):
    """Rule: ``exists`` is True for a file the snapshot can read, False for a missing one."""
    (tmp_path / "a.json").write_bytes(b"{}")
    snapshot = FileSnapshot()
    assert snapshot.exists(tmp_path / "a.json") is True
    assert snapshot.exists(tmp_path / "missing.json") is False


def test_the_cache_lists_the_paths_seen(tmp_path):
    """Rule: ``seen(kind)`` is the set of paths looked up for that kind (a copy)."""
    cache = FactCache(None)
    kind = next(iter(cache.entries))
    path = tmp_path / "a.json"
    path.write_bytes(b"{}")
    assert cache.get(kind, str(path), os.stat(path)) is None
    seen = cache.seen(kind)
    assert seen == {str(path)}
    seen.add("other")
    assert cache.seen(kind) == {str(path)}
