"""hermes' audit counts the messages of every sidecar and backup with ``_msg_count``, which lets the
RecursionError of ``json.loads`` out: a file nested too deeply makes the whole audit fail (its HTTP
500). The inspector says so, as for a bad turn journal, with the audit of the rest beside it. Found
by the differential test's deep sidecars (seed 41); expected values written out here."""

from __future__ import annotations

import pytest

from inspector.repair.audit import HermesAuditError, audit_session_recovery, with_nesting_failures
from inspector.store.scan import SessionDirScan
from tests.recovery_helpers import sidecar, write_json

DEEP = b'{"session_id": "deep", "messages": [' + b"[" * 995 + b"]" * 995 + b"]}"
READABLE = b'{"session_id": "ok600", "messages": [' + b"[" * 600 + b"]" * 600 + b"]}"


def _bad_journal(folder, name="bad one"):
    path = folder / "_turn_journal" / f"{name}~1.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_text('{"event": "submitted", "turn_id": "t", "content": "x", "created_at": 1}\n')


def test_a_live_sidecar_nested_too_deeply_fails_the_audit(tmp_path):
    write_json(tmp_path / "a.json", sidecar("a", 2))
    (tmp_path / "deep.json").write_bytes(DEEP)
    with pytest.raises(HermesAuditError) as info:
        audit_session_recovery(tmp_path, None)
    assert str(info.value) == (
        "hermes' recovery audit would fail (HTTP 500) on a sidecar nested too deeply to parse: deep.json"
    )
    assert info.value.errors == ["deep.json: nested too deeply for hermes' json.loads (RecursionError)"]
    assert info.value.partial_report == {
        "status": "ok",
        "summary": {"ok": 2, "repairable": 0, "unsafe_to_repair": 0},
        "items": [],
    }


def test_an_orphan_backup_nested_too_deeply_fails_the_audit_after_the_live_ones(tmp_path):
    """Every offending file is named, live sidecars first (hermes counts them first), then backups."""
    (tmp_path / "z.json").write_bytes(DEEP)
    (tmp_path / "gone.json.bak").write_bytes(DEEP)
    with pytest.raises(HermesAuditError) as info:
        audit_session_recovery(tmp_path, None)
    assert str(info.value).endswith("nested too deeply to parse: z.json, gone.json.bak")
    assert [e.split(":")[0] for e in info.value.errors] == ["z.json", "gone.json.bak"]
    # the partial audit still has the orphan backup, unreadable to the inspector's count
    assert [(i["session_id"], i["kind"]) for i in info.value.partial_report["items"]] == [
        ("gone", "malformed_orphan_backup")
    ]


def test_a_deep_sidecar_and_two_bad_turn_journals_are_all_in_the_message(tmp_path):
    (tmp_path / "deep.json").write_bytes(DEEP)
    _bad_journal(tmp_path)
    _bad_journal(tmp_path, "bad two")
    with pytest.raises(HermesAuditError) as info:
        audit_session_recovery(tmp_path, None)
    errors = info.value.errors
    assert len(errors) == 3 and errors[1].startswith("bad one: ") and errors[2].startswith("bad two: ")
    assert str(info.value) == (
        "hermes' recovery audit would fail (HTTP 500) on a sidecar nested too deeply to parse: deep.json; "
        f"and on the turn journal: {errors[1]}; {errors[2]}"
    )


def test_600_levels_are_read_by_hermes_and_fail_nothing(tmp_path):
    (tmp_path / "ok600.json").write_bytes(READABLE)
    assert audit_session_recovery(tmp_path, None)["summary"]["ok"] == 1


def test_left_to_the_caller_the_audit_does_not_fail_and_the_caller_adds_it(tmp_path):
    (tmp_path / "deep.json").write_bytes(DEEP)
    write_json(tmp_path / "a.json", sidecar("a", 1))
    scan = SessionDirScan(tmp_path)
    report = audit_session_recovery(tmp_path, None, scan=scan, nesting_checked_elsewhere=True)
    assert report["summary"]["ok"] == 2
    audit, error = with_nesting_failures(report, None, scan)
    assert audit is None and error.partial_report is report
    assert error.errors == ["deep.json: nested too deeply for hermes' json.loads (RecursionError)"]


def test_the_caller_adds_the_deep_sidecar_before_the_journal_error_it_was_given(tmp_path):
    (tmp_path / "deep.json").write_bytes(DEEP)
    _bad_journal(tmp_path)
    scan = SessionDirScan(tmp_path)
    with pytest.raises(HermesAuditError) as info:
        audit_session_recovery(tmp_path, None, scan=scan, nesting_checked_elsewhere=True)
    assert [e.split(":")[0] for e in info.value.errors] == ["bad one"]
    audit, error = with_nesting_failures(None, info.value, scan)
    assert audit is None and error.partial_report is info.value.partial_report
    assert [e.split(":")[0] for e in error.errors] == ["deep.json", "bad one"]
    assert "deep.json; and on the turn journal: bad one: " in str(error)


def test_nothing_deep_leaves_the_report_and_the_error_as_they_were(tmp_path):
    write_json(tmp_path / "a.json", sidecar("a", 1))
    scan = SessionDirScan(tmp_path)
    report = audit_session_recovery(tmp_path, None, scan=scan, nesting_checked_elsewhere=True)
    assert with_nesting_failures(report, None, scan) == (report, None)
    given = HermesAuditError("x", partial_report=report, errors=["e"])
    assert with_nesting_failures(None, given, scan) == (None, given)
