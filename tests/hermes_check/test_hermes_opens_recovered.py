"""hermes-webui itself opens what ``recover-from-journal`` wrote (skipped without ``HERMES_WEBUI_SRC``).

For every lost-response golden case (01-20): hermes opens the case's ``before`` home today, with
the real clock, in a child process (``api.models.get_session``, twice, as a server reads a
session on a cold load and on the next request, so its lazy journal retry runs). Then the
inspector step ``recover-from-journal --all --write`` runs on that home, with the default clock.
Every session it wrote is then opened again by hermes, in a child process on a copy of the home:

* it loads (no error);
* it is not rewritten on load: every file of the sessions folder keeps its bytes (no pending
  retry keys or stale pending turn left for hermes to act on);
* hermes shows exactly the messages the inspector wrote, the recovered journal rows among them;
* hermes' own recovery audit reports nothing about the session.

Run it with ``HERMES_WEBUI_SRC=/work/hermes-webui`` (a hermes-webui checkout at the mirrored commit).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.repair.marker import RECOVERED_WORDING
from tests.conftest import GOLDEN, copy_tree, files_of, run_main

SRC = os.environ.get("HERMES_WEBUI_SRC")
CHILD = Path(__file__).with_name("hermes_child.py")
CASES = [
    c
    for c in sorted(GOLDEN.iterdir())
    if (c / "case.json").is_file()
    and json.loads((c / "case.json").read_text(encoding="utf-8"))["action"]
    in ("recover-journal", "repair-interrupted")
]
# Where hermes, opening the home today, gives up on (or never reads) journal output that is on disk.
# Worked out from each case's description: a marker armed months ago that hermes demotes after
# 24 hours (01-04, 08, 10, 12: their journals hold text), against 05 (no journal), 06/07 (no
# output), 09 (a gateway error hermes does recover), 11 (invalid UTF-8: unreadable for hermes and
# the inspector alike) and 13-20 (the stale pending turn, repaired today with the journal read).
GIVEN_UP_WITH_OUTPUT = {
    "01-promote-tokens-tool",
    "02-reasoning-only",
    "03-tool-first-anchor",
    "04-rows-after-marker",
    "08-giveup-after-24h",
    "10-truncated-last-line",
    "12-u2028-in-token",
}

pytestmark = pytest.mark.skipif(not SRC, reason="HERMES_WEBUI_SRC is not set (a hermes-webui checkout)")


def _hermes(home: Path, sids: list[str], *, audit: bool = False) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("HERMES_WEBUI_STATE_DIR", "HERMES_CONFIG_PATH")}
    env["HERMES_HOME"] = str(home)
    args = [sys.executable, str(CHILD), str(SRC)] + (["--audit"] if audit else []) + sids
    done = subprocess.run(
        args, env=env, cwd=str(home), capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("case_dir", CASES, ids=[c.name for c in CASES])
def test_hermes_opens_recovered_sessions_unchanged(case_dir: Path, tmp_path: Path) -> None:
    sid = json.loads((case_dir / "case.json").read_text(encoding="utf-8"))["session_id"]
    home = copy_tree(case_dir / "before", tmp_path / "home")
    today = _hermes(home, [sid])[sid]
    assert "error" not in today, today
    code, out = run_main(
        ["repair", "--all", "--action", "recover-from-journal", "--home", str(home), "--write", "--json"]
    )
    assert code == 0, out
    report = json.loads(out)
    written = sorted({w["session_id"] for w in report.get("written", []) if "error" not in w})
    if case_dir.name not in GIVEN_UP_WITH_OUTPUT:
        assert written == [], f"{case_dir.name}: nothing is missing, yet the step wrote {written}"
        return
    assert written == [sid]
    assert all(
        p["summary"][0].startswith("inspector step, not a hermes-webui repair") for p in report["plans"]
    )
    check = copy_tree(home, tmp_path / "check")
    sessions = check / "webui" / "sessions"
    before = files_of(sessions)
    got = _hermes(check, [sid], audit=True)
    assert "error" not in got[sid], got[sid]
    assert files_of(sessions) == before, "hermes rewrote the recovered session when it opened it"
    ours = json.loads((sessions / f"{sid}.json").read_text(encoding="utf-8"))
    assert got[sid]["messages"] == ours["messages"]
    recovered = [m for m in ours["messages"] if m.get("_recovered_from_run_journal")]
    assert recovered, "no recovered journal rows"
    assert len(got[sid]["messages"]) > len(today["messages"]), "hermes shows no more than it did before"
    assert any(m.get("content") == RECOVERED_WORDING for m in got[sid]["messages"])
    assert not any(m.get("_pending_journal_recovery") for m in ours["messages"])
    assert [i for i in got["_audit"]["items"] if i.get("session_id") == sid] == []
