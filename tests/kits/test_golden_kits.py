"""Every golden repair, done remotely: bundle -> open -> plan -> kit -> apply-kit on the original home.

The rule (issue 17): applying the kit leaves exactly the bytes ``repair --write`` leaves on that
home with the same clock. Each case checks it on one home: apply the kit, take every file's
bytes, undo the write, run ``repair --write``, and compare the two trees.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import close_bundles
from tests.conftest import GOLDEN, copy_tree, files_of, run_main

CASES = sorted(
    p
    for p in GOLDEN.iterdir()
    if (p / "case.json").is_file()
    and json.loads((p / "case.json").read_text(encoding="utf-8"))["action"] != "audit"
)


@pytest.fixture(autouse=True)
def _no_leftover_bundles():
    yield
    close_bundles()


@pytest.mark.parametrize("case_dir", CASES, ids=[c.name for c in CASES])
def test_kit_applied_leaves_the_bytes_of_repair_write(case_dir: Path, tmp_path: Path) -> None:
    case = json.loads((case_dir / "case.json").read_text(encoding="utf-8"))
    home = copy_tree(case_dir / "before", tmp_path / "home")
    before = files_of(home)
    clock = ["--now", repr(case["now"]), "--server-started-at", repr(case["server_started_at"])]
    sid = case["session_id"]
    bundle, kit = tmp_path / "case.tar.gz", tmp_path / "kit.json"

    code, out = run_main(["bundle", *([sid] if sid else ["--all"]), "--home", str(home), "-o", str(bundle)])
    assert code == 0, out
    assert files_of(home) == before, "making a bundle wrote to the home"
    code, out = run_main(
        [
            "repair",
            sid or "--all",
            "--action",
            case["action"],
            "--home",
            str(bundle),
            *clock,
            "--kit-out",
            str(kit),
        ]
    )
    if not (case["changed"] or case["created"] or case["deleted"]):  # hermes changes nothing here
        assert code == 1 and "nothing to put in a kit" in out and not kit.exists(), out
        return
    assert code == 0, out
    code, out = run_main(["apply-kit", str(kit), "--home", str(home)])
    assert code == 0, out
    assert files_of(home) == before, "the kit's preview wrote"
    code, out = run_main(["apply-kit", str(kit), "--home", str(home), "--write"])
    assert code == 0, out
    by_kit = files_of(home)
    assert by_kit != before
    write_id = out.split("Undo with: hermes-inspector undo ")[1].split()[0]
    code, out = run_main(["undo", write_id])
    assert code == 0, out
    assert files_of(home) == before
    code, out = run_main(
        ["repair", sid or "--all", "--action", case["action"], "--home", str(home), *clock, "--write"]
    )
    assert code == 0, out
    assert by_kit == files_of(home)
