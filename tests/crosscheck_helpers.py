"""A small fake hermes-webui tree, written by the project, for the crosscheck tests.

Same module and function names as hermes-webui's (``api.config``, ``api.models``,
``api.session_recovery``); ``recover_session`` does what hermes' does on a shrunken live
sidecar (the ``.bak`` bytes replace the live file) unless ``BEHAVIOUR`` says otherwise, and
returns what it saw of the clock, working directory and environment. A hanging one leaves its
pid in ``api/hung.pid``, so a test can see it was stopped.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

CONFIG = """\
import time
SERVER_START_TIME = time.time()
"""

MODELS = """\
{prelude}
class Session:
    @classmethod
    def load(cls, sid):
        return None


def _retry_journal_recovery_in_place(session, *, preserve_arriving_budget=False):
    return False


def _apply_core_sync_or_error_marker(session, core_path, stream_id_for_recheck=None, *,
                                     require_stream_dead=True, touch_updated_at=True):
    return False
"""

RECOVERY = """\
import os
import time
from pathlib import Path

import api.config as _cfg

BEHAVIOUR = {behaviour!r}


def recover_session(session_path):
    if BEHAVIOUR == "raises":
        raise TypeError("'<' not supported between instances of 'str' and 'float'")
    if BEHAVIOUR == "hangs":
        (Path(__file__).parent / "hung.pid").write_text(str(os.getpid()))
        time.sleep(600)
    data = session_path.with_suffix(".json.bak").read_bytes()
    if BEHAVIOUR == "different":
        data = data.replace(b'"title": "', b'"title": "(restored) ', 1)
    session_path.write_bytes(data)
    return {{"restored": True, "now": time.time(), "server_started_at": _cfg.SERVER_START_TIME,
             "cwd": os.getcwd(), "env": sorted(os.environ)}}


def _orphaned_backup_live_paths(session_dir, state_db_path=None):
    return []


def recover_missing_sidecars_from_state_db(session_dir, state_db_path):
    return {{"scanned": 0, "materialized": 0, "details": []}}


def _rebuild_recovery_session_index(session_dir):
    return None


def audit_session_recovery(session_dir, state_db_path=None):
    return {{"status": "ok", "summary": {{"ok": 0, "repairable": 0, "unsafe_to_repair": 0}}, "items": [],
             "session_dir": str(session_dir)}}
"""


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def write_fake_hermes(
    root: Path, behaviour: str = "identical", *, broken_import: bool = False, version_line: str | None = None
) -> Path:
    """A fake checkout at ``root``: ``behaviour`` is identical, different, raises or hangs."""
    api = root / "api"
    api.mkdir(parents=True)
    (api / "__init__.py").write_text("")
    (api / "config.py").write_text(CONFIG)
    prelude = "import hermes_dependency_that_is_not_installed  # noqa\n" if broken_import else ""
    (api / "models.py").write_text(MODELS.format(prelude=prelude))
    (api / "session_recovery.py").write_text(textwrap.dedent(RECOVERY.format(behaviour=behaviour)))
    if version_line is not None:
        (api / "_scm_version.py").write_text(version_line + "\n")
    return root
