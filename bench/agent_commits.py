"""How long a live agent's commits to ``state.db`` take while the inspector reads the home.

    .venv/bin/python bench/agent_commits.py [--seconds 10] [--mode wal|delete|both] [--json out.json]

The figure behind the rule "the inspector never blocks the live agent's writer" (spec state-db
§8.3). The unit test (tests/safety/test_concurrency.py) pins that rule by structure: no read
transaction is open while the inspector's own code runs, a WAL agent never waits at all, no
commit waits out hermes' 1 s busy handler. How long a commit takes is a speed figure, so it lives
here: a child process plays the agent with hermes' writer settings (``timeout=1.0``, ``BEGIN
IMMEDIATE`` ... ``COMMIT``, ``synchronous=OFF`` so that the figure is waiting on locks, not on the
disk) and commits one message after another into the demo home's ``state.db``, while this
process lists, audits, shows every session and reads the agent's session over and over. Prints,
per journal mode: the commits, how many found ``state.db`` locked, the slowest, p99 and median
commit, the 1-minute load average, and whether the slowest is under the target (200 ms; on a
loaded machine the scheduler alone can exceed it, which is why no unit test asserts it).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TARGET_MS = 200.0
LIVE_SID = "benchagent0001"

AGENT = r"""
import json, os, sqlite3, sys, time
db, mode, stop, out, sid = sys.argv[1:6]
con = sqlite3.connect(db, timeout=1.0, isolation_level=None)
con.execute(f"PRAGMA journal_mode={mode}")
con.execute("PRAGMA synchronous=OFF")
con.execute("BEGIN IMMEDIATE")
con.execute("INSERT INTO sessions (id, source, started_at, title, message_count) VALUES (?, 'webui', ?, 'live', 0)",
            (sid, time.time()))
con.execute("COMMIT")
latencies, errors, waits, i = [], [], 0, 0


def step(sql):
    global waits
    con.execute("PRAGMA busy_timeout=0")
    try:
        con.execute(sql)
        return
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc) and "busy" not in str(exc):
            raise
        waits += 1
    finally:
        con.execute("PRAGMA busy_timeout=1000")
    con.execute(sql)


open(out + ".ready", "w").close()
while not os.path.exists(stop):
    i += 1
    t0 = time.perf_counter()
    try:
        step("BEGIN IMMEDIATE")
        con.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'assistant', ?, ?)",
                    (sid, f"live message {i}", time.time()))
        con.execute("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?", (sid,))
        step("COMMIT")
    except sqlite3.Error as exc:
        errors.append(str(exc))
        try:
            con.execute("ROLLBACK")
        except sqlite3.Error:
            pass
    latencies.append(time.perf_counter() - t0)
    time.sleep(0.002)
con.close()
latencies.sort()
json.dump({"commits": len(latencies), "errors": errors, "waits": waits, "max_ms": latencies[-1] * 1000,
           "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
           "median_ms": latencies[len(latencies) // 2] * 1000}, open(out, "w"))
"""


def one_mode(mode: str, seconds: float, scratch: Path) -> dict:
    from inspector import cli
    from inspector.demo import build_demo_home
    from inspector.home import locate_home
    from inspector.load import full_audit, load_catalogue
    from inspector.session_detail import load_detail
    from inspector.store import statedb

    now = time.time()
    demo = build_demo_home(scratch / f"home-{mode}", now=now)
    home = locate_home(demo.home, None, None)
    stop, out = scratch / f"stop-{mode}", scratch / f"agent-{mode}.json"
    agent = subprocess.Popen(
        [sys.executable, "-c", AGENT, str(demo.state_db), mode, str(stop), str(out), LIVE_SID]
    )
    rounds = 0
    try:
        give_up = time.monotonic() + 60
        while not Path(f"{out}.ready").exists():
            if agent.poll() is not None or time.monotonic() > give_up:
                raise SystemExit(f"the agent did not start ({mode})")
            time.sleep(0.01)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            cat = load_catalogue(home, now=now)
            full_audit(home, now=now)
            for sid in [*cat.rows, LIVE_SID]:
                load_detail(home, sid)
            statedb.session_record(demo.state_db, LIVE_SID)
            with contextlib.redirect_stdout(io.StringIO()):  # the CLI's output is not the figure
                cli.main(["show", LIVE_SID, "--home", str(demo.home)])
            rounds += 1
    finally:
        stop.touch()
        agent.wait(timeout=60)
    stats = json.loads(out.read_text())
    return {
        "mode": mode,
        "inspector_rounds": rounds,
        **stats,
        "errors": len(stats["errors"]),
        "load_1min": os.getloadavg()[0],
        "target_ms": TARGET_MS,
        "met": stats["max_ms"] < TARGET_MS and not stats["errors"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="how long the inspector reads, per mode")
    ap.add_argument("--mode", choices=["wal", "delete", "both"], default="both")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args(argv)
    sqlite3.connect(":memory:").close()  # the sqlite3 module works before anything is built
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-agent-") as tmp:
        for mode in ["wal", "delete"] if args.mode == "both" else [args.mode]:
            row = one_mode(mode, args.seconds, Path(tmp))
            rows.append(row)
            print(
                f"{mode:6}: {row['commits']} commits, {row['waits']} found state.db locked, {row['errors']} failed; "
                f"slowest {row['max_ms']:.1f} ms, p99 {row['p99_ms']:.1f} ms, median {row['median_ms']:.2f} ms "
                f"(target < {TARGET_MS:.0f} ms: {'met' if row['met'] else 'NOT met'}); "
                f"{row['inspector_rounds']} inspector rounds, load {row['load_1min']:.1f}"
            )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0 if all(r["met"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
