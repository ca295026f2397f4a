"""The inspector against hermes-webui's own functions on the same tree: ``run.py --against-hermes PATH``.

Each figure runs the inspector's command and hermes' function (``bench/hermes_child.py`` in a child
process, with ``HERMES_HOME`` and ``HERMES_WEBUI_STATE_DIR`` set for the home) as whole processes,
one after the other, ``--repeat`` times, alternating which goes first. The ratio of a figure is the
median of the per-pair ratios (inspector / hermes of two runs taken seconds apart), so a machine
whose load drifts during the run still gives a fair ratio; the absolute medians are shown beside it
with the load average seen during the figure.

Figures (10,000 sessions unless ``--sessions`` says otherwise):

* ``audit.first.plain``: ``hermes-inspector audit --json`` on a first open (a fresh, empty state folder
  and ``HOME``: no fact cache) of the *plain* home (the bench home's sidecars, ``.bak`` files and
  ``_index.json`` only: no state.db, no journals) vs ``audit_session_recovery``;
* ``audit.first.bench``: the same on the whole bench home (journals, the 200,000-event journal, state.db);
* ``audit.warm``: the inspector with the fact cache a first open left (bench home) vs hermes' audit
  (which has no cache);
* ``rebuild_index``: ``repair --action rebuild-index --all --write`` vs ``_rebuild_recovery_session_index``
  on a hard-linked copy of the home without ``_index.json`` (made before each run, outside the clock);
* ``materialize``: ``repair --action materialize --all --write`` (which rebuilds the index) vs
  ``recover_missing_sidecars_from_state_db`` + ``_rebuild_recovery_session_index`` on a copy of the home
  missing ``--materialize-rows`` (1,000) sidecars whose state.db rows have messages.

Writes go to hard-linked copies: both tools write by replacing files (a new inode), never in place,
so the cached home is never changed.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
HERMES_CHILD = BENCH / "hermes_child.py"
TIMEOUT = 900


@dataclass(frozen=True)
class Figure:
    id: str
    label: str
    target_ratio: float
    inspector: list[str]  # the inspector's command after ``python -m inspector``; {home} is replaced
    hermes_op: str
    home: str  # which home: "plain", "bench", "noindex", "materialize"
    cache: str = "fresh"  # the inspector's fact cache: "fresh" (a first open) or "warm"
    writes: bool = False  # runs on a hard-linked scratch copy made before each run


FIGURES = (
    Figure(
        "audit.first.plain",
        "audit --json, first open, plain home",
        0.33,
        ["audit", "--home", "{home}", "--json"],
        "audit",
        "plain",
    ),
    Figure(
        "audit.first.bench",
        "audit --json, first open, bench home",
        0.33,
        ["audit", "--home", "{home}", "--json"],
        "audit",
        "bench",
    ),
    Figure(
        "audit.warm",
        "audit --json, warm cache (bench home)",
        0.12,
        ["audit", "--home", "{home}", "--json"],
        "audit",
        "bench",
        cache="warm",
    ),
    Figure(
        "rebuild_index",
        "rebuild-index, plan + write (no _index.json)",
        0.25,
        ["repair", "--home", "{home}", "--action", "rebuild-index", "--all", "--write", "--json"],
        "rebuild-index",
        "noindex",
        writes=True,
    ),
    Figure(
        "materialize",
        "materialize rows, plan + write, index rebuilt",
        0.33,
        ["repair", "--home", "{home}", "--action", "materialize", "--all", "--write", "--json"],
        "materialize",
        "materialize",
        writes=True,
    ),
)


def figure_ids() -> list[str]:
    return [f.id for f in FIGURES]


def select_figures(only: str | None) -> list[Figure]:
    """The figures whose id starts with one of the comma-separated prefixes (all when None)."""
    if not only:
        return list(FIGURES)
    prefixes = [p.strip() for p in only.split(",") if p.strip()]
    chosen = [f for f in FIGURES if any(f.id.startswith(p) for p in prefixes)]
    if not chosen:
        raise ValueError(f"--only {only!r} names no figure (figures: {', '.join(figure_ids())})")
    return chosen


def check_checkout(path: Path) -> Path:
    """The checkout's path when it holds hermes' recovery module, else ValueError saying what is wrong."""
    path = Path(path)
    if not path.is_dir():
        raise ValueError(f"--against-hermes {path}: no such folder")
    if not (path / "api" / "session_recovery.py").is_file():
        raise ValueError(f"--against-hermes {path}: not a hermes-webui checkout (no api/session_recovery.py)")
    return path.resolve()


# ---------------------------------------------------------------- homes


def _link_file(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def link_tree(src: Path, dst: Path, skip=lambda rel: False) -> None:
    """A copy of ``src`` at ``dst`` made of hard links (``skip(relative path)`` leaves files out)."""
    for root, _dirs, files in os.walk(src):
        rel_root = Path(root).relative_to(src)
        (dst / rel_root).mkdir(parents=True, exist_ok=True)
        for name in files:
            rel = rel_root / name
            if not skip(rel):
                _link_file(Path(root) / name, dst / rel)


def plain_home(home: Path) -> Path:
    """``<home>.plain``: the sidecars, ``.bak`` files and ``_index.json`` only (hard links)."""
    dst = Path(f"{home}.plain")
    marker = dst / "bench_plain.json"
    if marker.exists():
        return dst
    shutil.rmtree(dst, ignore_errors=True)
    sessions = home / "webui" / "sessions"
    out = dst / "webui" / "sessions"
    out.mkdir(parents=True)
    for entry in os.scandir(sessions):
        if entry.is_file(follow_symlinks=False) and (entry.name.endswith((".json", ".json.bak"))):
            _link_file(Path(entry.path), out / entry.name)
    marker.write_text(json.dumps({"from": str(home)}) + "\n", encoding="utf-8")
    return dst


def rows_to_materialize(home: Path, n: int, seed: int = 1) -> list[str]:
    """``n`` session ids (seeded choice) that have a sidecar, no ``.bak``, and a ``webui`` row with
    messages in state.db: removing their sidecars makes ``n`` rows for the materializer."""
    sessions = home / "webui" / "sessions"
    names = set(os.listdir(sessions))
    with sqlite3.connect(f"file:{home / 'state.db'}?mode=ro", uri=True) as conn:
        ids = [
            r[0]
            for r in conn.execute(
                "SELECT s.id FROM sessions s WHERE s.source = 'webui' AND "
                "EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id) ORDER BY s.id"
            )
        ]
    fit = [sid for sid in ids if f"{sid}.json" in names and f"{sid}.json.bak" not in names]
    if len(fit) < n:
        raise ValueError(f"the home has only {len(fit)} sessions to take the sidecar of (wanted {n})")
    return sorted(random.Random(seed).sample(fit, n))


def materialize_home(home: Path, n: int) -> Path:
    """``<home>.materialize<n>``: the home (hard links) without the sidecars of :func:`rows_to_materialize`."""
    dst = Path(f"{home}.materialize{n}")
    marker = dst / "bench_materialize.json"
    if marker.exists():
        return dst
    shutil.rmtree(dst, ignore_errors=True)
    gone = {f"webui/sessions/{sid}.json" for sid in rows_to_materialize(home, n)}
    link_tree(home, dst, skip=lambda rel: rel.as_posix() in gone)
    marker.write_text(json.dumps({"from": str(home), "removed": len(gone)}) + "\n", encoding="utf-8")
    return dst


def scratch_copy(home: Path, parent: Path) -> Path:
    """A hard-linked copy of ``home`` in a new folder under ``parent`` (for one run that writes)."""
    dst = Path(tempfile.mkdtemp(prefix="scratch-", dir=parent)) / "home"
    link_tree(home, dst)
    return dst


# ---------------------------------------------------------------- running


@dataclass
class Run:
    seconds: float
    peak_rss_mb: float
    ok: bool
    cpu_seconds: float = 0.0  # user + system time of the process and the helpers it waited for
    error: str = ""
    detail: dict = field(default_factory=dict)
    disk_read_mb: float | None = None  # read from disk over the run, machine-wide (disk_reads_kb)


def disk_reads_kb() -> int | None:
    """Kilobytes read from block devices since boot, machine-wide (``pgpgin`` of ``/proc/vmstat``;
    None where there is none). Its growth over a run is what the run read from disk instead of
    the page cache: with proactive reclaim (DAMON's ``pageout``, which pages out memory idle for
    a minute on this project's machine) a "warm" page cache may be warm no longer."""
    try:
        with open("/proc/vmstat", "rb") as fh:
            for line in fh:
                if line.startswith(b"pgpgin "):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def disk_read_mb_since(before: int | None) -> float | None:
    """MB read from disk since :func:`disk_reads_kb` gave ``before`` (None when either is unknown)."""
    after = disk_reads_kb()
    return None if before is None or after is None else round((after - before) / 1024, 1)


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> Run:
    """Run ``cmd`` to its end; wall time from start to exit, its own peak RSS (``wait4``) and what
    was read from disk meanwhile."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        before = disk_reads_kb()
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd, env=env)
        _pid, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        disk = disk_read_mb_since(before)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    rss = usage.ru_maxrss / 1024
    cpu = usage.ru_utime + usage.ru_stime
    if proc.returncode != 0:
        return Run(
            elapsed,
            rss,
            False,
            cpu_seconds=cpu,
            error=f"exited {proc.returncode}: {stderr.decode(errors='replace')[-400:]}",
            disk_read_mb=disk,
        )
    detail: dict = {}
    text = stdout.decode(errors="replace").strip()
    last = text.splitlines()[-1] if text else ""
    if last.startswith("{"):
        try:
            detail = json.loads(last)
        except ValueError:
            detail = {}
    return Run(elapsed, rss, True, cpu_seconds=cpu, detail=detail, disk_read_mb=disk)


def settle(state_dir: Path, timeout: float = 5.0) -> None:
    """Outside the clock: wait until the fact cache a first open leaves is written. The command
    hands that write to a detached process and exits (the user has the output: it is not part of
    the figure), but its CPU time must not fall into the next process measured."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any((state_dir / "cache").glob("scan-*.json")):
            time.sleep(0.05)  # the writer renames the file into place as its last step
            return
        time.sleep(0.02)


def inspector_env(state_dir: Path, fake_home: Path) -> dict[str, str]:
    drop = (
        "PYTHONDONTWRITEBYTECODE",
        "HERMES_INSPECTOR_NO_CACHE",
        "XDG_CACHE_HOME",
        "XDG_STATE_HOME",
        "XDG_CONFIG_HOME",
    )
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["HERMES_INSPECTOR_STATE_DIR"] = str(state_dir)
    env["HOME"] = str(fake_home)
    return env


def hermes_env(home: Path, pycache: Path, fake_home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONDONTWRITEBYTECODE",) and not k.startswith("HERMES_")
    }
    env.update(
        HERMES_HOME=str(home),
        HERMES_WEBUI_STATE_DIR=str(home / "webui"),
        HOME=str(fake_home),
        PYTHONPYCACHEPREFIX=str(pycache),
    )  # hermes' bytecode goes here, never into its checkout
    return env


class Bench:
    def __init__(
        self, checkout: Path, homes: dict[str, Path], work: Path, python: str, hermes_python: str, log
    ) -> None:
        self.checkout = checkout
        self.homes = homes
        self.work = work
        self.python = python
        self.hermes_python = hermes_python
        self.log = log
        self.pycache = work / "pycache-hermes"
        self.fake_home = work / "user-home"
        self.fake_home.mkdir(parents=True, exist_ok=True)
        self.warm_state = work / "state-warm"
        self._trash: list[Path] = []  # folders removed when the figure ends (see _discard)

    def _fresh_state(self) -> Path:
        return Path(tempfile.mkdtemp(prefix="state-", dir=self.work))

    def inspector(self, fig: Figure) -> Run:
        home = self.homes[fig.home]
        scratch = scratch_copy(home, self.work) if fig.writes else None
        target = scratch or home
        state = self.warm_state if fig.cache == "warm" else self._fresh_state()
        cmd = [self.python, "-m", "inspector", *[a.replace("{home}", str(target)) for a in fig.inspector]]
        try:
            run = timed(cmd, inspector_env(state, self.fake_home), ROOT if scratch is None else target)
            if fig.cache == "fresh" and fig.hermes_op == "audit":
                settle(state)
            return run
        finally:
            if scratch is not None:
                self._discard(scratch.parent)
            if state != self.warm_state:
                self._discard(state)

    def hermes(self, fig: Figure) -> Run:
        home = self.homes[fig.home]
        scratch = scratch_copy(home, self.work) if fig.writes else None
        target = scratch or home
        cmd = [self.hermes_python, str(HERMES_CHILD), str(self.checkout), fig.hermes_op]
        try:
            return timed(cmd, hermes_env(target, self.pycache, self.fake_home), target)
        finally:
            if scratch is not None:
                self._discard(scratch.parent)

    def _discard(self, folder: Path) -> None:
        """Remove ``folder`` (a run's scratch copy or state folder) once the figure is done, not now.

        On the benchmark's file system (ext4 without a journal) each new inode is searched for past
        every inode of its group freed in the last 60 seconds (360 while that inode-table block is
        still dirty: the kernel's ``recently_deleted``, with ``RECENTCY_MIN`` 60 since ext4's
        commit a17a9d935dc4 of April 2020, which the stable kernels took too; 5 before). Removing a
        materialize run's copy (its 1,000 new sidecars) just before the next run made each of the
        next run's 1,000 creates skip the 1,000 just freed, a cost of the benchmark's own clean-up
        that grew with every run and that no user's home has; it landed on whichever tool ran next.
        The copies of a figure are kept until its last pair is timed (a few hundred MB at most: hard
        links, and the files the runs wrote) and removed together then."""
        self._trash.append(folder)

    def empty_trash(self) -> None:
        for folder in self._trash:
            shutil.rmtree(folder, ignore_errors=True)
        self._trash.clear()

    def prepare(self, figures: list[Figure]) -> None:
        """Untimed: hermes' bytecode compiled (outside its checkout), the warm fact cache filled.

        Making a hard link changes the file's ctime, and the inspector does not cache facts of a
        file changed in the last 2 seconds (``scan.RACY_WINDOW_NS``): the variants were just
        linked, so the cache is filled once that window has passed."""
        self.hermes(Figure("warmup", "", 1, [], "audit", "plain"))
        time.sleep(2.5)
        if any(f.cache == "warm" for f in figures):
            self.warm_state.mkdir(exist_ok=True)
            for fig in figures:
                if fig.cache == "warm":
                    cmd = [
                        self.python,
                        "-m",
                        "inspector",
                        *[a.replace("{home}", str(self.homes[fig.home])) for a in fig.inspector],
                    ]
                    timed(cmd, inspector_env(self.warm_state, self.fake_home), ROOT)
                    settle(self.warm_state)  # the cache written before the first timed run reads it

    def figure(self, fig: Figure, repeat: int) -> dict:
        pairs: list[tuple[Run, Run]] = []
        loads = [os.getloadavg()[0]]
        for i in range(repeat):
            if i % 2 == 0:
                ins = self.inspector(fig)
                her = self.hermes(fig)
            else:
                her = self.hermes(fig)
                ins = self.inspector(fig)
            loads.append(os.getloadavg()[0])
            pairs.append((ins, her))
            self.log(
                f"  {fig.id} {i + 1}/{repeat}: inspector "
                + (f"{ins.seconds:.3f} s" if ins.ok else f"ERROR {ins.error}")
                + " / hermes "
                + (f"{her.seconds:.3f} s" if her.ok else f"ERROR {her.error}")
                + f" (load {loads[-1]:.2f}"
                + (
                    f", read from disk {ins.disk_read_mb:.0f} / {her.disk_read_mb:.0f} MB)"
                    if ins.disk_read_mb is not None and her.disk_read_mb is not None
                    else ")"
                )
            )
        self.empty_trash()
        return summarize(fig, pairs, loads)


def summarize(fig: Figure, pairs: list[tuple[Run, Run]], loads: list[float]) -> dict:
    """One figure's row: medians, min and max of each side, the median of per-pair ratios, peak RSS."""
    good = [(a, b) for a, b in pairs if a.ok and b.ok and b.seconds > 0]
    ins = [a.seconds for a, _ in good]
    her = [b.seconds for _, b in good]
    ratios = [a.seconds / b.seconds for a, b in good]
    cpu_ratios = [a.cpu_seconds / b.cpu_seconds for a, b in good if b.cpu_seconds > 0]
    errors = [r.error for pair in pairs for r in pair if not r.ok]
    ratio = statistics.median(ratios) if ratios else None
    hermes_call = [
        b.detail.get("call_s") for _, b in good if isinstance(b.detail.get("call_s"), (int, float))
    ]
    return {
        "id": fig.id,
        "label": fig.label,
        "pairs": len(pairs),
        "inspector_s": statistics.median(ins) if ins else None,
        "inspector_min_s": min(ins) if ins else None,
        "inspector_max_s": max(ins) if ins else None,
        "hermes_s": statistics.median(her) if her else None,
        "hermes_min_s": min(her) if her else None,
        "hermes_max_s": max(her) if her else None,
        "hermes_call_s": statistics.median(hermes_call) if hermes_call else None,
        "ratio": ratio,
        "ratios": ratios,
        "target_ratio": fig.target_ratio,
        "cpu_ratio": statistics.median(cpu_ratios) if cpu_ratios else None,
        "inspector_cpu_s": statistics.median([a.cpu_seconds for a, _ in good]) if good else None,
        "hermes_cpu_s": statistics.median([b.cpu_seconds for _, b in good]) if good else None,
        "met": (ratio <= fig.target_ratio)
        if ratio is not None and not errors
        else (False if errors else None),
        "inspector_rss_mb": max((a.peak_rss_mb for a, _ in pairs if a.ok), default=None),
        "hermes_rss_mb": max((b.peak_rss_mb for _, b in pairs if b.ok), default=None),
        "load_min": min(loads) if loads else None,
        "load_max": max(loads) if loads else None,
        # the most any run of either side read from disk (None: not known here)
        "disk_read_mb": max(
            (r.disk_read_mb for pair in pairs for r in pair if r.disk_read_mb is not None), default=None
        ),
        "errors": errors[:2],
    }


# ---------------------------------------------------------------- output


def _s(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f} s"


def format_against(report: dict) -> str:
    """The table of a report made by :func:`run_against` (also used for saved reports)."""
    m = report["machine"]
    lines = [
        f"inspector vs hermes-webui ({report['hermes_checkout']}) - {report['sessions']} sessions, "
        f"{report['repeat']} interleaved pair(s) per figure, {report.get('busy', 0)} CPU-bound process(es) beside",
        f"machine: {m['cpus']} CPUs ({m['cpus_usable']} usable), Python {m['python']}; "
        f"load average {report['load_start']:.2f} at start, {report['load_end']:.2f} at the end",
        "",
        f"{'figure':<46} {'inspector':>10} {'hermes':>10} {'ratio':>7} {'target':>7} {'met':<4} "
        f"{'CPU ratio':>9} {'RSS ins/her':>13} {'load':>10}",
    ]
    for r in report["rows"]:
        met = {True: "yes", False: "NO", None: ""}[r["met"]]
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] is not None else "-"
        rss = (
            f"{r['inspector_rss_mb'] or 0:.0f}/{r['hermes_rss_mb'] or 0:.0f} MB"
            if r["inspector_rss_mb"] is not None
            else ""
        )
        load = f"{r['load_min']:.1f}-{r['load_max']:.1f}" if r["load_min"] is not None else ""
        cpu = f"{r['cpu_ratio']:.2f}x" if r.get("cpu_ratio") is not None else "-"
        lines.append(
            f"{r['label'][:46]:<46} {_s(r['inspector_s']):>10} {_s(r['hermes_s']):>10} {ratio:>7} "
            f"{'<=' + format(r['target_ratio'], '.2f'):>7} {met:<4} {cpu:>9} {rss:>13} {load:>10}"
        )
        for err in r["errors"]:
            lines.append(f"    error: {err[:150]}")
    lines.append("")
    lines.append(
        "ratio = median over the pairs of inspector / hermes (two whole processes run back to back); "
        "times are medians of whole processes, start-up included."
    )
    lines.append(
        "CPU ratio = the same with user + system CPU time (the process and the helpers it waited for): "
        "the work done, which a loaded machine changes less than the wall time."
    )
    return "\n".join(lines)


def run_against(args, home: Path, log, machine: dict) -> dict:
    """Measure every chosen figure on ``home`` (the bench home) and its variants; the report dict."""
    import generate

    checkout = check_checkout(args.against_hermes)
    figures = select_figures(args.only)
    homes = {"bench": home}
    need = {f.home for f in figures}
    homes["plain"] = plain_home(home)  # also where hermes' untimed warm-up run looks
    if "noindex" in need:
        homes["noindex"] = generate.ensure_variant(home, "noindex")
    if "materialize" in need:
        homes["materialize"] = materialize_home(home, args.materialize_rows)
    work = Path(tempfile.mkdtemp(prefix="against-", dir=home.parent))
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        bench = Bench(checkout, homes, work, sys.executable, args.hermes_python or sys.executable, log)
        bench.prepare(figures)
        load_start = os.getloadavg()[0]
        rows = [bench.figure(f, args.repeat) for f in figures]
        load_end = os.getloadavg()[0]
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()
        shutil.rmtree(work, ignore_errors=True)
    return {
        "kind": "against-hermes",
        "machine": machine,
        "hermes_checkout": str(checkout),
        "sessions": args.sessions,
        "repeat": args.repeat,
        "busy": args.busy,
        "materialize_rows": args.materialize_rows,
        "load_start": load_start,
        "load_end": load_end,
        "rows": rows,
    }
