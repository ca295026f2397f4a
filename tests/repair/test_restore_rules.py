"""``restore-backup``: rules found by mutation testing (tests/MUTATION.md), each value written by hand."""

from __future__ import annotations

from inspector.actions import make_context, plan_action
from inspector.home import locate_home
from inspector.plan import Clock
from inspector.repair import restore
from tests.recovery_helpers import NOW, home_dirs, make_ctx, seed_state_db, sidecar, write_json


def test_an_empty_bak_is_not_larger_not_unreadable(tmp_path):
    """Rule: a readable .bak with 0 messages is a .bak that is "not larger" than the live file; only
    an unreadable .bak (hermes counts it as -1) is called unreadable."""
    home_path, sessions, _ = home_dirs(tmp_path)
    write_json(sessions / "e.json", sidecar("e", 2))
    write_json(sessions / "e.json.bak", sidecar("e", 0))
    plan = restore.plan(make_ctx(home_path), "e")
    assert plan.changes == []
    assert plan.summary == [
        "nothing to do: decision no_action, the .bak (0 messages) is not larger than the live file (2)"
    ]


def test_an_orphan_restore_says_the_index_must_be_rebuilt(tmp_path):
    """Rule: recreating a missing sidecar from its .bak leaves it out of _index.json; the preview says
    so, word for word, and names rebuild-index."""
    home_path, sessions, db = home_dirs(tmp_path)
    seed_state_db(db, sid="orphan")
    write_json(sessions / "orphan.json.bak", sidecar("orphan", 3))
    plan = restore.plan(make_ctx(home_path), "orphan")
    assert plan.warnings == [
        "orphan is not in _index.json until the index is rebuilt; run rebuild-index "
        "afterwards (hermes' startup recovery rebuilds it after a restore)"
    ]


def test_the_tombstone_the_orphan_decision_reads_is_checked_for_links(tmp_path):
    """Rule: the orphan decision reads the tombstone through the plan's snapshot, so a tombstone that
    is a link leaving the home is named and the restore refused unless links are followed."""
    home_path, sessions, db = home_dirs(tmp_path)
    seed_state_db(db, sid="orphan")
    write_json(sessions / "orphan.json.bak", sidecar("orphan", 3))
    outside = tmp_path / "elsewhere" / "tombstone.json"
    outside.parent.mkdir()
    write_json(outside, {"version": 1, "ids": ["someone_else"]})
    (sessions / "_deleted_webui_sessions.json").symlink_to(outside)
    ctx = make_context(locate_home(home_path), Clock(NOW, NOW - 100.0))
    (plan,) = plan_action(ctx, "restore-backup", "orphan")
    assert plan.changes and plan.refusal is not None and str(outside) in plan.refusal
    ctx = make_context(locate_home(home_path), Clock(NOW, NOW - 100.0))
    (plan,) = plan_action(ctx, "restore-backup", "orphan", follow_links=True)
    assert plan.refusal is None and any(str(outside) in w for w in plan.warnings)


def test_eligible_reads_through_the_contexts_snapshot(tmp_path):
    """Rule: every file a repair looks at is read once, through the context's snapshot
    (inspector/store/files.py): eligible() leaves the live files, backups and tombstone it decided on
    in it, so the plans made next from the same context see those very bytes."""
    home_path, sessions, db = home_dirs(tmp_path)
    seed_state_db(db, sid="orphan")
    write_json(sessions / "live.json", sidecar("live", 1))
    write_json(sessions / "live.json.bak", sidecar("live", 2))
    write_json(sessions / "orphan.json.bak", sidecar("orphan", 3))
    ctx = make_ctx(home_path)
    assert restore.eligible(ctx) == ["live", "orphan"]
    for name in ("live.json", "live.json.bak", "orphan.json.bak"):
        assert ctx.snapshot.peek(sessions / name) == (True, (sessions / name).read_bytes()), name
    assert ctx.snapshot.peek(sessions / "_deleted_webui_sessions.json") == (True, None)


def test_the_preview_words_of_a_restore(tmp_path):
    """Rule: the preview says, word for word, what a restore creates or replaces, that the .bak is
    kept, that the inspector keeps the replaced file, and why a live file that does not load is
    overwritten; the plan is named after the action."""
    home_path, sessions, db = home_dirs(tmp_path)
    seed_state_db(db, sid="orphan")
    write_json(sessions / "orphan.json.bak", sidecar("orphan", 3))
    plan = restore.plan(make_ctx(home_path), "orphan")
    assert plan.action == "restore-backup" and plan.session_id == "orphan"
    assert plan.summary == ["create orphan.json from orphan.json.bak (3 messages); the .bak is kept"]
    (sessions / "m.json").write_bytes(b'{"session_id": "m", "messages": [')
    write_json(sessions / "m.json.bak", sidecar("m", 2))
    plan = restore.plan(make_ctx(home_path), "m")
    assert plan.summary == ["replace m.json (-1 messages) with m.json.bak (2 messages); the .bak is kept"]
    assert plan.warnings[0] == (
        "the current m.json is replaced; hermes keeps no copy of it, the inspector keeps a private backup"
    )
    assert len(plan.warnings) == 2 and plan.warnings[1].startswith("m.json is unreadable (")
    assert plan.warnings[1].endswith(") and will be overwritten by the backup [Q5]")


def test_a_plan_without_a_session_is_refused_in_words(tmp_path):
    """Rule: restore-backup plans one session; None is refused and the refusal says where --all's ids
    come from."""
    home_path, _, _ = home_dirs(tmp_path)
    plan = restore.plan(make_ctx(home_path), None)
    assert plan.changes == []
    assert plan.refusal == (
        "restore-backup works on one session at a time (the CLI's --all plans eligible() ids)"
    )


def test_the_files_the_decision_reads_are_checked_for_links(tmp_path):
    """Rule: the restore decision reads the live file and its .bak through the plan's snapshot, so a
    .bak that is a link leaving the home is named even when the decision is to do nothing."""
    home_path, sessions, _ = home_dirs(tmp_path)
    write_json(sessions / "s.json", sidecar("s", 3))
    outside = tmp_path / "elsewhere" / "s.json.bak"
    outside.parent.mkdir()
    write_json(outside, sidecar("s", 1))
    (sessions / "s.json.bak").symlink_to(outside)
    ctx = make_context(locate_home(home_path), Clock(NOW, NOW - 100.0))
    (plan,) = plan_action(ctx, "restore-backup", "s")
    assert plan.changes == [] and plan.result["recommend"] == "no_action"
    assert any(str(outside) in w for w in plan.warnings)


def test_a_blocked_orphan_says_only_why(tmp_path):
    """Rule: an orphan .bak that is not restored gets one summary line, the reason (no second
    "nothing to do" line about the decision)."""
    home_path, sessions, db = home_dirs(tmp_path)
    seed_state_db(db, sid="deleted")
    write_json(sessions / "deleted.json.bak", sidecar("deleted", 3))
    write_json(sessions / "_deleted_webui_sessions.json", {"version": 1, "ids": ["deleted"]})
    plan = restore.plan(make_ctx(home_path), "deleted")
    assert plan.summary == [
        "nothing to do: deleted.json is missing and its backup is not restored: deleted is "
        "in _deleted_webui_sessions.json: the user deleted this session"
    ]


def test_a_read_error_while_planning_refuses_the_plan(tmp_path, monkeypatch):
    """Rule: an OSError while reading the session's files refuses the plan and names the error;
    nothing is planned."""
    home_path, sessions, _ = home_dirs(tmp_path)
    write_json(sessions / "s.json", sidecar("s", 1))
    write_json(sessions / "s.json.bak", sidecar("s", 2))

    def unreadable(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(sessions / "s.json.bak"))

    monkeypatch.setattr(restore, "inspect_session_recovery_status", unreadable)
    plan = restore.plan(make_ctx(home_path), "s")
    assert plan.changes == []
    assert (
        plan.refusal
        == f"cannot read the session files: [Errno 13] Permission denied: '{sessions / 's.json.bak'}'"
    )
