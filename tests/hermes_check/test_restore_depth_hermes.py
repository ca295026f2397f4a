"""hermes-webui's own backup restore on sidecars and ``.bak`` files nested too deeply for its
``json.loads`` (skipped without ``HERMES_WEBUI_SRC``), against the inspector's ``restore-backup`` on
the same homes: ``recover_session`` raises on such a file, and the startup recovery skips a live
session whose files raise but stops altogether at an orphan ``.bak`` that does.

Run it with ``HERMES_WEBUI_SRC=/work/hermes-webui`` (a hermes-webui checkout at the mirrored commit).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.repair import restore
from tests.differential.harness import hermes_src
from tests.recovery_helpers import home_dirs, make_ctx, sidecar, write_json

SRC = hermes_src()
pytestmark = pytest.mark.skipif(SRC is None, reason="HERMES_WEBUI_SRC does not name a hermes-webui checkout")

# hermes' recover_session on one id, then its startup recovery (no index rebuild), on the folder given
_PROBE = r"""
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from api import session_recovery as R
folder, sid = Path(sys.argv[2]), sys.argv[3]
out = {}
try:
    out["one"] = bool(R.recover_session(folder / (sid + ".json"))["restored"])
except RecursionError:
    out["one"] = "RecursionError"
try:
    result = R.recover_all_sessions_on_startup(folder, rebuild_index=False)
    out["startup"] = sorted(d["session_id"] for d in result["details"])
except RecursionError:
    out["startup"] = "RecursionError"
print(json.dumps(out))
"""


def _nested(session: dict, levels: int) -> bytes:
    body = json.dumps({**session, "x_deep": "DEEP"}, indent=2).encode()
    return body.replace(b'"DEEP"', b"[" * levels + b"]" * levels, 1)


def _hermes(sessions: Path, sid: str, tmp_path: Path) -> dict:
    """hermes on a copy of ``sessions`` (its restores write)."""
    import shutil

    copy = tmp_path / "hermes-copy"
    shutil.copytree(sessions, copy)
    run = subprocess.run(
        [sys.executable, "-c", _PROBE, str(SRC), str(copy), sid],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.splitlines()[-1])


def _home(tmp_path: Path, deep: str) -> tuple[Path, Path]:
    """a.json (1 message) with a .bak of 2, and session o whose ``deep`` file is nested 1,200 levels."""
    home_path, sessions, _ = home_dirs(tmp_path)
    write_json(sessions / "a.json", sidecar("a", 1))
    write_json(sessions / "a.json.bak", sidecar("a", 2))
    if deep == "orphan bak":
        (sessions / "o.json.bak").write_bytes(_nested(sidecar("o", 3), 1200))
    elif deep == "bak":
        write_json(sessions / "o.json", sidecar("o", 1))
        (sessions / "o.json.bak").write_bytes(_nested(sidecar("o", 3), 1200))
    else:
        (sessions / "o.json").write_bytes(_nested(sidecar("o", 1), 1200))
        write_json(sessions / "o.json.bak", sidecar("o", 3))
    return home_path, sessions


@pytest.mark.parametrize(
    ("deep", "startup"),
    [("orphan bak", "RecursionError"), ("bak", ["a"]), ("live", ["a"])],
)
def test_the_inspector_restores_what_hermes_restores_around_a_file_too_deep(tmp_path, deep, startup):
    home_path, sessions = _home(tmp_path, deep)
    hermes = _hermes(sessions, "o", tmp_path)
    assert hermes == {"one": "RecursionError", "startup": startup}
    plan = restore.plan(make_ctx(home_path), "o")
    assert plan.refusal is not None and plan.changes == []
    eligible = restore.eligible(make_ctx(home_path))
    if startup == "RecursionError":  # nothing restored; the one plan --all makes is o's, refused
        assert eligible == ["o"]
    else:
        assert eligible == startup
