"""hermes' state.db query of the audit, kept in the fact cache while state.db is unchanged: every
report equals the one the query gives, whatever changed in the folder since."""

from __future__ import annotations

import json
import os

import pytest

from inspector.repair import audit as audit_mod
from inspector.repair.audit import audit_session_recovery
from inspector.store import scan as scan_mod
from inspector.store.scan import FactCache, SessionDirScan
from tests.recovery_helpers import custom_state_db, seed_state_db, sidecar, write_json


@pytest.fixture
def queries(monkeypatch):
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)
    calls = []
    real = audit_mod.read_missing_sidecar_rows
    monkeypatch.setattr(
        audit_mod, "read_missing_sidecar_rows", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    return calls


def _both(folder, db, cache):
    """(the audit with the cache, the audit without any): they must be equal."""
    cached = audit_session_recovery(folder, db, scan=SessionDirScan(folder, cache))
    plain = audit_session_recovery(folder, db, scan=SessionDirScan(folder, None))
    return cached, plain


def _home(tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    db = tmp_path / "state.db"
    seed_state_db(db, sid="full")
    seed_state_db(db, sid="empty", messages=0, create=False)
    seed_state_db(db, sid="live", create=False)
    seed_state_db(db, sid="cli_one", source="cli", create=False)
    write_json(folder / "live.json", sidecar("live", 2))
    return folder, db, FactCache(tmp_path / "cache.json")


def test_a_second_look_at_an_unchanged_state_db_runs_no_query_and_says_the_same(tmp_path, queries):
    folder, db, cache = _home(tmp_path)
    first, plain = _both(folder, db, cache)
    assert first == plain
    assert sorted((i["session_id"], i["kind"]) for i in first["items"]) == [
        ("empty", "state_db_orphan_webui_row"),
        ("full", "state_db_missing_sidecar"),
    ]
    calls = len(queries)
    second, plain = _both(folder, db, cache)
    assert second == plain == first
    assert len(queries) == calls + 1  # only the audit without a cache asked state.db


def test_the_folder_and_the_tombstones_are_asked_again_on_every_look(tmp_path, queries):
    folder, db, cache = _home(tmp_path)
    _both(folder, db, cache)
    write_json(folder / "full.json", sidecar("full", 2))  # a row gets its sidecar
    write_json(folder / "_deleted_webui_sessions.json", {"version": 1, "ids": ["empty"]})
    calls = len(queries)
    cached, plain = _both(folder, db, cache)
    assert cached == plain and len(queries) == calls + 1
    assert [(i["session_id"], i["kind"]) for i in cached["items"]] == [
        ("empty", "state_db_deleted_webui_tombstone")
    ]


def test_a_sidecar_removed_since_makes_the_query_run_again(tmp_path, queries):
    folder, db, cache = _home(tmp_path)
    _both(folder, db, cache)
    os.unlink(folder / "live.json")  # its row's messages were never asked for
    calls = len(queries)
    cached, plain = _both(folder, db, cache)
    assert cached == plain and len(queries) == calls + 2
    assert "live" in [i["session_id"] for i in cached["items"]]


def test_a_changed_state_db_is_queried_again(tmp_path, queries):
    folder, db, cache = _home(tmp_path)
    _both(folder, db, cache)
    seed_state_db(db, sid="newer", create=False)
    calls = len(queries)
    cached, plain = _both(folder, db, cache)
    assert cached == plain and len(queries) == calls + 2
    assert "newer" in [i["session_id"] for i in cached["items"]]


def test_a_failed_query_is_not_kept(tmp_path, queries, monkeypatch):
    folder, db, cache = _home(tmp_path)

    from inspector.store import statedb

    real = statedb._hermes_rows
    monkeypatch.setattr(statedb, "_hermes_rows", lambda *a, **k: (_ for _ in ()).throw(OSError("locked")))
    broken = audit_session_recovery(folder, db, scan=SessionDirScan(folder, cache))
    assert [i for i in broken["items"] if i["kind"].startswith("state_db")] == []  # hermes: no rows
    monkeypatch.setattr(statedb, "_hermes_rows", real)
    cached, plain = _both(folder, db, cache)
    assert cached == plain and any(i["kind"] == "state_db_missing_sidecar" for i in cached["items"])


def test_ids_that_are_not_plain_text_or_repeat_after_stripping_are_not_kept(tmp_path, queries):
    folder = tmp_path / "sessions"
    folder.mkdir()
    db = custom_state_db(
        tmp_path / "s.db",
        "CREATE TABLE sessions (id, source TEXT)",
        "CREATE TABLE messages (session_id TEXT, role TEXT, content TEXT)",
        [{"id": " a ", "source": "webui"}, {"id": "a", "source": "webui"}, {"id": 7, "source": "webui"}],
        [{"session_id": "a", "role": "user", "content": "x"}],
    )
    cache = FactCache(tmp_path / "cache.json")
    first, plain = _both(folder, db, cache)
    assert first == plain
    calls = len(queries)
    second, plain = _both(folder, db, cache)
    assert second == plain == first and len(queries) == calls + 2  # asked again: nothing was kept
    assert json.loads(json.dumps(cache.entries))["state_db"] == {}
