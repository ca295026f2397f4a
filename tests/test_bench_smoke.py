"""The benchmark suite still runs: a tiny home, one run of every figure, no timing assertions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (BENCH / "run.py").exists(), reason="no bench/ in this checkout"),
]


def _generate(tmp_path: Path) -> tuple[Path, dict]:
    home = tmp_path / "home"
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH / "generate.py"),
            "--sessions",
            "30",
            "--journal-events",
            "2000",
            "--out",
            str(home),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=True,
    )
    return home, json.loads(proc.stdout)


def test_generator_builds_a_home_with_every_kind_of_session(tmp_path):
    home, manifest = _generate(tmp_path)
    sessions = home / "webui" / "sessions"
    assert manifest["sessions"] == 30
    assert (home / "state.db").is_file()
    assert (sessions / "_index.json").is_file()
    assert manifest["largest_sidecar"]["messages"] == 5000
    assert manifest["big_journal"]["events"] == 2000
    assert Path(manifest["big_journal"]["path"]).is_file()
    for kind in (
        "shrunken_live",
        "orphan_bak",
        "index_missing_entry",
        "state_missing_sidecar",
        "stale_pending",
        "pending_marker",
        "corrupt_live_with_bak",
    ):
        assert manifest["kinds"].get(kind, 0) >= 1, kind
    assert len(list(sessions.glob("*.json"))) >= 20


def test_generator_is_seeded(tmp_path):
    _, first = _generate(tmp_path / "a")
    _, second = _generate(tmp_path / "b")
    assert first["bytes"]["sidecars"] == second["bytes"]["sidecars"]
    assert first["examples"] == second["examples"]


def test_runner_reports_every_figure(tmp_path):
    out = tmp_path / "report.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH / "run.py"),
            "--sessions",
            "30",
            "--journal-events",
            "2000",
            "--quick",
            "--home-dir",
            str(tmp_path / "homes"),
            "--json",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["machine"]["cpus"] >= 1
    assert json.loads(out.read_text()) == report
    ids = {row["id"] for row in report["rows"]}
    expected = {
        "first_rows.fresh",
        "first_rows.noindex",
        "first_rows.stale",
        "catalogue",
        "catalogue.first",
        "audit",
        "journal.first",
        "journal.indexed",
        "journal.scroll",
        "gui_stall",
        *(
            f"plan.{a}"
            for a in (
                "recover-journal",
                "repair-interrupted",
                "restore-backup",
                "materialize",
                "rebuild-index",
            )
        ),
    }
    assert expected <= ids
    for row in report["rows"]:
        assert {"median_s", "peak_rss_mb", "target_s", "met", "errors"} <= row.keys()
        assert row["errors"] == [], (row["id"], row["errors"])
        assert row["median_s"] is not None, row["id"]
        if row["id"] != "gui_stall":
            assert row["runs"] == 1, row["id"]
    first = next(r for r in report["rows"] if r["id"] == "catalogue.first")
    assert first["detail"]["cpu_shown_s"] > 0  # the window and its children worked until the paint
    if Path("/proc/vmstat").exists():  # what the runs read from disk, not from the page cache
        assert first["detail"]["disk_read_mb"] >= 0
    audit = next(r for r in report["rows"] if r["id"] == "audit")
    assert audit["errors"] == [] and audit["median_s"] is not None
    assert audit["peak_rss_mb"] is not None


def test_runner_prints_the_table(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH / "run.py"),
            "--sessions",
            "30",
            "--journal-events",
            "2000",
            "--quick",
            "--home-dir",
            str(tmp_path / "homes"),
            "--only",
            "audit,plan.restore",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "CPUs" in proc.stdout
    assert "hermes-inspector audit --json" in proc.stdout
    assert "plan restore-backup" in proc.stdout


def test_the_first_open_target_follows_issue_18_by_home_size(monkeypatch):
    """Rule (issue 18): the window's catalogue on a first open, <= 1.0 s at 10,000 sessions and <= 4 s at
    50,000; the bench judged the 50,000-session run against 1.0 s."""
    monkeypatch.syspath_prepend(str(BENCH))
    import run as bench_run

    assert [bench_run.first_open_target(n) for n in (1_000, 10_000, 49_999, 50_000, 100_000)] == [
        1.0,
        1.0,
        1.0,
        4.0,
        4.0,
    ]
