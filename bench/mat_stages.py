"""The timeline of one ``repair --action materialize --all --write --json``, stage by stage.

Runs the command in this process on a fresh hard-linked copy of ``<home>.materialize1000`` (as
``bench/run.py --only materialize`` does) with timers around its stages: each line is a stage's
start and end (wall seconds since the command began, nested stages indented) and the CPU of the
thread it ran in, and the minor page faults of that thread in it. At the end: wall, CPU of this process and of the forked copies it waited for.

    .venv/bin/python bench/mat_stages.py --home $PWD/bench/out/home-n10000-seed1-j200000-v1.materialize1000

A loaded machine stretches every wall figure; the CPU column and the order of the stages are
what such a run says. ``--src DIR`` times another source tree (a ``git archive`` of main).

The output goes to a file through a text stream made as the interpreter makes ``sys.stdout`` for a
file: unbuffered (``write_through``, every write a system call) when ``PYTHONUNBUFFERED`` is set,
as it is in the benchmark's environment. (Until the eighth session it went to a ``StringIO``, which
hid 0.1 s of the output's 75,000 writes.)
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import os
import resource
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from against import link_tree  # noqa: E402

# (module, attribute): a function (or "Class.method") timed wherever it is called from.
STAGES = [
    ("inspector.cli", "_plan_and_write"),
    ("inspector.cli", "_print_json"),
    ("inspector.cli", "_print_json_streamed"),
    ("inspector.cli", "_plan_json"),
    ("inspector.cli", "_apply"),
    ("inspector.actions", "guard_plan"),
    ("inspector.actions", "attribute_warnings"),
    ("inspector.repair.materialize", "plan"),
    ("inspector.repair.materialize", "_some_webui_row_lacks_a_sidecar"),
    ("inspector.repair.materialize", "start_index_rebuild"),
    ("inspector.repair.materialize", "_rows_for"),
    ("inspector.repair.materialize", "_db_warnings_elsewhere"),
    ("inspector.repair.materialize", "_plan_rows"),
    ("inspector.repair.materialize", "prepare_previews"),
    ("inspector.repair.materialize", "_index_change"),
    ("inspector.repair.materialize", "_with_db_warnings"),
    ("inspector.repair.save", "IndexRebuild.finish"),
    ("inspector.repair.save", "IndexRebuild._gather"),
    ("inspector.repair.save", "IndexRebuild._end_helpers"),
    ("inspector.repair.save", "_index_bytes"),
    ("inspector.linkcheck", "recheck_before_write"),
    ("inspector.plan", "apply_plan"),
    ("inspector.plan", "check_fingerprints"),
    ("inspector.plan", "_save_backup"),
    ("inspector.plan", "sweep_stale_temps"),
    ("inspector.plan", "_SideBySide.finish"),
    ("inspector.plan", "EarlyStaging.stage"),
    ("inspector.plan", "EarlyStaging.take"),
    ("inspector.plan", "EarlyStaging.close"),
    ("inspector.plan", "write_lock"),
    ("inspector.plan", "Plan.to_json"),
    ("inspector.plan", "_swap_all"),
    ("inspector.plan", "_fsync_dir"),
    ("inspector.plan", "WriteLog.append"),
]


def _faults() -> int:
    """The calling thread's minor page faults so far (each a fresh page zeroed or copied: on this
    machine's VM about 5 us of the kernel's time each)."""
    return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt


class Timeline:
    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.rows: list[tuple[float, float, float, int, str, int]] = []
        self.depth = threading.local()

    def wrap(self, name: str, fn):
        @functools.wraps(fn)
        def timed(*args, **kwargs):
            d = getattr(self.depth, "n", 0)
            self.depth.n = d + 1
            w0, c0, f0 = time.perf_counter(), time.thread_time(), _faults()
            try:
                return fn(*args, **kwargs)
            finally:
                self.depth.n = d
                if threading.current_thread() is threading.main_thread():
                    self.rows.append(
                        (
                            w0 - self.t0,
                            time.perf_counter() - self.t0,
                            time.thread_time() - c0,
                            d,
                            name,
                            _faults() - f0,
                        )
                    )

        return timed

    def report(self, out) -> None:
        merged: dict[tuple[int, str], list] = {}
        for start, end, cpu, depth, name, faults in sorted(self.rows):
            key = (depth, name)
            if key in merged:  # a stage called many times: one line, first start to last end
                m = merged[key]
                m[1], m[2], m[4], m[6] = end, m[2] + cpu, m[4] + 1, m[6] + faults
            else:
                merged[key] = [start, end, cpu, depth, 1, name, faults]
        for start, end, cpu, depth, calls, name, faults in sorted(merged.values()):
            times = f" x{calls}" if calls > 1 else ""
            print(
                f"{start:7.3f} {end:7.3f} {end - start:6.3f}s cpu {cpu:6.3f}s {faults:7d} faults"
                f"  {'  ' * depth}{name}{times}",
                file=out,
            )


def install(tl: Timeline) -> None:
    import importlib

    for mod_name, attr in STAGES:
        mod = importlib.import_module(mod_name)
        owner, _, meth = attr.rpartition(".")
        target = getattr(mod, owner) if owner else mod
        fn = getattr(target, meth)
        setattr(target, meth, tl.wrap(attr, fn))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", required=True, type=Path, help="the <home>.materialize1000 folder (absolute)")
    ap.add_argument(
        "--work", type=Path, default=None, help="where the scratch copy goes (default: beside the home)"
    )
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy and the output")
    ap.add_argument("--switch", type=float, default=None, help="sys.setswitchinterval for the run (seconds)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mat-stages-", dir=args.work or args.home.parent))
    home = work / "home"
    link_tree(args.home, home)
    state = work / "state"
    state.mkdir()
    os.environ["HERMES_INSPECTOR_STATE_DIR"] = str(state)
    os.environ["HOME"] = str(work)
    os.chdir(home)
    if args.switch is not None:
        sys.setswitchinterval(args.switch)
    try:
        w0, t0 = time.perf_counter(), os.times()
        import inspector.cli as cli

        tl = Timeline()
        tl.t0 = w0
        install(tl)
        unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
        binary = open(work / "out.json", "wb", buffering=0 if unbuffered else -1)
        buf = io.TextIOWrapper(binary, encoding="utf-8", write_through=unbuffered)
        with buf, contextlib.redirect_stdout(buf):
            code = cli.main(
                [
                    "repair",
                    "--home",
                    str(home),
                    "--action",
                    "materialize",
                    "--all",
                    "--write",
                    "--json",
                    "--now",
                    "1780000000",
                ]
            )
        wall, t1 = time.perf_counter() - w0, os.times()
        tl.report(sys.stdout)
        own = (t1.user - t0.user) + (t1.system - t0.system)
        kids = (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)
        print(
            f"exit {code}; wall {wall:.3f} s (imports included, interpreter start-up not); CPU this process "
            f"{own:.3f} s, forked copies {kids:.3f} s; output {(work / 'out.json').stat().st_size:,} bytes; "
            f"load {os.getloadavg()[0]:.2f}"
        )
        if args.keep:
            print(work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
