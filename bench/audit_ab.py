"""A/B of ``audit --json`` first opens: two source trees, whole processes, interleaved.

    .venv/bin/python bench/audit_ab.py --a /tmp/main-src --b . --home bench/out/home-n10000-seed1-j200000-v1 \
        --runs 5 [--warm] [--per-process] [--busy 2] [--scratch DIR]

Each run is ``python -m inspector audit --home H --json`` with ``PYTHONPATH`` set to the tree's folder
(the one holding ``inspector/``) and a fresh state folder (a first open: no fact cache), or, with
``--warm``, a state folder filled by one untimed run of the same tree. Prints each run's wall time, the
CPU time (user + system) of the process and the copies it waited for (``wait4``), the load average,
and the medians. ``--per-process``: the CPU of each process of the tree too (a ``sitecustomize`` in a
temporary folder notes ``os.times()`` when a forked copy leaves through ``os._exit`` and when the
command ends, and how long after the command's start each one left), to see how evenly the work is
split between the cores. ``--busy N``: N CPU-bound processes (``while True: pass``) run beside every
measurement, as ``run.py --busy`` does. The two outputs are compared (the age of stale pending turns
in minutes masked, as ``run.py`` does). ``--scratch DIR``: the state folders, logs and differing
outputs go under DIR instead of the system's temporary folder (on a shared machine whose ``/tmp``
is not for benchmarks).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_SITE = """
import os, sys, atexit
_log = os.environ.get("AUDIT_AB_CPU_LOG")
if _log:
    _start = os.times()
    _is_child = [False]
    def _note(kind):
        t = os.times()
        with open(_log, "a") as fh:
            fh.write(f"{os.getpid()} {os.getppid()} {kind} {t.user:.3f} {t.system:.3f} {t.elapsed:.3f}\\n")
    def _after_fork():
        _is_child[0] = True
    os.register_at_fork(after_in_child=_after_fork)
    _real_exit = os._exit
    def _exit(code, _real=_real_exit):
        _note("forked" if _is_child[0] else "main")
        _real(code)
    os._exit = _exit
    atexit.register(lambda: None if _is_child[0] else _note("main"))
"""

_MINUTES = re.compile(rb"\d+ min(utes?)? old")


def run_once(
    src: Path, home: Path, state: Path, log: Path | None, scratch: Path | None = None
) -> tuple[float, float, bytes, float]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONDONTWRITEBYTECODE", "HERMES_INSPECTOR_NO_CACHE")
    }
    paths = [str(src)]
    if log is not None:
        paths.insert(0, str(log.parent / "site"))
        env["AUDIT_AB_CPU_LOG"] = str(log)
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["HERMES_INSPECTOR_STATE_DIR"] = str(state)
    cmd = [sys.executable, "-m", "inspector", "audit", "--home", str(home), "--json"]
    with tempfile.TemporaryFile(dir=scratch) as out:
        started = os.times().elapsed  # (the clock the copies note when they leave)
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL, env=env, cwd="/")
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        data = out.read()
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{src}: exited {status}")
    return wall, usage.ru_utime + usage.ru_stime, data, started


def settle(state: Path) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if any((state / "cache").glob("scan-*.json")):
            time.sleep(0.05)
            return
        time.sleep(0.02)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", type=Path, required=True)
    ap.add_argument("--b", type=Path, required=True)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--warm", action="store_true")
    ap.add_argument("--per-process", action="store_true")
    ap.add_argument("--busy", type=int, default=0, help="CPU-bound processes running beside the runs")
    ap.add_argument(
        "--scratch", type=Path, default=None, help="where temporary files go (default: the system's)"
    )
    args = ap.parse_args()
    scratch = args.scratch.resolve() if args.scratch is not None else None
    if scratch is not None:
        scratch.mkdir(parents=True, exist_ok=True)
    hogs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
        for _ in range(args.busy)
    ]
    home = args.home.resolve()
    work = Path(tempfile.mkdtemp(prefix="audit-ab-", dir=scratch))
    try:
        (work / "site").mkdir()
        (work / "site" / "sitecustomize.py").write_text(_SITE)
        results: dict[str, list[tuple[float, float]]] = {"a": [], "b": []}
        outputs: dict[str, bytes] = {}
        warm_states = {}
        if args.warm:
            for name, src in (("a", args.a), ("b", args.b)):
                warm_states[name] = work / f"warm-{name}"
                run_once(src.resolve(), home, warm_states[name], None, scratch)
                settle(warm_states[name])
        for i in range(args.runs):
            order = ("a", "b") if i % 2 == 0 else ("b", "a")
            for name in order:
                src = (args.a if name == "a" else args.b).resolve()
                state = warm_states.get(name) or work / f"state-{name}-{i}"
                log = work / f"cpu-{name}-{i}.log" if args.per_process else None
                load = os.getloadavg()[0]
                wall, cpu, data, started = run_once(src, home, state, log, scratch)
                if not args.warm:
                    settle(state)
                    shutil.rmtree(state, ignore_errors=True)
                outputs.setdefault(name, _MINUTES.sub(b"N min old", data))
                results[name].append((wall, cpu))
                extra = ""
                if log is not None and log.exists():
                    rows = [line.split() for line in log.read_text().splitlines()]
                    extra = "  per process (cpu, left at): " + ", ".join(
                        f"{r[2]} {float(r[3]) + float(r[4]):.2f}"
                        + (f" @{float(r[5]) - started:.2f}" if len(r) > 5 else "")
                        for r in rows
                    )
                print(
                    f"run {i} {name}: wall {wall:.3f} s, cpu {cpu:.3f} s, load {load:.1f}{extra}", flush=True
                )
        for name in ("a", "b"):
            walls = [w for w, _ in results[name]]
            cpus = [c for _, c in results[name]]
            print(
                f"{name}: median wall {statistics.median(walls):.3f} s, median cpu {statistics.median(cpus):.3f} s"
            )
        ratios_w = [b[0] / a[0] for a, b in zip(results["a"], results["b"], strict=True)]
        ratios_c = [b[1] / a[1] for a, b in zip(results["a"], results["b"], strict=True)]
        print(f"b/a: wall {statistics.median(ratios_w):.2f}x, cpu {statistics.median(ratios_c):.2f}x")
        same = outputs.get("a") == outputs.get("b")
        print("outputs identical" if same else "OUTPUTS DIFFER")
        if not same:
            for name in ("a", "b"):
                (scratch or Path(tempfile.gettempdir())).joinpath(f"audit-ab-{name}.json").write_bytes(
                    outputs[name]
                )
        return 0 if same else 1
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
