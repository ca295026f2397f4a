"""The audit's state.db rows (tests/MUTATION.md, fifth session): kept in the fact cache only while
state.db, its WAL and its rollback journal are the files they were, kept across runs, and read
with the audit's own view of the folder (its one listing) and of the tombstone (its snapshot)."""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing

import pytest

from inspector.repair import audit as audit_mod
from inspector.repair.audit import audit_session_recovery
from inspector.store import scan as scan_mod
from inspector.store.files import FileSnapshot
from inspector.store.scan import FactCache, SessionDirScan
from inspector.store.tombstone import load_tombstone_ids
from tests.recovery_helpers import SEED_MESSAGES, SEED_SESSIONS, seed_state_db, sidecar, write_json


@pytest.fixture
def queries(monkeypatch):
    """Every query of state.db the audit makes (and no racy window: a file just made may be kept)."""
    monkeypatch.setattr(scan_mod, "RACY_WINDOW_NS", 0)
    calls = []
    real = audit_mod.read_missing_sidecar_rows
    monkeypatch.setattr(
        audit_mod, "read_missing_sidecar_rows", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    return calls


def _kinds(report: dict) -> list[tuple[str, str]]:
    return sorted((i["session_id"], i["kind"]) for i in report["items"] if i["kind"].startswith("state_db"))


def _add_row(conn: sqlite3.Connection, sid: str) -> None:
    conn.execute(
        "INSERT INTO sessions (id, source, title, model, started_at, message_count, parent_session_id) "
        "VALUES (?, 'webui', 't', 'm', 1.0, 1, NULL)",
        (sid,),
    )
    conn.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', 'hi', 1.0)", (sid,)
    )


def test_a_commit_into_the_wal_alone_makes_the_query_run_again(tmp_path, queries):
    """Rule: the kept rows hold only while ``state.db-wal`` is the file it was: a commit in WAL
    mode changes that file and not ``state.db`` (no checkpoint yet), and the new row is reported."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    db = tmp_path / "state.db"
    with closing(sqlite3.connect(db)) as conn:
        conn.execute(SEED_SESSIONS)
        conn.execute(SEED_MESSAGES)
        conn.execute("PRAGMA journal_mode=WAL")
        _add_row(conn, "first")
        conn.commit()
    assert not os.path.exists(f"{db}-wal")  # the last connection's close checkpointed it away
    cache = FactCache(tmp_path / "cache.json")
    first = audit_session_recovery(folder, db, scan=SessionDirScan(folder, cache))
    assert _kinds(first) == [("first", "state_db_missing_sidecar")]
    main_before = os.stat(db)
    writer = sqlite3.connect(db)
    try:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        _add_row(writer, "second")
        writer.commit()
        main_after = os.stat(db)
        assert (main_after.st_size, main_after.st_mtime_ns, main_after.st_ctime_ns) == (
            main_before.st_size,
            main_before.st_mtime_ns,
            main_before.st_ctime_ns,
        )  # the commit is in the WAL only
        calls = len(queries)
        again = audit_session_recovery(folder, db, scan=SessionDirScan(folder, cache))
        assert len(queries) == calls + 1
        assert _kinds(again) == [
            ("first", "state_db_missing_sidecar"),
            ("second", "state_db_missing_sidecar"),
        ]
    finally:
        writer.close()


def test_a_rollback_journal_appearing_makes_the_query_run_again(tmp_path, queries):
    """Rule: the kept rows hold only while ``state.db-journal`` is the file it was: a writer in the
    middle of a transaction (rollback mode) has one, and the rows are asked again (the reader sees
    the last commit: the same rows)."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    db = tmp_path / "state.db"
    seed_state_db(db, sid="kept")
    cache = FactCache(tmp_path / "cache.json")
    first = audit_session_recovery(folder, db, scan=SessionDirScan(folder, cache))
    assert _kinds(first) == [("kept", "state_db_missing_sidecar")]
    calls = len(queries)
    audit_session_recovery(folder, db, scan=SessionDirScan(folder, cache))
    assert len(queries) == calls  # unchanged files: the kept rows
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        _add_row(writer, "uncommitted")
        assert os.path.exists(f"{db}-journal")
        again = audit_session_recovery(folder, db, scan=SessionDirScan(folder, cache))
        assert len(queries) == calls + 1
        assert _kinds(again) == [("kept", "state_db_missing_sidecar")]
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_the_kept_rows_serve_the_next_run_from_the_saved_cache(tmp_path, queries):
    """Rule: the rows are kept in the saved cache under state.db's path, so the next run (a new
    cache read from the file) asks state.db nothing while its files are unchanged."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    db = tmp_path / "state.db"
    seed_state_db(db, sid="kept")
    seed_state_db(db, sid="empty", messages=0, create=False)
    cache = FactCache(tmp_path / "cache.json")
    first = audit_session_recovery(folder, db, scan=SessionDirScan(folder, cache))
    cache.save()
    saved = json.loads((tmp_path / "cache.json").read_text(encoding="utf-8"))
    assert list(saved["state_db"]) == [f"hermes-missing-rows:{db}"]
    calls = len(queries)
    again = audit_session_recovery(
        folder, db, scan=SessionDirScan(folder, FactCache(tmp_path / "cache.json"))
    )
    assert len(queries) == calls
    assert again == first
    assert _kinds(again) == [("empty", "state_db_orphan_webui_row"), ("kept", "state_db_missing_sidecar")]


@pytest.mark.parametrize("cached", [False, True], ids=["no-cache", "cache"])
def test_a_sidecar_written_after_the_listing_is_not_seen_by_the_rows(tmp_path, queries, cached):
    """Rule: the rows' "has a sidecar" is the audit's one listing of the folder (as every other
    part of the report), not a second look at the disk: a sidecar written after the scan listed
    the folder leaves its row reported, and the live count does not hold it either."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    db = tmp_path / "state.db"
    seed_state_db(db, sid="late")
    scan = SessionDirScan(folder, FactCache(tmp_path / "cache.json") if cached else None)
    scan.live_names()  # the listing is taken
    write_json(folder / "late.json", sidecar("late", 2))
    report = audit_session_recovery(folder, db, scan=scan)
    assert _kinds(report) == [("late", "state_db_missing_sidecar")]
    assert report["summary"]["ok"] == 0


@pytest.mark.parametrize("cached", [False, True], ids=["no-cache", "cache"])
def test_the_rows_read_the_tombstone_through_the_audits_snapshot(tmp_path, queries, cached):
    """Rule: a row's "deleted in the WebUI" comes from the tombstone as the audit's snapshot read
    it: a tombstone rewritten on disk after the snapshot read it changes nothing in this audit."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    db = tmp_path / "state.db"
    seed_state_db(db, sid="gone", messages=0)
    write_json(folder / "_deleted_webui_sessions.json", {"version": 1, "ids": ["gone"]})
    snap = FileSnapshot()
    assert load_tombstone_ids(folder, snap) == {"gone"}
    write_json(folder / "_deleted_webui_sessions.json", {"version": 1, "ids": []})
    scan = SessionDirScan(folder, FactCache(tmp_path / "cache.json") if cached else None)
    report = audit_session_recovery(folder, db, snap, scan=scan)
    assert _kinds(report) == [("gone", "state_db_deleted_webui_tombstone")]
    fresh = audit_session_recovery(folder, db, scan=SessionDirScan(folder, None))
    assert _kinds(fresh) == [("gone", "state_db_orphan_webui_row")]  # the disk's tombstone now
