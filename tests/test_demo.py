"""The demo home: built by the project's own code, in hermes' byte formats, deterministic."""

from __future__ import annotations

import inspect
import json
import sqlite3
from pathlib import Path

import pytest

import inspector.demo as demo_module
from inspector.demo import DemoHome, build_demo_home, load_recipe
from inspector.home import locate_home
from inspector.store.index import INDEX_NAME, parse_index
from inspector.store.journal import journal_path, read_run_events, run_summary
from inspector.store.sidecar import SidecarError, dump_session, load_session, parse_sidecar_bytes

NOW = 1_780_000_000.25
RECORD_KEYS = [
    "version",
    "event_id",
    "seq",
    "run_id",
    "session_id",
    "event",
    "type",
    "created_at",
    "terminal",
    "terminal_state",
    "payload",
]
SCENARIOS = {
    "healthy",
    "healthy_reasoning",
    "healthy_work",
    "lost_response",
    "waiting_marker",
    "given_up",
    "stale_pending",
    "state_only",
    "shrunken",
    "corrupt",
    "empty_orphan_row",
    "cli_only",
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> DemoHome:
    return build_demo_home(tmp_path_factory.mktemp("demo") / "home", now=NOW)


def _sidecar(demo: DemoHome, scenario: str, suffix: str = ".json") -> dict:
    return json.loads((demo.session_dir / f"{demo.sessions[scenario]}{suffix}").read_bytes())


def _journal(demo: DemoHome, scenario: str) -> Path:
    return journal_path(demo.session_dir, demo.sessions[scenario], demo.stream_ids[scenario])


def _ro(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


# ---------------------------------------------------------------- layout and sidecars


def test_scenarios_have_distinct_ids(demo):
    assert set(demo.sessions) == SCENARIOS
    assert len(set(demo.sessions.values())) == len(SCENARIOS)
    assert set(demo.features.values()) <= set(demo.sessions.values())


def test_home_is_found_like_a_real_install(demo):
    home = locate_home(home=demo.home, env={})
    assert home.session_dir == demo.session_dir
    assert home.state_db() == demo.state_db
    assert home.state_db("work") == demo.profile_state_db("work")
    assert home.profile_names() == ["default", "work"]


def test_every_sidecar_round_trips_byte_exactly(demo):
    corrupt = demo.session_dir / f"{demo.sessions['corrupt']}.json"
    paths = sorted(p for p in demo.session_dir.iterdir() if p.name.endswith((".json", ".json.bak")))
    checked = 0
    for path in paths:
        if path == corrupt or path.name == INDEX_NAME:
            continue
        data = path.read_bytes()
        loaded = load_session(parse_sidecar_bytes(data), now=NOW, cwd=demo.home)
        assert loaded.dropped_keys == [], path.name
        assert dump_session(loaded.data) == data, path.name
        checked += 1
    assert checked == 9  # 8 live sidecars + the shrunken .bak


def test_corrupt_sidecar_is_torn_mid_string(demo):
    data = (demo.session_dir / f"{demo.sessions['corrupt']}.json").read_bytes()
    assert data.startswith(b'{\n  "session_id": "' + demo.sessions["corrupt"].encode())
    assert data.endswith(b"rebuilt from t")
    with pytest.raises(SidecarError):
        parse_sidecar_bytes(data)


def test_index_is_hermes_rows_missing_the_newest_session(demo):
    rows = parse_index((demo.session_dir / INDEX_NAME).read_bytes())
    ids = [r["session_id"] for r in rows]
    live = {p.stem for p in demo.session_dir.glob("*.json") if not p.name.startswith("_")}
    assert set(ids) == live - {demo.sessions["healthy_reasoning"]}
    assert demo.sessions["corrupt"] in ids  # its row from before the damage
    stamps = [r["updated_at"] for r in rows]
    assert stamps == sorted(stamps, reverse=True)
    newest = max(_sidecar(demo, s)["updated_at"] for s in ("healthy", "healthy_reasoning", "lost_response"))
    assert newest == _sidecar(demo, "healthy_reasoning")["updated_at"] > stamps[0]


def test_healthy_chats(demo):
    tools = _sidecar(demo, "healthy")
    assert [c["name"] for c in tools["tool_calls"]] == ["read_file", "terminal"]
    assert tools["tool_calls"][0]["assistant_msg_idx"] == 1
    assert tools["messages"][2]["role"] == "tool"
    assert (
        tools["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{"path": "requirements-dev.txt"}'
    )
    trip = _sidecar(demo, "healthy_reasoning")
    assert any(m.get("reasoning") for m in trip["messages"])
    assert isinstance(trip["messages"][2]["content"], list)
    work = _sidecar(demo, "healthy_work")
    assert work["profile"] == "work"
    assert (
        "<script>alert(1)</script> <b>bold?</b> <img src=http://example.com/x.png>"
        in work["messages"][0]["content"]
    )


def test_shrunken_live_and_fuller_backup(demo):
    live, bak = _sidecar(demo, "shrunken"), _sidecar(demo, "shrunken", ".json.bak")
    assert (len(live["messages"]), len(bak["messages"])) == (2, 6)
    assert live["messages"] == bak["messages"][:2]
    for key in ("intentional_shrink_generation", "clear_generation", "truncation_watermark"):
        assert live[key] is None and bak[key] is None


# ---------------------------------------------------------------- markers and journals


def test_lost_response_marker_and_journal(demo):
    side = _sidecar(demo, "lost_response")
    messages = side["messages"]
    user, marker = messages[-2], messages[-1]
    assert side["context_messages"][-1] == user
    assert user["role"] == "user" and user["_recovered"] is True and user["timestamp"] == int(NOW - 700)
    assert marker["content"] == demo_module.MARKER_CONTENT
    assert "Recovering the partial output from the run journal \u2014 reload" in marker["content"]
    assert marker["interruption_cause"] == "process_restart"
    assert marker["_pending_journal_recovery"] is True
    assert marker["_journal_retry_stream_id"] == demo.stream_ids["lost_response"]
    assert len(marker["_journal_retry_stream_id"]) == 32
    assert marker["_journal_retry_attempts"] == 0
    assert marker["_journal_retry_first_seen_ts"] == marker["timestamp"] == int(NOW - 600)
    parsed = read_run_events(_journal(demo, "lost_response"))
    assert parsed.malformed == []
    kinds = [e["event"] for e in parsed.events]
    assert kinds == ["reasoning", "token", "tool", "tool_complete", "token", "token", "token"]
    summary = run_summary(demo.sessions["lost_response"], demo.stream_ids["lost_response"], parsed.events)
    assert summary["terminal"] is False and summary["terminal_state"] == "running"
    assert parsed.events[2]["payload"]["name"] == "terminal"


def test_marker_matches_the_repair_code(demo):
    repair_marker = pytest.importorskip("inspector.repair.marker")
    from inspector.plan import Clock

    marker = _sidecar(demo, "lost_response")["messages"][-1]
    expected = repair_marker.marker_with_retry_hook(
        Clock(now=NOW - 600, server_started_at=NOW - 620),
        recovered_output=False,
        stream_id=demo.stream_ids["lost_response"],
        pending_started_at=NOW - 700,
    )
    assert marker == expected


def test_waiting_marker_has_no_journal_yet(demo):
    marker = _sidecar(demo, "waiting_marker")["messages"][-1]
    assert marker["_pending_journal_recovery"] is True
    assert marker["_journal_retry_stream_id"] == demo.stream_ids["waiting_marker"]
    assert not _journal(demo, "waiting_marker").exists()


def test_stale_pending_turn(demo):
    side = _sidecar(demo, "stale_pending")
    assert side["active_stream_id"] == demo.stream_ids["stale_pending"]
    assert side["pending_user_message"]
    assert side["pending_started_at"] == round(NOW - 3600, 3)
    assert not any(m.get("_error") for m in side["messages"])


def test_torn_journal_drops_lines_in_hermes_view(demo):
    path = _journal(demo, "stale_pending")
    data = path.read_bytes()
    assert "\u2028".encode() in data and not data.endswith(b"\n")
    parsed = read_run_events(path)
    assert [e["seq"] for e in parsed.events] == [1, 2, 3, 5]
    assert len(parsed.malformed) == 3  # two halves of the U+2028 record + the torn last line
    assert all(not e["terminal"] for e in parsed.events)


def test_journal_lines_use_hermes_format(demo):
    for scenario in ("lost_response", "stale_pending"):
        lines = _journal(demo, scenario).read_bytes().split(b"\n")
        complete = lines[:-1]
        for number, line in enumerate(complete, start=1):
            record = json.loads(line)
            assert list(record) == RECORD_KEYS
            assert record["seq"] == number and record["event_id"] == f"{record['run_id']}:{number}"
            assert isinstance(record["created_at"], float)
            assert json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() == line


# ---------------------------------------------------------------- state.db


def test_state_db_is_agent_shaped_and_read_only_openable(demo):
    assert not any(demo.home.glob("**/*.db-*"))
    with _ro(demo.state_db) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        rows = {
            r[0]: r[1:] for r in con.execute("SELECT id, source, message_count, profile_name FROM sessions")
        }
        counts = dict(con.execute("SELECT session_id, COUNT(*) FROM messages GROUP BY session_id").fetchall())
    s = demo.sessions
    assert rows[s["state_only"]][:2] == ("webui", 4) and counts[s["state_only"]] == 4
    assert rows[s["empty_orphan_row"]][:2] == ("webui", 0) and s["empty_orphan_row"] not in counts
    assert rows[s["cli_only"]][0] == "cli"
    assert s["healthy_work"] not in rows
    for name in ("state_only", "empty_orphan_row", "cli_only"):
        assert not (demo.session_dir / f"{s[name]}.json").exists()
    with _ro(demo.profile_state_db("work")) as con:
        assert con.execute("SELECT id, source, profile_name FROM sessions").fetchall() == [
            (s["healthy_work"], "webui", "work")
        ]


def test_state_db_messages_match_the_sidecars(demo):
    with _ro(demo.state_db) as con:
        db = con.execute(
            "SELECT role, content, tool_call_id, tool_name, timestamp, reasoning, active, compacted FROM messages "
            "WHERE session_id = ? ORDER BY id",
            (demo.sessions["healthy"],),
        ).fetchall()
    side = _sidecar(demo, "healthy")["messages"]
    assert [(r[0], r[1], r[4]) for r in db] == [(m["role"], m["content"], m["timestamp"]) for m in side]
    assert db[2][2:4] == ("call_r3Kq8", "read_file")
    assert all(r[6:] == (1, 0) for r in db)
    with _ro(demo.state_db) as con:
        content = con.execute(
            "SELECT content FROM messages WHERE session_id = ? AND role = 'user' ORDER BY id",
            (demo.sessions["healthy_reasoning"],),
        ).fetchall()[1][0]
    assert content.startswith("\x00json:[")


# ---------------------------------------------------------------- hermes' audit sees the problems


def test_hermes_audit_reports_the_demo_problems(demo):
    audit = pytest.importorskip("inspector.repair.audit")
    report = audit.audit_session_recovery(demo.session_dir, demo.state_db)
    kinds = {(i["kind"], i["session_id"]) for i in report["items"]}
    s = demo.sessions
    assert kinds == {
        ("shrunken_live", s["shrunken"]),
        ("index_missing_entry", s["healthy_reasoning"]),
        ("state_db_orphan_webui_row", s["empty_orphan_row"]),
        ("state_db_missing_sidecar", s["state_only"]),
    }
    assert report["status"] == "needs_manual_review"


# ---------------------------------------------------------------- determinism and isolation


def _normalized_files(home: Path) -> dict[str, bytes]:
    out = {}
    for path in sorted(p for p in home.rglob("*") if p.is_file()):
        rel = path.relative_to(home).as_posix()
        if path.suffix == ".db":
            with _ro(path) as con:
                data = "\n".join(con.iterdump()).encode()
        else:
            data = path.read_bytes()
        out[rel] = data.replace(str(home).encode(), b"<HOME>")
    return out


def test_build_is_deterministic(tmp_path):
    first = build_demo_home(tmp_path / "one", now=NOW)
    second = build_demo_home(tmp_path / "two" / "longer-name", now=NOW)
    assert first.sessions == second.sessions and first.stream_ids == second.stream_ids
    assert _normalized_files(first.home) == _normalized_files(second.home)


def test_refuses_a_folder_that_is_not_empty(tmp_path):
    (tmp_path / "something").write_text("x")
    with pytest.raises(FileExistsError):
        build_demo_home(tmp_path, now=NOW)


def test_reads_nothing_from_reference_data():
    source = inspect.getsource(demo_module)
    recipe = json.dumps(load_recipe())
    for needle in ("/work/shared", "tests/data", "golden", "fixtures"):
        assert needle not in source and needle not in recipe
