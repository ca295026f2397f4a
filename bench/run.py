"""The benchmark runner: one table of figures for a synthetic home of N sessions.

    python bench/run.py [--sessions 10000] [--repeat 3] [--json] [--keep] [--scaling]

Every figure is the median of ``--repeat`` runs, each in a fresh process (see ``bench/measure.py``),
after the home's files were read once so the page cache is warm. The table shows the machine's CPU
count beside the figures; ``--json`` prints the same as JSON. ``--scaling`` runs the suite at 1,000,
10,000 and 50,000 sessions (``--sizes`` to change them) and adds a table of how each figure grows.
See ``bench/README.md`` for what each figure means.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import against  # noqa: E402
import generate  # noqa: E402

PYTHON = sys.executable
ACTIONS = ("recover-journal", "repair-interrupted", "restore-backup", "materialize", "rebuild-index")
MEASURE_TIMEOUT = 900
SMOOTH_FRAME_S = 1 / 60  # "scrolling smooth": every scroll step painted within one frame of a 60 Hz screen


@dataclass
class Spec:
    """One row of the table: which worker runs it and which of its figures is shown."""

    id: str
    label: str
    worker: list[str]  # arguments of bench/measure.py after the name, or ["cli-audit"]
    key: str = "total"  # which entry of the worker's "seconds" this row shows
    target_s: float | None = None
    target_rss_mb: float | None = None
    variant: str = "fresh"
    group: str = ""
    cold: bool = False  # without the inspector's fact cache (HERMES_INSPECTOR_NO_CACHE=1): a first open
    first: bool = False  # an empty state folder of its own each run: a first open that leaves its cache


def specs(quick: bool = False) -> list[Spec]:
    rows = [
        Spec(
            "first_rows.fresh",
            "1. first rows visible (fresh _index.json)",
            ["gui_list", "--stage", "first"],
            target_s=0.3,
            group="gui",
        ),
        Spec(
            "first_rows.noindex",
            "1. first rows visible (no _index.json)",
            ["gui_list", "--stage", "first"],
            target_s=0.3,
            variant="noindex",
            group="gui",
        ),
        Spec(
            "first_rows.stale",
            "1. first rows visible (stale _index.json)",
            ["gui_list", "--stage", "first"],
            target_s=0.3,
            variant="stale",
            group="gui",
        ),
        Spec(
            "catalogue",
            "2. catalogue complete with health",
            ["gui_list", "--stage", "complete"],
            target_s=1.0,
            target_rss_mb=400,
            group="gui",
        ),
        Spec("audit", "3. hermes-inspector audit --json", ["cli-audit"], target_s=0.6),
        Spec(
            "catalogue.cold",
            "   2. without the fact cache (first open)",
            ["gui_list", "--stage", "complete"],
            cold=True,
            group="gui",
        ),
        Spec(
            "catalogue.first",
            "   2. first open (empty state folder)",
            ["gui_list", "--stage", "complete"],
            target_s=1.0,  # issue 18 at 10,000 sessions; FIRST_OPEN_TARGETS gives it by size
            first=True,
            group="gui",
        ),
        Spec("audit.cold", "   3. without the fact cache (first run)", ["cli-audit"], cold=True),
        Spec(
            "journal.first",
            "4. 200k journal: first events",
            ["gui_journal"],
            key="first",
            target_s=0.2,
            group="gui",
        ),
        Spec(
            "journal.indexed",
            "4. 200k journal: fully indexed",
            ["gui_journal"],
            key="indexed",
            target_s=2.0,
            group="gui",
        ),
        Spec(
            "journal.scroll",
            "4. 200k journal: scrolling, worst frame",
            ["gui_journal"],
            key="scroll_worst",
            target_s=SMOOTH_FRAME_S,
            group="gui",
        ),
        Spec("core.first_rows", "   core: sidecar scan (no state.db/audit)", ["core_first_rows"]),
        Spec("core.catalogue", "   core: load_catalogue()", ["core_catalogue"]),
        Spec("core.journal.first", "   core: journal glance, first 50 lines", ["core_journal"], key="first"),
        Spec(
            "core.journal.indexed", "   core: journal one-pass index + stats", ["core_journal"], key="indexed"
        ),
    ]
    for action in ACTIONS:
        rows.append(Spec(f"plan.{action}", f"5. plan {action}", ["core_plan", "--action", action]))
    return rows


@dataclass
class Result:
    spec: Spec
    runs: list[dict] = field(default_factory=list)

    def seconds(self) -> list[float]:
        return [
            r["seconds"][self.spec.key]
            for r in self.runs
            if r.get("ok") and self.spec.key in r.get("seconds", {})
        ]

    def errors(self) -> list[str]:
        return [r.get("error", "?") for r in self.runs if not r.get("ok")]

    def to_json(self) -> dict:
        s = self.seconds()
        rss = [r["peak_rss_mb"] for r in self.runs if r.get("peak_rss_mb") is not None]
        stalls = [r["stall_ms"] for r in self.runs if r.get("ok") and r.get("stall_ms") is not None]
        out = {
            "id": self.spec.id,
            "label": self.spec.label.strip(),
            "path": next(
                (r.get("path") for r in self.runs if r.get("path")), "core" if not self.spec.group else None
            ),
            "runs": len(self.runs),
            "median_s": statistics.median(s) if s else None,
            "min_s": min(s) if s else None,
            "max_s": max(s) if s else None,
            "target_s": self.spec.target_s,
            "peak_rss_mb": max(rss) if rss else None,
            "target_rss_mb": self.spec.target_rss_mb,
            "stall_ms": max(stalls) if stalls else None,
            "errors": self.errors()[:1],
        }
        if self.spec.id.startswith("plan.") and self.runs and self.runs[0].get("ok"):
            r = self.runs[0]
            out["detail"] = {k: r.get(k) for k in ("plans", "refused", "changes", "bytes_after")}
        if self.spec.id.startswith(("first_rows", "catalogue")):
            ok = [r for r in self.runs if r.get("ok")]
            shown = [r["rss_shown_mb"] for r in ok if r.get("rss_shown_mb") is not None]
            settled = [r["seconds"]["settled"] for r in ok if "settled" in r.get("seconds", {})]
            cpu = [r["cpu_shown_s"] for r in ok if r.get("cpu_shown_s") is not None]
            disk = [r["disk_read_mb"] for r in ok if r.get("disk_read_mb") is not None]
            out["detail"] = {
                "cpu_shown_s": statistics.median(cpu) if cpu else None,
                "disk_read_mb": max(disk) if disk else None,  # the most any run read from disk
                "rss_when_shown_mb": max(shown) if shown else None,
                "settled_s": statistics.median(settled) if settled else None,
                "rows": ok[0].get("rows") if ok else None,
            }
        if self.spec.id == "audit":
            out["detail"] = {
                k: self.runs[-1].get(k)
                for k in (
                    "identical_runs",
                    "matches_reference",
                    "hermes_part_matches_reference",
                    "reference",
                    "hermes_sha256",
                    "status",
                )
            }
        met = []
        if out["median_s"] is not None and self.spec.target_s is not None:
            met.append(out["median_s"] <= self.spec.target_s)
        if out["peak_rss_mb"] is not None and self.spec.target_rss_mb is not None:
            met.append(out["peak_rss_mb"] <= self.spec.target_rss_mb)
        out["met"] = all(met) if met and not out["errors"] else (False if out["errors"] else None)
        return out


# ---------------------------------------------------------------- running


def warm_page_cache(*homes: Path) -> float:
    """Read every file of the homes once, so each figure is measured with a warm page cache."""
    t0 = time.perf_counter()
    for home in homes:
        for root, _dirs, files in os.walk(home):
            for name in files:
                try:
                    with open(os.path.join(root, name), "rb") as fh:
                        while fh.read(1 << 20):
                            pass
                except OSError:
                    pass
    return time.perf_counter() - t0


STATE_DIR: Path | None = None  # the inspector's state (fact cache) for this benchmark run only


def worker_env(cold: bool = False, **extra: str) -> dict[str, str]:
    """The environment of every measured process: the inspector as installed, which means with
    compiled bytecode. ``PYTHONDONTWRITEBYTECODE`` (set on some CI and sandbox machines) would
    make every start compile the whole package from source again, which no installed copy
    does (pip compiles at install time); see :func:`compile_bytecode`."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONDONTWRITEBYTECODE", "HERMES_INSPECTOR_NO_CACHE")
    }
    if STATE_DIR is not None:
        env["HERMES_INSPECTOR_STATE_DIR"] = str(STATE_DIR)
    if cold:
        env["HERMES_INSPECTOR_NO_CACHE"] = "1"
    env.update(extra)
    return env


def warm_fact_cache(*homes: Path) -> None:
    """One untimed catalogue and audit of each home, so the inspector's per-file fact cache (kept
    in this run's own state folder) is as a second open of the same home finds it."""
    for home in homes:
        run_worker(["core_catalogue"], home)
        subprocess.run(
            [PYTHON, "-m", "inspector", "audit", "--home", str(home), "--json"],
            cwd=ROOT,
            env=worker_env(),
            capture_output=True,
            check=False,
            timeout=MEASURE_TIMEOUT,
        )


def compile_bytecode() -> None:
    """Compile the package once before measuring, as ``pip install`` does (``__pycache__`` is ignored by git)."""
    subprocess.run(
        [PYTHON, "-m", "compileall", "-q", str(ROOT / "inspector"), str(BENCH)],
        check=False,
        env=worker_env(),
        cwd=ROOT,
        capture_output=True,
    )


def run_worker(args: list[str], home: Path, cold: bool = False, first: bool = False) -> dict:
    """``first``: with an empty state folder of its own (no fact cache yet: a first open), which
    is removed afterwards, once the cache the run leaves is written (outside the clock)."""
    if first:
        from against import settle

        state = Path(tempfile.mkdtemp(prefix="bench-inspector-first-"))
        try:
            run = _run_worker(args, home, cold, HERMES_INSPECTOR_STATE_DIR=str(state))
            settle(state, timeout=20.0)
            return run
        finally:
            shutil.rmtree(state, ignore_errors=True)
    return _run_worker(args, home, cold)


def _run_worker(args: list[str], home: Path, cold: bool = False, **extra: str) -> dict:
    cmd = [PYTHON, str(BENCH / "measure.py"), *args, "--home", str(home)]
    env = worker_env(cold, QT_QPA_PLATFORM="offscreen", BENCH_FAST_EXIT="1", **extra)
    before = against.disk_reads_kb()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=MEASURE_TIMEOUT, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timed out after {MEASURE_TIMEOUT} s"}
    disk = against.disk_read_mb_since(before)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {"ok": False, "error": f"worker exited {proc.returncode}: {proc.stderr.strip()[-500:]}"}
    run = json.loads(lines[-1])
    if disk is not None:
        run["disk_read_mb"] = disk
    return run


_MIN_OLD = re.compile(r"\d+ min old")


def _normalise_audit(out: dict) -> str:
    """The audit output with its clock-dependent words masked (a pending turn's age in minutes)."""
    return _MIN_OLD.sub("N min old", json.dumps(out, sort_keys=True))


def run_audit(home: Path, reference: Path | None, cold: bool = False) -> dict:
    """``hermes-inspector audit --home H --json`` timed from outside, start-up included."""
    cmd = [PYTHON, "-m", "inspector", "audit", "--home", str(home), "--json"]
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, cwd=ROOT, env=worker_env(cold))
        stdout = proc.stdout.read()
        # wait4 gives this child's own rusage: its peak RSS, not the largest of all children so far
        _pid, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.stdout.close()
        err.seek(0)
        stderr = err.read()
    rss = usage.ru_maxrss / 1024
    if proc.returncode != 0:
        return {
            "ok": False,
            "error": f"audit exited {proc.returncode}: {stderr.decode(errors='replace')[-400:]}",
        }
    try:
        out = json.loads(stdout)
    except ValueError as exc:
        return {"ok": False, "error": f"audit printed no JSON: {exc}"}
    import hashlib

    normal = _normalise_audit(out)
    hermes = json.dumps({k: out.get(k) for k in ("status", "summary", "items")}, sort_keys=True)
    result = {
        "ok": True,
        "seconds": {"total": elapsed},
        "peak_rss_mb": rss,
        "path": "cli",
        "sha256": hashlib.sha256(normal.encode()).hexdigest(),
        "hermes_sha256": hashlib.sha256(hermes.encode()).hexdigest(),
        "status": out.get("status"),
    }
    if reference is not None:
        if reference.exists():
            saved = reference.read_text(encoding="utf-8")
            result["matches_reference"] = saved == normal
            try:
                ref = json.loads(saved)
                result["hermes_part_matches_reference"] = (
                    json.dumps({k: ref.get(k) for k in ("status", "summary", "items")}, sort_keys=True)
                    == hermes
                )
            except ValueError:
                result["hermes_part_matches_reference"] = False
        else:
            reference.write_text(normal, encoding="utf-8")
            result["matches_reference"] = None
        result["reference"] = str(reference)
    return result


# Issue 18's target for the window's catalogue on a first open, by home size (sessions): the
# target of the largest size not above the home's.
FIRST_OPEN_TARGETS = {0: 1.0, 50_000: 4.0}


def first_open_target(sessions: int) -> float:
    return FIRST_OPEN_TARGETS[max(size for size in FIRST_OPEN_TARGETS if size <= sessions)]


def measure(
    home: Path, repeat: int, only: set[str] | None, quick: bool, log, sessions: int = 10_000
) -> list[Result]:
    results = []
    ref_dir = home.parent
    reference = ref_dir / f"{home.name}.audit-reference.json"
    worker_cache: dict[tuple, list[dict]] = {}
    for spec in specs(quick):
        if only and not any(spec.id.startswith(o) for o in only):
            continue
        if spec.id == "catalogue.first":
            spec = replace(spec, target_s=first_open_target(sessions))
        target_home = generate.ensure_variant(home, spec.variant)
        key = (tuple(spec.worker), spec.variant, spec.cold, spec.first)
        if key not in worker_cache:
            runs = []
            for i in range(repeat):
                if spec.worker == ["cli-audit"]:
                    run = run_audit(target_home, reference, spec.cold)
                else:
                    run = run_worker(spec.worker, target_home, spec.cold, spec.first)
                runs.append(run)
                log(
                    f"  {spec.id} run {i + 1}/{repeat}: "
                    + (
                        f"{run['seconds'].get(spec.key, float('nan')):.3f} s"
                        if run.get("ok")
                        else f"ERROR {run.get('error')}"
                    )
                    + (f", CPU {run['cpu_shown_s']:.2f} s" if run.get("cpu_shown_s") is not None else "")
                    + (f", stall {run['stall_ms']:.0f} ms" if run.get("stall_ms") is not None else "")
                    + (
                        f", read from disk {run['disk_read_mb']:.0f} MB"
                        if run.get("disk_read_mb") is not None
                        else ""
                    )
                    + f", load {os.getloadavg()[0]:.1f}"
                )
            if spec.worker == ["cli-audit"]:
                shas = {r.get("sha256") for r in runs if r.get("ok")}
                for r in runs:
                    r["identical_runs"] = len(shas) == 1
            worker_cache[key] = runs
        results.append(Result(spec, worker_cache[key]))
    return results


# ---------------------------------------------------------------- output


def machine() -> dict:
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    return {
        "cpus": os.cpu_count(),
        "cpus_usable": affinity,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
    }


def summary(results: list[Result]) -> dict:
    rows = [r.to_json() for r in results]
    gui = [
        r
        for r in rows
        if r["id"].startswith(("first_rows", "catalogue", "journal")) and r["stall_ms"] is not None
    ]
    stall = max((r["stall_ms"] for r in gui), default=None)
    rows.append(
        {
            "id": "gui_stall",
            "label": "6. longest GUI stall during 1-4",
            "path": "gui",
            "runs": sum(r["runs"] for r in gui),
            "median_s": stall / 1000 if stall is not None else None,
            "min_s": None,
            "max_s": None,
            "target_s": 0.05,
            "peak_rss_mb": None,
            "target_rss_mb": None,
            "stall_ms": stall,
            "errors": [],
            "met": (stall <= 50) if stall is not None else None,
            "detail": {r["id"]: r["stall_ms"] for r in gui},
        }
    )
    return {"rows": rows}


def _fmt_s(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v * 1000:.0f} ms" if v < 1 else f"{v:.2f} s"


def format_table(report: dict) -> str:
    m, h = report["machine"], report["home"]
    lines = [
        f"Hermes Session Inspector benchmark - {h['sessions']} sessions "
        f"({h['sidecar_mb']:.0f} MB sidecars, {h['state_db_mb']:.0f} MB state.db, "
        f"{h['journal_events']} events in the big journal), seed {h['seed']}",
        f"machine: {m['cpus']} CPUs ({m['cpus_usable']} usable), Python {m['python']}, {m['platform']}; "
        f"median of {report['repeat']} run(s), warm page cache",
        "",
        f"{'figure':<44} {'path':<10} {'median':>9} {'min':>9} {'max':>9} {'target':>8} "
        f"{'peak RSS':>9} {'stall':>8}  {'met':<4}",
    ]
    for r in report["rows"]:
        met = {True: "yes", False: "NO", None: ""}[r["met"]]
        target = _fmt_s(r["target_s"]) if r["target_s"] is not None else ""
        if r["target_rss_mb"]:
            target += f"/{r['target_rss_mb']:.0f}MB"
        rss = f"{r['peak_rss_mb']:.0f} MB" if r["peak_rss_mb"] is not None else ""
        stall = f"{r['stall_ms']:.0f} ms" if r["stall_ms"] is not None else ""
        lines.append(
            f"{r['label'][:44]:<44} {(r['path'] or '')[:10]:<10} {_fmt_s(r['median_s']):>9} "
            f"{_fmt_s(r['min_s']):>9} {_fmt_s(r['max_s']):>9} {target:>8} {rss:>9} {stall:>8}  {met:<4}"
        )
        if r["errors"]:
            lines.append(f"    error: {r['errors'][0][:150]}")
    cat = next((r for r in report["rows"] if r["id"] == "catalogue"), None)
    if cat and cat.get("detail"):
        d = cat["detail"]
        lines.append("")
        lines.append(
            f"window: peak RSS when the catalogue is shown {d.get('rss_when_shown_mb') or 0:.0f} MB "
            f"(the peak column includes the auto-selected session); settled after "
            f"{_fmt_s(d.get('settled_s'))}; {d.get('rows')} rows"
        )
    audit = next((r for r in report["rows"] if r["id"] == "audit"), None)
    if audit and audit.get("detail"):
        d = audit["detail"]
        lines.append("")
        lines.append(
            f"audit output: identical across runs: {d.get('identical_runs')}; "
            f"matches the saved reference: {d.get('matches_reference')} (hermes' part: "
            f"{d.get('hermes_part_matches_reference')}; {d.get('reference')}); "
            f"hermes part sha256 {str(d.get('hermes_sha256'))[:16]}, status {d.get('status')}"
        )
    return "\n".join(lines)


def format_scaling(reports: list[dict]) -> str:
    sizes = [r["home"]["sessions"] for r in reports]
    lines = [
        "",
        "How cost grows (median; x = ratio to the previous size, for 10x more sessions when sizes are 10x)",
        f"{'figure':<44} " + " ".join(f"{s:>14}" for s in sizes),
    ]
    ids = [r["id"] for r in reports[0]["rows"]]
    for rid in ids:
        cells = []
        prev = None
        label = rid
        for rep in reports:
            row = next((r for r in rep["rows"] if r["id"] == rid), None)
            v = row["median_s"] if row else None
            label = row["label"] if row else label
            cell = _fmt_s(v)
            if v is not None and prev:
                cell += f" x{v / prev:.1f}"
            cells.append(f"{cell:>14}")
            prev = v
        lines.append(f"{label[:44]:<44} " + " ".join(cells))
    rss_cells = []
    for rep in reports:
        row = next((r for r in rep["rows"] if r["id"] == "catalogue"), None)
        rss_cells.append(
            f"{(row['peak_rss_mb'] or 0):>11.0f} MB" if row and row["peak_rss_mb"] else f"{'-':>14}"
        )
    lines.append(f"{'peak RSS, catalogue in the window':<44} " + " ".join(rss_cells))
    return "\n".join(lines)


def run_once(args, sessions: int, log) -> dict:
    default = generate.home_path(sessions, args.seed, args.journal_events)
    target = args.home_dir / default.name if args.home_dir else default
    generated_now = generate.read_manifest(target) is None
    home, manifest = generate.ensure_home(sessions, args.seed, args.journal_events, log=log, out=target)
    homes = [home] + [generate.ensure_variant(home, v) for v in ("noindex", "stale")]
    global STATE_DIR
    STATE_DIR = Path(tempfile.mkdtemp(prefix="bench-inspector-state-"))
    compile_bytecode()
    warm = warm_page_cache(*homes)
    log(f"page cache warmed in {warm:.1f} s; filling the inspector's fact cache (state in {STATE_DIR})")
    warm_fact_cache(*homes)
    log(f"measuring {sessions} sessions, {args.repeat} run(s) each")
    only = set(args.only.split(",")) if args.only else None
    results = measure(home, args.repeat, only, args.quick, log, sessions)
    report = {
        "machine": machine(),
        "repeat": args.repeat,
        "home": {
            "path": str(home),
            "sessions": sessions,
            "seed": args.seed,
            "journal_events": manifest["journal_events"],
            "sidecar_mb": manifest["bytes"]["sidecars"] / 1e6,
            "state_db_mb": manifest["bytes"]["state_db"] / 1e6,
            "counts": manifest["counts"],
            "kinds": manifest["kinds"],
            "largest_sidecar": manifest["largest_sidecar"],
            "big_journal": manifest["big_journal"],
        },
        **summary(results),
    }
    if not args.keep and generated_now:
        for path in homes:
            shutil.rmtree(path, ignore_errors=True)
    shutil.rmtree(STATE_DIR, ignore_errors=True)
    return report


def run_against_hermes(args, log) -> int:
    """``--against-hermes``: the ratios of the inspector to hermes' own functions on the same homes."""
    default = generate.home_path(args.sessions, args.seed, args.journal_events)
    target = args.home_dir / default.name if args.home_dir else default
    home, _manifest = generate.ensure_home(args.sessions, args.seed, args.journal_events, log=log, out=target)
    compile_bytecode()
    warm_page_cache(home)
    report = against.run_against(args, home, log, machine())
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2) if args.json else against.format_against(report))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Benchmark the inspector on a synthetic Hermes home.")
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure (the median is shown)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of the table")
    ap.add_argument(
        "--keep",
        action="store_true",
        help="keep a home this run generated under bench/out/ (default: reuse a cached one, "
        "delete one generated now)",
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--journal-events", type=int, default=200_000)
    ap.add_argument("--scaling", action="store_true", help="run at each of --sizes and report the growth")
    ap.add_argument("--sizes", default="1000,10000,50000")
    ap.add_argument("--only", help="comma-separated figure id prefixes (e.g. first_rows,audit)")
    ap.add_argument("--quick", action="store_true", help="one run per figure (same as --repeat 1)")
    ap.add_argument("--home-dir", type=Path, help="where to put generated homes (default: bench/out/)")
    ap.add_argument("--out", type=Path, help="also write the JSON report to this file")
    ap.add_argument(
        "--from-json",
        nargs="+",
        type=Path,
        metavar="REPORT",
        help="print the tables (and the growth, for several) of reports saved with --out",
    )
    ap.add_argument(
        "--against-hermes",
        type=Path,
        metavar="PATH",
        help="run hermes-webui's own functions (a checkout at PATH) on the same homes, interleaved "
        "with the inspector's commands, and print the ratios (see bench/against.py)",
    )
    ap.add_argument("--hermes-python", metavar="PY", help="the interpreter for hermes (default: this one)")
    ap.add_argument(
        "--busy",
        type=int,
        default=0,
        metavar="N",
        help="with --against-hermes: keep N CPU-bound processes running beside the measurements",
    )
    ap.add_argument(
        "--materialize-rows",
        type=int,
        default=1000,
        metavar="N",
        help="with --against-hermes: state.db rows without a sidecar for the materialize figure",
    )
    args = ap.parse_args(argv)
    if (
        args.home_dir is not None
    ):  # hermes runs in another working folder: a relative path would name nothing there
        args.home_dir = args.home_dir.resolve()
    if args.against_hermes is not None:
        try:
            against.check_checkout(args.against_hermes)
            against.select_figures(args.only)
        except ValueError as exc:
            ap.error(str(exc))
        if args.scaling:
            ap.error("--against-hermes measures one size: give --sessions, not --scaling")
        if args.busy < 0 or args.materialize_rows < 1:
            ap.error("--busy must be >= 0 and --materialize-rows >= 1")
    if args.from_json:
        reports = []
        for path in args.from_json:
            saved = json.loads(path.read_text(encoding="utf-8"))
            reports += saved.get("scaling", [saved])
        tables = [against.format_against(r) for r in reports if r.get("kind") == "against-hermes"]
        reports = [r for r in reports if r.get("kind") != "against-hermes"]
        reports.sort(key=lambda r: r["home"]["sessions"])
        print("\n\n".join(tables + [format_table(r) for r in reports]))
        if len(reports) > 1:
            print(format_scaling(reports))
        return 0
    if args.quick:
        args.repeat = 1

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    if args.against_hermes is not None:
        return run_against_hermes(args, log)
    sizes = [int(s) for s in args.sizes.split(",")] if args.scaling else [args.sessions]
    reports = [run_once(args, n, log) for n in sizes]
    payload = reports[0] if len(reports) == 1 else {"scaling": reports}
    if args.out:
        args.out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(payload, indent=2))
    else:
        print("\n\n".join(format_table(r) for r in reports))
        if len(reports) > 1:
            print(format_scaling(reports))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
