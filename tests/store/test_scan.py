"""The shared folder scan and its persistent per-file fact cache."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from inspector.home import locate_home
from inspector.load import full_audit, load_catalogue
from inspector.store import scan as scan_mod
from inspector.store.scan import FactCache, SessionDirScan, cache_dir


def _sidecar(sid: str, n: int, title: str = "t") -> bytes:
    msgs = [{"role": "user", "content": f"m{i}"} for i in range(n)]
    return json.dumps({"session_id": sid, "title": title, "messages": msgs}, indent=2).encode()


def _rewrite_same_size_and_mtime(path: Path, data: bytes) -> None:
    """New content, same size, the old mtime restored: only ctime (and the bytes) differ."""
    st = path.stat()
    assert len(data) == st.st_size
    time.sleep(0.05)
    path.write_bytes(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert after.st_mtime_ns == st.st_mtime_ns and after.st_size == st.st_size
    assert after.st_ctime_ns != st.st_ctime_ns


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)  # cache even files written a moment ago
    sessions = tmp_path / "webui" / "sessions"
    sessions.mkdir(parents=True)
    return locate_home(tmp_path)


def test_cache_lives_in_the_inspector_state_dir(home, monkeypatch, tmp_path):
    (home.session_dir / "a.json").write_bytes(_sidecar("a", 2))
    load_catalogue(home, now=time.time())
    files = list(cache_dir().glob("scan-*.json"))
    assert len(files) == 1
    assert str(cache_dir()).startswith(os.environ["HERMES_INSPECTOR_STATE_DIR"])
    assert not any(
        "scan-" in p.name for p in tmp_path.rglob("*") if home.base in p.parents and "webui" in p.parts
    )
    monkeypatch.delenv("HERMES_INSPECTOR_STATE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "hermes-inspector"


def test_changed_sidecar_same_size_restored_mtime_is_reread(home):
    path = home.session_dir / "a.json"
    path.write_bytes(_sidecar("a", 3, title="x"))
    cat = load_catalogue(home, now=time.time())
    assert cat.rows["a"].title == "x" and cat.rows["a"].sidecar_messages == 3
    cat = load_catalogue(home, now=time.time())  # served from the cache
    assert cat.rows["a"].title == "x"
    _rewrite_same_size_and_mtime(path, _sidecar("a", 3, title="y"))
    cat = load_catalogue(home, now=time.time())
    assert cat.rows["a"].title == "y"


def test_changed_sidecar_changes_hermes_counts(home):
    sd = home.session_dir
    (sd / "_index.json").write_bytes(b"[]")
    (sd / "a.json").write_bytes(_sidecar("a", 3))
    (sd / "a.json.bak").write_bytes(_sidecar("a", 5))
    assert [i["kind"] for i in full_audit(home, now=time.time())["items"]] == [
        "shrunken_live",
        "index_missing_entry",
    ]
    live = _sidecar("a", 3)
    assert full_audit(home, now=time.time())["items"][1]["live_messages"] == 3  # from the cache
    _rewrite_same_size_and_mtime(sd / "a.json", b"{" + b" " * (len(live) - 2) + b"}")
    items = full_audit(home, now=time.time())["items"]
    assert [i["kind"] for i in items] == ["shrunken_live", "index_missing_entry"]
    assert items[1]["live_messages"] == -1


def test_changed_run_journal_is_reread(home):
    folder = home.session_dir / "_run_journal" / "a"
    folder.mkdir(parents=True)
    good = b'{"seq": 1, "event": "token"}\n{"seq": 2, "event": "token"}\n'
    path = folder / "r1.jsonl"
    path.write_bytes(good)

    def dropped() -> list[str]:
        return [
            f["kind"]
            for f in full_audit(home, now=time.time())["inspector"]["findings"]
            if f["kind"].startswith("journal")
        ]

    assert dropped() == []
    assert dropped() == []
    _rewrite_same_size_and_mtime(path, good.replace(b'{"seq": 2', b'x"seq": 2'))
    assert dropped() == ["journal_lines_dropped"]


def test_recent_files_are_not_cached(tmp_path, monkeypatch):
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 10**12)
    (tmp_path / "a.json").write_bytes(_sidecar("a", 1))
    cache = FactCache(tmp_path / "cache.json")
    SessionDirScan(tmp_path, cache).sidecar("a.json")
    assert cache.entries[scan_mod.SIDECAR] == {}


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b'{"version": 1, "sidecar": [1, 2]}',
        b"\xff\xfe",
        b'{"version": 1, "sidecar": {"x": "y"}}',
    ],
)
def test_corrupt_cache_is_ignored(home, content):
    (home.session_dir / "a.json").write_bytes(_sidecar("a", 2, title="ok"))
    load_catalogue(home, now=time.time())
    (cache_file,) = cache_dir().glob("scan-*.json")
    cache_file.write_bytes(content)
    assert load_catalogue(home, now=time.time()).rows["a"].title == "ok"


def test_wrong_cached_entry_for_another_file_is_not_used(home):
    path = home.session_dir / "a.json"
    path.write_bytes(_sidecar("a", 2, title="ok"))
    load_catalogue(home, now=time.time())
    (cache_file,) = cache_dir().glob("scan-*.json")
    obj = json.loads(cache_file.read_text())
    (entry,) = obj["sidecar"].values()
    entry[1]["meta"]["title"] = "from the cache"
    cache_file.write_text(json.dumps(obj))
    # the key still matches: the cache is really used (so the re-read tests above mean something)
    assert load_catalogue(home, now=time.time()).rows["a"].title == "from the cache"
    entry[0][1] += 1  # another inode
    cache_file.write_text(json.dumps(obj))
    assert load_catalogue(home, now=time.time()).rows["a"].title == "ok"


@pytest.mark.parametrize("version", ["other", "missing"])
def test_a_cache_of_another_version_is_not_used(home, version):
    """Rule: only a cache of this CACHE_VERSION is read; the same entries under another version
    (or none) are no cache, however well their keys match."""
    (home.session_dir / "a.json").write_bytes(_sidecar("a", 2, title="ok"))
    load_catalogue(home, now=time.time())
    (cache_file,) = cache_dir().glob("scan-*.json")
    obj = json.loads(cache_file.read_text())
    (entry,) = obj["sidecar"].values()
    entry[1]["meta"]["title"] = "from the cache"
    if version == "other":
        obj["version"] = scan_mod.CACHE_VERSION + 1
    else:
        del obj["version"]
    cache_file.write_text(json.dumps(obj))
    assert load_catalogue(home, now=time.time()).rows["a"].title == "ok"


def test_a_cache_that_is_a_list_is_no_cache(home):
    (home.session_dir / "a.json").write_bytes(_sidecar("a", 2, title="ok"))
    load_catalogue(home, now=time.time())
    (cache_file,) = cache_dir().glob("scan-*.json")
    cache_file.write_text(json.dumps([{"version": scan_mod.CACHE_VERSION}]))
    assert load_catalogue(home, now=time.time()).rows["a"].title == "ok"


@pytest.mark.parametrize("big", [12345678901234567890123, 2**63 + 1, 0.1 + 0.2])
def test_cache_with_long_numbers_keeps_them_exact(home, big):
    """A sidecar value with 19+ digits: the cache file is written without the orjson-exact flag,
    so it is parsed by the stdlib, and the value comes back exactly (orjson would turn a huge
    integer into a float)."""
    path = home.session_dir / "a.json"
    path.write_bytes(
        json.dumps({"session_id": "a", "title": "t", "updated_at": big, "messages": []}, indent=2).encode()
    )
    load_catalogue(home, now=time.time())
    (cache_file,) = cache_dir().glob("scan-*.json")
    head = cache_file.read_bytes()[:40]
    long_run = len(repr(big).replace(".", "")) >= 19
    assert head.startswith(b'{"version":%d,"orjson_exact":true,' % scan_mod.CACHE_VERSION) is not long_run
    cached = FactCache(cache_file).entries[scan_mod.SIDECAR]["a.json"][1]["meta"]["updated_at"]
    assert cached == big and type(cached) is type(big)
    assert load_catalogue(home, now=time.time()).rows["a"].sidecar.meta["updated_at"] == big


def test_cache_flagged_exact_is_parsed_without_the_digit_scan(home, monkeypatch):
    (home.session_dir / "a.json").write_bytes(_sidecar("a", 2, title="ok"))
    load_catalogue(home, now=time.time())
    (cache_file,) = cache_dir().glob("scan-*.json")
    assert cache_file.read_bytes().startswith(b'{"version":%d,"orjson_exact":true,' % scan_mod.CACHE_VERSION)
    scans = []
    real = scan_mod.fast_loads
    monkeypatch.setattr(
        scan_mod,
        "fast_loads",
        lambda data, checked=False: scans.append(checked) or real(data, checked=checked),
    )
    assert FactCache(cache_file).entries[scan_mod.SIDECAR]["a.json"][1]["meta"]["title"] == "ok"
    assert scans == ([] if scan_mod._msgspec is not None else [True])  # msgspec's parse, else orjson's


def test_a_cache_msgspec_refuses_is_parsed_exactly(home):
    """A sidecar whose title is NaN (the stdlib reads it; the cache writes it back as NaN): msgspec
    refuses the cache file, the exact parse reads it, and its facts are kept."""
    (home.session_dir / "a.json").write_bytes(b'{"session_id": "a", "title": NaN, "messages": []}')
    load_catalogue(home, now=time.time())
    (cache_file,) = cache_dir().glob("scan-*.json")
    assert b"NaN" in cache_file.read_bytes()
    title = FactCache(cache_file).entries[scan_mod.SIDECAR]["a.json"][1]["meta"]["title"]
    assert title != title  # NaN


def test_unwritable_cache_dir_is_ignored(home, monkeypatch, tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the cache folder would go")
    monkeypatch.setenv("HERMES_INSPECTOR_STATE_DIR", str(blocker))
    (home.session_dir / "a.json").write_bytes(_sidecar("a", 2, title="ok"))
    assert load_catalogue(home, now=time.time()).rows["a"].title == "ok"
    assert full_audit(home, now=time.time())["summary"]["ok"] == 1


def test_scan_exists_matches_path_exists(tmp_path):
    (tmp_path / "a.json").write_bytes(b"{}")
    (tmp_path / "d.json").mkdir()
    (tmp_path / "broken.json").symlink_to(tmp_path / "nowhere")
    (tmp_path / "linked.json").symlink_to(tmp_path / "a.json")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.json").write_bytes(b"{}")
    s = SessionDirScan(tmp_path)
    names = (
        "a.json",
        "d.json",
        "broken.json",
        "linked.json",
        "missing.json",
        "sub/x.json",
        "sub/../a.json",
        ".",
        "..",
    )
    for name in names:
        assert s.exists(name) == (tmp_path / name).exists(), name
    assert s.exists("linked.json") is True and s.exists("broken.json") is False
    assert s.live_names() == ["a.json", "broken.json", "d.json", "linked.json"]


def test_scan_names_are_picked_once_and_each_caller_gets_its_own_list(tmp_path):
    """The live and ``.bak`` names come from the one listing (picked once: a look asks several
    times); a caller changing the list it got changes no later answer."""
    for name in ("b.json", "a.json", "_index.json", "a.json.bak", "c.json.bak", "notes.txt"):
        (tmp_path / name).write_bytes(b"{}")
    s = SessionDirScan(tmp_path)
    live, baks = s.live_names(), s.bak_names()
    assert live == ["a.json", "b.json"] and baks == ["a.json.bak", "c.json.bak"]
    live.append("x.json")
    baks.clear()
    (tmp_path / "d.json").write_bytes(b"{}")  # after the listing: not in it
    assert s.live_names() == ["a.json", "b.json"]
    assert s.bak_names() == ["a.json.bak", "c.json.bak"]
    assert s.live_names() is not s.live_names() and s.bak_names() is not s.bak_names()


def test_changed_index_same_size_restored_mtime_is_reread(home):
    sd = home.session_dir
    (sd / "a.json").write_bytes(_sidecar("a", 1, title=""))
    index = sd / "_index.json"
    index.write_bytes(
        json.dumps([{"session_id": "a", "title": "one"}, {"session_id": "b", "title": "two"}]).encode()
    )
    cat = load_catalogue(home, now=time.time())
    assert cat.rows["a"].title == "one" and cat.rows["b"].in_index
    assert [i["kind"] for i in full_audit(home, now=time.time())["items"]] == [
        "index_missing_file"
    ]  # from the cache
    _rewrite_same_size_and_mtime(
        index, json.dumps([{"session_id": "a", "title": "uno"}, {"session_id": "c", "title": "two"}]).encode()
    )
    cat = load_catalogue(home, now=time.time())
    assert cat.rows["a"].title == "uno" and "b" not in cat.rows and cat.rows["c"].in_index
    assert [i["session_id"] for i in full_audit(home, now=time.time())["items"]] == ["c"]
    _rewrite_same_size_and_mtime(index, b"[" + b" " * (len(index.read_bytes()) - 2) + b"]")
    assert not load_catalogue(home, now=time.time()).rows["a"].in_index
    _rewrite_same_size_and_mtime(index, b"{" + b" " * (len(index.read_bytes()) - 2) + b"}")
    assert "index_unusable" in [f.kind for f in load_catalogue(home, now=time.time()).home_findings]


def test_changed_turn_journal_is_reread(home):
    sd = home.session_dir
    (sd / "a.json").write_bytes(_sidecar("a", 1))
    folder = sd / "_turn_journal"
    folder.mkdir()
    shard = folder / "a~1.jsonl"
    line = {"turn_id": "t1", "event": "submitted", "created_at": 1.0, "content": "hello"}
    shard.write_bytes(json.dumps(line).encode() + b"\n")

    def pending() -> list[str]:
        return [
            i["turn_id"]
            for i in full_audit(home, now=time.time())["items"]
            if i["kind"] == "turn_journal_pending_turn"
        ]

    assert pending() == ["t1"]
    assert pending() == ["t1"]  # from the cache
    _rewrite_same_size_and_mtime(shard, json.dumps({**line, "turn_id": "t2"}).encode() + b"\n")
    assert pending() == ["t2"]
    _rewrite_same_size_and_mtime(shard, b"\xff" * len(shard.read_bytes()))
    report = full_audit(home, now=time.time())
    assert report["status"] == "hermes_audit_failed" and "UTF-8" in report["error"]


def test_prefetch_in_two_processes_gives_the_same_facts(tmp_path, monkeypatch, tmp_path_factory):
    monkeypatch.setattr(scan_mod, "PARALLEL_MIN_FILES", 2)
    monkeypatch.setattr(scan_mod, "can_fork", lambda: True)  # the test process has PySide6 loaded
    pids_log = tmp_path_factory.mktemp("pids") / "readers.log"
    real_read = scan_mod._read_sidecars

    def noting(*args, **kwargs):
        with open(pids_log, "a") as fh:  # appended from both processes
            fh.write(f"{os.getpid()}\n")
        return real_read(*args, **kwargs)

    monkeypatch.setattr(scan_mod, "_read_sidecars", noting)
    for i in range(12):
        (tmp_path / f"s{i}.json").write_bytes(_sidecar(f"s{i}", i, title=f"t{i}"))
    (tmp_path / "torn.json").write_bytes(_sidecar("torn", 3)[:40])
    (tmp_path / "latin.json").write_bytes(b'{"title": "\xe9"}')
    (tmp_path / "dir.json").mkdir()
    names = sorted(p.name for p in tmp_path.iterdir())
    texts = {"s3.json", "torn.json"}
    parallel = SessionDirScan(tmp_path)
    assert parallel.prefetch(names, texts) == len(names)
    readers = [int(pid) for pid in pids_log.read_text().split()]
    assert len(set(readers)) == 2 and os.getpid() in readers  # half read by a forked copy (its own pid)
    assert readers.count(os.getpid()) == 1  # the copy's half taken from it, not read here again
    one_by_one = SessionDirScan(tmp_path)
    for name in names:
        want = name in texts
        got, expected = parallel.sidecar(name, want_texts=want), one_by_one.sidecar(name, want_texts=want)
        assert got[0] == expected[0] and got[2] == expected[2], name
        assert (got[1] is None) == (expected[1] is None)
    assert parallel.sidecar("s3.json", want_texts=True)[0]["texts"] == ["m0", "m1", "m2"]


def test_prefetch_uses_the_cache_and_skips_small_work(home, monkeypatch):
    for i in range(3):
        (home.session_dir / f"s{i}.json").write_bytes(_sidecar(f"s{i}", 1))
    names = [f"s{i}.json" for i in range(3)]
    assert SessionDirScan(home.session_dir).prefetch(names) == 0  # too few for a second process
    monkeypatch.setattr(scan_mod, "PARALLEL_MIN_FILES", 1)
    monkeypatch.setattr(scan_mod, "can_fork", lambda: True)
    cache = FactCache(home.base / "cache.json")
    assert SessionDirScan(home.session_dir, cache).prefetch(names) == 3
    cache.save()
    assert SessionDirScan(home.session_dir, FactCache(home.base / "cache.json")).prefetch(names) == 0


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_state_db_records_are_cached_until_the_database_changes(home, journal):
    import sqlite3

    from tests.recovery_helpers import agent_state_db

    db = home.state_db()
    ids = agent_state_db(db, journal=journal)
    web = ids["webui"]
    first = load_catalogue(home, now=time.time()).rows[web].state_db
    again = load_catalogue(home, now=time.time()).rows[web].state_db  # from the cache
    assert again == first
    (cache_file,) = cache_dir().glob("scan-*.json")
    assert str(db) in json.loads(cache_file.read_text())["state_db"]
    conn = sqlite3.connect(db)
    if journal == "wal":
        conn.execute("PRAGMA wal_autocheckpoint=0")  # the change stays in the -wal file
    conn.execute("UPDATE sessions SET title = 'renamed' WHERE id = ?", (web,))
    conn.commit()
    try:
        assert load_catalogue(home, now=time.time()).rows[web].state_db["title"] == "renamed"
    finally:
        conn.close()


def test_read_ahead_reads_in_one_pass_what_sidecar_would_read_one_by_one(tmp_path):
    """Rule: the forked copy running hermes' audit reads its few hundred sidecars in one quick pass;
    the facts are those each file's own read gives (missing and unreadable files included)."""
    for i in range(5):
        (tmp_path / f"s{i}.json").write_bytes(_sidecar(f"s{i}", i, title=f"t{i}"))
    (tmp_path / "torn.json").write_bytes(_sidecar("torn", 3)[:40])
    (tmp_path / "latin.json").write_bytes(b'{"title": "\xe9"}')
    (tmp_path / "dir.json").mkdir()
    names = sorted(p.name for p in tmp_path.iterdir()) + ["absent.json"]
    texts = {"s3.json", "torn.json", "absent.json"}
    ahead = SessionDirScan(tmp_path)
    assert ahead.read_ahead(names, texts) == len(names)
    # read already, but for the file that could not be read (its facts hold no user texts: tried again)
    assert ahead.read_ahead(names, texts) == 1
    one_by_one = SessionDirScan(tmp_path)
    for name in names:
        want = name in texts
        got, expected = ahead.sidecar(name, want_texts=want), one_by_one.sidecar(name, want_texts=want)
        assert got[0] == expected[0] and got[2] == expected[2], name
    assert ahead.sidecar("s3.json", want_texts=True)[0]["texts"] == ["m0", "m1", "m2"]


def test_an_unchanged_index_is_taken_from_the_cache_not_read_again(home, monkeypatch):
    """Rule: the index's facts are cached like a sidecar's: an unchanged ``_index.json`` is
    neither read nor parsed by the next scan."""
    (home.session_dir / "a.json").write_bytes(_sidecar("a", 2, title="ok"))
    (home.session_dir / "_index.json").write_text(json.dumps([{"session_id": "a", "title": "ok"}], indent=2))
    cache = FactCache.for_session_dir(home.session_dir)
    first = SessionDirScan(home.session_dir, cache).index_facts()
    cache.save()
    assert first == {"json": True, "list": True, "all_objects": True, "rows": [["a", "ok"]]}

    def no_read(self):
        raise AssertionError("the unchanged index was read again")

    monkeypatch.setattr(SessionDirScan, "index_bytes", no_read)
    again = SessionDirScan(home.session_dir, FactCache.for_session_dir(home.session_dir)).index_facts()
    assert again == first


def test_the_index_facts_taken_from_the_cache_are_kept_for_the_scan(home, monkeypatch):
    """Rule: a scan works out the index's facts once: asked again (a forked copy is made after the
    first answer), it answers from what it has, without the cache."""
    (home.session_dir / "_index.json").write_text(json.dumps([{"session_id": "a", "title": "ok"}], indent=2))
    cache = FactCache.for_session_dir(home.session_dir)
    SessionDirScan(home.session_dir, cache).index_facts()
    cache.save()
    scan = SessionDirScan(home.session_dir, FactCache.for_session_dir(home.session_dir))
    first = scan.index_facts()
    assert first["rows"] == [["a", "ok"]]

    def no_lookup(*args, **kwargs):
        raise AssertionError("the cache was asked again")

    monkeypatch.setattr(scan.cache, "get", no_lookup)
    monkeypatch.setattr(SessionDirScan, "index_bytes", no_lookup)
    assert scan.index_facts() == first
