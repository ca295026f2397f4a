"""hermes' read-only recovery audit: every kind, category, recommendation, order and quirk."""

from __future__ import annotations

import json
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.repair.audit import HermesAuditError, audit_session_recovery
from inspector.store import statedb
from tests.conftest import FIXTURES
from tests.recovery_helpers import custom_state_db, seed_state_db, sidecar, tree, write_json

RECOVERY = FIXTURES / "recovery"


def _kinds(report):
    return [(i["session_id"], i["kind"]) for i in report["items"]]


def _journal(session_dir, name, *events):
    path = session_dir / "_turn_journal" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


def _index(session_dir, *ids):
    write_json(session_dir / "_index.json", [{"session_id": i} for i in ids])


# ---------------------------------------------------------------- audit core


def test_audit_reports_repairable_orphan_backup_when_state_db_has_session(tmp_path):
    seed_state_db(tmp_path / "state.db", sid="orphan_sid")
    write_json(tmp_path / "orphan_sid.json.bak", sidecar("orphan_sid", 1))
    report = audit_session_recovery(tmp_path, tmp_path / "state.db")
    assert report["status"] == "warn"
    assert report["items"][0] == {
        "session_id": "orphan_sid",
        "kind": "orphan_backup",
        "category": "repairable",
        "recommendation": "restore_from_bak",
        "live_messages": -1,
        "bak_messages": 1,
    }


def test_audit_marks_orphan_backup_without_state_row_unsafe(tmp_path):
    seed_state_db(tmp_path / "state.db", sid="someone_else")
    write_json(tmp_path / "orphan_sid.json.bak", sidecar("orphan_sid", 2))
    report = audit_session_recovery(tmp_path, tmp_path / "state.db")
    assert report["status"] == "needs_manual_review"
    assert report["items"][0]["kind"] == "orphan_backup_without_state_row"
    assert report["items"][0]["category"] == "unsafe_to_repair"
    assert report["items"][0]["recommendation"] == "manual_review"


def test_orphan_backup_is_repairable_when_state_db_is_missing_or_unreadable(tmp_path):
    write_json(tmp_path / "o.json.bak", sidecar("o", 2))
    assert _kinds(audit_session_recovery(tmp_path, None)) == [("o", "orphan_backup")]
    assert _kinds(audit_session_recovery(tmp_path, tmp_path / "missing.db")) == [("o", "orphan_backup")]
    (tmp_path / "bad.db").write_bytes(b"garbage" * 500)
    assert _kinds(audit_session_recovery(tmp_path, tmp_path / "bad.db")) == [("o", "orphan_backup")]


def test_orphan_backup_is_repairable_while_state_db_is_locked(tmp_path, monkeypatch):
    db = tmp_path / "state.db"
    seed_state_db(db, sid="other")
    write_json(tmp_path / "o.json.bak", sidecar("o", 2))
    writer = sqlite3.connect(db, isolation_level=None, timeout=0)
    writer.execute("BEGIN EXCLUSIVE")
    monkeypatch.setattr(statedb, "HERMES_TIMEOUT", 0.05)
    try:
        report = audit_session_recovery(tmp_path, db)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert _kinds(report) == [("o", "orphan_backup")]  # fail-open; the reader swallows the lock


def test_malformed_orphan_backup_is_checked_first(tmp_path):
    (tmp_path / "bad.json.bak").write_bytes(b"not json")
    write_json(tmp_path / "_deleted_webui_sessions.json", {"version": 1, "ids": ["bad"]})
    report = audit_session_recovery(tmp_path, None)
    assert report["items"] == [
        {
            "session_id": "bad",
            "kind": "malformed_orphan_backup",
            "category": "unsafe_to_repair",
            "recommendation": "manual_review",
            "live_messages": -1,
            "bak_messages": -1,
        }
    ]


def test_audit_reports_index_drift(tmp_path):
    write_json(tmp_path / "live.json", sidecar("live", 3))
    _index(tmp_path, "ghost")
    report = audit_session_recovery(tmp_path, None)
    assert report["summary"] == {"ok": 1, "repairable": 2, "unsafe_to_repair": 0}
    assert report["items"] == [
        {
            "session_id": "ghost",
            "kind": "index_missing_file",
            "category": "repairable",
            "recommendation": "rebuild_index",
            "live_messages": -1,
            "bak_messages": -1,
        },
        {
            "session_id": "live",
            "kind": "index_missing_entry",
            "category": "repairable",
            "recommendation": "rebuild_index",
            "live_messages": 3,
            "bak_messages": -1,
        },
    ]


def test_no_index_file_means_no_index_drift(tmp_path):
    write_json(tmp_path / "live.json", sidecar("live", 1))
    assert audit_session_recovery(tmp_path, None) == {
        "status": "ok",
        "summary": {"ok": 1, "repairable": 0, "unsafe_to_repair": 0},
        "items": [],
    }


@pytest.mark.parametrize("raw", [b"{", b"{}", b'"x"', b'[{"session_id": 7}, "junk"]'])
def test_unreadable_or_non_list_index_makes_every_live_file_missing(tmp_path, raw):
    write_json(tmp_path / "a.json", sidecar("a", 1))
    write_json(tmp_path / "b.json", sidecar("b", 2))
    (tmp_path / "_index.json").write_bytes(raw)
    assert _kinds(audit_session_recovery(tmp_path, None)) == [
        ("a", "index_missing_entry"),
        ("b", "index_missing_entry"),
    ]


def test_summary_ok_counts_live_sidecar_files_even_with_findings(tmp_path):
    write_json(tmp_path / "healthy.json", sidecar("healthy", 2))
    write_json(tmp_path / "shrunk.json", sidecar("shrunk", 1))
    write_json(tmp_path / "shrunk.json.bak", sidecar("shrunk", 4))
    (tmp_path / "torn.json").write_bytes(b"{")
    _index(tmp_path, "healthy", "shrunk", "torn")
    report = audit_session_recovery(tmp_path, None)
    assert report["summary"] == {"ok": 3, "repairable": 1, "unsafe_to_repair": 0}
    assert report["items"][0] == {
        "session_id": "shrunk",
        "kind": "shrunken_live",
        "category": "repairable",
        "recommendation": "restore_from_bak",
        "live_messages": 1,
        "bak_messages": 4,
    }


def test_malformed_live_with_readable_bak_is_shrunken_live(tmp_path):
    (tmp_path / "m.json").write_bytes(b'{"messages": [')
    write_json(tmp_path / "m.json.bak", sidecar("m", 0))
    assert audit_session_recovery(tmp_path, None)["items"][0]["live_messages"] == -1
    assert _kinds(audit_session_recovery(tmp_path, None)) == [("m", "shrunken_live")]


def test_guarded_shrink_is_not_reported(tmp_path):
    live = sidecar("g", 1, intentional_shrink_generation="0123456789ab4cde8f0123456789abcd")
    write_json(tmp_path / "g.json", live)
    write_json(tmp_path / "g.json.bak", sidecar("g", 3))
    assert audit_session_recovery(tmp_path, None)["items"] == []


def test_underscore_files_are_never_sessions(tmp_path):
    write_json(tmp_path / "_index.json", [])
    write_json(tmp_path / "_index.json.bak", [])
    write_json(tmp_path / "_pruned_webui_orphans.json", {"version": 1, "ids": []})
    assert audit_session_recovery(tmp_path, None)["summary"]["ok"] == 0
    assert audit_session_recovery(tmp_path, None)["items"] == []


# ---------------------------------------------------------------- state.db rows (seed tests)


def test_audit_reports_state_db_row_missing_sidecar(tmp_path):
    sid = seed_state_db(tmp_path / "state.db")
    report = audit_session_recovery(tmp_path, state_db_path=tmp_path / "state.db")
    assert any(
        item["session_id"] == sid
        and item["kind"] == "state_db_missing_sidecar"
        and item["category"] == "repairable"
        and item["recommendation"] == "materialize_from_state_db"
        for item in report["items"]
    )


def test_empty_state_db_webui_row_is_unsafe_not_materialized(tmp_path):
    sid = seed_state_db(tmp_path / "state.db", sid="empty_state_row", messages=0)
    audit = audit_session_recovery(tmp_path, state_db_path=tmp_path / "state.db")
    assert any(
        item["session_id"] == sid
        and item["kind"] == "state_db_orphan_webui_row"
        and item["category"] == "unsafe_to_repair"
        and item["recommendation"] == "manual_review"
        for item in audit["items"]
    )
    assert not any(i["session_id"] == sid and i["kind"] == "state_db_missing_sidecar" for i in audit["items"])


def test_audit_ignores_subagent_and_other_non_webui_rows(tmp_path):
    seed_state_db(tmp_path / "state.db", sid="sub_001", source="subagent")
    seed_state_db(tmp_path / "state.db", sid="case_001", source="WebUI", create=False)
    assert audit_session_recovery(tmp_path, tmp_path / "state.db")["items"] == []


def test_audit_reports_deleted_webui_tombstone_is_unsafe(tmp_path):
    sid = seed_state_db(tmp_path / "state.db", sid="deleted_001")
    write_json(tmp_path / "_deleted_webui_sessions.json", {"version": 1, "ids": [sid]})
    report = audit_session_recovery(tmp_path, tmp_path / "state.db")
    assert report["items"] == [
        {
            "session_id": sid,
            "kind": "state_db_deleted_webui_tombstone",
            "category": "unsafe_to_repair",
            "recommendation": "deleted_session_skipped",
            "live_messages": -1,
            "bak_messages": -1,
        }
    ]
    assert report["status"] == "needs_manual_review"


def test_audit_no_double_count_when_bak_and_state_db_row_both_survive(tmp_path):
    sid = seed_state_db(tmp_path / "state.db", sid="deleted_002")
    write_json(tmp_path / f"{sid}.json.bak", sidecar(sid, 3))
    write_json(tmp_path / "_deleted_webui_sessions.json", {"version": 1, "ids": [sid]})
    report = audit_session_recovery(tmp_path, tmp_path / "state.db")
    assert report["items"] == [
        {
            "session_id": sid,
            "kind": "state_db_deleted_webui_tombstone",
            "category": "unsafe_to_repair",
            "recommendation": "deleted_session_skipped",
            "live_messages": -1,
            "bak_messages": 3,
        }
    ]


def test_audit_skips_index_missing_file_when_durable_delete_tombstone_survives(tmp_path):
    _index(tmp_path, "gone")
    write_json(tmp_path / "_deleted_webui_sessions.json", {"version": 1, "ids": ["gone"]})
    assert audit_session_recovery(tmp_path, None)["items"] == []


def test_audit_skips_index_missing_file_for_tombstoned_state_rows(tmp_path):
    seed_state_db(tmp_path / "state.db", sid="gone")
    _index(tmp_path, "gone")
    write_json(tmp_path / "_deleted_webui_sessions.json", {"version": 1, "ids": ["gone"]})
    assert _kinds(audit_session_recovery(tmp_path, tmp_path / "state.db")) == [
        ("gone", "state_db_deleted_webui_tombstone")
    ]


def test_audit_skips_orphan_backup_when_durable_delete_tombstone_survives(tmp_path):
    write_json(tmp_path / "gone.json.bak", sidecar("gone", 2))
    write_json(tmp_path / "_deleted_webui_sessions.json", {"version": 1, "ids": ["gone"]})
    report = audit_session_recovery(tmp_path, None)
    assert _kinds(report) == [("gone", "state_db_deleted_webui_tombstone")]
    assert not any(i["kind"] == "orphan_backup" for i in report["items"])


def test_index_entry_alone_does_not_block_recovery(tmp_path):
    sid = seed_state_db(tmp_path / "state.db", sid="crashed_001")
    write_json(tmp_path / f"{sid}.json.bak", sidecar(sid, 3))
    _index(tmp_path, sid)
    assert _kinds(audit_session_recovery(tmp_path, tmp_path / "state.db")) == [
        (sid, "orphan_backup"),
        (sid, "index_missing_file"),
        (sid, "state_db_missing_sidecar"),
    ]


def test_unstripped_state_db_id_is_reported_raw(tmp_path):
    custom_state_db(
        tmp_path / "s.db",
        "CREATE TABLE sessions (id TEXT, source TEXT)",
        "CREATE TABLE messages (session_id TEXT, role TEXT, content TEXT)",
        [{"id": " padded ", "source": "webui"}],
        [{"session_id": "padded", "role": "user", "content": "x"}],
    )
    assert _kinds(audit_session_recovery(tmp_path, tmp_path / "s.db")) == [
        (" padded ", "state_db_missing_sidecar")
    ]


def test_state_rows_follow_started_at_descending(tmp_path):
    custom_state_db(
        tmp_path / "s.db",
        "CREATE TABLE sessions (id TEXT, source TEXT, started_at REAL)",
        "CREATE TABLE messages (session_id TEXT, role TEXT, content TEXT)",
        [
            {"id": "old", "source": "webui", "started_at": 1.0},
            {"id": "new", "source": "webui", "started_at": 2.0},
        ],
        [{"session_id": "old", "role": "user", "content": "x"}],
    )
    assert _kinds(audit_session_recovery(tmp_path, tmp_path / "s.db")) == [
        ("new", "state_db_orphan_webui_row"),
        ("old", "state_db_missing_sidecar"),
    ]


def test_missing_messages_table_makes_every_missing_row_an_orphan(tmp_path):
    custom_state_db(
        tmp_path / "s.db",
        "CREATE TABLE sessions (id TEXT, source TEXT)",
        None,
        [{"id": "a", "source": "webui"}],
    )
    assert _kinds(audit_session_recovery(tmp_path, tmp_path / "s.db")) == [("a", "state_db_orphan_webui_row")]


def test_sessions_without_source_column_give_no_state_items(tmp_path):
    custom_state_db(tmp_path / "s.db", "CREATE TABLE sessions (id TEXT)", None, [{"id": "a"}])
    assert audit_session_recovery(tmp_path, tmp_path / "s.db")["items"] == []


def test_missing_session_dir_is_ok_even_with_materializable_rows(tmp_path):
    seed_state_db(tmp_path / "state.db")
    report = audit_session_recovery(tmp_path / "missing", tmp_path / "state.db")
    assert report == {
        "status": "ok",
        "summary": {"ok": 0, "repairable": 0, "unsafe_to_repair": 0},
        "items": [],
    }
    assert not (tmp_path / "missing").exists()


# ---------------------------------------------------------------- turn journal


def test_audit_reports_pending_turn_journal_entry_when_user_message_absent(tmp_path):
    write_json(tmp_path / "sess.json", sidecar("sess", 2))
    _index(tmp_path, "sess")
    _journal(
        tmp_path,
        "sess~4242.jsonl",
        {"event": "submitted", "turn_id": "turn-1", "content": "lost prompt", "created_at": 10.0},
    )
    assert audit_session_recovery(tmp_path, None)["items"] == [
        {
            "session_id": "sess",
            "kind": "turn_journal_pending_turn",
            "category": "repairable",
            "recommendation": "audit_only_pending_turn_journal",
            "live_messages": 2,
            "bak_messages": -1,
            "turn_id": "turn-1",
            "event": "submitted",
        }
    ]


def test_audit_ignores_completed_or_already_materialized_turn_journal_entry(tmp_path):
    write_json(
        tmp_path / "sess.json", {"session_id": "sess", "messages": [{"role": "user", "content": "saved"}]}
    )
    _index(tmp_path, "sess")
    _journal(
        tmp_path,
        "sess~1.jsonl",
        {"event": "submitted", "turn_id": "t1", "content": "done", "created_at": 1.0},
        {"event": "completed", "turn_id": "t1", "created_at": 2.0},
        {"event": "submitted", "turn_id": "t2", "content": " saved ", "created_at": 3.0},
        {"event": "submitted", "turn_id": "t3", "content": "stopped", "created_at": 4.0},
        {"event": "interrupted", "turn_id": "t3", "created_at": 5.0},
    )
    assert audit_session_recovery(tmp_path, None)["items"] == []


def test_turn_whose_latest_event_is_worker_started_is_not_reported(tmp_path):
    _journal(
        tmp_path,
        "s.jsonl",
        {"event": "submitted", "turn_id": "t1", "content": "hello", "created_at": 1.0},
        {"event": "worker_started", "turn_id": "t1", "created_at": 2.0},
    )
    assert audit_session_recovery(tmp_path, None)["items"] == []


def test_journal_for_missing_sidecar_reports_minus_one_and_sorts_turns(tmp_path):
    _journal(
        tmp_path,
        "gone~1.jsonl",
        {"event": "submitted", "turn_id": "b", "content": "two", "created_at": 1.0},
        {"event": "submitted", "turn_id": "a", "content": "one", "created_at": 2.0},
    )
    _journal(
        tmp_path, "alpha~1.jsonl", {"event": "submitted", "turn_id": "z", "content": "x", "created_at": 1.0}
    )
    report = audit_session_recovery(tmp_path, None)
    assert [(i["session_id"], i["turn_id"], i["live_messages"]) for i in report["items"]] == [
        ("alpha", "z", -1),
        ("gone", "a", -1),
        ("gone", "b", -1),
    ]


def test_invalid_journal_name_makes_hermes_audit_fail_but_keeps_a_partial_report(tmp_path):
    write_json(tmp_path / "live.json", sidecar("live", 1))
    _index(tmp_path, "live", "ghost")
    _journal(
        tmp_path, "bad name~1.jsonl", {"event": "submitted", "turn_id": "t", "content": "x", "created_at": 1}
    )
    _journal(tmp_path, "zed~1.jsonl", {"event": "submitted", "turn_id": "t", "content": "y", "created_at": 1})
    with pytest.raises(HermesAuditError, match="invalid session_id") as info:
        audit_session_recovery(tmp_path, None)
    assert isinstance(info.value, ValueError)
    partial = info.value.partial_report
    assert _kinds(partial) == [("ghost", "index_missing_file"), ("zed", "turn_journal_pending_turn")]
    assert partial["status"] == "warn" and len(info.value.errors) == 1


@pytest.mark.parametrize(
    "payload",
    [
        b'{"event": "submitted", "turn_id": "t", "content": "x", "created_at": 1}\n\xe2\x82',
        b'{"event": "submitted", "turn_id": "t", "created_at": 1}\n{"event": "x", "turn_id": "t", "created_at": "soon"}\n',
    ],
)
def test_journals_hermes_cannot_read_raise_hermes_audit_error(tmp_path, payload):
    path = tmp_path / "_turn_journal" / "s~1.jsonl"
    path.parent.mkdir()
    path.write_bytes(payload)
    with pytest.raises(HermesAuditError):
        audit_session_recovery(tmp_path, None)


def test_sidecar_with_numeric_messages_makes_the_journal_step_fail(tmp_path):
    write_json(tmp_path / "s.json", {"session_id": "s", "messages": 3})
    _index(tmp_path, "s")
    _journal(tmp_path, "s~1.jsonl", {"event": "submitted", "turn_id": "t", "content": "x", "created_at": 1})
    with pytest.raises(HermesAuditError, match="not a list"):
        audit_session_recovery(tmp_path, None)


# ---------------------------------------------------------------- whole trees


def test_audit_matches_hermes_on_the_example_fixture():
    expected = json.loads((RECOVERY / "example" / "audit_report.json").read_text(encoding="utf-8"))
    got = audit_session_recovery(RECOVERY / "example" / "sessions_before", RECOVERY / "example" / "state.db")
    assert got == expected
    assert (
        json.dumps(got, sort_keys=True)
        == (RECOVERY / "example" / "cli_audit_stdout.json").read_text(encoding="utf-8").strip()
    )


def test_audit_matches_hermes_on_the_extended_schema_fixture(tmp_path):
    expected = json.loads((RECOVERY / "extended_schema" / "audit_report.json").read_text(encoding="utf-8"))
    assert audit_session_recovery(tmp_path, RECOVERY / "extended_schema" / "state.db") == expected


def test_audit_is_read_only(tmp_path):
    seed_state_db(tmp_path / "state.db")
    write_json(tmp_path / "o.json.bak", sidecar("o", 2))
    _index(tmp_path, "ghost")
    _journal(tmp_path, "x~1.jsonl", {"event": "submitted", "turn_id": "t", "content": "x", "created_at": 1})
    before = tree(tmp_path)
    audit_session_recovery(tmp_path, tmp_path / "state.db")
    assert tree(tmp_path) == before


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    files=st.dictionaries(
        st.sampled_from(
            ["a.json", "a.json.bak", "b.json.bak", "_index.json", "_deleted_webui_sessions.json"]
        ),
        st.one_of(
            st.binary(max_size=40),
            st.sampled_from(
                [
                    b"[]",
                    b"{}",
                    b'{"messages": []}',
                    b'{"messages": [1]}',
                    b'[{"session_id": "a"}]',
                    b'{"version": 1, "ids": ["b"]}',
                    b'{"messages": 3}',
                ]
            ),
        ),
        max_size=5,
    )
)
def test_audit_never_fails_on_arbitrary_sidecars_backups_index_or_tombstone(tmp_path, files):
    for old in tmp_path.iterdir():
        old.unlink()
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    report = audit_session_recovery(tmp_path, None)
    assert report["summary"]["ok"] == (1 if "a.json" in files else 0)
    assert report["status"] in ("ok", "warn", "needs_manual_review")
