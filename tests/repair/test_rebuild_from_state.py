"""rebuild-from-state-db (issue 16): an unreadable sidecar whose chat state.db still has is set
aside (kept in the write's backup) and replaced by hermes' own materialization of that chat.

Expectations are written out by hand from the demo recipe ("Release notes for v0.52": four
messages in state.db, a sidecar torn mid-string), plus one property: the result is exactly what
hermes' materialization writes once the unreadable file is gone.
"""

from __future__ import annotations

import json

import pytest

from inspector.actions import default_clock, make_context, plan_action
from inspector.demo import build_demo_home
from inspector.home import locate_home
from inspector.plan import WriteLog, apply_plan, undo_write
from inspector.repair import registry
from inspector.repair.rebuild_from_state import NAME
from inspector.session_detail import load_detail

NOW = 1_796_140_000.0


@pytest.fixture
def demo(tmp_path):
    return build_demo_home(tmp_path / "demo", now=NOW)


def _plan(home, sid, action=NAME):
    ctx = make_context(home, default_clock(home, NOW, NOW))
    (p,) = plan_action(ctx, action, sid)
    return p


def test_the_torn_release_notes_chat_is_rebuilt_from_state_db(demo):
    """Rule: the unreadable sidecar is the plan's "before" (fingerprinted: the write backs it up),
    its replacement is hermes' materialized sidecar of the state.db row, and _index.json is
    rebuilt; the plan says it is an inspector step, not a hermes-webui repair."""
    home = locate_home(demo.home, None, None)
    sid = demo.sessions["corrupt"]
    sidecar = demo.session_dir / f"{sid}.json"
    torn = sidecar.read_bytes()
    p = _plan(home, sid)
    assert p.refusal is None
    assert p.summary[0].startswith("inspector step, not a hermes-webui repair")
    assert [c.path.name for c in p.changes] == [f"{sid}.json", "_index.json"]
    change = p.changes[0]
    assert change.before == torn and change.fingerprint is not None
    rebuilt = json.loads(change.after)
    assert rebuilt["session_id"] == sid and rebuilt["title"] == "Release notes for v0.52"
    assert rebuilt["model"] == "openai/gpt-5" and rebuilt["_recovered_from_state_db"] is True
    assert [m["role"] for m in rebuilt["messages"]] == ["user", "assistant", "user", "assistant"]
    assert rebuilt["messages"][0]["content"].startswith("Draft short release notes for v0.52")
    assert rebuilt["messages"][2]["content"] == "Make the second bullet friendlier."
    assert rebuilt["message_count"] == 4 and not change.after.endswith(b"\n")  # hermes' json.dumps bytes
    assert p.result == {"inspector_step": True, "rebuilt": True, "messages": 4, "set_aside_bytes": len(torn)}


def test_the_result_is_hermes_materialization_once_the_unreadable_file_is_gone(demo, tmp_path):
    """Rule: same bytes as hermes' materialize action on the same home without the torn file."""
    home = locate_home(demo.home, None, None)
    sid = demo.sessions["corrupt"]
    p = _plan(home, sid)
    (demo.session_dir / f"{sid}.json").unlink()
    m = _plan(home, sid, "materialize")
    assert {c.path: c.after for c in m.changes} == {c.path: c.after for c in p.changes}


def test_write_then_undo_brings_the_unreadable_file_back(demo):
    """Rule: nothing is lost: the torn bytes are in the write's backup and Undo restores them."""
    home = locate_home(demo.home, None, None)
    sid = demo.sessions["corrupt"]
    sidecar, index = demo.session_dir / f"{sid}.json", demo.session_dir / "_index.json"
    before = {sidecar: sidecar.read_bytes(), index: index.read_bytes()}
    log = WriteLog.default(home=home)
    record = apply_plan(_plan(home, sid), log)
    assert json.loads(sidecar.read_bytes())["title"] == "Release notes for v0.52"
    assert load_detail(home, sid).sidecar_error is None  # hermes can load it now
    undo_write(record.write_id, log)
    assert {p: p.read_bytes() for p in before} == before


def test_a_readable_backup_comes_first(demo):
    """Rule: with a .bak hermes can load, Restore from backup (hermes' repair) is the way back:
    this step writes nothing and the finding recommends restore-backup."""
    home = locate_home(demo.home, None, None)
    sid = demo.sessions["corrupt"]
    bak = demo.session_dir / f"{sid}.json.bak"
    bak.write_text(
        json.dumps(
            {
                "session_id": sid,
                "title": "Release notes for v0.52",
                "messages": [{"role": "user", "content": "hi"}],
            }
        )
    )
    p = _plan(home, sid)
    assert not p.changes and p.refusal is None
    assert p.summary == [
        "nothing to do: a readable backup with 1 messages exists; Restore from backup "
        "(hermes' own repair) comes first"
    ]
    (finding,) = [f for f in load_detail(home, sid).findings if f.kind == "corrupt_sidecar"]
    assert finding.action == "restore-backup"


def test_the_finding_recommends_the_rebuild_only_when_state_db_has_the_messages(demo):
    home = locate_home(demo.home, None, None)
    sid = demo.sessions["corrupt"]
    (finding,) = [f for f in load_detail(home, sid).findings if f.kind == "corrupt_sidecar"]
    assert finding.action == NAME
    # a torn sidecar whose chat state.db does not know: no way back, no button
    other = demo.session_dir / "0123456789ab.json"
    other.write_bytes(b'{"session_id": "0123456789ab", "messages": [')
    (finding,) = [f for f in load_detail(home, "0123456789ab").findings if f.kind == "corrupt_sidecar"]
    assert finding.action is None
    p = _plan(home, "0123456789ab")
    assert not p.changes and p.summary == [
        "nothing to do: state.db has no WebUI chat with this id (hermes materializes only WebUI rows)"
    ]


def test_readable_missing_and_unsafe_sidecars_are_left_alone(demo):
    home = locate_home(demo.home, None, None)
    healthy = demo.sessions["healthy"]
    assert _plan(home, healthy).summary == [f"nothing to do: hermes can load {healthy}.json"]
    only_db = demo.sessions["state_only"]
    assert _plan(home, only_db).summary == [
        f"nothing to do: {only_db}.json is missing (Materialize from state.db creates it)"
    ]
    assert "not a safe session id" in _plan(home, "../escape").refusal
    assert registry.REGISTRY.module_name(NAME) == "inspector.repair.rebuild_from_state"


def test_all_finds_exactly_the_torn_chat(demo):
    home = locate_home(demo.home, None, None)
    ctx = make_context(home, default_clock(home, NOW, NOW))
    plans = plan_action(ctx, NAME, None)
    assert [p.session_id for p in plans] == [demo.sessions["corrupt"]]
