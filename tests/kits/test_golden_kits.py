"""Every golden repair, done remotely: bundle -> open -> plan -> kit -> apply-kit on the original home.

The rule (issue 17): applying the kit leaves exactly the bytes ``repair --write`` leaves on that
home with the same clock. Each case checks it on one home: apply the kit, take every file's
bytes, undo the write, run ``repair --write``, and compare the two trees.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from inspector.cli import close_bundles, main
from tests.conftest import GOLDEN, copy_tree

CASES = sorted(p for p in GOLDEN.iterdir() if (p / "case.json").is_file()
               and json.loads((p / "case.json").read_text(encoding="utf-8"))["action"] != "audit")


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _run(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(args)
    return code, out.getvalue()


@pytest.fixture(autouse=True)
def _no_leftover_bundles():
    yield
    close_bundles()


@pytest.mark.parametrize("case_dir", CASES, ids=[c.name for c in CASES])
def test_kit_applied_leaves_the_bytes_of_repair_write(case_dir: Path, tmp_path: Path) -> None:
    case = json.loads((case_dir / "case.json").read_text(encoding="utf-8"))
    home = copy_tree(case_dir / "before", tmp_path / "home")
    before = _files(home)
    clock = ["--now", repr(case["now"]), "--server-started-at", repr(case["server_started_at"])]
    sid = case["session_id"]
    bundle, kit = tmp_path / "case.tar.gz", tmp_path / "kit.json"

    code, out = _run(["bundle", *([sid] if sid else ["--all"]), "--home", str(home), "-o", str(bundle)])
    assert code == 0, out
    assert _files(home) == before, "making a bundle wrote to the home"
    code, out = _run(["repair", sid or "--all", "--action", case["action"], "--home", str(bundle), *clock,
                      "--kit-out", str(kit)])
    if not (case["changed"] or case["created"] or case["deleted"]):  # hermes changes nothing here
        assert code == 1 and "nothing to put in a kit" in out and not kit.exists(), out
        return
    assert code == 0, out
    code, out = _run(["apply-kit", str(kit), "--home", str(home)])
    assert code == 0, out
    assert _files(home) == before, "the kit's preview wrote"
    code, out = _run(["apply-kit", str(kit), "--home", str(home), "--write"])
    assert code == 0, out
    by_kit = _files(home)
    assert by_kit != before
    write_id = out.split("Undo with: hermes-inspector undo ")[1].split()[0]
    code, out = _run(["undo", write_id])
    assert code == 0, out
    assert _files(home) == before
    code, out = _run(["repair", sid or "--all", "--action", case["action"], "--home", str(home), *clock,
                      "--write"])
    assert code == 0, out
    assert by_kit == _files(home)
