"""Run a workload over a home as an unprivileged user, so that file permissions are real.

    python tests/safety/unprivileged.py '{"workload": [...], "homes": [HOME, ...], "state": STATE_DIR}'

The suite often runs as root (CI does), and root reads every file whatever its mode. This
script imports everything and runs the workload once on a throw-away copy of the first home (so
no module is imported later), then, when it is root, drops to ``nobody`` and runs the workload on
every home. It prints a JSON list, one object per home: ``{"ok": true, ...}`` or
``{"ok": false, "error": traceback}``.

Workloads: ``inspect`` (the whole read side plus `list`/`audit`/`show`), ``cli ID...`` (only
`list`, `audit` and `show ID`), ``write SID ACTION`` (`repair SID --action ACTION --write`).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from inspector.home import locate_home  # noqa: E402
from tests.safety.helpers import CLOCK, inspect_everything, run_cli  # noqa: E402

NOBODY = 65534


def inspect(home_dir: Path) -> dict:
    home = locate_home(home=home_dir, env={})
    w = inspect_everything(home)
    cli = []
    for argv in (["list"], ["audit"], ["list", "--json"]):
        cli.append(run_cli(*argv, "--home", str(home_dir)))
    for sid in sorted({f["session_id"] for f in w.findings if isinstance(f.get("session_id"), str)})[:6]:
        cli.append(run_cli("show", sid, "--home", str(home_dir)))
    return {
        "messages": w.messages(),
        "text": w.text(),
        "cli": [{"code": c, "out": o, "err": e} for c, o, e in cli],
    }


def cli_only(home_dir: Path, ids: list[str]) -> dict:
    runs = [
        run_cli(*argv, "--home", str(home_dir)) for argv in (["list"], ["audit"], *[["show", i] for i in ids])
    ]
    return {"cli": [{"code": c, "out": o, "err": e} for c, o, e in runs]}


def write(home_dir: Path, sid: str, action: str) -> dict:
    code, out, err = run_cli(
        "repair",
        sid,
        "--action",
        action,
        "--home",
        str(home_dir),
        "--write",
        "--now",
        str(CLOCK.now),
        "--server-started-at",
        str(CLOCK.server_started_at),
    )
    return {"code": code, "out": out, "err": err}


def run(workload: list[str], home_dir: Path) -> dict:
    if workload[0] == "inspect":
        return inspect(home_dir)
    if workload[0] == "cli":
        return cli_only(home_dir, workload[1:])
    if workload[0] == "write":
        return write(home_dir, workload[1], workload[2])
    raise SystemExit(f"unknown workload {workload}")


def main() -> int:
    spec = json.loads(sys.argv[1])
    workload, homes, state = spec["workload"], [Path(h) for h in spec["homes"]], Path(spec["state"])
    # Warm up on a copy (imports every lazily imported module while they can still be read).
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HERMES_INSPECTOR_STATE_DIR"] = str(Path(tmp) / "state")
        warm = Path(tmp) / "home"
        try:
            shutil.copytree(homes[0], warm, symlinks=True)
        except (shutil.Error, OSError):
            pass  # what could not be copied is simply missing from the warm-up copy
        for load in (workload, ["inspect"]):
            try:
                run(load, warm)
            except Exception:  # noqa: BLE001 - the real run reports it
                pass
    os.environ["HERMES_INSPECTOR_STATE_DIR"] = str(state)
    if os.geteuid() == 0:
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
        except OSError as exc:  # a container without CAP_SETUID: permissions cannot be tested here
            sys.stdout.write(json.dumps([{"ok": True, "skip": f"cannot drop root privileges: {exc}"}]))
            return 0
    results = []
    for home_dir in homes:
        try:
            results.append({"ok": True, "uid": os.geteuid(), **run(workload, home_dir)})
        except Exception:  # noqa: BLE001 - the test shows it
            results.append({"ok": False, "error": traceback.format_exc()})
    sys.stdout.write(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
