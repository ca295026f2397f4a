"""``crosscheck``: a repair run in the user's own hermes-webui, compared with the inspector's plan.

Against a small fake hermes-webui tree (tests/crosscheck_helpers.py): identical, different,
raises, hangs (time limit), not found, import error; the child's clock, environment and the
real home left alone. Against a real checkout (``HERMES_WEBUI_SRC``): every golden case (the
audit's report too) is identical, and an edited copy of the checkout is reported as different.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from inspector.actions import make_context, plan_action
from inspector.cli import main
from inspector.crosscheck import (
    DIFFERENT,
    FAILED,
    IDENTICAL,
    IMPORT_ERROR,
    NOT_FOUND,
    RAISED,
    TIMEOUT,
    CrosscheckError,
    checkout_version,
    crosscheck,
    find_hermes,
    running_server,
)
from inspector.home import locate_home
from inspector.plan import ApplyError, Clock, WriteLog, apply_plan, undo_write
from tests.conftest import GOLDEN, copy_tree
from tests.crosscheck_helpers import pid_alive, write_fake_hermes

CASE = GOLDEN / "23-restore-shrunken-live"
SID = "3a5e1014484e"
CLOCK = Clock(now=1779701000.0, server_started_at=1779700900.0)


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture()
def home(tmp_path):
    return copy_tree(CASE / "before", tmp_path / "home")


def _check(home_path: Path, fake: Path, **kw):
    home = locate_home(home_path)
    install = find_hermes(home, fake, sys.executable)
    return crosscheck(home, "restore-backup", SID, CLOCK, install, **kw)


def _cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


def test_identical_when_hermes_writes_the_plans_bytes(home, tmp_path):
    fake = write_fake_hermes(tmp_path / "hermes")
    before = _tree(home)
    result = _check(home, fake)
    assert result.status == IDENTICAL, result.render()
    assert result.exit_code == 0
    assert [f.path.name for f in result.files] == [f"{SID}.json"]
    assert result.files[0].hermes == (home / "webui/sessions" / f"{SID}.json.bak").read_bytes()
    assert result.headline().startswith("Same bytes as your hermes-webui (version ")
    assert _tree(home) == before, "hermes ran on the real home"


def test_hermes_runs_with_the_plans_clock_cwd_and_a_minimal_environment(home, tmp_path, monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-hermes")
    fake = write_fake_hermes(tmp_path / "hermes")
    result = _check(home, fake, cwd=Path("/srv/hermes-cwd"))
    seen = result.hermes_returned
    assert seen["now"] == CLOCK.now
    assert seen["server_started_at"] == CLOCK.server_started_at
    assert seen["cwd"] == "/srv/hermes-cwd"
    assert "HTTPS_PROXY" not in seen["env"] and "OPENAI_API_KEY" not in seen["env"]
    assert set(seen["env"]) <= {
        "PATH",
        "HOME",
        "TMPDIR",
        "HERMES_HOME",
        "HERMES_WEBUI_STATE_DIR",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "PYTHONIOENCODING",
        "PYTHONDONTWRITEBYTECODE",
        "NO_PROXY",
        "no_proxy",
    }


def test_different_shows_a_per_file_diff_and_hermes_result_writes_through_the_safe_path(home, tmp_path):
    fake = write_fake_hermes(tmp_path / "hermes", "different")
    result = _check(home, fake)
    assert result.status == DIFFERENT and result.exit_code == 1
    (verdict,) = result.differing()
    diff = verdict.diff()
    assert diff.startswith(f"--- inspector/{SID}.json\n+++ hermes-webui/{SID}.json\n")
    assert '+  "title": "(restored) ' in diff
    live = home / "webui/sessions" / f"{SID}.json"
    original = live.read_bytes()
    plan = result.hermes_plan()
    assert plan is not None and plan.refusal is None
    log = WriteLog.default()
    record = apply_plan(plan, log)
    assert live.read_bytes() == verdict.hermes
    assert Path(record.files[0]["backup"]).read_bytes() == original
    undo_write(record.write_id, log)
    assert live.read_bytes() == original


def test_hermes_result_is_refused_when_the_file_changed_since_the_check(home, tmp_path):
    fake = write_fake_hermes(tmp_path / "hermes", "different")
    plan = _check(home, fake).hermes_plan()
    live = home / "webui/sessions" / f"{SID}.json"
    live.write_bytes(live.read_bytes() + b" ")
    with pytest.raises(ApplyError, match="changed since the preview"):
        apply_plan(plan, WriteLog.default())


def test_hermes_raising_is_reported_with_its_message(home, tmp_path):
    fake = write_fake_hermes(tmp_path / "hermes", "raises")
    result = _check(home, fake)
    assert result.status == RAISED and result.exit_code == 2
    assert "TypeError: '<' not supported between instances of 'str' and 'float'" in result.message
    assert result.hermes_plan() is None


def test_a_hanging_hermes_is_stopped_at_the_time_limit(home, tmp_path):
    fake = write_fake_hermes(tmp_path / "hermes", "hangs")
    started = time.monotonic()
    # 5 s: the child must have started and written hung.pid before it is stopped, also on a machine
    # 20x slower than idle (a Python start there can take over the 1.5 s this used); the 60 s only
    # stops a hung test (the child itself would sleep 600 s)
    result = _check(home, fake, timeout=5)
    assert result.status == TIMEOUT and result.exit_code == 2
    assert time.monotonic() - started < 60
    assert "did not finish within 5 s" in result.message
    assert not pid_alive(int((fake / "api" / "hung.pid").read_text())), "the hung child was not stopped"


def test_an_import_error_names_the_missing_module(home, tmp_path):
    fake = write_fake_hermes(tmp_path / "hermes", broken_import=True)
    result = _check(home, fake)
    assert result.status == IMPORT_ERROR and result.exit_code == 2
    assert "hermes_dependency_that_is_not_installed" in result.message


def test_not_found_says_what_is_missing(home, tmp_path):
    with pytest.raises(CrosscheckError, match="is not a hermes-webui checkout") as exc:
        find_hermes(locate_home(home), tmp_path / "nowhere")
    assert exc.value.status == NOT_FOUND
    with pytest.raises(CrosscheckError, match="no hermes-webui to check with") as exc:
        find_hermes(locate_home(home))
    fake = write_fake_hermes(tmp_path / "hermes")
    with pytest.raises(CrosscheckError, match="cannot be run"):
        find_hermes(locate_home(home), fake, str(tmp_path / "no-python"))


def test_a_remembered_path_is_used_when_no_server_runs(home, tmp_path):
    fake = write_fake_hermes(tmp_path / "hermes", version_line="version = '0.53.1'")
    install = find_hermes(locate_home(home), remembered=str(fake))
    assert install.checkout == fake
    assert install.found_by == "the path remembered in the window's settings"
    assert install.version == "0.53.1 (api/_scm_version.py)"


def test_the_running_servers_checkout_and_interpreter_come_from_webui_pid(home, tmp_path):
    fake = write_fake_hermes(tmp_path / "hermes")
    (fake / "server.py").write_text("import pathlib, time\npathlib.Path('ready').touch()\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "server.py"], cwd=fake)
    try:
        deadline = time.monotonic() + 60  # only stops a hang
        while not (fake / "ready").exists() and time.monotonic() < deadline:  # a server that has started
            time.sleep(0.02)
        (home / "webui.pid").write_text(str(proc.pid))
        found = running_server(locate_home(home))
        assert found is not None
        assert found[0] == fake
        assert Path(found[1]).resolve() == Path(sys.executable).resolve()
        install = find_hermes(locate_home(home))
        assert install.found_by == f"the running hermes-webui (pid {proc.pid})"
    finally:
        proc.kill()
        proc.wait()


def test_version_falls_back_to_the_changelogs_top_released_entry(tmp_path):
    fake = write_fake_hermes(tmp_path / "hermes")
    (fake / "CHANGELOG.md").write_text("# Changelog\n\n## [Unreleased]\n\n- x\n\n## [v0.60.1] — 2027-01-02\n")
    assert checkout_version(fake) == "v0.60.1 (CHANGELOG's top entry)"
    (fake / "CHANGELOG.md").unlink()
    assert checkout_version(fake) == "unknown"


def test_a_plan_made_on_other_bytes_is_not_compared(home, tmp_path):
    fake = write_fake_hermes(tmp_path / "hermes")
    ctx = make_context(locate_home(home), CLOCK)
    (plan,) = plan_action(ctx, "restore-backup", SID)
    live = home / "webui/sessions" / f"{SID}.json"
    live.write_bytes(live.read_bytes() + b"\n")
    result = _check(home, fake, plan=plan)
    assert result.status == FAILED
    assert "changed since the plan was made" in result.message


def test_an_id_that_is_not_a_plain_file_stem_is_never_handed_to_hermes(home, tmp_path):
    fake = write_fake_hermes(tmp_path / "hermes")
    home_ = locate_home(home)
    result = crosscheck(
        home_, "restore-backup", "../../etc/x", CLOCK, find_hermes(home_, fake, sys.executable)
    )
    assert result.status == FAILED and result.exit_code == 2
    assert "not a plain session id" in result.message


def test_an_audit_report_that_differs_is_shown_as_a_json_diff(home, tmp_path):
    fake = write_fake_hermes(tmp_path / "hermes")
    code, out = _cli(
        "crosscheck",
        "--all",
        "--action",
        "audit",
        "--home",
        str(home),
        "--hermes-webui",
        str(fake),
        "--hermes-python",
        sys.executable,
        "--json",
    )
    (result,) = json.loads(out)["results"]
    assert code == 1 and result["status"] == DIFFERENT
    assert result["files"] == [], "an audit writes nothing"
    diff = result["audit_diff"]
    assert '-  "status": "warn",' in diff  # the inspector's audit sees the shrunken live sidecar
    assert '+  "status": "ok",' in diff
    # the copy's paths in hermes' report are shown as the real home's
    assert f'+  "session_dir": "{home / "webui" / "sessions"}"' in diff
    code, _ = _cli("crosscheck", SID, "--action", "audit", "--home", str(home), "--hermes-webui", str(fake))
    assert code == 2


def test_cli_exit_codes_0_1_2(home, tmp_path):
    common = [
        "--action",
        "restore-backup",
        "--home",
        str(home),
        "--hermes-python",
        sys.executable,
        "--now",
        repr(CLOCK.now),
        "--server-started-at",
        repr(CLOCK.server_started_at),
    ]
    same = write_fake_hermes(tmp_path / "same")
    code, out = _cli("crosscheck", SID, *common, "--hermes-webui", str(same))
    assert code == 0 and out.startswith("Same bytes as your hermes-webui"), out
    other = write_fake_hermes(tmp_path / "other", "different")
    code, out = _cli("crosscheck", SID, *common, "--hermes-webui", str(other), "--json")
    report = json.loads(out)
    assert code == 1 and report["status"] == "different"
    assert report["results"][0]["files"][0]["diff"].startswith("--- inspector/")
    code, out = _cli("crosscheck", "--all", *common, "--hermes-webui", str(tmp_path / "missing"))
    assert code == 2 and "not a hermes-webui checkout" in out
    code, out = _cli("crosscheck", "--all", *common)
    assert code == 2 and out.rstrip().endswith("give --hermes-webui PATH"), (
        "the command line says its own flag"
    )


# ---------------------------------------------------------------- a real hermes-webui checkout

HERMES_SRC = os.environ.get("HERMES_WEBUI_SRC")
real = pytest.mark.skipif(not HERMES_SRC, reason="set HERMES_WEBUI_SRC to a hermes-webui checkout")
GOLDEN_CASES = sorted(p for p in GOLDEN.iterdir() if (p / "case.json").is_file())


def _golden_args(case_dir: Path, home: Path, checkout: str) -> list[str]:
    case = json.loads((case_dir / "case.json").read_text(encoding="utf-8"))
    return [
        "crosscheck",
        case["session_id"] or "--all",
        "--action",
        case["action"],
        "--home",
        str(home),
        "--hermes-webui",
        checkout,
        "--hermes-python",
        os.environ.get("HERMES_WEBUI_PYTHON", sys.executable),
        "--now",
        repr(case["now"]),
        "--server-started-at",
        repr(case["server_started_at"]),
        "--json",
    ]


@real
@pytest.mark.parametrize("case_dir", GOLDEN_CASES, ids=[c.name for c in GOLDEN_CASES])
def test_every_golden_case_is_identical_with_the_real_hermes(case_dir, tmp_path):
    home = copy_tree(case_dir / "before", tmp_path / "home")
    code, out = _cli(*_golden_args(case_dir, home, HERMES_SRC))
    report = json.loads(out)
    assert code == 0, json.dumps(report, indent=1)[:4000]
    assert all(r["status"] == IDENTICAL for r in report["results"])
    if case_dir.name.endswith("audit-mixed"):
        assert report["results"][0]["audit_same"] is True


@real
def test_an_edited_hermes_marker_wording_is_reported_as_a_difference(tmp_path):
    checkout = tmp_path / "hermes-webui"
    shutil.copytree(Path(HERMES_SRC) / "api", checkout / "api", ignore=shutil.ignore_patterns("__pycache__"))
    models = checkout / "api" / "models.py"
    text = models.read_text(encoding="utf-8")
    wording = "'The partial output above was recovered from the run journal, '"
    assert wording in text
    models.write_text(
        text.replace(wording, "'The partial output above was restored from the run journal, '"),
        encoding="utf-8",
    )
    case_dir = GOLDEN / "01-promote-tokens-tool"
    home = copy_tree(case_dir / "before", tmp_path / "home")
    code, out = _cli(*_golden_args(case_dir, home, str(checkout)))
    (result,) = json.loads(out)["results"]
    assert code == 1 and result["status"] == DIFFERENT
    differing = [f for f in result["files"] if not f["same"]]
    assert [Path(f["path"]).name for f in differing] == ["9f14583f0e4e4444aaaa111122223333.json"]
    assert (
        "+" + '      "content": "**Response interrupted.**\\n\\nThe live response stream stopped before this '
        "turn finished. The partial output above was restored" in differing[0]["diff"]
    )
