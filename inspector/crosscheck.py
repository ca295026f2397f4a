"""Check a repair with the user's own hermes-webui: same bytes, or the difference.

The inspector mirrors one hermes-webui commit; the user's may be newer. :func:`crosscheck`
proves, on the user's install, that a plan writes what *their* hermes-webui would write:

1. copy the files the action reads into a private temporary home (the sessions folder's own
   files, the session's run and turn journals, the profile's core transcript, ``state.db``
   where the action opens it), never touching the real home;
2. run :mod:`inspector.hermes_driver` with hermes' interpreter in a child process, with a
   minimal environment (``HERMES_HOME``/``HERMES_WEBUI_STATE_DIR`` at the copy, no proxies,
   tokens or anything else of the user's), the plan's clock frozen, hermes' server start set
   to the plan's, and a time limit; the driver calls the action's hermes function;
3. compare what hermes left in the copy with the plan, file by file.

hermes is never imported into this process. The result says ``identical``, ``different``
(with a unified diff per file, and hermes' own result as a :class:`~inspector.plan.Plan` the
safe write path can apply), or why the check could not run (``not_found``, ``import_error``,
``timeout``, ``raised``, ``failed``). No Qt here.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from inspector import portable
from inspector.home import Home, hermes_cwd, webui_pid
from inspector.plan import Clock, FileChange, Plan, file_diff
from inspector.repair import registry
from inspector.store.files import Fingerprint, sha256_hex

DRIVER = Path(__file__).with_name("hermes_driver.py")
DEFAULT_TIMEOUT_S = 60.0
AUDIT = (
    "audit"  # read-only: hermes' returned report is compared with the inspector's, and nothing may be written
)
AUDIT_FUNCTION = "api.session_recovery.audit_session_recovery"

# outcomes: the first two ran; the others are "could not run" (exit 2)
IDENTICAL, DIFFERENT = "identical", "different"
NOT_FOUND, IMPORT_ERROR, TIMEOUT, RAISED, FAILED = "not_found", "import_error", "timeout", "raised", "failed"


class CrosscheckError(Exception):
    """The check cannot run; ``status`` is one of the could-not-run outcomes."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status


# ---------------------------------------------------------------- finding hermes-webui


@dataclass(frozen=True)
class HermesInstall:
    """A hermes-webui checkout, the interpreter that imports it, where we found it, its version."""

    checkout: Path
    python: str
    found_by: str
    version: str


def is_checkout(path: Path) -> bool:
    return (path / "api" / "models.py").is_file() and (path / "api" / "session_recovery.py").is_file()


def _quiet_run(cmd: list[str], cwd: Path, timeout: float = 3.0) -> str | None:
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "GIT_OPTIONAL_LOCKS": "0",
        "LC_ALL": "C",
        "GIT_TERMINAL_PROMPT": "0",
        "HOME": str(cwd),
    }
    try:
        out = subprocess.run(
            cmd, cwd=cwd, env=env, capture_output=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError):
        return None
    text = out.stdout.decode("utf-8", "replace").strip()
    return text if out.returncode == 0 and text else None


_ASSIGNED = re.compile(r"""(?:__version__|version)\s*(?::\s*str\s*)?=\s*['"]([^'"]+)['"]""")


def checkout_version(checkout: Path) -> str:
    """The checkout's version, read the way hermes' own badge reads it, without importing it:
    ``git describe`` (GIT_OPTIONAL_LOCKS=0: nothing in the checkout is written), then
    ``api/_version.py``, ``api/_scm_version.py``, then the CHANGELOG's top released entry."""
    described = _quiet_run(["git", "describe", "--tags", "--always", "--dirty"], checkout)
    if described:
        return f"{described} (git describe)"
    for name in ("_version.py", "_scm_version.py"):
        with contextlib.suppress(OSError):
            m = _ASSIGNED.search((checkout / "api" / name).read_text(encoding="utf-8", errors="replace"))
            if m:
                return f"{m.group(1)} (api/{name})"
    with contextlib.suppress(OSError):
        with open(checkout / "CHANGELOG.md", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                m = re.match(r"##\s*\[([^\]]+)\]", line)
                if m and m.group(1).strip().lower() != "unreleased":
                    return f"{m.group(1).strip()} (CHANGELOG's top entry)"
    return "unknown"


def _venv_python(checkout: Path) -> str | None:
    for rel in (".venv/bin/python", "venv/bin/python", ".venv/Scripts/python.exe", "venv/Scripts/python.exe"):
        if (checkout / rel).is_file():
            return str(checkout / rel)
    return None


def running_server(home: Home) -> tuple[Path, str] | None:
    """(checkout, interpreter) of the hermes-webui running on this home (``<home>/webui.pid``), from
    its command line, working directory and executable as the system reports them (psutil); None
    when none runs or it cannot be told."""
    pid = webui_pid(home)
    if pid is None:
        return None
    facts = portable.process_facts(pid)
    if facts is None or facts.cwd is None or not facts.cmdline:
        return None
    return _server_from(facts.cmdline, facts.cwd, facts.exe)


def _looks_like_path(arg: str) -> bool:
    return "/" in arg or (os.sep != "/" and os.sep in arg) or (os.altsep is not None and os.altsep in arg)


def _server_from(args, cwd: Path, exe: str | None) -> tuple[Path, str] | None:
    """(checkout, interpreter) from a server's command line ``args`` run in ``cwd``; ``exe``: its
    executable as the system reports it (used when ``args[0]`` is a bare name found on PATH)."""
    candidates = [cwd / a for a in args[1:] if a.endswith(".py") or _looks_like_path(a)] + [cwd / "server.py"]
    checkout = None
    for path in candidates:
        for folder in [path.parent, *list(path.parents)[1:3]]:
            if is_checkout(folder):
                checkout = folder
                break
        if checkout is not None:
            break
    if checkout is None:
        return None
    python = args[0]
    if _looks_like_path(python):
        python = str(cwd / python)
    elif exe:
        python = exe
    return checkout, python


def find_hermes(
    home: Home,
    checkout: str | os.PathLike | None = None,
    python: str | None = None,
    remembered: str | None = None,
) -> HermesInstall:
    """``checkout`` (``--hermes-webui``), else the running server's checkout and interpreter, else
    ``remembered`` (the window's settings). The interpreter: ``python`` (``--hermes-python``), else
    the running server's, else the checkout's ``.venv``/``venv``, else the inspector's own.
    Raises CrosscheckError(not_found) saying what was tried."""
    found_by, server_python = None, None
    if checkout is not None:
        path, found_by = Path(checkout).expanduser().absolute(), "--hermes-webui"
    else:
        server = running_server(home)
        if server is not None:
            path, server_python = server
            found_by = f"the running hermes-webui (pid {webui_pid(home)})"
        elif remembered:
            path, found_by = (
                Path(remembered).expanduser().absolute(),
                "the path remembered in the window's settings",
            )
        else:
            raise CrosscheckError(
                NOT_FOUND,
                "no hermes-webui to check with: no checkout was chosen (a folder "
                f"with api/models.py) and none runs on {home.base} (no live {home.pid_file.name})",
            )
    if not is_checkout(path):
        raise CrosscheckError(
            NOT_FOUND,
            f"{path} (from {found_by}) is not a hermes-webui checkout: "
            "api/models.py and api/session_recovery.py are missing",
        )
    interpreter = python or server_python or _venv_python(path) or sys.executable
    resolved = shutil.which(interpreter) if "/" not in interpreter else interpreter
    if not resolved or not os.access(resolved, os.X_OK) or not Path(resolved).is_file():
        raise CrosscheckError(NOT_FOUND, f"the interpreter {interpreter!r} for hermes-webui cannot be run")
    return HermesInstall(checkout=path, python=resolved, found_by=found_by, version=checkout_version(path))


# ---------------------------------------------------------------- the private copy


class _Copy:
    """A temporary Hermes home holding copies of the files the action reads.

    The real base home maps to ``<tmp>/home`` and the WebUI state dir keeps its place inside it
    when it lies under the base (else ``<tmp>/state``). ``copied`` keeps each copied file's
    hash, to tell what hermes changed and whether the real file still holds those bytes.
    """

    def __init__(self, home: Home, root: Path):
        self.home = home
        self.base = root / "home"
        try:
            self.state_dir = self.base / home.state_dir.relative_to(home.base)
        except ValueError:
            self.state_dir = root / "state"
        self.session_dir = self.state_dir / "sessions"
        self.copied: dict[Path, str] = {}  # real path -> sha256 of the bytes copied
        self.session_dir.mkdir(parents=True)
        self.base.mkdir(parents=True, exist_ok=True)

    def to_copy(self, real: Path) -> Path:
        with contextlib.suppress(ValueError):
            return self.state_dir / real.relative_to(self.home.state_dir)
        with contextlib.suppress(ValueError):
            return self.base / real.relative_to(self.home.base)
        # outside the home (a --state-db elsewhere): beside it, under its own name
        return self.base.parent / "outside" / real.name

    def to_real(self, copy: Path) -> Path:
        with contextlib.suppress(ValueError):
            return self.home.state_dir / copy.relative_to(self.state_dir)
        return self.home.base / copy.relative_to(self.base)

    def add(self, real: Path) -> None:
        """Copy one regular file (bytes, mode and times), if it exists."""
        try:
            if not real.is_file():
                return
            data = real.read_bytes()
            st = real.stat()
        except OSError:
            return
        target = self.to_copy(real)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        os.chmod(target, st.st_mode & 0o777 | 0o200)
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
        self.copied[real] = sha256_hex(data)

    def add_folder(self, folder: Path, names: Callable[[str], bool] = lambda _: True) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                continue
            if names(entry.name):
                self.add(Path(entry.path))

    def real_paths_in(self, value: object) -> object:
        """``value`` (JSON) with every path of the copy in its strings turned back into the real one."""
        text = json.dumps(value, ensure_ascii=False)
        for copy_dir, real_dir in ((self.state_dir, self.home.state_dir), (self.base, self.home.base)):
            text = text.replace(json.dumps(str(copy_dir))[1:-1], json.dumps(str(real_dir))[1:-1])
        return json.loads(text)

    def files_after(self) -> dict[Path, bytes]:
        """Every file under the copy's sessions folder now, by real path."""
        out = {}
        for folder, _, files in os.walk(self.session_dir):
            for name in files:
                p = Path(folder) / name
                with contextlib.suppress(OSError):
                    out[self.to_real(p)] = p.read_bytes()
        return out


def _hermes_reads(action: str) -> frozenset[str]:
    """What hermes' function for ``action`` reads besides the sessions folder (the registry says)."""
    return frozenset({registry.STATE_DB}) if action == AUDIT else registry.spec(action).hermes_reads


def _hermes_function(action: str) -> str:
    """The hermes-webui function the driver calls for ``action``; CrosscheckError for inspector steps."""
    if action == AUDIT:
        return AUDIT_FUNCTION
    try:
        spec = registry.spec(action)
    except KeyError:
        raise CrosscheckError(FAILED, f"unknown action {action!r}") from None
    if spec.mirrors is None:
        raise CrosscheckError(
            FAILED,
            f"{action} is an inspector step: no hermes-webui function does it, so "
            "there is nothing to compare with",
        )
    return spec.mirrors


def _stage(home: Home, action: str, session_id: str | None, copy: _Copy, core: Path | None) -> None:
    sdir = home.session_dir
    copy.add_folder(sdir)  # sidecars, .bak files, _index.json, tombstones: hermes globs and loads them
    if action == AUDIT:
        copy.add_folder(sdir / "_turn_journal")
    if registry.RUN_JOURNALS in _hermes_reads(action) and session_id:
        for folder, _, files in os.walk(sdir / "_run_journal" / session_id):
            for name in sorted(files):
                copy.add(Path(folder) / name)
        copy.add_folder(
            sdir / "_turn_journal", lambda n: n == f"{session_id}.jsonl" or n.startswith(f"{session_id}~")
        )
    if core is not None:
        copy.add(core)
    if registry.STATE_DB in _hermes_reads(action):
        db = home.state_db()
        for suffix in ("", "-wal", "-shm"):
            copy.add(db.with_name(db.name + suffix))


def _core_transcript(home: Home, session_id: str) -> Path:
    from inspector.store.sidecar import SidecarError, parse_sidecar_bytes

    profile = None
    with contextlib.suppress(OSError, SidecarError, ValueError, RecursionError):
        profile = parse_sidecar_bytes((home.session_dir / f"{session_id}.json").read_bytes()).get("profile")
    return home.core_transcript(session_id, profile)


# ---------------------------------------------------------------- the child


def child_environment(copy: _Copy, root: Path) -> dict[str, str]:
    """Only what hermes needs: nothing of the user's environment (no proxies, tokens, keys)."""
    (root / "user").mkdir(exist_ok=True)
    (root / "tmp").mkdir(exist_ok=True)
    return {
        "PATH": os.defpath,
        "HOME": str(root / "user"),
        "TMPDIR": str(root / "tmp"),
        "HERMES_HOME": str(copy.base),
        "HERMES_WEBUI_STATE_DIR": str(copy.state_dir),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "NO_PROXY": "*",
        "no_proxy": "*",
    }


def _tail(path: Path, limit: int = 2000) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", "replace").strip()


def _kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(OSError):
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)  # the driver and anything it started
        else:
            proc.kill()  # Windows: TerminateProcess
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


def run_driver(
    install: HermesInstall,
    request: dict,
    env: dict[str, str],
    root: Path,
    timeout: float,
    check: Callable[[], None] = lambda: None,
) -> dict:
    """Run the driver; its result dict. Raises CrosscheckError for a time-out, a child that died
    or an import error; ``check()`` may raise to cancel (the child is killed)."""
    work = root / "work"
    work.mkdir(exist_ok=True)
    request_path = root / "request.json"
    request_path.write_text(json.dumps(request), encoding="utf-8")
    out, err = root / "stdout.txt", root / "stderr.txt"
    with open(out, "wb") as fo, open(err, "wb") as fe:
        try:
            proc = subprocess.Popen(
                [install.python, "-B", str(DRIVER), str(request_path)],
                cwd=work,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=fo,
                stderr=fe,
                start_new_session=True,
            )
        except OSError as exc:
            raise CrosscheckError(NOT_FOUND, f"cannot start {install.python}: {exc.strerror or exc}") from exc
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                proc.wait(timeout=0.1)
                break
            except subprocess.TimeoutExpired:
                pass
            check()
            if time.monotonic() > deadline:
                _kill(proc)
                raise CrosscheckError(
                    TIMEOUT, f"hermes-webui did not finish within {timeout:g} s; it was stopped"
                )
    finally:
        if proc.poll() is None:
            _kill(proc)
    try:
        result = json.loads(Path(request["result_path"]).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stderr = _tail(err)
        raise CrosscheckError(
            FAILED,
            f"hermes' interpreter exited with code {proc.returncode} without a "
            f"result" + (f": {stderr}" if stderr else ""),
        ) from None
    if result.get("status") == IMPORT_ERROR:
        raise CrosscheckError(
            IMPORT_ERROR,
            f"{install.python} cannot import hermes-webui from {install.checkout}: {result.get('message')}",
        )
    result["stderr"] = _tail(err)
    return result


# ---------------------------------------------------------------- comparing


@dataclass
class FileVerdict:
    """One file both sides may write: its bytes before, after the plan, after hermes."""

    path: Path
    before: bytes | None
    inspector: bytes | None
    hermes: bytes | None

    @property
    def same(self) -> bool:
        return self.inspector == self.hermes

    def diff(self) -> str:
        """Unified diff from the inspector's result to hermes' (``a/`` inspector, ``b/`` hermes)."""
        text = file_diff(FileChange(path=self.path, before=self.inspector, after=self.hermes))
        lines = text.split("\n", 2)
        if len(lines) == 3 and lines[0].startswith("---") and lines[1].startswith("+++"):
            a = "(absent)" if self.inspector is None else f"inspector/{self.path.name}"
            b = "(absent)" if self.hermes is None else f"hermes-webui/{self.path.name}"
            text = f"--- {a}\n+++ {b}\n{lines[2]}"
        return text

    def to_json(self) -> dict:
        def sha(b: bytes | None) -> str | None:
            return sha256_hex(b) if b is not None else None

        return {
            "path": str(self.path),
            "same": self.same,
            "sha256_before": sha(self.before),
            "sha256_inspector": sha(self.inspector),
            "sha256_hermes": sha(self.hermes),
            **({} if self.same else {"diff": self.diff()}),
        }


@dataclass
class CrossResult:
    """The outcome of one check."""

    action: str
    session_id: str | None
    status: str
    message: str = ""
    install: HermesInstall | None = None
    clock: Clock | None = None
    files: list[FileVerdict] = field(default_factory=list)
    refusal: str | None = None  # the inspector's plan refused (it writes nothing)
    hermes_call: str = ""
    hermes_returned: object = None
    note: str = ""
    stderr: str = ""
    audit: tuple[object, object] | None = None  # audit only: (the inspector's report, hermes')

    @property
    def ran(self) -> bool:
        return self.status in (IDENTICAL, DIFFERENT)

    @property
    def exit_code(self) -> int:
        return {IDENTICAL: 0, DIFFERENT: 1}.get(self.status, 2)

    @property
    def version(self) -> str:
        return self.install.version if self.install else "unknown"

    def differing(self) -> list[FileVerdict]:
        return [f for f in self.files if not f.same]

    @property
    def audit_differs(self) -> bool:
        return self.audit is not None and self.audit[0] != self.audit[1]

    def audit_diff(self) -> str:
        """Unified diff of the two audit reports as indented JSON (``-`` inspector, ``+`` hermes)."""
        if not self.audit_differs:
            return ""
        mine, theirs = (
            json.dumps(r, ensure_ascii=False, indent=2).encode("utf-8") + b"\n" for r in self.audit
        )
        return FileVerdict(Path("audit.json"), None, mine, theirs).diff()

    def headline(self) -> str:
        target = self.session_id or "the whole home"
        if self.status == IDENTICAL:
            written = len([f for f in self.files if f.hermes != f.before])
            what = f"{written} file(s) written" if written else "nothing written by either"
            if self.audit is not None:
                what = f"the same report, {what}"
            return f"Same bytes as your hermes-webui (version {self.version}): {self.action} {target}, {what}"
        if self.status == DIFFERENT:
            what = [f.path.name for f in self.differing()] + (
                ["the audit report"] if self.audit_differs else []
            )
            return (
                f"Different from your hermes-webui (version {self.version}): {self.action} {target}: "
                f"{len(what)} differ ({', '.join(what)})"
            )
        return f"Could not check with your hermes-webui: {self.message}"

    def hermes_plan(self) -> Plan | None:
        """hermes' own result as a plan for the safe write path (fingerprints, backups, log,
        undo); None when the check did not run or found no difference."""
        if self.status != DIFFERENT:
            return None
        plan = Plan(action=self.action, session_id=self.session_id, clock=self.clock)
        plan.summary.append(
            f"hermes-webui {self.version}'s own result of {self.action}, as it wrote it in "
            "a private copy of the home"
        )
        for f in self.files:
            if f.hermes == f.before:
                continue
            fp = Fingerprint.of_bytes(f.before) if f.before is not None else None
            plan.changes.append(FileChange(path=f.path, before=f.before, after=f.hermes, fingerprint=fp))
        if not plan.changes:
            plan.refusal = "hermes-webui wrote nothing here; there is nothing of its own to write"
        return plan

    def to_json(self) -> dict:
        return {
            "action": self.action,
            "session_id": self.session_id,
            "status": self.status,
            "message": self.message,
            "headline": self.headline(),
            "hermes_webui": None
            if self.install is None
            else {
                "checkout": str(self.install.checkout),
                "python": self.install.python,
                "found_by": self.install.found_by,
                "version": self.install.version,
            },
            "clock": None
            if self.clock is None
            else {"now": self.clock.now, "server_started_at": self.clock.server_started_at},
            "inspector_refusal": self.refusal,
            "hermes_call": self.hermes_call,
            "hermes_returned": self.hermes_returned,
            "note": self.note,
            "files": [f.to_json() for f in self.files],
            **(
                {}
                if self.audit is None
                else {"audit_same": not self.audit_differs, "audit_diff": self.audit_diff()}
            ),
        }

    def render(self) -> str:
        parts = [self.headline()]
        if self.install is not None:
            parts.append(
                f"hermes-webui: {self.install.checkout} ({self.install.found_by}), "
                f"interpreter {self.install.python}"
            )
        if self.hermes_call:
            parts.append(f"hermes ran: {self.hermes_call}")
        if self.note:
            parts.append(f"note: {self.note}")
        if self.refusal:
            parts.append(f"the inspector refuses this plan: {self.refusal}")
        for f in self.files:
            parts.append(f"{'same' if f.same else 'DIFFERENT'}: {f.path}")
        if self.audit is not None:
            parts.append(f"{'DIFFERENT' if self.audit_differs else 'same'}: the audit report")
        for f in self.differing():
            parts.append(f.diff().rstrip("\n"))
        if self.audit_differs:
            parts.append(self.audit_diff().rstrip("\n"))
        return "\n".join(parts) + "\n"


def compare(
    plan: Plan, copy: _Copy, before: dict[Path, bytes], after: dict[Path, bytes]
) -> list[FileVerdict]:
    """A verdict for every file the plan or hermes changed, created or deleted."""
    planned = {c.path: c for c in plan.changes}
    paths = set(planned) | {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    out = []
    for path in sorted(paths):
        orig = planned[path].before if path in planned else before.get(path)
        mine = planned[path].after if path in planned else orig
        # a planned file outside the copied sessions folder: hermes did not see it, so left it alone
        theirs = after.get(path) if (path in before or path in after) else orig
        out.append(FileVerdict(path=path, before=orig, inspector=mine, hermes=theirs))
    return out


def _stale(plan: Plan, copy: _Copy) -> list[str]:
    """Files of the plan whose bytes on disk (as copied) are not the bytes the plan was made on."""
    out = []
    for c in plan.changes:
        copied = copy.copied.get(c.path)
        if (c.before is None) != (copied is None) or (copied is not None and copied != sha256_hex(c.before)):
            out.append(str(c.path))
    return out


def crosscheck(
    home: Home,
    action: str,
    session_id: str | None,
    clock: Clock,
    install: HermesInstall,
    *,
    plan: Plan | None = None,
    cwd: Path | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    check: Callable[[], None] = lambda: None,
) -> CrossResult:
    """Run ``action`` in the user's hermes-webui on a private copy and compare with ``plan``
    (made here with the same clock when not given)."""
    from inspector.actions import make_context, plan_action
    from inspector.repair.restore import is_plain_stem

    if session_id is not None and not is_plain_stem(session_id):
        return CrossResult(
            action=action,
            session_id=session_id,
            status=FAILED,
            install=install,
            clock=clock,
            message=f"{session_id!r} is not a plain session id; hermes is not run on it",
        )
    try:
        function = _hermes_function(action)
    except CrosscheckError as exc:
        return CrossResult(
            action=action,
            session_id=session_id,
            status=exc.status,
            install=install,
            clock=clock,
            message=str(exc),
        )
    cwd = cwd if cwd is not None else hermes_cwd(home)
    mine = None
    if action == AUDIT:
        plan, mine = Plan(action=AUDIT, session_id=None), inspector_audit(home)
    elif plan is None:
        plan = plan_action(make_context(home, clock, cwd), action, session_id)[0]
    result = CrossResult(
        action=action,
        session_id=session_id,
        status=FAILED,
        install=install,
        clock=clock,
        refusal=plan.refusal,
    )
    core = (
        _core_transcript(home, session_id)
        if session_id and registry.CORE_TRANSCRIPT in _hermes_reads(action)
        else None
    )
    with tempfile.TemporaryDirectory(prefix="hermes-inspector-crosscheck-") as tmp:
        root = Path(tmp)
        os.chmod(root, 0o700)
        try:
            copy = _Copy(home, root / "copy")
            _stage(home, action, session_id, copy, core)
            stale = _stale(plan, copy)
            if stale:
                raise CrosscheckError(
                    FAILED,
                    "the files changed since the plan was made ("
                    + ", ".join(stale)
                    + "); plan again and re-check",
                )
            before = copy.files_after()
            request = {
                "checkout": str(install.checkout),
                "action": action,
                "function": function,
                "session_id": session_id,
                "now": clock.now,
                "server_started_at": clock.server_started_at,
                "cwd": str(cwd),
                "session_dir": str(copy.session_dir),
                "result_path": str(root / "result.json"),
                "state_db": str(copy.to_copy(home.state_db()))
                if registry.STATE_DB in _hermes_reads(action)
                else None,
                "core_path": str(copy.to_copy(core)) if core is not None else None,
            }
            outcome = run_driver(install, request, child_environment(copy, root), root, timeout, check)
        except CrosscheckError as exc:
            result.status, result.message = exc.status, str(exc)
            return result
        result.stderr = outcome.get("stderr", "")
        result.hermes_call = outcome.get("call", "")
        result.hermes_returned = outcome.get("returned")
        result.note = outcome.get("note", "")
        if outcome.get("status") == RAISED:
            result.status = RAISED
            result.message = f"hermes-webui raised: {outcome.get('message')}"
            return result
        result.files = compare(plan, copy, before, copy.files_after())
        if action == AUDIT:
            result.audit = (mine, copy.real_paths_in(outcome.get("returned")))
    result.status = DIFFERENT if result.differing() or result.audit_differs else IDENTICAL
    return result


def inspector_audit(home: Home) -> dict:
    """The inspector's port of hermes' audit, as JSON; where it says hermes' audit raises, that."""
    from inspector.load import hermes_audit

    report, error = hermes_audit(home)
    if error is not None:
        return {"raises": str(error)}
    return json.loads(json.dumps(report))


def crosscheck_plans(
    home: Home,
    action: str,
    session_id: str | None,
    clock: Clock,
    install: HermesInstall,
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> list[CrossResult]:
    """One check per plan ``repair`` would make: the session, or (``session_id`` None) every
    eligible session / the home-wide action once."""
    from inspector.actions import make_context, plan_action

    if action == AUDIT:
        return [crosscheck(home, AUDIT, None, clock, install, timeout=timeout)]
    cwd = hermes_cwd(home)
    plans = plan_action(make_context(home, clock, cwd), action, session_id)
    return [
        crosscheck(home, action, p.session_id, clock, install, plan=p, cwd=cwd, timeout=timeout)
        for p in plans
    ]


def overall_exit(results: list[CrossResult]) -> int:
    """2 when any check could not run, else 1 when any differs, else 0."""
    codes = [r.exit_code for r in results]
    return 2 if 2 in codes else (1 if 1 in codes else 0)


def crosscheck_job(
    home: Home,
    plan: Plan,
    chosen: str | None,
    remembered: str | None,
    python: str | None,
    check: Callable[[], None] = lambda: None,
) -> CrossResult:
    """The window's check of a previewed plan (run in one of its child processes): find the
    user's hermes-webui (``chosen`` in the dialog, else the running server's, else
    ``remembered``) and compare with exactly this plan, under the clock it was made with.
    Never raises for the could-not-run outcomes."""
    try:
        install = find_hermes(home, chosen, python, remembered)
    except CrosscheckError as exc:
        return CrossResult(
            action=plan.action, session_id=plan.session_id, status=exc.status, message=str(exc)
        )
    if plan.clock is None:
        return CrossResult(
            action=plan.action,
            session_id=plan.session_id,
            status=FAILED,
            install=install,
            message="the plan does not say which clock it was made with",
        )
    return crosscheck(home, plan.action, plan.session_id, plan.clock, install, plan=plan, check=check)
