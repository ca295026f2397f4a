"""A scan taking the index facts a forked copy of it worked out (``adopt_index_facts``).

Fifth session of issue 21 (tests/MUTATION.md). The forked copy is the only caller, and forking is
off in the test process (pytest-qt loads Qt), so no other test reaches this method: the copy's
answer is handed over here directly, as ``load.py`` hands it over.
"""

from __future__ import annotations

import json

from inspector.store.scan import INDEX, FactCache, SessionDirScan

# what a copy says it found, made up so it cannot be mistaken for what this scan reads itself
COPYS_FACTS = {"json": [], "list": True, "all_objects": True, "rows": [["from", "the copy"]]}
COPYS_ENTRY = [[1, 2, 3, 4], COPYS_FACTS]


def _scan(tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "_index.json").write_text(json.dumps([{"session_id": "a", "title": "A"}]))
    cache = FactCache(tmp_path / "cache.json")
    return SessionDirScan(folder, cache), cache


def test_the_copys_facts_are_the_scans_and_its_cache_entry_is_kept(tmp_path):
    """Rule: adopted facts are what ``index_facts`` answers (the index is not read again), and the
    copy's cache entry is stored under ``_index.json`` and counted as seen (so the save keeps it)."""
    scan, cache = _scan(tmp_path)
    scan.adopt_index_facts(COPYS_FACTS, COPYS_ENTRY)
    assert cache.entries[INDEX] == {"_index.json": COPYS_ENTRY}
    assert cache.seen(INDEX) == {"_index.json"}
    assert scan.index_facts()["rows"] == [["from", "the copy"]]


def test_facts_without_a_cache_entry_leave_the_cache_alone(tmp_path):
    """Rule: a copy that has no cache entry for its facts (too recent to cache) gives the facts
    only: the cache gets no entry and sees nothing."""
    scan, cache = _scan(tmp_path)
    scan.adopt_index_facts(COPYS_FACTS, None)
    assert cache.entries[INDEX] == {}
    assert cache.seen(INDEX) == set()
    assert scan.index_facts()["rows"] == [["from", "the copy"]]


def test_no_facts_from_the_copy_adopts_nothing(tmp_path):
    """Rule: None from the copy (it found the index missing or unreadable) adopts nothing, not even
    a cache entry: this scan reads the index itself when asked."""
    scan, cache = _scan(tmp_path)
    scan.adopt_index_facts(None, COPYS_ENTRY)
    assert cache.entries[INDEX] == {}
    assert cache.seen(INDEX) == set()
    assert scan.index_facts()["rows"] == [["a", "A"]]  # the file's one row, read here


def test_a_scan_that_has_its_own_facts_keeps_them(tmp_path):
    """Rule: facts this scan worked out already are kept; the copy's (facts and entry) are dropped."""
    scan, cache = _scan(tmp_path)
    assert scan.index_facts()["rows"] == [["a", "A"]]
    scan.adopt_index_facts(COPYS_FACTS, COPYS_ENTRY)
    assert scan.index_facts()["rows"] == [["a", "A"]]
    assert cache.entries[INDEX].get("_index.json") != COPYS_ENTRY
