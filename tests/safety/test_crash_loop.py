"""Crash during a write: SIGKILL at random points of `repair --write` and `undo` loses nothing.

The short loop of CI; `python bench/crash_loop.py --iterations 1000` is the long one (see there
for the kill points and every check made after each kill).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOOP = ROOT / "bench" / "crash_loop.py"
ITERATIONS = int(os.environ.get("CRASH_LOOP_ITERATIONS", "40"))

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not LOOP.exists(), reason="no bench/crash_loop.py in this checkout"),
]


def test_killed_writes_leave_every_file_old_or_new_and_lose_nothing(tmp_path: Path) -> None:
    # A fresh interpreter: the loop forks, and this test process may hold threads (Qt, hypothesis).
    proc = subprocess.run(
        [
            sys.executable,
            str(LOOP),
            "--iterations",
            str(ITERATIONS),
            "--json",
            "--keep",
            str(tmp_path / "work"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert proc.stdout, proc.stderr
    r = json.loads(proc.stdout)
    seed = r["seed"]
    assert r["failure_count"] == 0, f"seed {seed}: " + "\n".join(r["failures"])
    assert proc.returncode == 0
    assert r["writes_killed"] == ITERATIONS, f"seed {seed}: some runs finished before their kill point"
    assert r["torn_files"] == 0 and r["bytes_lost"] == 0
    assert r["files_checked"] >= ITERATIONS
    assert r["interrupted_writes_undone"] == r["interrupted_writes_logged"]
    assert r["temp_files_after_next_write"] == 0
    assert set(r["scenarios"]) == {
        "materialize",
        "rebuild-index",
        "recover-journal",
        "repair-interrupted",
        "restore-backup",
        "undo",
    }
