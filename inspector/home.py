"""Where a Hermes install keeps things (spec session-storage §1).

* base home: ``--home``, else ``$HERMES_HOME``, else hermes-webui's platform default
  (:func:`default_hermes_home`: ``~/.hermes``; on Windows ``%LOCALAPPDATA%\\hermes``, or a
  populated legacy ``%USERPROFILE%\\.hermes`` while the new one holds no WebUI state); a
  ``.../profiles/<name>`` home is unwrapped to the base, as hermes' profile code does;
* WebUI state dir: ``--state-dir``, else ``$HERMES_WEBUI_STATE_DIR``, else ``STATE_DIR=`` in
  ``<home>/webui.ctl.env``, else ``<home>/webui``; sessions live in ``<state dir>/sessions``;
* per profile (default = the base home, named = ``<home>/profiles/<name>``): its ``state.db``
  and the agent's core transcripts ``sessions/session_<sid>.json``.

Nothing here writes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from inspector import portable
from inspector.store.files import SMALL_FILE_BYTES, read_regular

PROFILE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
DEFAULT_PROFILE = "default"


class HomeError(Exception):
    """The home (or its WebUI state dir) cannot be used; the message says why."""


def _read_ctl_state_dir(base: Path) -> Path | None:
    """``STATE_DIR=`` of ``<base>/webui.ctl.env``. The file is untrusted: it is read through the
    regular-file reader with a small limit, so a FIFO, a device or a huge file is treated as no
    file (never waited on, never loaded)."""
    ctl = base / "webui.ctl.env"
    try:
        data, _ = read_regular(ctl, SMALL_FILE_BYTES)
    except OSError:
        return None
    text = data.decode("utf-8", errors="replace")
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("export "):
            line = line[len("export ") :].strip()
        if line.startswith("STATE_DIR="):
            value = line.split("=", 1)[1].strip().strip('"').strip("'")
            if value:
                return Path(value).expanduser()
    return None


def _unwrap_profile_home(path: Path) -> Path:
    if path.parent.name == "profiles" and PROFILE_NAME.fullmatch(path.name):
        return path.parent.parent
    return path


@dataclass(frozen=True)
class BundleOrigin:
    """Where an opened support bundle came from (its manifest): the home it copies, read-only.

    A bundle's home is a private unpacked copy; the original's working directory and WebUI
    start time stand in for the copy's, so a plan made in it holds the bytes the user's
    machine would write.
    """

    archive: Path
    made_at: float
    made_by: str
    original_base: str
    original_state_dir: str
    home_id: str
    hermes_cwd: str
    webui_started_at: float | None
    sessions: tuple[str, ...] = ()
    inspector_version: str | None = None
    hermes_webui_version: str | None = None


@dataclass(frozen=True)
class Home:
    """A located Hermes home. All paths are absolute; none is guaranteed to exist.

    ``bundle`` is set when this is the unpacked copy inside a support bundle (never written).
    """

    base: Path
    state_dir: Path
    state_db_override: Path | None = None
    # Where state_dir came from: "option" (--state-dir), "env" ($HERMES_WEBUI_STATE_DIR),
    # "webui.ctl.env" (the home's own file: untrusted, see inspector.linkcheck) or "default".
    state_dir_from: str = "default"
    bundle: BundleOrigin | None = field(default=None, compare=False)

    @property
    def session_dir(self) -> Path:
        return self.state_dir / "sessions"

    def profile_names(self) -> list[str]:
        """``default`` plus every valid profile directory under ``<base>/profiles``."""
        names = [DEFAULT_PROFILE]
        try:
            entries = sorted((self.base / "profiles").iterdir())
        except OSError:
            entries = []
        names += [p.name for p in entries if p.is_dir() and PROFILE_NAME.fullmatch(p.name)]
        return names

    def profile_home(self, profile: object) -> Path:
        """Agent home of a sidecar's ``profile`` (null/default/invalid -> the base home)."""
        if not isinstance(profile, str) or profile in ("", DEFAULT_PROFILE):
            return self.base
        if not PROFILE_NAME.fullmatch(profile):
            return self.base
        return self.base / "profiles" / profile

    def state_db(self, profile: object = None) -> Path:
        if self.state_db_override is not None and (profile in (None, "", DEFAULT_PROFILE)):
            return self.state_db_override
        return self.profile_home(profile) / "state.db"

    def core_transcript(self, session_id: str, profile: object = None) -> Path:
        return self.profile_home(profile) / "sessions" / f"session_{session_id}.json"

    @property
    def pid_file(self) -> Path:
        return self.base / "webui.pid"


def _has_webui_state(base: Path) -> bool:
    """hermes-webui's sign that ``base`` was a WebUI home (``api/paths.py:
    _hermes_home_has_webui_state``): a ``webui/`` folder (or its ``sessions``/``settings.json``)
    exists. Agent files (``config.yaml``, ``auth.json``) do not count. Never raises."""
    try:
        if not base.is_dir():
            return False
        return any(
            m.exists()
            for m in (base / "webui" / "sessions", base / "webui" / "settings.json", base / "webui")
        )
    except OSError:
        return False


def _user_home(system: str, env) -> Path:
    """The user's home as Python's ``Path.home()`` finds it on ``system`` (Windows: ``USERPROFILE``,
    else ``HOMEDRIVE`` + ``HOMEPATH``)."""
    if system == portable.WINDOWS:
        if env.get("USERPROFILE"):
            return Path(env["USERPROFILE"])
        if env.get("HOMEPATH"):
            return Path(env.get("HOMEDRIVE", "") + env["HOMEPATH"])
    return Path.home()


def default_hermes_home(system: str | None = None, env=None, user_home: Path | None = None) -> Path:
    """hermes-webui's default home when ``HERMES_HOME`` is unset (``api/paths.py:
    _platform_default_hermes_home``), for ``system`` (default: this one, see
    :func:`inspector.portable.system`).

    Windows: ``%LOCALAPPDATA%\\hermes`` (v0.51.134+), except that the legacy
    ``%USERPROFILE%\\.hermes`` is kept while it holds WebUI state and the new one holds none
    (hermes #2905, so an upgraded user's sessions are not stranded); with no ``LOCALAPPDATA``,
    ``~/.hermes``. Everywhere else (macOS, Linux): ``~/.hermes``.
    """
    system = portable.system() if system is None else system
    env = os.environ if env is None else env
    home = _user_home(system, env) if user_home is None else user_home
    if system == portable.WINDOWS:
        local_app_data = (env.get("LOCALAPPDATA") or "").strip()
        if local_app_data:
            new_home = Path(local_app_data) / "hermes"
            legacy_home = home / ".hermes"
            if legacy_home != new_home and not _has_webui_state(new_home) and _has_webui_state(legacy_home):
                return legacy_home
            return new_home
    return home / ".hermes"


def locate_home(
    home: str | os.PathLike | None = None,
    state_dir: str | os.PathLike | None = None,
    state_db: str | os.PathLike | None = None,
    env: dict | None = None,
    system: str | None = None,
) -> Home:
    """Resolve the home the way hermes-webui would have been started on it (``system``: whose
    default home rule applies, see :func:`default_hermes_home`)."""
    env = os.environ if env is None else env
    if home is not None:
        base = Path(home).expanduser()
    elif env.get("HERMES_HOME"):
        base = Path(env["HERMES_HOME"]).expanduser()
    else:
        base = default_hermes_home(system, env)
    base = _unwrap_profile_home(base.absolute())
    if state_dir is not None:
        sdir, source = Path(state_dir).expanduser(), "option"
    elif env.get("HERMES_WEBUI_STATE_DIR"):
        sdir, source = Path(env["HERMES_WEBUI_STATE_DIR"]).expanduser(), "env"
    else:
        ctl = _read_ctl_state_dir(base)
        sdir, source = (ctl, "webui.ctl.env") if ctl is not None else (base / "webui", "default")
    db = Path(state_db).expanduser().absolute() if state_db is not None else None
    return Home(base=base, state_dir=sdir.absolute(), state_db_override=db, state_dir_from=source)


def check_readable(home: Home) -> None:
    """Raise HomeError with a plain message when the home cannot be read at all."""
    if not home.base.exists():
        raise HomeError(f"Hermes home {home.base} does not exist (use --home or set HERMES_HOME)")
    if not home.base.is_dir():
        raise HomeError(f"Hermes home {home.base} is not a folder")
    if not os.access(home.base, os.R_OK | os.X_OK):
        raise HomeError(f"Hermes home {home.base} cannot be read (permission denied)")
    sd = home.session_dir
    if sd.exists() and (not sd.is_dir() or not os.access(sd, os.R_OK | os.X_OK)):
        raise HomeError(f"sessions folder {sd} cannot be read")


def webui_pid(home: Home) -> int | None:
    """The pid in ``<home>/webui.pid`` when that process is alive, else None.

    The file is untrusted: only a regular file is read, at most 64 bytes, and anything but
    a plain positive pid (garbage, a huge number, a FIFO, a folder) means "not running".
    A support bundle's home never runs here.
    """
    if home.bundle is not None:
        return None
    try:
        data, _ = read_regular(home.pid_file, 64)
        text = data.decode("ascii").strip()
        pid = int(text) if text.isdigit() else 0
    except (OSError, ValueError):
        return None
    if not 0 < pid < 2**31:
        return None
    # psutil, never os.kill(pid, 0): on Windows os.kill ends the process whatever the signal.
    return pid if portable.pid_alive(pid) else None


def webui_started_at(home: Home) -> float | None:
    """Start time of the running hermes-webui process (psutil), or None.

    In a support bundle: the start time recorded on the user's machine when it was made."""
    if home.bundle is not None:
        return home.bundle.webui_started_at
    pid = webui_pid(home)
    if pid is None:
        return None
    facts = portable.process_facts(pid)
    return None if facts is None else facts.started_at


def hermes_cwd(home: Home) -> Path:
    """The directory hermes resolves an empty ``workspace`` against.

    hermes uses its own working directory. When it runs we ask the system (psutil); otherwise
    the home stands in for it (the golden cases were made with cwd = HERMES_HOME). In a support
    bundle: the directory recorded on the user's machine when it was made.
    """
    if home.bundle is not None:
        return Path(home.bundle.hermes_cwd)
    pid = webui_pid(home)
    if pid is not None:
        facts = portable.process_facts(pid)
        if facts is not None and facts.cwd is not None:
            return facts.cwd
    return home.base


def looks_like_bundle(path: str | os.PathLike | None) -> bool:
    """True for an existing file named ``*.tar.gz``/``*.tgz`` (``--home`` then opens it as a bundle)."""
    if path is None:
        return False
    p = Path(path).expanduser()
    return p.name.endswith((".tar.gz", ".tgz")) and p.is_file()
