"""``FactCache.put`` / ``put_for``: facts of a file changed less than ``RACY_WINDOW_NS`` before its
read began are not kept (the same stat key could still hide a change: they are held apart for a
forked copy to hand over), older ones are kept and saved, and a save keeps what this run put.
Times and keys are written by hand."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from inspector.store.scan import RACY_WINDOW_NS, SIDECAR, FactCache

READ_STARTED = 1_780_000_000_000_000_000  # ns


def _st(ctime_ns: int, ino: int = 7) -> SimpleNamespace:
    return SimpleNamespace(
        st_dev=1, st_ino=ino, st_size=10, st_mtime_ns=1_700_000_000_500_000_000, st_ctime_ns=ctime_ns
    )


def _key(ctime_ns: int, ino: int = 7) -> list[int]:
    return [1, ino, 10, 1_700_000_000, 500_000_000, ctime_ns // 1_000_000_000, ctime_ns % 1_000_000_000]


def test_a_file_changed_exactly_the_window_before_the_read_is_too_recent() -> None:
    cache = FactCache(None)
    ctime = READ_STARTED - RACY_WINDOW_NS
    cache.put(SIDECAR, "a.json", _st(ctime), {"n": 1}, READ_STARTED)
    assert cache.entries[SIDECAR] == {}
    assert cache.unkept(SIDECAR) == {"a.json": [_key(ctime), {"n": 1}]}


def test_a_file_changed_within_the_window_is_too_recent() -> None:
    cache = FactCache(None)
    ctime = READ_STARTED - RACY_WINDOW_NS // 2
    cache.put(SIDECAR, "a.json", _st(ctime), {"n": 1}, READ_STARTED)
    assert cache.entries[SIDECAR] == {}


def test_a_file_changed_before_the_window_is_kept() -> None:
    cache = FactCache(None)
    ctime = READ_STARTED - RACY_WINDOW_NS - 1
    cache.put(SIDECAR, "a.json", _st(ctime), {"n": 1}, READ_STARTED)
    assert cache.entries[SIDECAR] == {"a.json": [_key(ctime), {"n": 1}]}
    assert cache.unkept(SIDECAR) == {}


def test_a_recent_file_takes_the_place_of_its_old_entry_and_a_new_one_needs_none() -> None:
    cache = FactCache(None)
    old = READ_STARTED - 10 * RACY_WINDOW_NS
    cache.put(SIDECAR, "a.json", _st(old), {"n": 1}, READ_STARTED)
    cache.put(SIDECAR, "a.json", _st(READ_STARTED), {"n": 2}, READ_STARTED)  # changed since
    cache.put(SIDECAR, "b.json", _st(READ_STARTED, ino=8), {"n": 3}, READ_STARTED)  # never kept before
    assert cache.entries[SIDECAR] == {}
    assert sorted(cache.unkept(SIDECAR)) == ["a.json", "b.json"]
    assert cache.seen(SIDECAR) == {"a.json", "b.json"}


def test_what_a_run_put_is_saved_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "scan.json"
    cache = FactCache(path)
    ctime = READ_STARTED - 3 * RACY_WINDOW_NS
    cache.put(SIDECAR, "a.json", _st(ctime), {"n": 1}, READ_STARTED)
    cache.save()
    assert FactCache(path).entries[SIDECAR] == {"a.json": [_key(ctime), {"n": 1}]}


def test_put_for_keeps_the_facts_of_several_files_only_when_none_is_recent() -> None:
    cache = FactCache(None)
    old = READ_STARTED - RACY_WINDOW_NS - 1
    cache.put_for("journal", "s1", [_st(old), None], {"k": 1}, READ_STARTED)
    assert cache.entries["journal"] == {"s1": [[_key(old), None], {"k": 1}]}
    cache.put_for(
        "journal", "s1", [_st(old), _st(READ_STARTED - RACY_WINDOW_NS, ino=9)], {"k": 2}, READ_STARTED
    )
    assert cache.entries["journal"] == {}
    cache.put_for("journal", "s2", [_st(READ_STARTED - RACY_WINDOW_NS // 2)], {"k": 3}, READ_STARTED)
    assert cache.entries["journal"] == {}
    assert cache.seen("journal") == {"s1", "s2"}


def test_a_file_read_again_once_it_is_old_enough_is_kept_and_no_longer_held_apart() -> None:
    cache = FactCache(None)
    ctime = READ_STARTED
    cache.put(SIDECAR, "a.json", _st(ctime), {"n": 1}, READ_STARTED)
    assert sorted(cache.unkept(SIDECAR)) == ["a.json"]
    later = READ_STARTED + 3 * RACY_WINDOW_NS
    cache.put(SIDECAR, "a.json", _st(ctime), {"n": 1}, later)
    assert cache.entries[SIDECAR] == {"a.json": [_key(ctime), {"n": 1}]}
    assert cache.unkept(SIDECAR) == {}
