"""``plan repair-interrupted`` on the big journal against hermes' ``read_run_events`` of that journal.

    .venv/bin/python bench/interrupted_pair.py --home bench/out/home-n10000-seed1-j200000-v1 \\
        --hermes /work/hermes-webui [--repeat 5]

Issue 18's figure: the inspector's plan of ``repair-interrupted`` on the largest sidecar, whose run
journal holds the big crashed turn (``bench_manifest.json``: ``largest_sidecar``, ``big_journal``),
next to hermes' ``api.run_journal.read_run_events`` of that one journal (only the read: hermes' own
repair reads it three times more and saves the session and index on top). Each side is a fresh
process, imports before its clock (the action's module, which ``plan_action`` imports lazily, too:
hermes' side imports ``api.models`` before its clock); the pairs alternate which side goes first. Prints, per pair,
wall and CPU time (``time.process_time``, plus the CPU of the helper copy the plan forks to
search the sidecars' heads) of both, the plan's peak RSS
(VmHWM) and the 1-minute load average, then the medians and the median CPU ratio. On a loaded
machine only the CPU ratio means much.

``--side plan`` / ``--side hermes`` run one side in this process and print its JSON line (what the
pairs start).

``--against TREE`` (instead of hermes): an A/B of whole processes, this tree's plan against another
source tree's (e.g. ``git archive main | tar -x -C /tmp/main``), alternating which goes first; each
side is a fresh ``--side plan`` process of that tree (its own ``bench/interrupted_pair.py``), and its
CPU is both the plan's ``process_time`` and the whole process's user+sys (imports and exit included,
from ``RUSAGE_CHILDREN``). Prints per pair and the medians, with the ratio B/A of each.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _children_cpu() -> float:
    """User + system CPU of the helpers this process forked and reaped (the plan's sidecar-head copy)."""
    try:
        import resource
    except ImportError:  # Windows: the plan forks nothing there
        return 0.0
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def plan_side(home: str) -> dict:
    from bench.measure import _home, _manifest, peak_rss_mb
    from inspector.actions import default_clock, make_context, plan_action
    from inspector.repair import action_module

    action_module("repair-interrupted")  # its imports before the clock, as hermes' side imports api.models
    loc = _home(home)
    sid = _manifest(home)["largest_sidecar"]["session_id"]
    wall, cpu, helpers = time.perf_counter(), time.process_time(), _children_cpu()
    plans = plan_action(make_context(loc, default_clock(loc, None, None)), "repair-interrupted", sid)
    return {
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu + _children_cpu() - helpers,
        "rss_mb": peak_rss_mb(),
        "changes": len(plans[0].changes),
        "refusal": plans[0].refusal,
    }


def hermes_side(home: str, checkout: str) -> dict:
    """In a process whose HERMES_HOME / HERMES_WEBUI_STATE_DIR name the home (hermes reads them at import)."""
    big = json.loads((Path(home) / "bench_manifest.json").read_text(encoding="utf-8"))["big_journal"]
    sys.path.insert(0, checkout)
    real_stdout, sys.stdout = sys.stdout, sys.stderr  # hermes may print at import
    try:
        import api.models  # noqa: F401 - as bench/hermes_child.py: loaded before the clock
        from api.run_journal import read_run_events
    finally:
        sys.stdout = real_stdout
    session_dir = Path(os.environ["HERMES_WEBUI_STATE_DIR"]) / "sessions"
    wall, cpu = time.perf_counter(), time.process_time()
    out = read_run_events(big["session_id"], big["run_id"], session_dir=session_dir)
    return {
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
        "events": len(out["events"]),
    }


def _child(args: list[str], env: dict | None = None, cwd: str | None = None) -> dict:
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{args[:2]} failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _child_rusage(cmd: list[str], env: dict | None = None) -> tuple[dict, float]:
    """The JSON line of ``cmd`` and the user+sys CPU seconds of its whole process tree."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:2]} failed: {proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(proc.stdout.strip().splitlines()[-1]), cpu


def ab_against(home: str, other: str, repeat: int) -> int:
    """``--against``: this tree (B) against ``other`` (A), whole processes alternating.

    Each tree's bytecode is compiled once, by an uncounted first run, into a cache of its own
    (``PYTHONPYCACHEPREFIX``; ``PYTHONDONTWRITEBYTECODE`` dropped): a tree without ``__pycache__``
    would otherwise compile every module in every counted process."""
    trees = {"A": Path(other).resolve(), "B": ROOT}
    rows = []
    with tempfile.TemporaryDirectory() as work:
        envs = {}
        for side in trees:
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            env["PYTHONPYCACHEPREFIX"] = str(Path(work) / side)
            envs[side] = env
        cmds = {
            side: [
                sys.executable,
                str(tree / "bench" / "interrupted_pair.py"),
                "--home",
                home,
                "--side",
                "plan",
            ]
            for side, tree in trees.items()
        }
        for side in trees:  # the warm-up: bytecode compiled and cached, files in the page cache
            _child_rusage(cmds[side], envs[side])
        for i in range(repeat):
            got = {}
            for side in ("A", "B") if i % 2 == 0 else ("B", "A"):
                got[side] = _child_rusage(cmds[side], envs[side])
            rows.append(_ab_row(got))
    return _ab_summary(trees, rows)


def _ab_row(got: dict) -> tuple:
    """One pair: printed, and returned as (A's plan, A's process CPU, B's plan, B's, load)."""
    load = os.getloadavg()[0]
    (a, a_proc), (b, b_proc) = got["A"], got["B"]
    if (a["changes"], a["refusal"]) != (b["changes"], b["refusal"]):
        raise SystemExit(f"the two trees plan differently: {a} vs {b}")
    print(
        f"A plan {a['cpu']:.3f} s CPU, process {a_proc:.3f} s, {a['rss_mb']:.0f} MB | "
        f"B plan {b['cpu']:.3f} s CPU, process {b_proc:.3f} s, {b['rss_mb']:.0f} MB | "
        f"B/A plan {b['cpu'] / a['cpu']:.2f} process {b_proc / a_proc:.2f} | load {load:.1f}",
        flush=True,
    )
    return a, a_proc, b, b_proc, load


def _ab_summary(trees: dict, rows: list[tuple]) -> int:
    med = statistics.median
    print(
        f"median: A ({trees['A']}) plan {med(r[0]['cpu'] for r in rows):.3f} s, process "
        f"{med(r[1] for r in rows):.3f} s; B ({trees['B']}) plan {med(r[2]['cpu'] for r in rows):.3f} s, "
        f"process {med(r[3] for r in rows):.3f} s; B/A plan {med(r[2]['cpu'] / r[0]['cpu'] for r in rows):.2f}, "
        f"process {med(r[3] / r[1] for r in rows):.2f}; peak {max(r[2]['rss_mb'] for r in rows):.0f} MB (B); "
        f"load {min(r[4] for r in rows):.1f}-{max(r[4] for r in rows):.1f}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", required=True)
    ap.add_argument("--hermes", help="a hermes-webui checkout (required for the pairs)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--side", choices=("plan", "hermes"))
    ap.add_argument("--against", metavar="TREE", help="A/B of whole processes against another source tree")
    args = ap.parse_args(argv)
    home = str(Path(args.home).resolve())
    if args.side == "plan":
        print(json.dumps(plan_side(home)))
        return 0
    if args.side == "hermes":
        print(json.dumps(hermes_side(home, args.hermes)))
        return 0
    if args.against:
        return ab_against(home, args.against, args.repeat)
    if not args.hermes:
        ap.error("--hermes PATH is needed to run the pairs")
    with tempfile.TemporaryDirectory() as work:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
        env.update(
            HERMES_HOME=home,
            HERMES_WEBUI_STATE_DIR=str(Path(home) / "webui"),
            HOME=work,
            PYTHONPYCACHEPREFIX=str(Path(work) / "pycache"),  # hermes' bytecode, never in its checkout
        )
        rows = []
        for i in range(args.repeat):
            sides = [("plan", None, None), ("hermes", env, home)]
            got = {}
            for side, side_env, cwd in sides if i % 2 == 0 else reversed(sides):
                got[side] = _child(["--home", home, "--hermes", args.hermes, "--side", side], side_env, cwd)
            load = os.getloadavg()[0]
            p, h = got["plan"], got["hermes"]
            rows.append((p, h, load))
            print(
                f"plan {p['wall']:.2f} s wall {p['cpu']:.2f} s CPU {p['rss_mb']:.0f} MB | "
                f"read_run_events {h['wall']:.2f} s wall {h['cpu']:.2f} s CPU | "
                f"CPU ratio {p['cpu'] / h['cpu']:.2f} | load {load:.1f}",
                flush=True,
            )
    med = statistics.median
    print(
        f"median: plan {med(r[0]['cpu'] for r in rows):.2f} s CPU ({med(r[0]['wall'] for r in rows):.2f} s wall, "
        f"peak {max(r[0]['rss_mb'] for r in rows):.0f} MB), read_run_events {med(r[1]['cpu'] for r in rows):.2f} s "
        f"CPU; CPU ratio {med(r[0]['cpu'] / r[1]['cpu'] for r in rows):.2f}; load {min(r[2] for r in rows):.1f}-"
        f"{max(r[2] for r in rows):.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
