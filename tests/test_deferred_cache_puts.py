"""The window's first open takes each sidecar's facts at once but makes their fact cache entries
only when the cache is saved (after the list is sent: ``SessionDirScan.defer_sidecar_puts``,
issue 18): the saved cache is the one of putting them at once, and a second look reads nothing."""

from __future__ import annotations

import json
import time

from inspector import load
from inspector.demo import build_demo_home
from inspector.home import locate_home
from inspector.store import scan as scan_mod
from inspector.store.scan import SIDECAR, FactCache, SessionDirScan

NOW = 1_800_000_000.0


def _home(tmp_path):
    return locate_home(build_demo_home(tmp_path / "demo-home", now=time.time()).home)


def test_deferred_puts_make_the_entries_of_putting_at_once(tmp_path, monkeypatch):
    """Rule: a deferred take answers sidecar() at once, puts nothing until put_deferred(), and
    then holds exactly the entries an immediate take would have made (the racy-window rule too)."""
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)
    home = _home(tmp_path)
    at_once = SessionDirScan(home.session_dir, FactCache(None))
    deferred = SessionDirScan(home.session_dir, FactCache(None))
    deferred.defer_sidecar_puts()
    todo = [(n, False) for n in at_once.live_names() + at_once.bak_names()]
    results = at_once.read_here(todo)
    assert results
    at_once.take(results)
    deferred.take(results)
    assert deferred.cache.entries[SIDECAR] == {}
    assert deferred.cache.seen(SIDECAR) == set()
    for name, _ in todo:
        assert deferred.sidecar(name) == at_once.sidecar(name)
    deferred.put_deferred()
    assert deferred.cache.entries[SIDECAR] == at_once.cache.entries[SIDECAR]
    assert len(deferred.cache.entries[SIDECAR]) == len(todo)
    assert deferred.cache.seen(SIDECAR) == at_once.cache.seen(SIDECAR)
    # later takes put at once again
    deferred.cache.entries[SIDECAR].clear()
    deferred.take(results[:1])
    assert list(deferred.cache.entries[SIDECAR]) == [results[0][0]]


def test_the_first_open_saves_every_sidecar_and_a_second_look_reads_none(tmp_path, monkeypatch):
    """Rule: load_catalogue defers the puts; the save it hands over makes them first, so the
    saved cache answers a second look for every sidecar (none is read again)."""
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)
    home = _home(tmp_path)
    scans: list[SessionDirScan] = []
    real_scan = load._scan
    monkeypatch.setattr(load, "_scan", lambda h: scans.append(real_scan(h)) or scans[-1])
    saves: list = []
    first = load.load_catalogue(home, now=NOW, save_later=saves.append)
    (scan,) = scans
    assert scan.cache.entries[SIDECAR] == {}  # not before the save
    assert list(scan_mod.cache_dir().glob("scan-*.json")) == []
    (save,) = saves
    save()
    (cache_file,) = scan_mod.cache_dir().glob("scan-*.json")
    names = set(scan.live_names() + scan.bak_names())
    assert set(json.loads(cache_file.read_text())[SIDECAR]) == names
    reads: list[str] = []
    real_read = scan_mod.read_regular
    monkeypatch.setattr(
        scan_mod, "read_regular", lambda p, *a, **k: reads.append(str(p)) or real_read(p, *a, **k)
    )
    second = load.load_catalogue(home, now=NOW)
    sidecar_reads = [p for p in reads if p.rsplit("/", 1)[-1] in names]
    assert sidecar_reads == []
    assert [r.to_json() for r in second.sorted_rows()] == [r.to_json() for r in first.sorted_rows()]


def test_the_forked_first_open_defers_them_too(tmp_path, monkeypatch):
    """Rule: on the window's own path (copies forked, sidecars taken by chunks) no sidecar entry
    is made before the save, and the save makes one for every sidecar and .bak."""
    from tests.test_load_steal import _forking
    from tests.test_load_steal import _home as steal_home

    home = steal_home(tmp_path)
    stolen = _forking(monkeypatch, 2)
    scans: list[SessionDirScan] = []
    real_scan = load._scan
    monkeypatch.setattr(load, "_scan", lambda h: scans.append(real_scan(h)) or scans[-1])
    saves: list = []
    load.load_catalogue(home, now=NOW, save_later=saves.append)
    assert stolen == [1]
    (scan,) = scans
    assert scan.cache.entries[SIDECAR] == {}
    (save,) = saves
    save()
    (cache_file,) = scan_mod.cache_dir().glob("scan-*.json")
    assert set(json.loads(cache_file.read_text())[SIDECAR]) == set(scan.live_names() + scan.bak_names())
