"""mypy over the core that writes (store/, repair/, plan.py), with pyproject.toml's settings:
lenient for now, tightened package by package (see [tool.mypy] there)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_mypy_passes_on_store_repair_and_plan(tmp_path) -> None:
    pytest.importorskip("mypy", reason="mypy comes with the test extras: pip install -e '.[test]'")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy-cache")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success: no issues found" in proc.stdout
