"""Where the inspector keeps its own state (write log, backups, logs) and its cache: one rule for every user.

State: ``$HERMES_INSPECTOR_STATE_DIR`` when set (a private folder of our own inside it when it is
shared), else the system's per-user state folder from ``platformdirs``: on Linux
``$XDG_STATE_HOME/hermes-inspector``, else ``~/.local/state/hermes-inspector``; on macOS
``~/Library/Application Support/hermes-inspector``; on Windows ``%LOCALAPPDATA%\\hermes-inspector``.

Cache (:func:`cache_folder`): ``$HERMES_INSPECTOR_STATE_DIR/cache`` when set, else the per-user
cache folder: ``$XDG_CACHE_HOME/hermes-inspector`` or ``~/.cache/hermes-inspector`` on Linux,
``~/Library/Caches/hermes-inspector`` on macOS, ``%LOCALAPPDATA%\\hermes-inspector\\Cache`` on
Windows. (An XDG variable set to a relative path is ignored, as the XDG spec says.)

Kept free of heavy imports: the logger resolves it too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from inspector import portable

STATE_FOLDER = "hermes-inspector"


def given_state_folder(given: Path) -> tuple[Path, bool]:
    """(folder, whether it is the inspector's own) for ``HERMES_INSPECTOR_STATE_DIR=given``.

    ``given`` itself never has its permissions changed. A missing folder is created (0700)
    and is our own. An existing folder of ours that no one else can write to is used as it
    is. A shared folder (group- or world-writable, sticky, like a 1777 /tmp) or someone
    else's gets a private ``hermes-inspector-<uid>`` folder of our own inside it.
    """
    try:
        st = os.stat(given)
    except OSError:
        return given, True  # missing: ours to create (the write log says why when it cannot be)
    uid = portable.euid()
    if uid is None:  # Windows: no POSIX owner or mode bits; the folder's ACL (inherited) decides
        return given, False
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISDIR(st.st_mode) and st.st_uid == uid and not mode & (0o022 | stat.S_ISVTX):
        return given, False
    return given / f"{STATE_FOLDER}-{uid}", True


def state_folder() -> tuple[Path, bool]:
    """(the inspector's state folder, whether the inspector owns it and may set its mode)."""
    override = os.environ.get("HERMES_INSPECTOR_STATE_DIR")
    if override:
        return given_state_folder(Path(override).expanduser())
    return _user_folder("state"), True


def cache_folder() -> Path:
    """The inspector's cache folder (the scan's fact cache)."""
    override = os.environ.get("HERMES_INSPECTOR_STATE_DIR")
    if override:
        return Path(override).expanduser() / "cache"
    return _user_folder("cache")


def _user_folder(kind: str, env=None) -> Path:
    """The per-user ``state`` or ``cache`` folder of the inspector on this system."""
    env = os.environ if env is None else env
    if portable.FORCED and os.name != "nt":
        # Forced portable on a POSIX machine: Windows' layout (platformdirs' Windows rules ask
        # the Win32 API, which is not here), from the environment's LOCALAPPDATA.
        base = Path(env.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / STATE_FOLDER
        return base / "Cache" if kind == "cache" else base
    import platformdirs

    dirs = platformdirs.PlatformDirs(STATE_FOLDER, appauthor=False)
    return Path(dirs.user_cache_dir if kind == "cache" else dirs.user_state_dir)


# Folders the inspector's own files must never land in: the open Hermes home and its WebUI state
# folder. The write log refuses them itself (it is told the home); the log file, made lazily by a
# handler that does not know the home, asks here.
_kept_out: list[str] = []


def keep_out_of(*folders: Path | str) -> None:
    """Register folders (the open home) that no state file of the inspector may be made in."""
    for folder in folders:
        real = os.path.realpath(folder)
        if real not in _kept_out:
            _kept_out.append(real)


def in_kept_out(path: Path | str) -> str | None:
    """The registered folder ``path`` lies in, else None."""
    real = os.path.realpath(path)
    for folder in _kept_out:
        if real == folder or real.startswith(folder.rstrip(os.sep) + os.sep):
            return folder
    return None
