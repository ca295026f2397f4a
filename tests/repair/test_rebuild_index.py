"""Action ``rebuild-index``: hermes' recovery index rebuild from the sidecars on disk."""

from __future__ import annotations

import json

import pytest

from inspector.repair import rebuild_index, restore
from inspector.repair.audit import audit_session_recovery
from tests.recovery_helpers import apply, home_dirs, make_ctx, seed_state_db, sidecar, tree, write_json


@pytest.fixture
def home(tmp_path):
    return home_dirs(tmp_path)


def _rows(plan):
    return json.loads(plan.changes[0].after)


def test_rebuilds_missing_index_without_restores(home):
    home_path, sessions, db = home
    write_json(sessions / "a.json", sidecar("a", 2, updated_at=10.0))
    write_json(sessions / "b.json", sidecar("b", 1, updated_at=20.0))
    plan = rebuild_index.plan(make_ctx(home_path), None)
    assert plan.changes[0].kind == "create"
    assert [r["session_id"] for r in _rows(plan)] == ["b", "a"]
    assert plan.summary == ["create _index.json from the sidecars (2 rows)"]
    assert rebuild_index.eligible(make_ctx(home_path)) == []


def test_rebuilds_index_after_orphan_restore(home, tmp_path):
    home_path, sessions, db = home
    seed_state_db(db, sid="orphan")
    write_json(sessions / "_index.json", [])
    write_json(sessions / "orphan.json.bak", sidecar("orphan", 3, updated_at=5.0))
    apply(restore.plan(make_ctx(home_path), "orphan"), tmp_path)
    plan = rebuild_index.plan(make_ctx(home_path), None)
    assert [r["session_id"] for r in _rows(plan)] == ["orphan"]
    assert plan.summary == [
        "rewrite _index.json from the sidecars: 0 rows before, 1 after",
        "add rows for: orphan",
    ]
    apply(plan, tmp_path)
    assert audit_session_recovery(sessions, db)["items"] == []


def test_index_holds_only_on_disk_sidecars(home):
    home_path, sessions, db = home
    write_json(sessions / "live.json", sidecar("live", 1, updated_at=1.0))
    write_json(sessions / "_index.json", [{"session_id": "ghost", "updated_at": 9.0}])
    plan = rebuild_index.plan(make_ctx(home_path), None)
    assert [r["session_id"] for r in _rows(plan)] == ["live"]
    assert plan.summary == [
        "rewrite _index.json from the sidecars: 1 rows before, 1 after",
        "add rows for: live",
        "drop rows for: ghost",
    ]
    assert plan.result == {"rows_before": 1, "rows_after": 1}


def test_unloadable_sidecars_are_left_out_with_a_warning(home):
    home_path, sessions, db = home
    write_json(sessions / "ok.json", sidecar("ok", 1))
    (sessions / "torn.json").write_bytes(b"{")
    (sessions / "bom.json").write_bytes(b"\xef\xbb\xbf{}")
    plan = rebuild_index.plan(make_ctx(home_path), None)
    assert [r["session_id"] for r in _rows(plan)] == ["ok"]
    unloadable = sorted(w.split()[0] for w in plan.warnings if "cannot be loaded" in w)
    assert unloadable == ["bom.json", "torn.json"]


def test_a_sidecar_holding_a_json_list_stops_hermes_recovery_rebuild_so_it_is_refused(home):
    # hermes' _load_session_from_path calls data.get() on the parsed list: AttributeError, not a skip
    home_path, sessions, db = home
    write_json(sessions / "ok.json", sidecar("ok", 1))
    write_json(sessions / "list.json", [])
    plan = rebuild_index.plan(make_ctx(home_path), None)
    assert plan.changes == []
    assert plan.refusal == (
        "hermes' index rebuild would fail here, so nothing is written: list.json: hermes' "
        "recovery rebuild fails on it (top-level JSON is list, not an object)"
    )


def test_internal_id_mismatch_keeps_index_drift_forever(home, tmp_path):
    home_path, sessions, db = home
    write_json(sessions / "file_name.json", sidecar("inner_id", 1))
    plan = rebuild_index.plan(make_ctx(home_path), None)
    assert [r["session_id"] for r in _rows(plan)] == ["inner_id"]
    assert any("[Q7]" in w for w in plan.warnings)
    apply(plan, tmp_path)
    kinds = [(i["session_id"], i["kind"]) for i in audit_session_recovery(sessions, None)["items"]]
    assert kinds == [("inner_id", "index_missing_file"), ("file_name", "index_missing_entry")]


def test_sidecar_without_id_is_left_out_with_a_warning(home):
    home_path, sessions, db = home
    write_json(sessions / "anon.json", {"messages": []})
    plan = rebuild_index.plan(make_ctx(home_path), None)
    assert _rows(plan) == [] and any("no session_id" in w for w in plan.warnings)


def test_duplicate_internal_ids_keep_the_larger_message_count(home):
    home_path, sessions, db = home
    write_json(sessions / "a.json", sidecar("same", 1, message_count=1))
    write_json(sessions / "b.json", sidecar("same", 3, message_count=3))
    (row,) = _rows(rebuild_index.plan(make_ctx(home_path), None))
    assert row["message_count"] == 3


def test_matching_index_is_a_no_op(home, tmp_path):
    home_path, sessions, db = home
    write_json(sessions / "a.json", sidecar("a", 1, workspace="/w"))
    apply(rebuild_index.plan(make_ctx(home_path), None), tmp_path)
    plan = rebuild_index.plan(make_ctx(home_path), None)
    assert plan.is_noop and "already matches" in plan.summary[0]


def test_unreadable_index_is_rewritten(home):
    home_path, sessions, db = home
    write_json(sessions / "a.json", sidecar("a", 1))
    (sessions / "_index.json").write_bytes(b"{torn")
    plan = rebuild_index.plan(make_ctx(home_path), None)
    assert "unreadable or not a list" in plan.summary[0]
    assert plan.result["rows_before"] is None


def test_empty_workspace_rows_use_hermes_working_directory(home):
    home_path, sessions, db = home
    write_json(sessions / "a.json", sidecar("a", 1, workspace=""))
    plan = rebuild_index.plan(make_ctx(home_path, cwd=home_path / "cwd"), None)
    assert _rows(plan)[0]["workspace"] == str(home_path / "cwd")
    assert any("[Q10]" in w for w in plan.warnings)


def test_no_sessions_folder_means_nothing_to_rebuild(tmp_path):
    plan = rebuild_index.plan(make_ctx(tmp_path / "nohome"), None)
    assert plan.is_noop and "no sessions folder" in plan.summary[0]


def test_a_folder_named_like_a_sidecar_is_skipped_as_hermes_skips_it(home):
    home_path, sessions, db = home
    write_json(sessions / "a.json", sidecar("a", 1))
    (sessions / "d.json").mkdir()
    plan = rebuild_index.plan(make_ctx(home_path), None)
    assert plan.refusal is None
    assert [r["session_id"] for r in _rows(plan)] == ["a"]


def test_planning_writes_nothing_and_session_id_is_home_wide(home, tmp_path):
    home_path, sessions, db = home
    write_json(sessions / "a.json", sidecar("a", 1))
    before = tree(tmp_path)
    plan = rebuild_index.plan(make_ctx(home_path), "a")
    assert tree(tmp_path) == before
    assert plan.summary[0] == "rebuild-index is home-wide: the whole index is rebuilt"
