"""hermes' audit with its state.db query begun ahead (``AuditAhead``: the forked copy of a first open
starts it before it reads its sidecars, and runs the rest of the audit after them): the same report
as ``audit_session_recovery``, one query, begun when it is made, and one view of the tombstone."""

from __future__ import annotations

import threading

import pytest

from inspector.repair import audit as audit_mod
from inspector.repair.audit import AuditAhead, HermesAuditError, audit_session_recovery
from inspector.store.scan import FactCache, SessionDirScan
from tests.recovery_helpers import seed_state_db, sidecar, write_json


@pytest.fixture
def queries(monkeypatch):
    """The audit's state.db queries: ``started`` is set when one begins, ``done`` when one returned."""
    calls: list[int] = []
    started, done = threading.Event(), threading.Event()
    real = audit_mod.read_missing_sidecar_rows

    def counted(*args, **kwargs):
        calls.append(1)
        started.set()
        try:
            return real(*args, **kwargs)
        finally:
            done.set()

    monkeypatch.setattr(audit_mod, "read_missing_sidecar_rows", counted)
    return calls, started, done


def _home(tmp_path):
    """A folder and state.db where every part of the audit has an item: a live sidecar behind its
    backup, an orphan backup with and without a state.db row, a tombstoned orphan backup, index
    rows without sidecars, state.db rows without sidecars (one with messages, one tombstoned)."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    db = tmp_path / "state.db"
    seed_state_db(db, sid="lost", messages=3)
    seed_state_db(db, sid="gone", messages=0, create=False)
    seed_state_db(db, sid="orphan", messages=1, create=False)
    write_json(folder / "live.json", sidecar("live", 2))
    write_json(folder / "live.json.bak", sidecar("live", 5))
    write_json(folder / "orphan.json.bak", sidecar("orphan", 4))
    write_json(folder / "stray.json.bak", sidecar("stray", 1))
    write_json(folder / "binned.json.bak", sidecar("binned", 2))
    write_json(folder / "_deleted_webui_sessions.json", {"version": 1, "ids": ["gone", "binned", "dropped"]})
    write_json(
        folder / "_index.json",
        [{"session_id": "live"}, {"session_id": "dropped"}, {"session_id": "elsewhere"}],
    )
    return folder, db


def _scan(folder, tmp_path, cached: bool) -> SessionDirScan:
    """A scan of its own, with a fact cache of its own when ``cached`` (never saved: each starts empty)."""
    return SessionDirScan(folder, FactCache(tmp_path / "cache.json") if cached else None)


@pytest.mark.parametrize(
    "nesting_checked_elsewhere", [False, True], ids=["nesting-here", "nesting-elsewhere"]
)
@pytest.mark.parametrize("cached", [False, True], ids=["no-cache", "cache"])
def test_the_audit_begun_ahead_is_the_audit(tmp_path, queries, cached, nesting_checked_elsewhere):
    folder, db = _home(tmp_path)
    expected = audit_session_recovery(
        folder, db, scan=_scan(folder, tmp_path, cached), nesting_checked_elsewhere=nesting_checked_elsewhere
    )
    got = AuditAhead(folder, db, _scan(folder, tmp_path, cached)).audit(
        nesting_checked_elsewhere=nesting_checked_elsewhere
    )
    assert got == expected
    kinds = sorted((i["session_id"], i["kind"]) for i in got["items"])
    assert kinds == [  # "dropped": an index row of a tombstoned session, passed by
        ("binned", "state_db_deleted_webui_tombstone"),
        ("elsewhere", "index_missing_file"),
        ("gone", "state_db_deleted_webui_tombstone"),
        ("live", "shrunken_live"),
        ("lost", "state_db_missing_sidecar"),
        ("orphan", "orphan_backup"),
        ("orphan", "state_db_missing_sidecar"),
        ("stray", "orphan_backup_without_state_row"),
    ]
    assert got["summary"]["ok"] == 1


def test_a_sidecar_nested_too_deeply_fails_the_audit_begun_ahead_as_it_fails_the_audit(tmp_path, queries):
    folder, db = _home(tmp_path)
    (folder / "deep.json").write_text('{"messages": ' + "[" * 5000 + "]" * 5000 + "}", encoding="utf-8")
    with pytest.raises(HermesAuditError) as expected:
        audit_session_recovery(folder, db, scan=SessionDirScan(folder, None))
    with pytest.raises(HermesAuditError) as got:
        AuditAhead(folder, db, SessionDirScan(folder, None)).audit()
    assert str(got.value) == str(expected.value)
    assert got.value.partial_report == expected.value.partial_report
    assert got.value.errors == expected.value.errors
    # with the nesting looked for elsewhere, the audit of the rest (deep.json counted as live)
    report = AuditAhead(folder, db, SessionDirScan(folder, None)).audit(nesting_checked_elsewhere=True)
    assert report["summary"]["ok"] == 2


def test_the_query_begins_when_the_audit_ahead_is_made_and_runs_once(tmp_path, queries):
    calls, started, done = queries
    folder, db = _home(tmp_path)
    ahead = AuditAhead(folder, db, SessionDirScan(folder, None))
    assert started.wait(10)  # before audit() is asked for
    assert done.wait(10)
    report = ahead.audit()
    assert calls == [1]
    assert ("lost", "state_db_missing_sidecar") in [(i["session_id"], i["kind"]) for i in report["items"]]


def test_rows_read_ahead_are_the_rows_of_when_it_was_made(tmp_path, queries):
    """A row added to state.db after the query ran is not in this audit (the next one sees it)."""
    _, _, done = queries
    folder, db = _home(tmp_path)
    ahead = AuditAhead(folder, db, SessionDirScan(folder, None))
    assert done.wait(10)
    seed_state_db(db, sid="later", messages=2, create=False)
    ids = sorted(i["session_id"] for i in ahead.audit()["items"] if i["kind"] == "state_db_missing_sidecar")
    assert ids == ["lost", "orphan"]
    again = audit_session_recovery(folder, db, scan=SessionDirScan(folder, None))
    assert sorted(i["session_id"] for i in again["items"] if i["kind"] == "state_db_missing_sidecar") == [
        "later",
        "lost",
        "orphan",
    ]


def test_the_rows_and_the_rest_of_the_audit_read_one_tombstone(tmp_path, queries):
    """The query, begun ahead, reads the tombstone through the audit's snapshot: rewritten on disk
    before the rest of the audit runs, the rest still sees the bytes the query saw (the orphan
    backup of a tombstoned session, the index row of one), as one audit of one moment."""
    _, _, done = queries
    folder, db = _home(tmp_path)
    ahead = AuditAhead(folder, db, SessionDirScan(folder, None))
    assert done.wait(10)
    write_json(folder / "_deleted_webui_sessions.json", {"version": 1, "ids": []})
    kinds = {(i["session_id"], i["kind"]) for i in ahead.audit()["items"]}
    assert ("gone", "state_db_deleted_webui_tombstone") in kinds
    assert ("binned", "state_db_deleted_webui_tombstone") in kinds
    assert ("dropped", "index_missing_file") not in kinds
    fresh = {(i["session_id"], i["kind"]) for i in audit_session_recovery(folder, db)["items"]}
    assert ("binned", "orphan_backup_without_state_row") in fresh  # the disk's tombstone now
    assert ("dropped", "index_missing_file") in fresh
    assert ("gone", "state_db_orphan_webui_row") in fresh


def test_a_folder_gone_before_the_rest_of_the_audit_gives_the_empty_report(tmp_path, queries):
    _, _, done = queries
    folder, db = _home(tmp_path)
    ahead = AuditAhead(folder, db, SessionDirScan(folder, None))
    assert done.wait(10)
    moved = tmp_path / "moved"
    folder.rename(moved)
    report = ahead.audit()
    assert report == audit_session_recovery(folder, db)
    assert (report["status"], report["summary"]["ok"], report["items"]) == ("ok", 0, [])


def test_no_state_db_gives_no_rows_ahead_either(tmp_path, queries):
    folder, _ = _home(tmp_path)
    missing = tmp_path / "nowhere" / "state.db"
    got = AuditAhead(folder, missing, SessionDirScan(folder, None)).audit()
    assert got == audit_session_recovery(folder, missing, scan=SessionDirScan(folder, None))
    assert not [i for i in got["items"] if i["kind"].startswith("state_db_missing")]
