"""Golden cases 01-20, run through the two journal planners directly (no command line).

For each case: copy ``before/`` to a temp home, plan the action with the case's clock, and
check that the plan writes exactly hermes' bytes to every changed/created file, deletes
the deleted ones, and leaves every other file alone. ``plan.result["hermes_return"]``
must be what hermes' function returned.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.home import locate_home
from inspector.plan import Clock
from inspector.repair import interrupted, promote
from inspector.repair.context import RepairContext
from tests.conftest import GOLDEN, copy_tree

PLANNERS = {"recover-journal": promote, "repair-interrupted": interrupted}
CASES = sorted(
    p
    for p in GOLDEN.iterdir()
    if (p / "case.json").is_file()
    and json.loads((p / "case.json").read_text(encoding="utf-8"))["action"] in PLANNERS
)


def _plan_case(case_dir: Path, home_dir: Path):
    case = json.loads((case_dir / "case.json").read_text(encoding="utf-8"))
    home = copy_tree(case_dir / "before", home_dir)
    ctx = RepairContext(
        home=locate_home(home, env={}), clock=Clock(case["now"], case["server_started_at"]), cwd=home
    )
    return case, home, PLANNERS[case["action"]].plan(ctx, case["session_id"])


def test_cases_01_to_20_are_all_here():
    assert [c.name[:2] for c in CASES] == [f"{n:02d}" for n in range(1, 21)]


@pytest.mark.parametrize("case_dir", CASES, ids=[c.name for c in CASES])
def test_plan_writes_hermes_bytes(case_dir: Path, tmp_path: Path) -> None:
    case, home, plan = _plan_case(case_dir, tmp_path / "home")
    assert plan.refusal is None, plan.refusal
    assert plan.result["hermes_return"] is case["hermes_return"]
    planned = {c.path.relative_to(home).as_posix(): c for c in plan.changes}
    placeholder = json.dumps(str(home))[1:-1].encode("utf-8")
    for rel in case["changed"] + case["created"]:
        assert rel in planned, f"{rel} is not written"
        expected = (case_dir / "after" / rel).read_bytes().replace(b"{HERMES_HOME}", placeholder)
        assert planned[rel].after == expected, f"{rel} differs from hermes' bytes"
    for rel in case["deleted"]:
        assert rel in planned and planned[rel].after is None, f"{rel} is not deleted"
    touched = set(case["changed"]) | set(case["created"]) | set(case["deleted"])
    assert set(planned) == touched, "the plan touches files hermes left alone"


@pytest.mark.parametrize("case_dir", CASES, ids=[c.name for c in CASES])
def test_plan_before_bytes_are_the_files_on_disk(case_dir: Path, tmp_path: Path) -> None:
    _, home, plan = _plan_case(case_dir, tmp_path / "home")
    for change in plan.changes:
        on_disk = change.path.read_bytes() if change.path.exists() else None
        assert change.before == on_disk


def test_case_05_still_arriving_plans_no_change(tmp_path: Path) -> None:
    case_dir = next(c for c in CASES if c.name.startswith("05-"))
    _, _, plan = _plan_case(case_dir, tmp_path / "home")
    assert plan.changes == [] and plan.refusal is None
    assert plan.result == {"hermes_return": False}
    assert any("still arriving" in line for line in plan.summary)
