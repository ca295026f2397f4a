"""Facts of files too recent to keep in the fact cache, handed from a forked copy to the process it
works for (``FactCache.unkept`` and ``FactCache.borrow``; eighth session of issue 18).

A file changed within ``RACY_WINDOW_NS`` of its read is never stored (the same identity could still
hide a change). A forked copy of a first open that read such a run journal used to hand nothing
over for it, and the first process read it again, alone, after the copies were done. Now the copy
hands those facts over apart from the kept ones; the first process answers them for the rest of
its run (while the file keeps the identity it was read with) and never saves them.
"""

from __future__ import annotations

import json
import time

from inspector.store.scan import JOURNAL, OPEN_RUN, FactCache, stat_key

FACTS = {"unreadable": None, "malformed": 2, "first": 7}


def _file(tmp_path, name="r1.jsonl"):
    path = tmp_path / name
    path.write_text('{"seq": 1}\n')
    return path, path.stat()


def test_a_put_too_recent_to_keep_is_unkept_not_stored(tmp_path):
    """Rule: a racy put stores nothing (as before) and is listed by ``unkept`` with the identity
    it was read with; a put that is old enough is stored and leaves ``unkept``."""
    path, st = _file(tmp_path)
    cache = FactCache(tmp_path / "cache.json")
    cache.put(JOURNAL, str(path), st, FACTS, time.time_ns())  # read just after the write
    assert cache.entries[JOURNAL] == {}
    assert cache.get(JOURNAL, str(path), st) is None  # this process's own racy facts: not answered
    assert cache.unkept(JOURNAL) == {str(path): [stat_key(st), FACTS]}
    assert cache.unkept(OPEN_RUN) == {}
    cache.put(JOURNAL, str(path), st, FACTS, st.st_ctime_ns + 10**10)  # read 10 s later
    assert cache.entries[JOURNAL] == {str(path): [stat_key(st), FACTS]}
    assert cache.unkept(JOURNAL) == {}


def test_borrowed_facts_are_answered_while_the_file_is_unchanged(tmp_path):
    """Rule: ``get`` answers a borrowed entry while the file has the identity it was read with,
    and not once it changed; the path counts as seen."""
    path, st = _file(tmp_path)
    cache = FactCache(tmp_path / "cache.json")
    cache.borrow(JOURNAL, {str(path): [stat_key(st), FACTS]})
    assert cache.get(JOURNAL, str(path), st) == FACTS
    assert cache.get(OPEN_RUN, str(path), st) is None  # another kind: nothing borrowed there
    assert str(path) in cache.seen(JOURNAL)
    path.write_text('{"seq": 1}\n{"seq": 2}\n')
    assert cache.get(JOURNAL, str(path), path.stat()) is None


def test_borrowed_facts_are_never_saved_and_replace_a_stale_entry(tmp_path):
    """Rule: ``save`` writes no borrowed entry; an entry the cache held for that path (from an
    earlier identity) is dropped, as a racy put here would drop it."""
    path, st = _file(tmp_path)
    other, other_st = _file(tmp_path, "r2.jsonl")
    cache_file = tmp_path / "cache.json"
    first = FactCache(cache_file)
    first.put(JOURNAL, str(path), st, {"old": True}, st.st_ctime_ns + 10**10)
    first.put(JOURNAL, str(other), other_st, FACTS, other_st.st_ctime_ns + 10**10)
    first.save()
    cache = FactCache(cache_file)
    assert cache.entries[JOURNAL][str(path)][1] == {"old": True}
    cache.get(JOURNAL, str(other), other_st)  # seen: kept by the save
    cache.borrow(JOURNAL, {str(path): [stat_key(st), FACTS]})
    assert cache.get(JOURNAL, str(path), st) == FACTS
    cache.save()
    saved = json.loads(cache_file.read_text())
    assert saved[JOURNAL] == {str(other): [stat_key(other_st), FACTS]}


def test_a_kept_entry_wins_over_a_borrowed_one(tmp_path):
    """Rule: where the cache has its own entry for the path (adopted or put later), ``get`` answers
    that one."""
    path, st = _file(tmp_path)
    cache = FactCache(None)
    cache.borrow(JOURNAL, {str(path): [stat_key(st), FACTS]})
    kept = {"unreadable": None, "malformed": 0, "first": None}
    cache.adopt(JOURNAL, {str(path): [stat_key(st), kept]})
    assert cache.get(JOURNAL, str(path), st) == kept
