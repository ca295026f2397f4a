"""hermes-webui's own functions on run-journal lines nested too deeply (skipped without
``HERMES_WEBUI_SRC``): the facts inspector.store.json_depth rests on, and each journal repair's
bytes against hermes' on the same home.

Run it with ``HERMES_WEBUI_SRC=/work/hermes-webui`` (a hermes-webui checkout at the mirrored commit).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.store.json_depth import HERMES_ALWAYS_READS, HERMES_NEVER_READS
from tests.differential.harness import HermesChild, hermes_src, run_case, snapshot
from tests.differential.homes import act_request, build_request, finish_home, make_case

SRC = hermes_src()
pytestmark = pytest.mark.skipif(SRC is None, reason="HERMES_WEBUI_SRC does not name a hermes-webui checkout")

# Run in a child with hermes imported: read_run_events called from the module's top level (the
# shallowest caller there can be), from a plain thread, and under 93 and 94 extra frames; then the
# repair's own reader (_append_journaled_partial_output) on a journal with output plus one deep line.
_PROBE = r"""
import json, sys, threading
from pathlib import Path
sys.path.insert(0, sys.argv[1])
root = Path(sys.argv[2])
import api.run_journal as rj
import api.models as models

def journal(levels, name):
    n = levels - 2
    line = '{"event":"token","payload":{"text":"deep","x":' + "[" * n + "]" * n + "}}"
    folder = root / "_run_journal" / "s1"
    folder.mkdir(parents=True, exist_ok=True)
    ok = json.dumps({"seq": 1, "event": "token", "payload": {"text": "hello"}})
    (folder / (name + ".jsonl")).write_text(ok + "\n" + line + "\n", encoding="utf-8")
    return name

def outcome(levels, name):
    try:
        return len(rj.read_run_events("s1", journal(levels, name), session_dir=root)["events"])
    except RecursionError:
        return "RecursionError"

out = {}
for levels in (993, 994):
    name = journal(levels, "t%d" % levels)
    try:  # straight from the module's top level: the shallowest caller there can be
        out["top%d" % levels] = len(rj.read_run_events("s1", name, session_dir=root)["events"])
    except RecursionError:
        out["top%d" % levels] = "RecursionError"
def room():
    lo = 1
    while outcome(lo + 1, "r") != "RecursionError":
        lo += 1
    return lo
box = []
t = threading.Thread(target=lambda: box.append(room())); t.start(); t.join()
out["thread_room"] = box[0]
def nest(k, f):
    return f() if k == 0 else nest(k - 1, f)
# nest(k) + the lambda + outcome: k + 3 frames more than the top-level call above
for k in (90, 91):
    out["extra%d" % (k + 3)] = nest(k, lambda: outcome(int(sys.argv[3]), "n"))
models.SESSION_DIR = root
rj._default_session_dir = lambda: root
class S:
    session_id = "s1"
    messages = []
    tool_calls = []
for levels in (3, 1000):
    s = S(); s.messages = []; s.tool_calls = []
    out["recovers%d" % levels] = models._append_journaled_partial_output(s, journal(levels, "a%d" % levels))
import api.turn_journal as tj
tfolder = root / "_turn_journal"
tfolder.mkdir(parents=True, exist_ok=True)
(tfolder / "s2.jsonl").write_text(
    '{"turn_id":"t","event":"submitted"}\n{"x":' + "[" * 998 + "]" * 998 + "}\n", encoding="utf-8"
)
try:
    out["turn_journal"] = len(tj.read_turn_journal("s2", session_dir=root)["events"])
except RecursionError:
    out["turn_journal"] = "RecursionError"
print(json.dumps(out))
"""


def test_hermes_reader_fails_on_the_whole_journal_past_the_levels_the_rule_names(tmp_path: Path) -> None:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HERMES_HOME": str(tmp_path / "hh"),
        "LANG": "C.UTF-8",
    }
    python = os.environ.get("HERMES_WEBUI_PYTHON") or sys.executable
    done = subprocess.run(
        [python, "-c", _PROBE, str(SRC), str(tmp_path / "sessions"), str(HERMES_ALWAYS_READS)],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    # the shallowest possible caller reads 993 levels and fails on 994: RecursionError leaves
    # read_run_events (only JSONDecodeError is caught)
    assert out["top993"] == 2 and out["top994"] == "RecursionError"
    assert HERMES_NEVER_READS == 994
    # a plain thread has less room, but more than the band's lower end
    assert HERMES_ALWAYS_READS < out["thread_room"] < HERMES_NEVER_READS
    # 900 levels are read by a caller with up to 93 frames more than the shallowest one
    assert out["extra93"] == 2 and out["extra94"] == "RecursionError"
    # the repair's reader catches it as Exception: the journal's output ("hello") is not recovered
    assert out["recovers3"] is True and out["recovers1000"] is False
    # hermes' turn-journal reader has the same JSONDecodeError-only catch: its audit fails
    assert out["turn_journal"] == "RecursionError"


@pytest.fixture(scope="module")
def child(tmp_path_factory):
    proc = HermesChild(SRC, tmp_path_factory.mktemp("hermes"))
    yield proc
    proc.close()


def _hermes_writes(child: HermesChild, case, home: Path) -> dict[str, bytes]:
    if home.exists():
        shutil.rmtree(home)
    home.mkdir(parents=True)
    child.ask(build_request(case, home))
    finish_home(case, home)
    child.ask(act_request(case, home))
    return {k: v for k, v in snapshot(home).items() if "/_run_journal/" not in k}


# seeds of tests/differential/homes.py whose target run journal holds output hermes recovers
SEEDS = {"recover-journal": 0, "repair-interrupted": 2}


@pytest.mark.parametrize("action", sorted(SEEDS))
@pytest.mark.parametrize("kind", ["deep", "deep-ok"])
def test_each_journal_repair_writes_hermes_bytes_on_a_deeply_nested_line(
    child: HermesChild, tmp_path: Path, action: str, kind: str
) -> None:
    case = make_case(SEEDS[action])
    assert case.action == action
    run = next(
        e["run_id"] for e in case.journals if e["session_id"] == case.session_id and e["event"] == "token"
    )
    case.journal_damage = []
    plain = _hermes_writes(child, case, tmp_path / "plain")
    case.journal_damage = [(case.session_id, run, kind)]
    damaged = _hermes_writes(child, case, tmp_path / "damaged")
    assert damaged != plain, "the seed no longer exercises the line: hermes writes the same either way"
    outcome = run_case(case, child, tmp_path / "case")
    assert outcome.verdict == "same", outcome
