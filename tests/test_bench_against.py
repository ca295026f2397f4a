"""``bench/run.py --against-hermes``: its arguments are checked before anything runs, and its report
says each ratio next to the absolute figures and the load they were measured under. No timing here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
pytestmark = pytest.mark.skipif(not (BENCH / "against.py").exists(), reason="no bench/ in this checkout")

if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(BENCH / "run.py"), *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def _fake_checkout(tmp_path: Path) -> Path:
    (tmp_path / "hermes" / "api").mkdir(parents=True)
    (tmp_path / "hermes" / "api" / "session_recovery.py").write_text("")
    return tmp_path / "hermes"


def test_a_folder_that_is_not_a_hermes_checkout_is_refused_before_anything_runs(tmp_path):
    proc = _run("--against-hermes", str(tmp_path), "--home-dir", str(tmp_path / "homes"))
    assert proc.returncode == 2
    assert "not a hermes-webui checkout" in proc.stderr
    assert not (tmp_path / "homes").exists()  # no home was generated
    proc = _run("--against-hermes", str(tmp_path / "nowhere"))
    assert proc.returncode == 2 and "no such folder" in proc.stderr


def test_unknown_figures_scaling_and_negative_counts_are_refused(tmp_path):
    hermes = _fake_checkout(tmp_path)
    proc = _run("--against-hermes", str(hermes), "--only", "nosuchfigure")
    assert proc.returncode == 2 and "names no figure" in proc.stderr and "audit.first.plain" in proc.stderr
    assert _run("--against-hermes", str(hermes), "--scaling").returncode == 2
    proc = _run("--against-hermes", str(hermes), "--busy", "-1")
    assert proc.returncode == 2 and "--busy" in proc.stderr


def test_figures_are_chosen_by_id_prefix():
    import against

    assert [f.id for f in against.select_figures("audit.first")] == ["audit.first.plain", "audit.first.bench"]
    assert [f.id for f in against.select_figures("materialize, rebuild")] == ["rebuild_index", "materialize"]
    assert len(against.select_figures(None)) == len(against.FIGURES)


def _pair(against, ins: float, her: float, ok: bool = True, cpu: tuple[float, float] = (1.0, 2.0)):
    return (
        against.Run(ins, 100.0, ok, cpu[0], "" if ok else "exited 1: boom"),
        against.Run(her, 200.0, True, cpu[1], detail={"call_s": her - 0.5}),
    )


def test_the_ratio_is_the_median_of_the_pairs_and_the_target_decides():
    import against

    fig = against.FIGURES[0]  # target 0.33
    row = against.summarize(
        fig, [_pair(against, 1.0, 4.0), _pair(against, 3.0, 4.0), _pair(against, 1.2, 4.0)], [2.0, 3.5, 1.0]
    )
    assert row["ratio"] == pytest.approx(0.3)  # median of 0.25, 0.75, 0.30
    assert row["met"] is True
    assert row["inspector_s"] == pytest.approx(1.2) and row["hermes_s"] == pytest.approx(4.0)
    assert row["cpu_ratio"] == pytest.approx(0.5)
    assert (row["load_min"], row["load_max"]) == (1.0, 3.5)
    assert row["hermes_call_s"] == pytest.approx(3.5)
    slow = against.summarize(fig, [_pair(against, 2.0, 4.0)], [1.0])
    assert slow["met"] is False
    failed = against.summarize(fig, [_pair(against, 1.0, 4.0, ok=False)], [1.0])
    assert failed["met"] is False and failed["ratio"] is None and "boom" in failed["errors"][0]


def test_the_row_keeps_the_most_any_run_read_from_disk():
    import against

    fig = against.FIGURES[0]
    ins, her = _pair(against, 1.0, 4.0)
    assert against.summarize(fig, [(ins, her)], [1.0])["disk_read_mb"] is None  # not known: not made up
    ins2, her2 = _pair(against, 1.0, 4.0)
    ins.disk_read_mb, her.disk_read_mb, her2.disk_read_mb = 3.0, 12.5, 0.0
    assert against.summarize(fig, [(ins, her), (ins2, her2)], [1.0])["disk_read_mb"] == 12.5


def test_a_timed_run_says_what_was_read_from_disk_meanwhile():
    import against

    env = dict(os.environ)
    ok = against.timed([sys.executable, "-c", "print('{}')"], env, Path.cwd())
    failed = against.timed([sys.executable, "-c", "raise SystemExit(3)"], env, Path.cwd())
    assert ok.ok and not failed.ok
    if Path("/proc/vmstat").exists():
        assert isinstance(against.disk_reads_kb(), int)
        assert ok.disk_read_mb is not None and ok.disk_read_mb >= 0
        assert failed.disk_read_mb is not None and failed.disk_read_mb >= 0
    else:
        assert ok.disk_read_mb is None and against.disk_reads_kb() is None


def test_the_table_shows_ratio_beside_both_figures_and_the_load():
    import against

    rows = [against.summarize(f, [_pair(against, 0.5, 2.0)], [1.5, 2.5]) for f in against.FIGURES[:2]]
    report = {
        "machine": {"cpus": 2, "cpus_usable": 2, "python": "3.11.7"},
        "hermes_checkout": "/h",
        "sessions": 10000,
        "repeat": 1,
        "busy": 2,
        "load_start": 1.5,
        "load_end": 2.5,
        "rows": rows,
    }
    table = against.format_against(report)
    line = next(ln for ln in table.splitlines() if ln.startswith("audit --json, first open, plain home"))
    assert "0.50 s" in line and "2.00 s" in line and "0.25x" in line and "<=0.33" in line and "yes" in line
    assert "1.5-2.5" in line  # the load average seen during the figure
    assert "2 CPU-bound process(es) beside" in table and "load average 1.50 at start" in table


def test_a_saved_report_prints_again(tmp_path):
    import json

    import against

    rows = [against.summarize(against.FIGURES[3], [_pair(against, 1.0, 2.0)], [1.0])]
    report = {
        "kind": "against-hermes",
        "machine": {"cpus": 2, "cpus_usable": 2, "python": "3.11"},
        "hermes_checkout": "/h",
        "sessions": 10,
        "repeat": 1,
        "busy": 0,
        "load_start": 1.0,
        "load_end": 1.0,
        "rows": rows,
    }
    saved = tmp_path / "r.json"
    saved.write_text(json.dumps(report))
    proc = _run("--from-json", str(saved))
    assert proc.returncode == 0, proc.stderr
    assert "rebuild-index, plan + write" in proc.stdout and "0.50x" in proc.stdout


def test_a_writing_figures_scratch_copies_are_removed_together_once_its_last_pair_is_timed(
    tmp_path, monkeypatch
):
    """Removing a materialize run's copy just before the next run made that run's creates search past
    the inodes just freed (ext4 without a journal): every copy stays until the figure ends."""
    import against

    home = tmp_path / "home"
    (home / "webui" / "sessions").mkdir(parents=True)
    (home / "webui" / "sessions" / "a.json").write_text("{}")
    work = tmp_path / "work"
    work.mkdir()
    alive_at_each_run: list[list[str]] = []

    def fake_timed(cmd, env, cwd):
        alive_at_each_run.append(sorted(p.name for p in work.glob("scratch-*")))
        return against.Run(0.1, 1.0, True, 0.1)

    monkeypatch.setattr(against, "timed", fake_timed)
    bench = against.Bench(
        tmp_path / "hermes", {"materialize": home}, work, sys.executable, sys.executable, print
    )
    fig = next(f for f in against.FIGURES if f.id == "materialize")
    assert fig.writes
    row = bench.figure(fig, 2)
    assert row["pairs"] == 2
    # each run sees the copies of the runs before it still there (and its own), none removed meanwhile
    assert [len(names) for names in alive_at_each_run] == [1, 2, 3, 4]
    assert all(set(a) <= set(b) for a, b in zip(alive_at_each_run, alive_at_each_run[1:], strict=False))
    assert not list(work.glob("scratch-*")) and not list(work.glob("state-*"))  # all gone at the end
    assert (home / "webui" / "sessions" / "a.json").read_text() == "{}"  # the home itself untouched


def test_the_warm_figures_cache_is_written_before_its_first_timed_run(tmp_path, monkeypatch):
    """The command hands the fact cache's write to a detached process and exits: the warm-up waits for
    that file (as a first open's run does), else the first pair's inspector run, right after the
    warm-up in a run of the warm figure alone, found no cache and timed a first open."""
    import against

    home = tmp_path / "home"
    (home / "webui" / "sessions").mkdir(parents=True)
    work = tmp_path / "work"
    work.mkdir()
    calls: list[str] = []

    def fake_timed(cmd, env, cwd):
        calls.append("hermes" if "inspector" not in cmd else "inspector")
        return against.Run(0.1, 1.0, True, 0.1)

    monkeypatch.setattr(against, "timed", fake_timed)
    monkeypatch.setattr(against, "settle", lambda state: calls.append(f"settle {state.name}"))
    monkeypatch.setattr(against.time, "sleep", lambda s: None)
    bench = against.Bench(tmp_path / "hermes", {"bench": home, "plain": home}, work, "py", "py", print)
    bench.prepare([next(f for f in against.FIGURES if f.id == "audit.warm")])
    assert calls == ["hermes", "inspector", "settle state-warm"]
