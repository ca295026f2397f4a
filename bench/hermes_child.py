"""Run one of hermes-webui's own functions on a home, for ``bench/run.py --against-hermes``.

    python bench/hermes_child.py CHECKOUT OP

Started by the runner in a fresh process with ``HERMES_HOME`` and ``HERMES_WEBUI_STATE_DIR``
pointing at the home (hermes reads both when ``api.config`` is imported) and the home as the
working directory. Standard library only, nothing of ``inspector``: the process is hermes' code
and nothing else, as a user's hermes-webui would run it. ``OP`` is

* ``audit``: ``api.session_recovery.audit_session_recovery(session_dir, state_db)``;
* ``rebuild-index``: ``api.session_recovery._rebuild_recovery_session_index(session_dir)``;
* ``materialize``: ``recover_missing_sidecars_from_state_db(session_dir, state_db)`` and, when it
  wrote a sidecar, ``_rebuild_recovery_session_index(session_dir)`` (what hermes' repair route does).

Prints one JSON line: ``{"ok": true, "op": OP, "import_s": ..., "call_s": ..., "result": {...}}``
(``result`` is a short digest: the audit's status and summary, the materialize counts).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

OPS = ("audit", "rebuild-index", "materialize")


def run(checkout: str, op: str) -> dict:
    if op not in OPS:
        raise SystemExit(f"unknown op {op!r} (one of {', '.join(OPS)})")
    t0 = time.perf_counter()
    sys.path.insert(0, checkout)
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # hermes may print at import; the runner reads our stdout
    try:
        import api.models  # noqa: F401 - hermes' recovery imports it lazily; load it before the clock
        import api.session_recovery as recovery
    finally:
        sys.stdout = real_stdout
    t1 = time.perf_counter()
    home = Path(os.environ["HERMES_HOME"])
    session_dir = Path(os.environ["HERMES_WEBUI_STATE_DIR"]) / "sessions"
    state_db = home / "state.db"
    if op == "audit":
        out = recovery.audit_session_recovery(session_dir, state_db)
        digest = {
            "status": out.get("status"),
            "summary": out.get("summary"),
            "items": len(out.get("items", [])),
        }
    elif op == "rebuild-index":
        recovery._rebuild_recovery_session_index(session_dir)
        digest = {}
    else:
        out = recovery.recover_missing_sidecars_from_state_db(session_dir, state_db)
        if int(out.get("materialized") or 0) > 0:
            recovery._rebuild_recovery_session_index(session_dir)
        digest = {k: v for k, v in out.items() if k != "details"}
    t2 = time.perf_counter()
    return {"ok": True, "op": op, "import_s": t1 - t0, "call_s": t2 - t1, "result": digest}


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    result = run(argv[1], argv[2])
    print(json.dumps(result, default=repr), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
