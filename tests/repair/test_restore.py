"""Action ``restore-backup``: hermes' ``recover_session`` and the startup recovery candidates."""

from __future__ import annotations

import json

import pytest

from inspector.plan import ApplyError, WriteLog, apply_plan
from inspector.repair import restore
from inspector.store.files import FileSnapshot
from tests.recovery_helpers import (
    NOW,
    apply,
    home_dirs,
    make_ctx,
    msgs,
    seed_state_db,
    sidecar,
    tree,
    write_json,
)

GEN_A = "0123456789ab4cde8f0123456789abcd"


@pytest.fixture
def home(tmp_path):
    return home_dirs(tmp_path)


def _pair(sessions, sid, live_n, bak_n, **live_extra):
    write_json(sessions / f"{sid}.json", sidecar(sid, live_n, **live_extra))
    write_json(sessions / f"{sid}.json.bak", sidecar(sid, bak_n))


def test_recover_all_sessions_on_startup_restores_shrunken_session(home, tmp_path):
    home_path, sessions, db = home
    _pair(sessions, "shrunk", 1, 4)
    write_json(sessions / "fine.json", sidecar("fine", 2))
    ctx = make_ctx(home_path)
    assert restore.eligible(ctx) == ["shrunk"]
    plan = restore.plan(ctx, "shrunk")
    bak_bytes = (sessions / "shrunk.json.bak").read_bytes()
    (change,) = plan.changes
    assert change.path == sessions / "shrunk.json" and change.after == bak_bytes
    assert change.before == (sessions / "shrunk.json").read_bytes() and change.fingerprint is not None
    assert plan.result == {
        "session_id": "shrunk",
        "live_messages": 1,
        "bak_messages": 4,
        "recommend": "restore",
        "restored": True,
    }
    assert plan.summary == [
        "replace shrunk.json (1 messages) with shrunk.json.bak (4 messages); the .bak is kept"
    ]
    apply(plan, tmp_path)
    assert (sessions / "shrunk.json").read_bytes() == bak_bytes
    assert (sessions / "shrunk.json.bak").read_bytes() == bak_bytes


def test_recover_all_sessions_on_startup_restores_orphan_bak(home, tmp_path):
    home_path, sessions, db = home
    seed_state_db(db, sid="orphan")
    write_json(sessions / "orphan.json.bak", sidecar("orphan", 3))
    ctx = make_ctx(home_path)
    assert restore.eligible(ctx) == ["orphan"]
    plan = restore.plan(ctx, "orphan")
    (change,) = plan.changes
    assert change.kind == "create" and change.after == (sessions / "orphan.json.bak").read_bytes()
    assert plan.result["live_messages"] == -1 and plan.result["restored"] is True
    assert any("rebuild-index" in w for w in plan.warnings)
    apply(plan, tmp_path)
    assert json.loads((sessions / "orphan.json").read_text())["messages"] == msgs(3)


def test_recover_all_sessions_on_startup_skips_tombstoned_orphan_bak(home):
    home_path, sessions, db = home
    seed_state_db(db, sid="deleted")
    write_json(sessions / "deleted.json.bak", sidecar("deleted", 3))
    write_json(sessions / "_deleted_webui_sessions.json", {"version": 1, "ids": ["deleted"]})
    ctx = make_ctx(home_path)
    assert restore.eligible(ctx) == []
    plan = restore.plan(ctx, "deleted")
    assert plan.changes == [] and plan.result["restored"] is False
    assert "the user deleted this session" in plan.summary[0]


def test_orphan_bak_recovery_skips_sessions_absent_from_state_db(home):
    home_path, sessions, db = home
    seed_state_db(db, sid="someone_else")
    write_json(sessions / "absent.json.bak", sidecar("absent", 2))
    ctx = make_ctx(home_path)
    assert restore.eligible(ctx) == []
    plan = restore.plan(ctx, "absent")
    assert plan.changes == [] and "state.db has no session absent" in plan.summary[0]


def test_orphan_bak_is_restored_when_state_db_is_missing_or_unreadable(home):
    home_path, sessions, db = home
    write_json(sessions / "o.json.bak", sidecar("o", 2))
    assert restore.eligible(make_ctx(home_path)) == ["o"]
    db.write_bytes(b"garbage" * 100)
    assert restore.eligible(make_ctx(home_path)) == ["o"]


def test_recover_all_sessions_on_startup_is_idempotent_no_op_on_clean_state(home, tmp_path):
    home_path, sessions, db = home
    _pair(sessions, "s", 1, 3)
    apply(restore.plan(make_ctx(home_path), "s"), tmp_path)
    ctx = make_ctx(home_path)
    assert restore.eligible(ctx) == []
    plan = restore.plan(ctx, "s")
    assert plan.changes == [] and plan.is_noop and plan.result["restored"] is False
    assert plan.summary == [
        "nothing to do: decision no_action, the .bak (3 messages) is not larger than the live file (3)"
    ]


def test_recover_all_sessions_on_startup_does_not_read_live_files_without_backup(home):
    home_path, sessions, db = home
    write_json(sessions / "plain.json", sidecar("plain", 1))
    _pair(sessions, "s", 1, 2)

    class Recording(FileSnapshot):
        def __init__(self):
            super().__init__()
            self.names = []

        def read(self, path):
            self.names.append(path.name)
            return super().read(path)

    ctx = make_ctx(home_path)
    ctx.snapshot = Recording()
    assert restore.eligible(ctx) == ["s"]
    assert "plain.json" not in ctx.snapshot.names


def test_recover_all_sessions_on_startup_skips_non_session_index_json(home):
    home_path, sessions, db = home
    write_json(sessions / "_index.json", [{"session_id": "x"}])
    write_json(sessions / "_index.json.bak", [{"session_id": "x"}, {"session_id": "y"}])
    ctx = make_ctx(home_path)
    assert restore.eligible(ctx) == []
    assert restore.plan(ctx, "_index").refusal


@pytest.mark.parametrize("sid", [None, "../x", "a/b", ".hidden", "", "sp ace"])
def test_unplain_ids_are_refused(home, sid):
    plan = restore.plan(make_ctx(home[0]), sid)
    assert plan.refusal and plan.changes == []


def test_dotted_ids_are_allowed(home):
    home_path, sessions, db = home
    _pair(sessions, "sess.123", 1, 2)
    assert restore.plan(make_ctx(home_path), "sess.123").changes


def test_live_path_that_is_a_folder_is_refused(home):
    home_path, sessions, db = home
    (sessions / "d.json").mkdir()
    write_json(sessions / "d.json.bak", sidecar("d", 2))
    assert "not a regular file" in restore.plan(make_ctx(home_path), "d").refusal


def test_clear_sentinel_backup_is_not_restored(home):
    home_path, sessions, db = home
    live = {
        "session_id": "c",
        "messages": [],
        "context_messages": [],
        "truncation_watermark": 0.0,
        "truncation_boundary": 0.0,
        "active_stream_id": None,
        "pending_user_message": None,
        "pending_attachments": [],
        "pending_started_at": None,
        "pending_user_source": None,
        "clear_generation": "g2",
    }
    write_json(sessions / "c.json", live)
    write_json(sessions / "c.json.bak", sidecar("c", 4))
    before = (sessions / "c.json").read_bytes()
    plan = restore.plan(make_ctx(home_path), "c")
    assert plan.changes == [] and plan.result["intentional_clear_truncate"] is True
    assert "intentional_clear_truncate" in plan.summary[0]
    assert (sessions / "c.json").read_bytes() == before


def test_intentional_message_shrink_is_explained(home):
    home_path, sessions, db = home
    _pair(sessions, "g", 1, 2, intentional_shrink_generation=GEN_A)
    plan = restore.plan(make_ctx(home_path), "g")
    assert plan.changes == [] and "intentional_message_shrink" in plan.summary[0]


def test_malformed_live_is_replaced_with_a_warning(home, tmp_path):
    home_path, sessions, db = home
    (sessions / "m.json").write_bytes(b'{"session_id": "m", "messages": [')
    write_json(sessions / "m.json.bak", sidecar("m", 2))
    plan = restore.plan(make_ctx(home_path), "m")
    assert plan.changes[0].after == (sessions / "m.json.bak").read_bytes()
    assert any("[Q5]" in w for w in plan.warnings)
    log = WriteLog(tmp_path / "log")
    record = apply_plan(plan, log, clock_now=NOW)
    assert open(record.files[0]["backup"], "rb").read() == b'{"session_id": "m", "messages": ['


def test_unreadable_backup_or_no_files_means_nothing_to_do(home):
    home_path, sessions, db = home
    write_json(sessions / "u.json", sidecar("u", 0))
    (sessions / "u.json.bak").write_bytes(b"{")
    assert "the .bak is unreadable" in restore.plan(make_ctx(home_path), "u").summary[0]
    assert "neither nobody.json nor its .bak exists" in restore.plan(make_ctx(home_path), "nobody").summary[0]
    write_json(sessions / "solo.json", sidecar("solo", 1))
    assert "has no .bak" in restore.plan(make_ctx(home_path), "solo").summary[0]


def test_planning_writes_nothing_and_apply_refuses_if_the_live_file_moved_on(home, tmp_path):
    home_path, sessions, db = home
    _pair(sessions, "s", 1, 3)
    before = tree(tmp_path)
    plan = restore.plan(make_ctx(home_path), "s")
    assert tree(tmp_path) == before
    write_json(sessions / "s.json", sidecar("s", 5))
    with pytest.raises(ApplyError, match="changed since the preview"):
        apply(plan, tmp_path)


def test_eligible_lists_live_candidates_before_orphans(home):
    home_path, sessions, db = home
    _pair(sessions, "z_live", 1, 2)
    write_json(sessions / "a_orphan.json.bak", sidecar("a_orphan", 1))
    assert restore.eligible(make_ctx(home_path)) == ["z_live", "a_orphan"]
