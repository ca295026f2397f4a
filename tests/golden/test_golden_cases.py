"""Every golden case of hermes-webui, run through the command line exactly as the issue says.

Copy ``before/`` to a temp dir, run ``hermes-inspector repair ... --write`` (or ``audit
--json``), then check: each ``compare`` path matches ``after/``, ``deleted`` files are gone,
nothing else under ``webui/sessions`` changed or appeared.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import GOLDEN, copy_tree, files_of, run_main

CASES = sorted(p for p in GOLDEN.iterdir() if (p / "case.json").is_file())


@pytest.mark.parametrize("case_dir", CASES, ids=[c.name for c in CASES])
def test_golden_case(case_dir: Path, tmp_path: Path) -> None:
    case = json.loads((case_dir / "case.json").read_text(encoding="utf-8"))
    home = copy_tree(case_dir / "before", tmp_path / "home")
    before = files_of(home)
    if case["action"] == "audit":
        code, out = run_main(["audit", "--home", str(home), "--json"])
        assert code == 0
        got = json.loads(out)
        expected = json.loads((case_dir / "expected_audit.json").read_text(encoding="utf-8"))
        assert {k: got[k] for k in ("status", "summary", "items")} == expected
        assert files_of(home) == before, "the audit wrote to the home"
        return
    target = case["session_id"] or "--all"
    code, out = run_main(
        [
            "repair",
            target,
            "--action",
            case["action"],
            "--home",
            str(home),
            "--write",
            "--now",
            repr(case["now"]),
            "--server-started-at",
            repr(case["server_started_at"]),
        ]
    )
    assert code == 0, out
    after = files_of(home)
    placeholders = {"{HERMES_HOME}": json.dumps(str(home))[1:-1]}
    for rel, mode in case["compare"].items():
        expected = (case_dir / "after" / rel).read_bytes()
        for key, value in placeholders.items():
            expected = expected.replace(key.encode(), value.encode("utf-8"))
        assert rel in after, f"{rel} was not written"
        if mode == "bytes":
            assert after[rel] == expected, f"{rel} differs from hermes' bytes"
        else:
            assert json.loads(after[rel]) == json.loads(expected)
    for rel in case["deleted"]:
        assert rel not in after, f"{rel} should have been deleted"
    touched = set(case["changed"]) | set(case["created"]) | set(case["deleted"])
    for rel, data in before.items():
        if rel not in touched:
            assert after.get(rel) == data, f"{rel} changed but hermes left it alone"
    for rel in after:
        if rel.startswith("webui/sessions/") and rel not in before:
            assert rel in case["created"], f"{rel} appeared"
