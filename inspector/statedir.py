"""Where the inspector keeps its own state (write log, backups, logs): one rule for every user of it.

``$HERMES_INSPECTOR_STATE_DIR`` when set (a private folder of our own inside it when it is shared),
else ``$XDG_STATE_HOME/hermes-inspector``, else ``~/.local/state/hermes-inspector``. Kept free of
heavy imports: the logger resolves it too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

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
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not mode & (0o022 | stat.S_ISVTX):
        return given, False
    return given / f"{STATE_FOLDER}-{os.geteuid()}", True


def state_folder() -> tuple[Path, bool]:
    """(the inspector's state folder, whether the inspector owns it and may set its mode)."""
    override = os.environ.get("HERMES_INSPECTOR_STATE_DIR")
    if override:
        return given_state_folder(Path(override).expanduser())
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / STATE_FOLDER, True


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
