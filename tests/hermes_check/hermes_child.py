"""Run in a child process: open sessions with hermes-webui's own ``api.models.get_session``.

Usage: ``python hermes_child.py HERMES_WEBUI_SRC [--audit] SESSION_ID ...`` with ``HERMES_HOME``
set to a copy of the home (hermes reads its paths at import time). Each session is read twice in
this process, as a server reads it on a cold load and on the next request (the lazy journal retry
runs on a cache hit); the real clock is used. Prints one JSON object: per session, the messages
hermes returns (or the error), and with ``--audit`` hermes' recovery audit of the sessions folder
(run first, before any read) under ``"_audit"``.
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    src, sids = sys.argv[1], sys.argv[2:]
    sys.path.insert(0, src)
    import api.models as models

    out: dict = {}
    if sids[:1] == ["--audit"]:
        sids = sids[1:]
        from api.session_recovery import audit_session_recovery

        out["_audit"] = audit_session_recovery(models.SESSION_DIR)
    for sid in sids:
        try:
            models.get_session(sid)
            session = models.get_session(sid)
            out[sid] = {"messages": session.messages, "tool_calls": session.tool_calls}
        except Exception as exc:  # noqa: BLE001 - reported to the test
            out[sid] = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(out, ensure_ascii=False, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
