"""Action ``materialize``: state.db rows -> hermes' 48-key sidecars, then the index rebuild."""

from __future__ import annotations

import json
import os
import sqlite3
import threading

import pytest

from inspector.plan import _temp_name
from inspector.repair import materialize
from inspector.repair.materialize import state_db_row_to_sidecar
from inspector.store import statedb
from inspector.store.files import read_raw
from inspector.store.sidecar import read_sidecar
from tests.conftest import FIXTURES, copy_tree
from tests.recovery_helpers import (
    NOW,
    agent_state_db,
    apply,
    custom_state_db,
    home_dirs,
    make_ctx,
    seed_state_db,
    sidecar,
    tree,
    write_json,
)

RECOVERY = FIXTURES / "recovery"
KEYS_48 = [
    "session_id",
    "title",
    "workspace",
    "message_count",
    "worktree_path",
    "worktree_branch",
    "worktree_repo_root",
    "worktree_created_at",
    "model",
    "model_provider",
    "created_at",
    "updated_at",
    "pinned",
    "archived",
    "project_id",
    "profile",
    "input_tokens",
    "output_tokens",
    "estimated_cost",
    "personality",
    "active_stream_id",
    "pending_user_message",
    "pending_attachments",
    "pending_started_at",
    "compression_anchor_visible_idx",
    "compression_anchor_message_key",
    "compression_anchor_summary",
    "context_length",
    "threshold_tokens",
    "last_prompt_tokens",
    "compression_recovery",
    "recommended_recovery_action",
    "compression_recovery_source_session_id",
    "compression_recovery_action",
    "gateway_routing",
    "gateway_routing_history",
    "llm_title_generated",
    "parent_session_id",
    "is_cli_session",
    "source_tag",
    "raw_source",
    "session_source",
    "source_label",
    "enabled_toolsets",
    "composer_draft",
    "messages",
    "tool_calls",
    "_recovered_from_state_db",
]
SESSIONS_DDL = (
    "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, title TEXT, model TEXT, started_at REAL, "
    "message_count INTEGER, parent_session_id TEXT)"
)
MESSAGES_DDL = (
    "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, role TEXT, "
    "content TEXT, timestamp REAL)"
)


@pytest.fixture
def home(tmp_path):
    return home_dirs(tmp_path)


def _plan(home_path, session_id=None, **kw):
    return materialize.plan(make_ctx(home_path, **kw), session_id)


def _created(plan):
    return {c.path.name: json.loads(c.after) for c in plan.changes if c.path.name != "_index.json"}


# ---------------------------------------------------------------- hermes' materialization tests


def test_recover_missing_sidecars_from_state_db_materializes_webui_row(home, tmp_path):
    home_path, sessions, db = home
    sid = seed_state_db(db)
    plan = _plan(home_path)
    assert plan.result["materialized"] == 1 and plan.refusal is None
    apply(plan, tmp_path)
    data = json.loads((sessions / f"{sid}.json").read_text(encoding="utf-8"))
    assert data["session_id"] == sid
    assert data["title"] == "Recovered from DB"
    assert data["model"] == "openai/gpt-5"
    assert data["parent_session_id"] == "parent-1"
    assert data["source_tag"] == "webui"
    assert data["session_source"] == "webui"
    assert [m["content"] for m in data["messages"]] == ["message 1", "message 2"]


def test_recover_missing_sidecars_from_state_db_skips_existing_sidecar(home):
    home_path, sessions, db = home
    sid = seed_state_db(db)
    existing = write_json(
        sessions / f"{sid}.json", {"session_id": sid, "messages": [{"role": "user", "content": "keep"}]}
    )
    plan = _plan(home_path)
    assert plan.result["materialized"] == 0 and plan.changes == []
    assert json.loads(existing.read_text(encoding="utf-8"))["messages"][0]["content"] == "keep"


def test_recover_missing_sidecars_from_state_db_ignores_subagent_row(home):
    home_path, sessions, db = home
    seed_state_db(db, sid="sub_001", source="subagent")
    plan = _plan(home_path)
    assert plan.changes == [] and plan.result == {"scanned": 0, "materialized": 0, "details": []}


def test_recover_missing_sidecars_from_state_db_ignores_read_only_index_row(home):
    home_path, sessions, db = home
    sid = seed_state_db(db)
    write_json(
        sessions / "_index.json",
        [{"session_id": sid, "is_cli_session": True, "read_only": True, "source_tag": "cli"}],
    )
    assert _plan(home_path).result["materialized"] == 1


def test_recover_missing_sidecars_from_state_db_skips_deleted_webui_tombstone(home):
    home_path, sessions, db = home
    sid = seed_state_db(db, sid="deleted_webui")
    write_json(sessions / "_index.json", [{"session_id": sid, "source_tag": "webui"}])
    write_json(sessions / "_deleted_webui_sessions.json", {"version": 1, "ids": [sid]})
    plan = _plan(home_path)
    assert plan.changes == [] and plan.result["materialized"] == 0
    assert any("deleted by the user" in line for line in plan.summary)


def test_recover_missing_sidecars_skips_durable_delete_tombstone_without_index(home):
    home_path, sessions, db = home
    sid = seed_state_db(db, sid="deleted_no_index")
    write_json(sessions / "_deleted_webui_sessions.json", {"version": 1, "ids": [sid]})
    assert _plan(home_path).changes == []


def test_recover_missing_sidecars_index_only_no_tombstone_is_repairable(home):
    home_path, sessions, db = home
    sid = seed_state_db(db, sid="crashed_index_only")
    write_json(sessions / "_index.json", [{"session_id": sid, "source_tag": "webui"}])
    assert list(_created(_plan(home_path))) == [f"{sid}.json"]


def test_empty_state_db_webui_row_is_unsafe_not_materialized(home):
    home_path, sessions, db = home
    sid = seed_state_db(db, sid="empty_state_row", messages=0)
    plan = _plan(home_path)
    assert plan.result["materialized"] == 0 and plan.changes == []
    assert not (sessions / f"{sid}.json").exists()


def test_materialized_sidecar_round_trips_through_session_load(home, tmp_path):
    home_path, sessions, db = home
    sid = seed_state_db(db, sid="rt_001", messages=3)
    apply(_plan(home_path), tmp_path)
    loaded = read_sidecar(read_raw(sessions / f"{sid}.json"), now=NOW, cwd=home_path)
    assert loaded.session_id == sid
    assert len(loaded.data["messages"]) == 3
    assert [m["content"] for m in loaded.data["messages"]] == ["message 1", "message 2", "message 3"]
    assert loaded.data["model"] == "openai/gpt-5"
    assert loaded.data["parent_session_id"] == "parent-1"
    assert loaded.dropped_keys == ["_recovered_from_state_db"]


def test_recover_missing_sidecars_leaves_no_temp_residue(home, tmp_path):
    home_path, sessions, db = home
    seed_state_db(db, sid="tmp_suffix_001", messages=1)
    apply(_plan(home_path), tmp_path)
    assert [p.name for p in sessions.iterdir() if ".tmp" in p.name] == []
    temp = _temp_name(sessions / "tmp_suffix_001.json").name
    assert str(os.getpid()) in temp and str(threading.get_ident()) in temp


# ---------------------------------------------------------------- the 48-key payload


def test_sidecar_has_exactly_hermes_48_keys_in_order(home):
    home_path, sessions, db = home
    seed_state_db(db)
    (payload,) = _created(_plan(home_path)).values()
    assert list(payload) == KEYS_48


def test_materialize_alone_matches_hermes_on_the_example_fixture(tmp_path):
    home_path = tmp_path / "home"
    copy_tree(RECOVERY / "example" / "sessions_before", home_path / "webui" / "sessions")
    copy_tree(RECOVERY / "example", tmp_path / "ex")
    (tmp_path / "ex" / "state.db").rename(home_path / "state.db")
    plan = _plan(home_path)
    expected = json.loads((RECOVERY / "example" / "recover_missing_sidecars_result.json").read_text())
    assert plan.result == expected
    by_name = {c.path.name: c.after for c in plan.changes}
    for name in ("state_only_001.json", "orphan01.json"):
        assert by_name[name] == (RECOVERY / "example" / "materialized" / name).read_bytes()
    assert any("orphan01.json.bak (3 messages)" in w and "[Q6]" in w for w in plan.warnings)
    apply(plan, tmp_path)
    listing = sorted(
        p.relative_to(home_path / "webui" / "sessions").as_posix()
        for p in (home_path / "webui" / "sessions").rglob("*")
        if p.is_file()
    )
    assert listing == json.loads((RECOVERY / "example" / "materialize_only_listing_after.json").read_text())


def test_materialize_matches_hermes_on_the_extended_schema_fixture(home):
    home_path, sessions, db = home
    db.write_bytes((RECOVERY / "extended_schema" / "state.db").read_bytes())
    plan = _plan(home_path)
    assert plan.result == json.loads(
        (RECOVERY / "extended_schema" / "recover_missing_sidecars_result.json").read_text()
    )
    name = "20260510_101500_wtree1.json"
    assert {c.path.name: c.after for c in plan.changes}[name] == (
        RECOVERY / "extended_schema" / f"materialized_{name}"
    ).read_bytes()
    assert any("rewound/compacted" in w for w in plan.warnings)
    assert any("tool_calls" in w and "reasoning" in w for w in plan.warnings)


def test_state_db_recovery_preserves_worktree_metadata(home):
    home_path, sessions, db = home
    db.write_bytes((RECOVERY / "extended_schema" / "state.db").read_bytes())
    (payload,) = _created(_plan(home_path)).values()
    assert payload["workspace"] == "/home/user/proj/.worktrees/hermes-wtree1"
    assert payload["worktree_path"] == "/home/user/proj/.worktrees/hermes-wtree1"
    assert payload["worktree_branch"] == "hermes/wtree1"
    assert payload["worktree_repo_root"] == "/home/user/proj"
    assert payload["worktree_created_at"] == 1778408100.0


def test_state_db_recovery_non_worktree_session_unaffected(home):
    home_path, sessions, db = home
    seed_state_db(db)
    (payload,) = _created(_plan(home_path)).values()
    assert payload["workspace"] == ""
    for key in ("worktree_path", "worktree_branch", "worktree_repo_root", "worktree_created_at"):
        assert payload[key] is None


def test_state_db_recovery_zero_message_worktree_row_maps_its_metadata():
    row = {
        "id": "wt0",
        "source": "webui",
        "title": None,
        "started_at": 5.0,
        "message_count": 0,
        "workspace": "/w",
        "worktree_path": "/w",
        "worktree_branch": "b",
        "worktree_repo_root": "/r",
        "worktree_created_at": 0,
        "messages": [],
    }
    payload = state_db_row_to_sidecar(row)
    assert payload["title"] == "Recovered WebUI Session" and payload["model"] == "unknown"
    assert payload["message_count"] == 0 and payload["worktree_branch"] == "b"
    assert payload["worktree_created_at"] is None  # 0 is falsy: hermes writes null
    assert payload["updated_at"] == 5.0


def test_recovery_child_markers_round_trip_through_the_mapper():
    row = {
        "id": "c",
        "source": " WebUI ",
        "compression_recovery": {"state": "x"},
        "recommended_recovery_action": "continue",
        "compression_recovery_source_session_id": "p",
        "compression_recovery_action": "fork",
        "messages": [{"role": "user", "content": "hi"}],
    }
    payload = state_db_row_to_sidecar(row)
    assert payload["compression_recovery"] == {"state": "x"}
    assert payload["recommended_recovery_action"] == "continue"
    assert payload["compression_recovery_source_session_id"] == "p"
    assert payload["compression_recovery_action"] == "fork"
    assert state_db_row_to_sidecar({**row, "compression_recovery": "junk"})["compression_recovery"] == {}


def test_recovery_source_metadata_round_trips_through_the_mapper():
    payload = state_db_row_to_sidecar({"id": "c", "source": " WebUI ", "messages": []})
    assert (
        payload["source_tag"],
        payload["raw_source"],
        payload["session_source"],
        payload["source_label"],
    ) == ("webui", "webui", "webui", "WebUI")
    assert payload["is_cli_session"] is False and payload["_recovered_from_state_db"] is True


def test_parent_session_id_is_copied_as_is(home):
    home_path, sessions, db = home
    custom_state_db(
        db,
        SESSIONS_DDL,
        MESSAGES_DDL,
        [
            {"id": "a", "source": "webui", "parent_session_id": ""},
            {"id": "b", "source": "webui", "parent_session_id": None},
        ],
        [{"session_id": s, "role": "user", "content": "x"} for s in ("a", "b")],
    )
    created = _created(_plan(home_path))
    assert created["a.json"]["parent_session_id"] == "" and created["b.json"]["parent_session_id"] is None


# ---------------------------------------------------------------- counts and times


def test_missing_message_count_column_gives_zero_and_a_warning(home):
    home_path, sessions, db = home
    custom_state_db(
        db,
        "CREATE TABLE sessions (id TEXT, source TEXT, started_at REAL)",
        MESSAGES_DDL,
        [{"id": "a", "source": "webui", "started_at": 10.0}],
        [
            {"session_id": "a", "role": "user", "content": "x", "timestamp": 11.0},
            {"session_id": "a", "role": "assistant", "content": "y", "timestamp": 12.0},
        ],
    )
    plan = _plan(home_path)
    assert _created(plan)["a.json"]["message_count"] == 0
    assert any("no message_count column" in w for w in plan.warnings)


@pytest.mark.parametrize("column_value", [None, 2.5])
def test_null_or_real_message_count_uses_the_number_of_messages(home, column_value):
    home_path, sessions, db = home
    custom_state_db(
        db,
        SESSIONS_DDL,
        MESSAGES_DDL,
        [{"id": "a", "source": "webui", "message_count": column_value}],
        [{"session_id": "a", "role": "user", "content": c} for c in "xyz"],
    )
    assert _created(_plan(home_path))["a.json"]["message_count"] == 3


def test_stale_message_count_column_is_copied_and_flagged(home):
    home_path, sessions, db = home
    custom_state_db(
        db,
        SESSIONS_DDL,
        MESSAGES_DDL,
        [{"id": "a", "source": "webui", "message_count": 9}],
        [{"session_id": "a", "role": "user", "content": "x"}],
    )
    plan = _plan(home_path)
    assert _created(plan)["a.json"]["message_count"] == 9
    assert any("copied from state.db as is" in w for w in plan.warnings)


def test_updated_at_and_created_at_rules(home):
    home_path, sessions, db = home
    custom_state_db(
        db,
        SESSIONS_DDL,
        MESSAGES_DDL,
        [
            {"id": "last_null", "source": "webui", "started_at": 50.0},
            {"id": "no_start", "source": "webui", "started_at": None},
            {"id": "nothing", "source": "webui", "started_at": None},
        ],
        [
            {"session_id": "last_null", "role": "user", "content": "x", "timestamp": 60.0},
            {"session_id": "last_null", "role": "assistant", "content": "y", "timestamp": None},
            {"session_id": "no_start", "role": "user", "content": "x", "timestamp": 70.0},
            {"session_id": "nothing", "role": "user", "content": "x", "timestamp": None},
        ],
    )
    created = _created(_plan(home_path))
    # NULL timestamps sort first, so last_null's final message is the timestamped one
    assert created["last_null.json"]["messages"][-1] == {"role": "user", "content": "x", "timestamp": 60.0}
    assert (created["last_null.json"]["created_at"], created["last_null.json"]["updated_at"]) == (50.0, 60.0)
    assert (created["no_start.json"]["created_at"], created["no_start.json"]["updated_at"]) == (0, 70.0)
    assert (created["nothing.json"]["created_at"], created["nothing.json"]["updated_at"]) == (0, 0)


# ---------------------------------------------------------------- safety


def test_unsafe_ids_are_skipped_with_a_warning_and_safe_rows_still_planned(home, tmp_path):
    home_path, sessions, db = home
    ids = ["../escaped", "a/b", "dots.x", "nul\x00x", "good"]
    custom_state_db(
        db,
        SESSIONS_DDL,
        MESSAGES_DDL,
        [{"id": i, "source": "webui"} for i in ids],
        [{"session_id": i, "role": "user", "content": "x"} for i in ids],
    )
    plan = _plan(home_path)
    assert plan.refusal is None
    assert sorted(c.path.name for c in plan.changes) == ["_index.json", "good.json"]
    assert all(c.path.parent == sessions for c in plan.changes)
    skipped = [d["session_id"] for d in plan.result["details"] if d.get("skipped") == "unsafe_session_id"]
    assert sorted(skipped) == sorted(ids[:-1])
    details = {d["session_id"]: d for d in plan.result["details"]}
    assert details["a/b"] == {"session_id": "a/b", "materialized": False, "skipped": "unsafe_session_id"}
    assert sum("not a safe file name" in w for w in plan.warnings) == 4
    apply(plan, tmp_path)
    assert not (home_path / "webui" / "escaped.json").exists()


@pytest.mark.parametrize("sid", ["../escaped", "a/b", "dots.x", "", "nul\x00x"])
def test_unsafe_requested_id_is_refused(home, sid):
    home_path, sessions, db = home
    seed_state_db(db)
    plan = _plan(home_path, sid)
    assert plan.refusal and "not a safe session id" in plan.refusal and plan.changes == []


def test_planning_writes_nothing_and_creates_no_folder(tmp_path):
    home_path = tmp_path / "home"
    home_path.mkdir()
    seed_state_db(home_path / "state.db")
    before = tree(tmp_path)
    plan = _plan(home_path)
    assert tree(tmp_path) == before
    assert plan.summary[0].startswith("create the sessions folder")  # hermes creates it (Q8)
    apply(plan, tmp_path)
    assert sorted(p.name for p in (home_path / "webui" / "sessions").iterdir()) == [
        "_index.json",
        "state_only_001.json",
    ]


def test_rows_that_strip_to_the_same_id_are_materialized_once(home):
    home_path, sessions, db = home
    custom_state_db(
        db,
        SESSIONS_DDL,
        MESSAGES_DDL,
        [
            {"id": "dup", "source": "webui", "started_at": 2.0},
            {"id": " dup ", "source": "webui", "started_at": 1.0},
        ],
        [{"session_id": "dup", "role": "user", "content": "x"}],
    )
    plan = _plan(home_path)
    assert [c.path.name for c in plan.changes] == ["dup.json", "_index.json"]
    assert plan.result["scanned"] == 2 and plan.result["materialized"] == 1
    assert _created(plan)["dup.json"]["session_id"] == "dup"


def test_padded_state_db_id_is_written_raw_inside_the_file(home):
    home_path, sessions, db = home
    custom_state_db(
        db,
        SESSIONS_DDL,
        MESSAGES_DDL,
        [{"id": " pad ", "source": "webui"}],
        [{"session_id": "pad", "role": "user", "content": "x"}],
    )
    plan = _plan(home_path)
    assert _created(plan)["pad.json"]["session_id"] == " pad "
    assert plan.result["details"] == [{"session_id": "pad", "materialized": True, "messages": 1}]
    assert any("[Q7]" in w for w in plan.warnings)


def test_existing_sidecar_is_never_overwritten_even_when_it_appears_after_planning(home, tmp_path):
    home_path, sessions, db = home
    seed_state_db(db)
    plan = _plan(home_path)
    write_json(sessions / "state_only_001.json", sidecar("state_only_001", 1))
    with pytest.raises(Exception, match="now exists"):
        apply(plan, tmp_path)
    assert json.loads((sessions / "state_only_001.json").read_text())["title"] == "chat state_only_001"


# ---------------------------------------------------------------- warnings and explanations


def test_orphan_backup_and_empty_workspace_warnings(home):
    home_path, sessions, db = home
    seed_state_db(db)
    write_json(sessions / "state_only_001.json.bak", sidecar("state_only_001", 5))
    plan = _plan(home_path, cwd=home_path / "elsewhere")
    assert any("[Q6]" in w and "(5 messages)" in w for w in plan.warnings)
    assert any("[Q10]" in w and str(home_path / "elsewhere") in w for w in plan.warnings)


def test_agent_store_warnings_name_what_the_mapper_drops(home):
    home_path, sessions, db = home
    ids = agent_state_db(db)
    plan = _plan(home_path)
    assert [c.path.name for c in plan.changes] == [f"{ids['webui']}.json", "_index.json"]
    (warning,) = [w for w in plan.warnings if w.startswith(ids["webui"] + ": the sidecar")]
    assert "codex_message_items (1 row)" in warning and "1 rewound/compacted" in warning
    assert "1 raw \\x00json: content" in warning
    assert any(ids["webui_empty"] in line and "no messages" in line for line in plan.summary)


def test_single_session_id_plans_only_that_row(home):
    home_path, sessions, db = home
    custom_state_db(
        db,
        SESSIONS_DDL,
        MESSAGES_DDL,
        [{"id": i, "source": "webui"} for i in ("a", "b")],
        [{"session_id": i, "role": "user", "content": "x"} for i in ("a", "b")],
    )
    plan = _plan(home_path, "b")
    assert [c.path.name for c in plan.changes] == ["b.json", "_index.json"]
    assert plan.result == {
        "scanned": 1,
        "materialized": 1,
        "details": [{"session_id": "b", "materialized": True, "messages": 1}],
    }
    assert len(json.loads(plan.changes[1].after)) == 1


@pytest.mark.parametrize(
    "sid, reason",
    [
        ("present", "already exists"),
        ("gone", "deleted by the user"),
        ("empty", "no messages"),
        ("cli", "not a source='webui'"),
        ("absent", "no session absent"),
    ],
)
def test_single_session_id_not_eligible_explains_why(home, sid, reason):
    home_path, sessions, db = home
    custom_state_db(
        db,
        SESSIONS_DDL,
        MESSAGES_DDL,
        [{"id": i, "source": "cli" if i == "cli" else "webui"} for i in ("present", "gone", "empty", "cli")],
        [{"session_id": i, "role": "user", "content": "x"} for i in ("present", "gone", "cli")],
    )
    write_json(sessions / "present.json", sidecar("present", 1))
    write_json(sessions / "_deleted_webui_sessions.json", {"version": 1, "ids": ["gone"]})
    plan = _plan(home_path, sid)
    assert plan.changes == [] and plan.refusal is None
    assert reason in plan.summary[-1]


def test_missing_garbage_or_locked_state_db_is_a_no_op_with_a_reason(home, monkeypatch):
    home_path, sessions, db = home
    plan = _plan(home_path)
    assert plan.changes == [] and "no state.db" in plan.summary[0]
    db.write_bytes(b"garbage" * 500)
    plan = _plan(home_path)
    assert plan.changes == [] and any("not an SQLite database" in w for w in plan.warnings)
    db.unlink()
    seed_state_db(db)
    writer = sqlite3.connect(db, isolation_level=None, timeout=0)
    writer.execute("BEGIN EXCLUSIVE")
    monkeypatch.setattr(statedb, "DEFAULT_TIMEOUT", 0.05)
    monkeypatch.setattr(statedb, "HERMES_TIMEOUT", 0.05)
    try:
        plan = materialize.plan(make_ctx(home_path), None)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert plan.changes == [] and any("locked" in w for w in plan.warnings)


def test_index_is_rebuilt_from_all_sidecars_when_something_is_materialized(home):
    home_path, sessions, db = home
    seed_state_db(db)
    write_json(sessions / "older.json", sidecar("older", 1, updated_at=1.0, workspace=""))
    (sessions / "torn.json").write_bytes(b"{")
    plan = _plan(home_path)
    rows = json.loads(plan.changes[-1].after)
    assert [r["session_id"] for r in rows] == ["state_only_001", "older"]
    assert all(r["workspace"] == str(home_path) for r in rows)
    assert plan.summary[-1] == "create _index.json from the sidecars (2 rows)"


def test_nothing_to_materialize_leaves_the_index_alone(home):
    home_path, sessions, db = home
    seed_state_db(db, messages=0)
    write_json(sessions / "_index.json", [])
    plan = _plan(home_path)
    assert plan.changes == [] and plan.is_noop


def test_eligible_is_home_wide(home):
    assert materialize.eligible(make_ctx(home[0])) == []


def test_blob_content_that_hermes_cannot_serialize_is_skipped_with_a_warning(home):
    home_path, sessions, db = home
    custom_state_db(
        db,
        SESSIONS_DDL,
        MESSAGES_DDL,
        [{"id": i, "source": "webui"} for i in ("blob", "text")],
        [
            {"session_id": "blob", "role": "user", "content": b"\x00\x01"},
            {"session_id": "text", "role": "user", "content": "fine"},
        ],
    )
    plan = _plan(home_path)
    assert [c.path.name for c in plan.changes] == ["text.json", "_index.json"]
    assert plan.result["details"][0] == {
        "session_id": "blob",
        "materialized": False,
        "error": "Object of type bytes is not JSON serializable",
    }
    assert any("cannot be written as JSON" in w for w in plan.warnings)


def test_a_home_wide_plan_reads_state_db_once_and_says_the_same(home, monkeypatch):
    """Rule: the rows to write and the rows left alone (tombstoned, no messages) come from one read of
    state.db (a thousand rows' messages are not read twice), with the plan two reads gave: the rows of
    a read without ``include_empty`` and, in the summary, one line per other row."""
    home_path, sessions, db = home
    seed_state_db(db, sid="kept_row")
    seed_state_db(db, sid="empty_row", messages=0, create=False)
    seed_state_db(db, sid="deleted_row", create=False)
    write_json(sessions / "_deleted_webui_sessions.json", {"version": 1, "ids": ["deleted_row"]})
    reads = []
    real = materialize.read_missing_sidecar_rows

    def counted(*args, **kwargs):
        reads.append(kwargs.get("include_empty"))
        return real(*args, **kwargs)

    monkeypatch.setattr(materialize, "read_missing_sidecar_rows", counted)
    plan = _plan(home_path)
    assert reads == [True]
    strict = real(sessions, db, include_empty=False)
    assert [d["session_id"] for d in plan.result["details"]] == [r["id"] for r in strict] == ["kept_row"]
    assert "leave 'deleted_row' alone: deleted by the user (durable tombstone)" in plan.summary
    assert "leave 'empty_row' alone: its state.db row has no messages (no blank sidecars)" in plan.summary
