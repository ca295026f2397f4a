"""Golden cases 21-25 run through the recovery modules directly (no command line involved).

Each case: copy ``before/`` to a temp home, build the repair context hermes ran with (frozen
clock, cwd = the home), plan, check the plan's bytes against ``after/`` (with the
``{HERMES_HOME}`` placeholder substituted), apply, and check that nothing else changed.
The audit case compares the returned dict with ``expected_audit.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.home import locate_home
from inspector.plan import Clock
from inspector.repair import materialize, rebuild_index, restore
from inspector.repair.audit import audit_session_recovery
from inspector.repair.context import RepairContext
from tests.conftest import FIXTURES, GOLDEN, copy_tree
from tests.recovery_helpers import apply, tree

PLANNERS = {"materialize": materialize, "restore-backup": restore}
CASES = [
    "21-materialize-seed",
    "22-materialize-agent-db",
    "23-restore-shrunken-live",
    "24-restore-corrupt-live",
]


def _case(name: str) -> tuple[Path, dict]:
    case_dir = GOLDEN / name
    return case_dir, json.loads((case_dir / "case.json").read_text(encoding="utf-8"))


def _expected(case_dir: Path, rel: str, home: Path) -> bytes:
    data = (case_dir / "after" / rel).read_bytes()
    return data.replace(b"{HERMES_HOME}", json.dumps(str(home))[1:-1].encode("utf-8"))


@pytest.mark.parametrize("name", CASES)
def test_golden_repair_case(name, tmp_path):
    case_dir, case = _case(name)
    home = copy_tree(case_dir / "before", tmp_path / "home")
    before = tree(home)
    ctx = RepairContext(home=locate_home(home), clock=Clock(case["now"], case["server_started_at"]), cwd=home)
    plan = PLANNERS[case["action"]].plan(ctx, case["session_id"])
    assert tree(home) == before, "planning wrote to the home"
    assert plan.refusal is None
    assert plan.result == case["hermes_return"]
    planned = {c.path.relative_to(home).as_posix(): c.after for c in plan.changes}
    assert sorted(planned) == sorted(case["changed"] + case["created"])
    for rel in case["compare"]:
        assert planned[rel] == _expected(case_dir, rel, home), f"{rel} differs from hermes' bytes"
    apply(plan, tmp_path)
    after = tree(home)
    for rel in case["compare"]:
        assert after[rel] == _expected(case_dir, rel, home)
    for rel, data in before.items():
        if rel not in planned:
            assert after[rel] == data, f"{rel} changed but hermes left it alone"


def test_golden_audit_case(tmp_path):
    case_dir, case = _case("25-audit-mixed")
    home = copy_tree(case_dir / "before", tmp_path / "home")
    before = tree(home)
    expected = json.loads((case_dir / "expected_audit.json").read_text(encoding="utf-8"))
    assert audit_session_recovery(locate_home(home).session_dir, locate_home(home).state_db()) == expected
    assert tree(home) == before


def test_repair_safe_sequence_reproduces_hermes_on_the_example_fixture(tmp_path):
    """hermes' repair-safe order (restore, materialize, rebuild the index) ends where hermes ended."""
    example = FIXTURES / "recovery" / "example"
    home = tmp_path / "home"
    sessions = copy_tree(example / "sessions_before", home / "webui" / "sessions")
    (home / "state.db").write_bytes((example / "state.db").read_bytes())
    expected = json.loads((example / "repair_safe_result.json").read_text(encoding="utf-8"))
    ctx = RepairContext(home=locate_home(home), clock=Clock(1779000000.0, 1778999000.0), cwd=home)
    assert audit_session_recovery(sessions, home / "state.db") == expected["before"]
    restored = restore.eligible(ctx)
    assert restored == [d["session_id"] for d in expected["backup_repair"]["details"]]
    for sid in restored:
        plan = restore.plan(ctx, sid)
        assert plan.result == next(d for d in expected["backup_repair"]["details"] if d["session_id"] == sid)
        apply(plan, tmp_path)
    ctx = RepairContext(home=locate_home(home), clock=ctx.clock, cwd=home)
    plan = materialize.plan(ctx, None)
    assert plan.result == expected["sidecar_repair"]
    apply(plan, tmp_path)
    ctx = RepairContext(home=locate_home(home), clock=ctx.clock, cwd=home)
    assert rebuild_index.plan(ctx, None).is_noop  # materialize already rebuilt it
    assert audit_session_recovery(sessions, home / "state.db") == expected["after"]
    listing = sorted(p.relative_to(sessions).as_posix() for p in sessions.rglob("*") if p.is_file())
    assert listing == json.loads((example / "repair_safe_listing_after.json").read_text(encoding="utf-8"))
    assert (sessions / "orphan01.json").read_bytes() == (
        example / "repair_safe_orphan01_after.json"
    ).read_bytes()
