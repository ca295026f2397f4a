"""Run one seed through hermes-webui and through the inspector, and compare every file.

For a seed: the hermes child builds the home with hermes' own writers; the post-edits of
:mod:`tests.differential.homes` are applied; the home is kept aside. hermes runs the action on
it (frozen clock, working directory = the home); every file is read. The home is put back, byte
for byte, at the same path, and the inspector runs the same action in this process through the
command line's own code (``inspector.cli.main(["repair", ..., "--write", "--now", ...])``);
every file is read again. Same bytes everywhere, or both refuse, or it is a mismatch.

The hermes-webui checkout comes from ``HERMES_WEBUI_SRC`` (and, optionally, the interpreter
that imports it from ``HERMES_WEBUI_PYTHON``; default: this one). Nothing of hermes is
imported here: it runs in its own child process.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.differential.homes import Case, act_request, build_request, finish_home, make_case
from tests.differential.parse_check import parse_mismatches

HERMES_SIDE = Path(__file__).with_name("hermes_side.py")
# The one place the inspector knowingly does not follow hermes: hermes' Session.load rewrites a
# sidecar holding adjacent duplicate partial replies (and leaves a .bak) before a repair runs; the
# inspector refuses those repairs instead. Counted apart, never as "same".
KNOWN_REFUSAL = "holds adjacent duplicate partial replies"


def hermes_src() -> Path | None:
    """The hermes-webui checkout named by ``HERMES_WEBUI_SRC``, when it looks like one."""
    src = os.environ.get("HERMES_WEBUI_SRC")
    if not src or not (Path(src) / "api" / "models.py").is_file():
        return None
    return Path(src)


class HermesChild:
    """One long-lived hermes-webui process serving many seeds (see ``hermes_side.py``)."""

    def __init__(self, src: Path, scratch: Path, python: str | None = None, timeout: float = 60.0) -> None:
        scratch.mkdir(parents=True, exist_ok=True)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", str(scratch)),
            "LANG": "C.UTF-8",
            "HERMES_WEBUI_SRC": str(src),
            "HERMES_HOME": str(scratch / "hermes-home"),
            "HERMES_WEBUI_STATE_DIR": str(scratch / "hermes-home" / "webui"),
            "HERMES_WEBUI_DEFAULT_WORKSPACE": str(scratch / "default-workspace"),
            "HERMES_WEBUI_RUN_JOURNAL_FSYNC": "never",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
        }
        self.timeout = timeout
        self.log = open(scratch / "hermes-stderr.log", "ab")
        self.proc = subprocess.Popen(
            [python or os.environ.get("HERMES_WEBUI_PYTHON") or sys.executable, str(HERMES_SIDE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=env,
            cwd=str(scratch),
        )
        ready = self._read()
        if not ready.get("ready"):
            raise RuntimeError(f"hermes child did not start: {ready}")

    def _read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"hermes child exited ({self.proc.poll()}); see {self.log.name}")
        return json.loads(line)

    def ask(self, request: dict) -> dict:
        self.proc.stdin.write((json.dumps(request, ensure_ascii=True) + "\n").encode())
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (relative ``/`` paths) with its bytes."""
    out = {}
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


def _restore(pristine: Path, home: Path) -> None:
    shutil.rmtree(home)
    shutil.copytree(pristine, home, symlinks=True)


@dataclass
class Outcome:
    seed: int
    action: str
    verdict: str  # "same" | "both refuse" | "known refusal" | "mismatch" | "harness"
    detail: str = ""  # the mismatch class (one line, no seed-specific values)
    info: str = ""  # seed-specific detail for the reproduction


def _run_inspector(case: Case, home: Path) -> tuple[int, dict]:
    from inspector.cli import main

    if case.action == "audit":
        argv = ["audit", "--home", str(home), "--json"]
    else:
        argv = [
            "repair",
            case.session_id or "--all",
            "--action",
            case.action,
            "--home",
            str(home),
            "--write",
            "--now",
            repr(case.now),
            "--server-started-at",
            repr(case.server_started_at),
            "--json",
        ]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    try:
        return code, json.loads(out.getvalue())
    except ValueError:
        return code, {"raw": out.getvalue()}


def _kind(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    if name == "_index.json":
        return "_index.json"
    if rel.startswith("webui/sessions/_run_journal/"):
        return "run journal"
    if name.endswith(".json.bak"):
        return "<sid>.json.bak"
    if name.startswith("_"):
        return name
    if rel.startswith("webui/sessions/") and name.endswith(".json"):
        return "<sid>.json"
    return rel


def _json_diff(a: bytes | None, b: bytes | None) -> str:
    """A short, seed-independent description of how two JSON files differ."""
    if a is None or b is None:
        return "written by " + ("the inspector only" if a is None else "hermes only")
    try:
        x, y = json.loads(a), json.loads(b)
    except ValueError:
        return "bytes differ (not JSON)"
    if x == y or (
        isinstance(x, list)
        and isinstance(y, list)
        and len(x) == len(y)
        and sorted(map(json.dumps, x)) == sorted(map(json.dumps, y))
    ):
        return "same values, different order/format" if x != y else "same values, different bytes"
    if isinstance(x, list) and isinstance(y, list):
        if len(x) != len(y):
            return f"row count {len(x)} vs {len(y)}"
        for rx, ry in zip(x, y, strict=True):
            if isinstance(rx, dict) and isinstance(ry, dict) and rx != ry:
                keys = sorted(k for k in set(rx) | set(ry) if rx.get(k) != ry.get(k))
                return "row keys differ: " + ", ".join(keys[:4])
        return "rows differ"
    if isinstance(x, dict) and isinstance(y, dict):
        keys = sorted(k for k in set(x) | set(y) if x.get(k) != y.get(k))
        return "keys differ: " + ", ".join(keys[:4])
    return "values differ"


def _audit_diff(hermes: dict, mine: dict) -> str:
    want = {k: hermes.get(k) for k in ("status", "summary", "items")}
    got = {k: mine.get(k) for k in ("status", "summary", "items")}
    if want == got:
        return ""
    keys = [k for k in want if want[k] != got[k]]
    return "audit differs in " + ", ".join(keys)


def run_case(case: Case, child: HermesChild, work: Path) -> Outcome:
    """Build, act in hermes, act in the inspector, compare."""
    home = work / "home"
    pristine = work / "pristine"
    for p in (home, pristine):
        if p.exists():
            shutil.rmtree(p)
    home.mkdir(parents=True)
    built = child.ask(build_request(case, home))
    if "error" in built:
        return Outcome(case.seed, case.action, "harness", "hermes could not build the home", built["error"])
    finish_home(case, home)
    shutil.copytree(home, pristine, symlinks=True)
    before = snapshot(home)
    answer = child.ask(act_request(case, home))
    if "error" in answer:
        return Outcome(case.seed, case.action, "harness", "hermes child failed", answer["error"])
    after_h = snapshot(home)
    # every sidecar and run journal hermes wrote, before and after its action: a first open's
    # quick parses must give hermes' own parse of each
    quick = parse_mismatches(before) + parse_mismatches(after_h)
    if quick:
        return Outcome(
            case.seed, case.action, "mismatch", "a quick parse differs from hermes' parse", quick[0]
        )
    _restore(pristine, home)
    code, report = _run_inspector(case, home)
    after_i = snapshot(home)
    return _compare(case, before, answer, after_h, code, report, after_i)


def _refusals(report: dict) -> list[str]:
    return [p["refusal"] for p in report.get("plans", []) if p.get("refusal")]


def _compare(
    case: Case, before: dict, answer: dict, after_h: dict, code: int, report: dict, after_i: dict
) -> Outcome:
    act = case.action
    if act == "audit":
        if (
            "raised" in answer
        ):  # (e.g. a sidecar nested too deeply: hermes' _msg_count lets RecursionError out)
            if report.get("status") == "hermes_audit_failed" and after_i == before:
                return Outcome(case.seed, act, "both refuse", "", answer["raised"])
            return Outcome(case.seed, act, "mismatch", "hermes' audit raised", answer["raised"])
        diff = _audit_diff(answer["result"], report)
        if after_i != before:
            return Outcome(case.seed, act, "mismatch", "the inspector's audit wrote files")
        return Outcome(case.seed, act, "mismatch" if diff else "same", diff)
    refused = _refusals(report)
    wrote_i = after_i != before
    if "raised" in answer:
        if refused and not wrote_i:
            return Outcome(case.seed, act, "both refuse", "", answer["raised"])
        if not wrote_i and code == 0 and not report.get("written"):
            # the inspector found nothing to do; hermes raised (e.g. no such session) and wrote nothing?
            if after_h == before:
                return Outcome(case.seed, act, "both refuse", "", answer["raised"])
        return Outcome(
            case.seed,
            act,
            "mismatch",
            f"hermes raised ({answer['raised'].split(':')[0]}), "
            "the inspector " + ("wrote" if wrote_i else "did not refuse"),
            answer["raised"],
        )
    if refused and not wrote_i:
        if any(KNOWN_REFUSAL in r for r in refused):
            return Outcome(case.seed, act, "known refusal", "", refused[0][:200])
        if after_h == before:
            return Outcome(case.seed, act, "both refuse", "", refused[0])
        if answer.get("inner"):  # hermes' writer raised part-way and the caller swallowed it
            return Outcome(case.seed, act, "both refuse", "", answer["inner"][0])
        changed = sorted(k for k in set(after_h) | set(before) if after_h.get(k) != before.get(k))
        return Outcome(
            case.seed,
            act,
            "mismatch",
            "the inspector refused, hermes wrote " + ", ".join(sorted({_kind(k) for k in changed})),
            refused[0][:300],
        )
    if after_h == after_i:
        return Outcome(case.seed, act, "same")
    diffs = sorted(k for k in set(after_h) | set(after_i) if after_h.get(k) != after_i.get(k))
    first = diffs[0]
    return Outcome(
        case.seed,
        act,
        "mismatch",
        f"{_kind(first)}: {_json_diff(after_h.get(first), after_i.get(first))}",
        "files: " + ", ".join(diffs[:5]),
    )


def run_seed(seed: int, child: HermesChild, work: Path) -> Outcome:
    case = make_case(seed)
    try:
        return run_case(case, child, work)
    except Exception as exc:  # noqa: BLE001 - an inspector crash is a finding, reported with its seed
        return Outcome(
            seed,
            case.action,
            "mismatch",
            f"inspector raised {type(exc).__name__}",
            f"{type(exc).__name__}: {exc}",
        )
