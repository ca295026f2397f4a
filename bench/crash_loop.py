"""Kill `hermes-inspector repair --write` (and `undo`) with SIGKILL at every point of a write.

    python bench/crash_loop.py --iterations 1000 [--seed S] [--json] [--spawn] [--keep DIR]

Each iteration resets a demo home (every kind of broken chat) and runs one write in a child
process: `repair ... --write` for each repair action, or `undo` of an earlier write. The child
counts every call that changes the disk while a write is being applied (`os.open`, `write`,
`fsync`, `fchmod`, `fchown`, `close`, `replace`, `link`, `unlink`, `rename`, `mkdir`,
`chmod`, `rmdir`, and the atomic exchange that swaps each file in) and SIGKILLs itself at the Nth. N walks every call of every scenario
(a calibration run counts them), in a shuffled order, once killing just before the call and
once, for `os.write`, after writing only half of its bytes (a torn temp file or log line).

After every kill the loop checks:

* every file the write targets holds exactly its old bytes or exactly its new bytes;
* no file appeared in the home except the inspector's temp files, and none of those is named
  like something hermes would load (`*.json`, `*.json.bak`, `*.jsonl`);
* the write log and backups agree with the disk: no "started" entry means every target is old,
  a "done" entry means every target is new, every backup holds the sha256 it is logged with,
  and every file of the state folder is 0600 in 0700 folders;
* `undo` of an interrupted write puts the home back exactly (bytes and modes);
* bytes lost: a target's old bytes must be on disk or in a backup;
* the same command run again without a kill succeeds and leaves no temp file behind.

`--spawn` starts a fresh interpreter for every child (slower, nothing shared); the default
forks a parent that has already imported the inspector. Exit status 1 if any check failed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import inspector.cli as cli  # noqa: E402
import inspector.plan as planmod  # noqa: E402
from inspector.demo import build_demo_home  # noqa: E402
from inspector.plan import ApplyError, WriteLog, undo_write  # noqa: E402
from tests.safety.helpers import HOOKED  # noqa: E402

NOW = 1_780_000_000.0
CLOCK_ARGS = ["--now", str(NOW + 3600.0), "--server-started-at", str(NOW + 60.0)]
TEMP_MARK = ".inspector.tmp."
HERMES_SUFFIXES = (".json", ".json.bak", ".jsonl")


def sha(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None


# ---------------------------------------------------------------- the child


def _install_hook(kill_at: int, torn: bool, trace: list[str] | None) -> None:
    """Count disk-changing os calls made inside apply_plan; SIGKILL at call ``kill_at`` (0 = never)."""
    state = {"inside": 0, "count": 0}

    def counted(name, real):
        def wrapper(*args, **kwargs):
            # Not the early staging's threads (repair --write): staged while the plan was made, they
            # may still be finishing when apply_plan starts, so how many of their calls fall inside
            # it varies from run to run, and a kill point counted in one run was never reached in
            # the next ("the child was not killed"). Their kill points are
            # tests/safety/test_early_staging_race.py's.
            if state["inside"] and not threading.current_thread().name.startswith("inspector-early"):
                state["count"] += 1
                if trace is not None:
                    trace.append(name)
                if state["count"] == kill_at:
                    if name == "write" and torn and len(args) == 2 and len(args[1]) > 1:
                        real(args[0], bytes(args[1])[: len(args[1]) // 2])
                    os.kill(os.getpid(), signal.SIGKILL)
            return real(*args, **kwargs)

        return wrapper

    for name in HOOKED:
        setattr(os, name, counted(name, getattr(os, name)))
    planmod._exchange = counted("exchange", planmod._exchange)  # renameat2(RENAME_EXCHANGE), via ctypes
    real_apply = planmod.apply_plan

    def apply_plan(*args, **kwargs):
        state["inside"] += 1
        try:
            return real_apply(*args, **kwargs)
        finally:
            state["inside"] -= 1

    planmod.apply_plan = apply_plan
    cli.apply_plan = apply_plan


def child_main(spec: dict) -> int:
    """Run one CLI command with the kill hook; in count mode, write the call trace to ``spec['trace']``."""
    os.environ["HERMES_INSPECTOR_STATE_DIR"] = spec["state"]
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    trace: list[str] | None = [] if spec.get("trace") else None
    _install_hook(spec["kill_at"], spec["torn"], trace)
    code = cli.main(spec["argv"])
    if trace is not None:
        Path(spec["trace"]).write_text(json.dumps(trace))
    return code


def run_child(spec: dict, spawn: bool) -> int:
    """The child's wait status as (signal number, or -exit code)."""
    if spawn:
        proc = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], timeout=120)
        return -proc.returncode if proc.returncode < 0 else 1000 + proc.returncode
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            code = child_main(spec)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return os.WTERMSIG(status)
    return 1000 + os.WEXITSTATUS(status)


# ---------------------------------------------------------------- the home and its scenarios


def tree(root: Path) -> dict[str, tuple]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = os.lstat(p)
            rel = str(p.relative_to(root))
            if stat.S_ISREG(st.st_mode):
                out[rel] = ("file", sha(p.read_bytes()), stat.S_IMODE(st.st_mode))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", None, stat.S_IMODE(st.st_mode))
            else:
                out[rel] = ("other", None, stat.S_IMODE(st.st_mode))
    return out


def reset(src: Path, dst: Path) -> None:
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, symlinks=True)


@dataclass
class Scenario:
    name: str
    argv: list[str]
    pristine: Path  # the home before the write
    pristine_state: Path  # the state folder before the write
    valid: dict[str, set] = field(default_factory=dict)  # rel path -> sha256s it may hold
    old: dict[str, str | None] = field(default_factory=dict)
    new: dict[str, str | None] = field(default_factory=dict)
    old_bytes: dict[str, bytes] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)


class Loop:
    def __init__(self, work: Path, spawn: bool):
        self.work = work
        self.spawn = spawn
        self.home = work / "home"
        self.state = work / "state"
        base = work / "pristine" / "home"
        d = build_demo_home(base, now=NOW)
        (work / "pristine" / "state").mkdir()
        s = d.sessions
        home_args = ["--home", str(self.home)]
        self.scenarios = [
            self._scenario("materialize", ["repair", "--all", "--action", "materialize", *home_args], base),
            self._scenario(
                "rebuild-index", ["repair", "--all", "--action", "rebuild-index", *home_args], base
            ),
            self._scenario(
                "recover-journal",
                ["repair", s["lost_response"], "--action", "recover-journal", *home_args],
                base,
            ),
            self._scenario(
                "repair-interrupted",
                ["repair", s["stale_pending"], "--action", "repair-interrupted", *home_args],
                base,
            ),
            self._scenario(
                "restore-backup", ["repair", s["shrunken"], "--action", "restore-backup", *home_args], base
            ),
        ]
        self.scenarios.append(self._undo_scenario(s["state_only"]))

    # -------------------------------------------------- calibration

    def _calibrate(self, sc: Scenario) -> Scenario:
        """Run the write to the end once: count its calls and learn every target's new bytes."""
        reset(sc.pristine, self.home)
        reset(sc.pristine_state, self.state)
        before = tree(self.home)
        trace = self.work / "trace.json"
        status = run_child(
            {"argv": sc.argv, "state": str(self.state), "kill_at": 0, "torn": False, "trace": str(trace)},
            self.spawn,
        )
        if status != 1000:
            raise SystemExit(f"calibration of {sc.name} failed (status {status})")
        sc.calls = json.loads(trace.read_text())
        after = tree(self.home)
        records = [
            r
            for r in WriteLog(self.state).records()
            if r.write_id not in {x.write_id for x in WriteLog(sc.pristine_state).records()}
        ]
        for rec in records:
            for f in rec.files:
                rel = str(Path(f["path"]).relative_to(self.home))
                sc.valid.setdefault(rel, {before.get(rel, (None, None))[1]}).add(f["sha256_after"])
                sc.old.setdefault(rel, before[rel][1] if rel in before else None)
                sc.new[rel] = after[rel][1] if rel in after else None
                if rel in before:
                    sc.old_bytes[rel] = (sc.pristine / rel).read_bytes()
        if not sc.valid:
            raise SystemExit(f"scenario {sc.name} writes nothing")
        return sc

    def _scenario(self, name: str, argv: list[str], base: Path) -> Scenario:
        argv = [*argv, "--write", *CLOCK_ARGS]
        return self._calibrate(Scenario(name, argv, base, self.work / "pristine" / "state"))

    def _undo_scenario(self, state_only: str) -> Scenario:
        """`undo` of a complete materialize: the home and state after that write are the start."""
        home_copy, state_copy = self.work / "pristine-undo" / "home", self.work / "pristine-undo" / "state"
        reset(self.work / "pristine" / "home", self.home)
        reset(self.work / "pristine" / "state", self.state)
        status = run_child(
            {
                "argv": [
                    "repair",
                    "--all",
                    "--action",
                    "materialize",
                    "--home",
                    str(self.home),
                    "--write",
                    *CLOCK_ARGS,
                ],
                "state": str(self.state),
                "kill_at": 0,
                "torn": False,
            },
            self.spawn,
        )
        assert status == 1000, status
        write_id = WriteLog(self.state).records()[-1].write_id
        # The copies keep the absolute paths the log names: reset() puts them back in place.
        reset(self.home, home_copy)
        reset(self.state, state_copy)
        sc = Scenario("undo", ["undo", write_id], home_copy, state_copy)
        return self._calibrate(sc)

    # -------------------------------------------------- one kill

    def points(self) -> list[tuple[int, int, bool]]:
        out = []
        for i, sc in enumerate(self.scenarios):
            for n, name in enumerate(sc.calls, start=1):
                out.append((i, n, False))
                if name == "write":
                    out.append((i, n, True))
        return out

    def kill_once(self, index: int, kill_at: int, torn: bool, stats: Stats) -> None:
        sc = self.scenarios[index]
        reset(sc.pristine, self.home)
        reset(sc.pristine_state, self.state)
        status = run_child(
            {"argv": sc.argv, "state": str(self.state), "kill_at": kill_at, "torn": torn}, self.spawn
        )
        where = f"{sc.name} call {kill_at} ({sc.calls[kill_at - 1]}{', torn' if torn else ''})"
        if status != signal.SIGKILL:
            stats.fail(f"{where}: the child was not killed (status {status})")
            return
        stats.killed += 1
        stats.points.add((sc.name, kill_at, torn))
        self.check(sc, where, stats)

    def check(self, sc: Scenario, where: str, stats: Stats) -> None:
        now = tree(self.home)
        pristine = tree(sc.pristine)
        # 1. every target old or new, never anything else
        holds: dict[str, str] = {}
        for rel, valid in sc.valid.items():
            entry = now.get(rel)
            if entry is not None and entry[0] != "file":
                stats.torn += 1
                stats.fail(f"{where}: {rel} is not a regular file any more")
                continue
            value = entry[1] if entry else None
            stats.files += 1
            if value == sc.old[rel]:
                holds[rel] = "old"
            elif value == sc.new[rel] or value in valid:
                holds[rel] = "new"
            else:
                stats.torn += 1
                stats.fail(f"{where}: {rel} holds neither its old nor its new bytes")
        # 2. nothing else appeared; temp files never look like sessions
        for rel in sorted(set(now) - set(pristine) - set(sc.valid)):
            if TEMP_MARK in Path(rel).name:
                stats.temps_left += 1
                if rel.endswith(HERMES_SUFFIXES):
                    stats.fail(f"{where}: temp file {rel} is named like a file hermes loads")
            else:
                stats.fail(f"{where}: unexpected file {rel}")
        for rel in sorted(set(pristine) - set(now) - set(sc.valid)):
            stats.fail(f"{where}: {rel} disappeared")
        # 3. the write log and backups agree with the disk; the state folder stays private
        log = WriteLog(self.state)
        known = {r.write_id for r in WriteLog(sc.pristine_state).records()}
        records = [r for r in log.records() if r.write_id not in known]
        backups = self._check_state_folder(where, stats)
        if not records and any(h == "new" for h in holds.values()):
            stats.fail(f"{where}: a file was written before the write was logged")
        for rec in records:
            for f in rec.files:
                if f["backup"] is not None and backups.get(f["backup"]) != f["sha256_before"]:
                    stats.fail(f"{where}: backup {f['backup']} does not hold what the log says")
            if rec.complete and any(h != "new" for h in holds.values()):
                stats.fail(f"{where}: the log says done but a file is old")
        # 4. bytes lost: an old version must be on disk or in a backup
        kept = set(backups.values())
        for rel, data in sc.old_bytes.items():
            if holds.get(rel) != "old" and sha(data) not in kept:
                stats.lost += len(data)
                stats.fail(f"{where}: the old bytes of {rel} are gone")
        # 5. undo an interrupted write: the home is back exactly
        interrupted = [r for r in records if not r.complete]
        stats.interrupted += len(interrupted)
        for rec in interrupted:
            try:
                undo_write(rec.write_id, log)
                stats.undone += 1
            except ApplyError as exc:
                if "nothing to undo" not in str(exc):
                    stats.fail(f"{where}: undo of the interrupted write failed: {exc}")
                    return
                stats.undone += 1
        if interrupted:
            after = {k: v for k, v in tree(self.home).items() if TEMP_MARK not in k}
            diff = sorted(k for k in set(after) | set(pristine) if after.get(k) != pristine.get(k))
            if diff:
                stats.fail(f"{where}: undo left differences: {diff[:5]}")
                return
        # 6. running the command again works and leaves no temp file behind
        status = run_child(
            {"argv": sc.argv, "state": str(self.state), "kill_at": 0, "torn": False}, self.spawn
        )
        if status not in (1000, 1001):
            stats.fail(f"{where}: the command run again failed (status {status})")
        leftover = [k for k in tree(self.home) if TEMP_MARK in k]
        stats.temps_after_next_write += len(leftover)
        if leftover:
            stats.fail(f"{where}: temp files left after the next write: {leftover}")

    def _check_state_folder(self, where: str, stats: Stats) -> dict[str, str]:
        backups = {}
        for dirpath, dirnames, filenames in os.walk(self.state):
            for name in dirnames:
                mode = stat.S_IMODE(os.lstat(Path(dirpath) / name).st_mode)
                if mode != 0o700:
                    stats.fail(f"{where}: state folder {name} is {mode:o}, not 700")
            for name in filenames:
                p = Path(dirpath) / name
                mode = stat.S_IMODE(os.lstat(p).st_mode)
                if mode != 0o600:
                    stats.fail(f"{where}: {p.relative_to(self.state)} is {mode:o}, not 600")
                if not name.endswith(".part"):
                    backups[str(p)] = sha(p.read_bytes())
        return backups


@dataclass
class Stats:
    killed: int = 0
    files: int = 0
    torn: int = 0
    lost: int = 0
    temps_left: int = 0
    temps_after_next_write: int = 0
    interrupted: int = 0
    undone: int = 0
    points: set = field(default_factory=set)
    failures: list[str] = field(default_factory=list)

    def fail(self, message: str) -> None:
        self.failures.append(message)


def run(iterations: int, seed: int, spawn: bool, work: Path) -> dict:
    started = time.monotonic()
    loop = Loop(work, spawn)
    points = loop.points()
    rng = random.Random(seed)
    schedule: list[tuple[int, int, bool]] = []
    while len(schedule) < iterations:
        batch = list(points)
        rng.shuffle(batch)
        schedule += batch
    stats = Stats()
    for index, kill_at, torn in schedule[:iterations]:
        loop.kill_once(index, kill_at, torn, stats)
    return {
        "iterations": iterations,
        "seed": seed,
        "mode": "spawn" if spawn else "fork",
        "scenarios": {sc.name: len(sc.calls) for sc in loop.scenarios},
        "kill_points_total": len(points),
        "kill_points_covered": len(stats.points),
        "writes_killed": stats.killed,
        "files_checked": stats.files,
        "torn_files": stats.torn,
        "bytes_lost": stats.lost,
        "interrupted_writes_logged": stats.interrupted,
        "interrupted_writes_undone": stats.undone,
        "temp_files_left_by_kills": stats.temps_left,
        "temp_files_after_next_write": stats.temps_after_next_write,
        "failures": stats.failures[:50],
        "failure_count": len(stats.failures),
        "seconds": round(time.monotonic() - started, 1),
    }


def _print_table(r: dict) -> None:
    print(f"crash loop: {r['iterations']} iterations ({r['mode']}, seed {r['seed']}, {r['seconds']} s)")
    print(
        "  scenarios (disk-changing calls each): " + ", ".join(f"{k} {v}" for k, v in r["scenarios"].items())
    )
    print(f"  writes killed:                 {r['writes_killed']}")
    print(f"  kill points covered:           {r['kill_points_covered']} of {r['kill_points_total']}")
    print(f"  files checked after a kill:    {r['files_checked']}")
    print(f"  torn files:                    {r['torn_files']}")
    print(f"  bytes lost:                    {r['bytes_lost']}")
    print(
        f"  interrupted writes (logged):   {r['interrupted_writes_logged']}, undone: {r['interrupted_writes_undone']}"
    )
    print(f"  temp files left by the kills:  {r['temp_files_left_by_kills']} (none named like a session)")
    print(f"  temp files after next write:   {r['temp_files_after_next_write']}")
    print(f"  failed checks:                 {r['failure_count']}")
    for f in r["failures"][:20]:
        print(f"    {f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--spawn", action="store_true", help="a fresh interpreter per child (slower)")
    parser.add_argument("--keep", metavar="DIR", help="work in DIR and keep it")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child_main(json.loads(args.child))
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    if args.keep:
        work = Path(args.keep).absolute()
        work.mkdir(parents=True, exist_ok=True)
        result = run(args.iterations, seed, args.spawn, work)
    else:
        with tempfile.TemporaryDirectory(prefix="crash-loop-") as tmp:
            result = run(args.iterations, seed, args.spawn, Path(tmp))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print_table(result)
    return 1 if result["failure_count"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
