"""The recovery audit's smaller rules, each on a hand-made folder: reads go through the caller's
snapshot, every candidate is looked at (none stops the loop), the edge values of counts and names,
and the words of the error hermes' audit would fail with."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from inspector.repair import audit as auditmod
from inspector.repair.audit import HermesAuditError, audit_session_recovery
from inspector.store.files import FileSnapshot
from tests.recovery_helpers import seed_state_db, sidecar, write_json
from tests.repair.test_audit import _index, _kinds

TOMBSTONE = "_deleted_webui_sessions.json"


def _tombstone(folder, *ids):
    write_json(folder / TOMBSTONE, {"version": 1, "ids": list(ids)})


def test_the_index_check_reads_the_tombstone_through_the_callers_snapshot(tmp_path):
    """An index row of a deleted session: the tombstone that says so is read through the snapshot."""
    _index(tmp_path, "gone")
    _tombstone(tmp_path, "gone")
    snap = FileSnapshot()
    assert audit_session_recovery(tmp_path, None, snapshot=snap)["items"] == []
    assert tmp_path / TOMBSTONE in snap.asked


def test_the_orphan_check_reads_the_tombstone_through_the_callers_snapshot(tmp_path):
    """An orphan backup of a deleted session: the tombstone is read through the snapshot."""
    write_json(tmp_path / "gone.json.bak", sidecar("gone", 2))
    _tombstone(tmp_path, "gone")
    snap = FileSnapshot()
    assert _kinds(audit_session_recovery(tmp_path, None, snapshot=snap)) == [
        ("gone", "state_db_deleted_webui_tombstone")
    ]
    assert tmp_path / TOMBSTONE in snap.asked


def test_a_shrunken_session_is_judged_on_the_snapshots_bytes(tmp_path):
    """The live file and its backup are read through the snapshot the caller gave."""
    write_json(tmp_path / "s.json", sidecar("s", 1))
    write_json(tmp_path / "s.json.bak", sidecar("s", 3))
    snap = FileSnapshot()
    assert _kinds(audit_session_recovery(tmp_path, None, snapshot=snap)) == [("s", "shrunken_live")]
    assert {tmp_path / "s.json", tmp_path / "s.json.bak"} <= set(snap.asked)


def test_a_backup_no_bigger_than_its_live_file_does_not_end_the_look(tmp_path):
    """The first session's backup is smaller; the second session's is bigger and still reported."""
    write_json(tmp_path / "a.json", sidecar("a", 2))
    write_json(tmp_path / "a.json.bak", sidecar("a", 1))
    write_json(tmp_path / "b.json", sidecar("b", 1))
    write_json(tmp_path / "b.json.bak", sidecar("b", 3))
    assert _kinds(audit_session_recovery(tmp_path, None)) == [("b", "shrunken_live")]


def test_an_orphan_backup_with_no_messages_is_not_malformed(tmp_path):
    """Zero messages is a count, not an unreadable backup: an orphan backup holding 0 messages."""
    write_json(tmp_path / "e.json.bak", sidecar("e", 0))
    (item,) = audit_session_recovery(tmp_path, None)["items"]
    assert (item["kind"], item["bak_messages"], item["live_messages"]) == ("orphan_backup", 0, -1)


def test_a_backup_of_an_underscore_file_is_no_orphan(tmp_path):
    """``_name.json.bak`` without its live file is hermes' own file's backup, never a session's."""
    write_json(tmp_path / "_name.json.bak", sidecar("_name", 2))
    assert audit_session_recovery(tmp_path, None)["items"] == []


def test_a_deleted_sessions_index_row_does_not_hide_the_next_one(tmp_path):
    """Index rows are checked in id order; a skipped deleted one is followed by a reported missing one."""
    _index(tmp_path, "a_gone", "b_missing")
    _tombstone(tmp_path, "a_gone")
    assert _kinds(audit_session_recovery(tmp_path, None)) == [("b_missing", "index_missing_file")]


def test_a_state_row_skipped_for_its_tombstoned_backup_does_not_hide_the_next_row(tmp_path):
    """The row of a deleted session whose backup was reported is skipped; the next row is still reported."""
    db = tmp_path / "state.db"
    seed_state_db(db, sid="gone")
    seed_state_db(db, sid="other", create=False)
    with sqlite3.connect(db) as conn:  # newest first: "gone" is the first row the query returns
        conn.execute("UPDATE sessions SET started_at = 2000 WHERE id = 'gone'")
    write_json(tmp_path / "gone.json.bak", sidecar("gone", 2))
    _tombstone(tmp_path, "gone")
    assert _kinds(audit_session_recovery(tmp_path, db)) == [
        ("gone", "state_db_deleted_webui_tombstone"),
        ("other", "state_db_missing_sidecar"),
    ]


def test_an_index_row_named_by_a_raw_deleted_state_id_is_skipped(tmp_path):
    """A state.db id with spaces around it, deleted (the tombstone names it stripped), and an index row
    with the same raw id: the row is the deleted session's, not a missing file."""
    db = tmp_path / "state.db"
    seed_state_db(db, sid=" gone ")
    _index(tmp_path, " gone ")
    _tombstone(tmp_path, "gone")
    assert _kinds(audit_session_recovery(tmp_path, db)) == [(" gone ", "state_db_deleted_webui_tombstone")]


def test_the_error_hermes_audit_would_fail_with_lists_every_bad_journal(tmp_path):
    """One message: what fails and where, then each journal's own error, joined by "; "."""
    for name in ("bad one~1.jsonl", "bad two~1.jsonl"):
        path = tmp_path / "_turn_journal" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text('{"event": "submitted", "turn_id": "t", "content": "x", "created_at": 1}\n')
    with pytest.raises(HermesAuditError) as info:
        audit_session_recovery(tmp_path, None)
    errors = info.value.errors
    assert len(errors) == 2 and errors[0].startswith("bad one: ") and errors[1].startswith("bad two: ")
    assert str(info.value) == (
        f"hermes' recovery audit would fail (HTTP 500) on the turn journal: {errors[0]}; {errors[1]}"
    )


def test_state_db_is_read_in_a_named_daemon_thread():
    """The thread beside the folder's reading is "audit-state-db" (named in stack dumps), a daemon."""
    here = auditmod._Background(lambda: (threading.current_thread().name, threading.current_thread().daemon))
    assert here.result() == ("audit-state-db", True)


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        ("a.json", "a"),
        ("a.b.json", "a.b"),
        (".json", ".json"),
        ("a.", "a."),
        ("a.j", "a"),
        ("abc", "abc"),
    ],
)
def test_stem_is_the_name_without_its_last_suffix(name, stem):
    """PurePath(name).stem: a leading dot or a trailing one is no suffix."""
    assert auditmod._stem(name) == stem


def test_the_background_call_gets_its_keyword_arguments():
    """Keyword arguments reach the function run in the thread."""
    assert auditmod._Background(lambda a, *, b: (a, b), 1, b=2).result() == (1, 2)


def test_an_error_in_the_background_is_raised_by_result():
    """The thread's exception is raised again, as itself, where the result is asked for."""
    boom = ValueError("state.db said no")

    def fail():
        raise boom

    with pytest.raises(ValueError) as info:
        auditmod._Background(fail).result()
    assert info.value is boom
